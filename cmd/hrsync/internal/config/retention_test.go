package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/retention"
)

// TestRetentionConfig: retention is off unless set; its periods are read at load from the file
// and the environment (which wins), each account takes the top-level section's rules and its own
// keys and variables win; its onboarding folder is the account's.
func TestRetentionConfig(t *testing.T) {
	s, err := Load(sinktest.ConfigFile(t, "warehouse: {url: w.db}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Accounts[0].Retention.Any() {
		t.Errorf("retention is on by default: %+v", s.Accounts[0].Retention)
	}

	s, err = Load(sinktest.ConfigFile(t, `
warehouse: {url: w.db}
onboarding: {dir: /srv/new-hires}
retention:
  leavers: {identifying: 6y, health: 1y6m}
  sickness_details: 18m
`), []string{"HRSYNC_RETENTION_LEAVERS_HEALTH=2y", "HRSYNC_RETENTION_ONBOARDING_FILES=90d", "HRSYNC_RETENTION_LEAVERS_FREE_TEXT=P3Y"})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Accounts[0].Retention
	want := retention.Rules{
		Leavers:         map[v1.Class]retention.Period{v1.Identifying: {Years: 6}, v1.Health: {Years: 2}, v1.FreeText: {Years: 3}},
		SicknessDetails: retention.Period{Months: 18},
		OnboardingFiles: retention.Period{Days: 90},
		OnboardingDir:   "/srv/new-hires",
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("rules %+v, want %+v", r, want)
	}

	s, err = Load(sinktest.ConfigFile(t, `
warehouse: {url: /data/w.db}
retention: {leavers: {identifying: 6y}}
accounts:
  - name: acme
    onboarding: {dir: /srv/acme}
    retention: {leavers: {identifying: 7y}, onboarding_files: 30d}
  - name: globex
`), []string{"HRSYNC_ACCOUNTS_GLOBEX_RETENTION_SICKNESS_DETAILS=1y"})
	if err != nil {
		t.Fatal(err)
	}
	acme, globex := s.Accounts[0].Retention, s.Accounts[1].Retention
	if acme.Leavers[v1.Identifying] != (retention.Period{Years: 7}) || acme.OnboardingFiles != (retention.Period{Days: 30}) || acme.OnboardingDir != "/srv/acme" {
		t.Errorf("acme: %+v", acme)
	}
	if globex.Leavers[v1.Identifying] != (retention.Period{Years: 6}) || globex.SicknessDetails != (retention.Period{Years: 1}) || globex.OnboardingDir != "" {
		t.Errorf("globex: %+v", globex)
	}
}

// TestRetentionBadPeriods: a period that does not read is one line naming the key, from the file
// or the environment.
func TestRetentionBadPeriods(t *testing.T) {
	for _, tc := range []struct {
		file string
		env  []string
		key  string
	}{
		{"retention: {leavers: {identifying: 6 years}}\n", nil, "retention.leavers.identifying"},
		{"retention: {sickness_details: 0d}\n", nil, "retention.sickness_details"},
		{"", []string{"HRSYNC_RETENTION_ONBOARDING_FILES=soon"}, "retention.onboarding_files"},
		{"", []string{"HRSYNC_RETENTION_LEAVERS_FINANCIAL=6h"}, "retention.leavers.financial"},
		{"accounts:\n  - name: acme\n    retention: {leavers: {health: -1y}}\n", nil, "account acme: retention.leavers.health"},
	} {
		_, err := Load(sinktest.ConfigFile(t, "warehouse: {url: w.db}\n"+tc.file), tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.key+": period") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q %v: %v, want one line naming %s", tc.file, tc.env, err, tc.key)
		}
	}
}
