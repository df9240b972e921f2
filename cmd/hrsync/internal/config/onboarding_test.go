package config

import (
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sync/onboard"
)

// TestOnboardingResultAccess: onboarding.group (a name or a gid) and onboarding.mode give the
// results' access, checked at start; neither set, private. A group unknown, a mode that is not
// octal, takes the owner's bits or lets anyone write, is a one-line error naming the key.
func TestOnboardingResultAccess(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix permissions")
	}
	gid := os.Getegid()
	g, err := user.LookupGroupId(strconv.Itoa(gid))
	name := ""
	if err == nil {
		name = g.Name
	}
	tests := []struct {
		name string
		env  []string
		want onboard.Access
		err  string
	}{
		{"private by default", nil, onboard.Access{}, ""},
		{"a gid", []string{"HRSYNC_ONBOARDING_GROUP=" + strconv.Itoa(gid)}, onboard.Access{Mode: 0o640, Group: gid, SetGroup: true}, ""},
		{"a gid and a mode", []string{"HRSYNC_ONBOARDING_GROUP=" + strconv.Itoa(gid), "HRSYNC_ONBOARDING_MODE=0660"}, onboard.Access{Mode: 0o660, Group: gid, SetGroup: true}, ""},
		{"a mode alone", []string{"HRSYNC_ONBOARDING_MODE=0o644"}, onboard.Access{Mode: 0o644}, ""},
		{"an unknown group", []string{"HRSYNC_ONBOARDING_GROUP=no-such-group-hrsync"}, onboard.Access{},
			`config: onboarding.group "no-such-group-hrsync": no such group on this machine: name an existing group, or give its numeric gid`},
		{"a mode not octal", []string{"HRSYNC_ONBOARDING_MODE=rw-r-----"}, onboard.Access{}, `onboarding.mode "rw-r-----": want permission bits in octal`},
		{"a mode without the owner", []string{"HRSYNC_ONBOARDING_MODE=0440"}, onboard.Access{}, `onboarding.mode "0440": hrsync must read and write its own results`},
		{"a mode anyone writes", []string{"HRSYNC_ONBOARDING_MODE=0666"}, onboard.Access{}, `onboarding.mode "0666": the results hold personal data`},
		{"a mode too large", []string{"HRSYNC_ONBOARDING_MODE=4750"}, onboard.Access{}, `onboarding.mode "4750": want permission bits in octal`},
	}
	if name != "" {
		tests = append(tests, struct {
			name string
			env  []string
			want onboard.Access
			err  string
		}{"a group name", []string{"HRSYNC_ONBOARDING_GROUP=" + name}, onboard.Access{Mode: 0o640, Group: gid, SetGroup: true}, ""})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := loadEnv(t, append([]string{"HRSYNC_WAREHOUSE_URL=x.db"}, tt.env...))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "\n") {
					t.Errorf("err %v, want one line containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Accounts[0].ResultAccess; got != tt.want {
				t.Errorf("access %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestOnboardingGroupNotJoined: a group the process is not in (and cannot give files to, not
// being root) is refused at start, saying what to do.
func TestOnboardingGroupNotJoined(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("root may give files to any group")
	}
	groups, _ := os.Getgroups()
	gid := 60000
	for gid == os.Getegid() || contains(groups, gid) {
		gid++
	}
	_, err := loadEnv(t, []string{"HRSYNC_WAREHOUSE_URL=x.db", "HRSYNC_ONBOARDING_GROUP=" + strconv.Itoa(gid)})
	if err == nil || !strings.Contains(err.Error(), "not in the group") {
		t.Errorf("err %v", err)
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestOnboardingNotifySettings: onboarding.notify.url is an absolute http(s) address, refused
// otherwise without the address (its secret) in the error; it and its path are secrets the
// logs redact; report_bom is on by default.
func TestOnboardingNotifySettings(t *testing.T) {
	const hook = "https://hooks.slack.com/services/T0001/B0001/s3cr3tWebhookToken"
	s, err := loadEnv(t, []string{"HRSYNC_WAREHOUSE_URL=x.db", "HRSYNC_ONBOARDING_NOTIFY_URL=" + hook, "HRSYNC_ONBOARDING_NOTIFY_NAMES=true"})
	if err != nil {
		t.Fatal(err)
	}
	a := s.Accounts[0]
	if a.Onboarding.Notify.URL != hook || !a.Onboarding.Notify.Names || !a.Onboarding.ReportBOM {
		t.Errorf("onboarding %+v", a.Onboarding)
	}
	secrets := strings.Join(s.Secrets(), " ")
	for _, want := range []string{hook, "/services/T0001/B0001/s3cr3tWebhookToken"} {
		if !strings.Contains(secrets, want) {
			t.Errorf("the secrets lack %q", want)
		}
	}
	for _, bad := range []string{"hooks.slack.com/services/s3cr3t", "ftp://hooks.example/s3cr3t"} {
		_, err := loadEnv(t, []string{"HRSYNC_WAREHOUSE_URL=x.db", "HRSYNC_ONBOARDING_NOTIFY_URL=" + bad})
		if err == nil || strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "onboarding.notify.url must be an absolute http(s) address") {
			t.Errorf("%s: err %v", bad, err)
		}
	}
	s, err = loadEnv(t, []string{"HRSYNC_WAREHOUSE_URL=x.db", "HRSYNC_ONBOARDING_REPORT_BOM=false"})
	if err != nil || s.Accounts[0].Onboarding.ReportBOM {
		t.Errorf("report_bom false: %v %v", s.Accounts[0].Onboarding.ReportBOM, err)
	}
}

// loadEnv loads an empty configuration file with the variables env.
func loadEnv(t *testing.T, env []string) (Settings, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(path, env)
}
