package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/sync/runner"
)

// An account takes the top-level sections' keys it leaves out (file, then environment), never
// another account's source or folder; its own keys win, and its own variables win over them.
func TestAccountsInherit(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "globex.key")
	if err := os.WriteFile(keyFile, []byte("# globex, rotated monthly\n  globex-key  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := sinktest.ConfigFile(t, `
source: {rate_limit: 30}
sync: {concurrency: 2, resources: [employees]}
warehouse: {url: /data/hrsync.db}
schedule: "@daily"
onboarding: {poll_seconds: 9}
accounts:
  - name: acme
    source: {url: "http://acme.example/v1", api_key: acme-key}
    onboarding: {dir: /srv/acme}
  - name: globex-uk
    source: {url: "http://globex.example", api_key_file: `+keyFile+`, rate_limit: 45}
    warehouse: {schema: globex}
    sync: {resources: [all]}
    schedule: "0 3 * * *"
    schedule_timezone: Europe/London
`)
	s, err := Load(path, []string{"HRSYNC_SYNC_CONCURRENCY=3", "HRSYNC_ACCOUNTS_ACME_SOURCE_RATE_LIMIT=12",
		"HRSYNC_ACCOUNTS_GLOBEX_UK_SYNC_CONCURRENCY=5"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Names(s.Accounts); !slices.Equal(got, []string{"acme", "globex-uk"}) {
		t.Fatalf("accounts %v", got)
	}
	acme, globex := s.Accounts[0], s.Accounts[1]
	checks := []struct {
		what      string
		got, want any
	}{
		{"acme listed", acme.Listed, true},
		{"acme key", acme.Source.APIKey, "acme-key"},
		{"acme rate: its own variable", acme.Source.RateLimit, 12},
		{"acme budget named by the account", acme.Source.Account, "acme"},
		{"acme concurrency: top-level variable", acme.Sync.Concurrency, 3},
		{"acme resources: top-level file", acme.Resources, []sink.Resource{sink.Employees}},
		{"acme schema: its name", acme.Warehouse.Schema, "acme"},
		{"acme SQLite file beside the shared one", acme.Warehouse.URL, "/data/hrsync-acme.db"},
		{"acme schedule", acme.Schedule, "@daily"},
		{"acme folder", acme.Onboarding.Dir, "/srv/acme"},
		{"acme poll", acme.PollInterval, 9 * time.Second},
		{"acme ledger and metrics name", acme.SinkOptions().Account, "acme"},
		{"globex key from its file", globex.Source.APIKey, "globex-key"},
		{"globex rate", globex.Source.RateLimit, 45},
		{"globex concurrency: its own variable", globex.Sync.Concurrency, 5},
		{"globex resources", len(globex.Resources) > 1, true},
		{"globex schema", globex.Warehouse.Schema, "globex"},
		{"globex file", globex.Warehouse.URL, "/data/hrsync-globex.db"},
		{"globex folder: not acme's", globex.Onboarding.Dir, ""},
		{"globex zone", globex.Location.String(), "Europe/London"},
	}
	for _, c := range checks {
		if !equalAny(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
}

func equalAny(a, b any) bool {
	if as, ok := a.([]sink.Resource); ok {
		bs, _ := b.([]sink.Resource)
		return slices.Equal(as, bs)
	}
	return a == b
}

// Without accounts, the top-level sections are the one account, as they always were.
func TestNoAccountsIsOneAccount(t *testing.T) {
	path := sinktest.ConfigFile(t, "source: {url: 'http://x.example', api_key: k, account: acme}\nwarehouse: {url: wh.db}\n")
	s, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Accounts) != 1 {
		t.Fatalf("%d accounts", len(s.Accounts))
	}
	a := s.Accounts[0]
	if a.Listed || a.Name != "acme" || a.Warehouse.URL != "wh.db" || a.Warehouse.Schema != "hr" || a.Source.APIKey != "k" {
		t.Errorf("account %+v", a)
	}
}

// The SQLite file of an account, whatever form the shared warehouse's URL takes.
func TestAccountWarehouseURL(t *testing.T) {
	tests := []struct{ own, shared, want string }{
		{"hrsync.db", "hrsync.db", "hrsync-acme.db"},
		{"/var/lib/hrsync/wh.sqlite?_pragma=x", "/var/lib/hrsync/wh.sqlite?_pragma=x", "/var/lib/hrsync/wh-acme.sqlite?_pragma=x"},
		{"file:data/wh", "file:data/wh", "file:data/wh-acme"},
		{"sqlite:wh.db", "sqlite:wh.db", "sqlite:wh-acme.db"},
		{"other.db", "hrsync.db", "other.db"}, // the account's own
		{"postgres://u@db/hr", "postgres://u@db/hr", "postgres://u@db/hr"},
	}
	for _, tt := range tests {
		got, err := accountWarehouseURL(tt.own, tt.shared, "acme")
		if err != nil || got != tt.want {
			t.Errorf("accountWarehouseURL(%q, %q) = %q, %v; want %q", tt.own, tt.shared, got, err, tt.want)
		}
	}
}

func TestAccountsConfigErrors(t *testing.T) {
	two := "accounts:\n  - {name: acme, source: {url: 'http://a.example', api_key: a}}\n  - {name: globex, source: {url: 'http://g.example', api_key: g}}\n"
	tests := []struct {
		name, file string
		env        []string
		want       string
	}{
		{"unknown key in an account", "accounts:\n  - name: acme\n    sourse: {}\n", nil, "line 3: unknown key accounts[0].sourse (did you mean accounts[0].source?)"},
		{"not a list", "accounts: acme\n", nil, "line 1: `acme` is not a list"},
		{"wrong type in an account", "accounts:\n  - name: acme\n    sync: {concurrency: lots}\n", nil, "line 3: `lots` is not a whole number"},
		{"no name", "accounts:\n  - source: {url: 'http://a.example'}\n", nil, `accounts[0]: name ""`},
		{"bad name", "accounts:\n  - name: Acme Ltd\n", nil, `name "Acme Ltd": want lower-case letters`},
		{"same name", "accounts:\n  - name: acme\n  - name: acme\n", nil, "accounts acme and acme have the same name"},
		{"same schema", "accounts:\n  - name: acme\n  - {name: globex, warehouse: {schema: acme}}\n", nil, "accounts acme and globex have the same warehouse"},
		{"same folder", "accounts:\n  - {name: acme, onboarding: {dir: /srv/x}}\n  - {name: globex, onboarding: {dir: /srv/x/}}\n", nil, "accounts acme and globex have the same onboarding.dir"},
		{"top-level source with accounts", "source: {url: 'http://a.example'}\n" + two, nil, "source.url, source.api_key and source.api_key_file belong in each account"},
		{"top-level key from the environment", two, []string{"HRSYNC_SOURCE_API_KEY=k"}, "belong in each account"},
		{"top-level folder with accounts", "onboarding: {dir: /srv}\n" + two, nil, "onboarding.dir belongs in each account"},
		{"account's own bad value", "accounts:\n  - {name: acme, source: {rate_limit: -1}}\n", nil, "account acme: source.rate_limit"},
		{"account's own bad variable", two, []string{"HRSYNC_ACCOUNTS_GLOBEX_SYNC_CONCURRENCY=many"}, "HRSYNC_ACCOUNTS_GLOBEX_SYNC_CONCURRENCY: want an integer"},
		{"account's bad schedule", "accounts:\n  - {name: acme, schedule: nightly}\n", nil, "account acme: "},
		{"key and key file", "accounts:\n  - {name: acme, source: {api_key: a, api_key_file: /x}}\n", nil, "account acme: source.api_key and source.api_key_file are both set"},
		{"missing key file", "accounts:\n  - {name: acme, source: {api_key_file: /nonexistent/acme.key}}\n", nil, "account acme: source.api_key_file:"},
		{"serve api_keys with two accounts", two, []string{"HRSYNC_SERVE_API_KEYS=k"}, "serve.api_keys cannot say which account"},
		{"serve key without account", two + "serve:\n  keys: [{name: dash, key: k}]\n", nil, "serve.keys dash: name its account (one of acme, globex)"},
		{"serve key of no account", two + "serve:\n  keys: [{name: dash, key: k, account: acmee}]\n", nil, `serve.keys dash: no account "acmee" (did you mean acme?)`},
		{"serve key without name", two + "serve:\n  keys: [{key: k, account: acme}]\n", nil, "serve.keys[0] has no name"},
		{"serve keys with one name", two + "serve:\n  keys: [{name: d, key: k-4f9a0c7e2b1d8e6f3a5c9b0d, account: acme}, {name: d, key: j-4f9a0c7e2b1d8e6f3a5c9b0d, account: globex}]\n", nil, `two keys named "d"`},
		{"serve key with key and file", two + "serve:\n  keys: [{name: d, key: k, key_file: f, account: acme}]\n", nil, "serve.keys d: set key or key_file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(sinktest.ConfigFile(t, tt.file), tt.env)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") || namesGoType(err.Error()) {
				t.Errorf("err %v, want one line containing %q", err, tt.want)
			}
			for _, secret := range []string{"acme-key", "globex-key"} {
				if err != nil && strings.Contains(err.Error(), secret) {
					t.Errorf("err %v shows a key", err)
				}
			}
		})
	}
}

func TestPickAccounts(t *testing.T) {
	s, err := Load(sinktest.ConfigFile(t, "accounts:\n  - name: acme\n  - name: globex\n  - name: initech\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		flag    string
		want    []string
		wantErr string
	}{
		{"", []string{"acme", "globex", "initech"}, ""},
		{"initech,acme", []string{"acme", "initech"}, ""},
		{" globex , globex,", []string{"globex"}, ""},
		{"globx", nil, `--account "globx": no such account (did you mean globex?); configured: acme, globex, initech`},
	}
	for _, tt := range tests {
		got, err := s.Pick(tt.flag)
		if tt.wantErr != "" {
			var unknown *UnknownAccountError
			if err == nil || err.Error() != tt.wantErr || !errors.As(err, &unknown) {
				t.Errorf("pick(%q): %v, want usage error %q", tt.flag, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(Names(got), tt.want) {
			t.Errorf("pick(%q) = %v, %v; want %v", tt.flag, Names(got), err, tt.want)
		}
	}
}

// schedule_spread: the top level's for every account (its default when unset), an account's own
// over it, the variables over both; the place in it is the account's name's, and the one
// account of a configuration without accounts: is never delayed.
func TestScheduleSpread(t *testing.T) {
	const accounts = `
schedule: "0 2 * * *"
accounts:
  - {name: acme, source: {url: "http://acme.example"}}
  - {name: globex, source: {url: "http://globex.example"}, schedule_spread: 0s}
  - {name: initech, source: {url: "http://initech.example"}, schedule_spread: 1h}
`
	for _, tc := range []struct {
		name, file string
		env        []string
		want       map[string]time.Duration // each account's spread
		wantErr    string
	}{
		{name: "default, and each account's own", file: accounts,
			want: map[string]time.Duration{"acme": DefaultScheduleSpread, "globex": 0, "initech": time.Hour}},
		{name: "the top level's file key", file: "schedule_spread: 30m\n" + accounts,
			want: map[string]time.Duration{"acme": 30 * time.Minute, "globex": 0, "initech": time.Hour}},
		{name: "variables", file: accounts, env: []string{"HRSYNC_SCHEDULE_SPREAD=45m", "HRSYNC_ACCOUNTS_GLOBEX_SCHEDULE_SPREAD=5m"},
			want: map[string]time.Duration{"acme": 45 * time.Minute, "globex": 5 * time.Minute, "initech": time.Hour}},
		{name: "negative", file: "schedule_spread: -1m\n" + accounts, wantErr: "account acme: schedule_spread -1m0s: want a duration from 0 to 24h0m0s"},
		{name: "over a day", file: accounts, env: []string{"HRSYNC_ACCOUNTS_INITECH_SCHEDULE_SPREAD=25h"}, wantErr: "account initech: schedule_spread"},
		{name: "not a duration", file: accounts, env: []string{"HRSYNC_SCHEDULE_SPREAD=ten"}, wantErr: "HRSYNC_SCHEDULE_SPREAD: want a duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Load(sinktest.ConfigFile(t, tc.file), tc.env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load: %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range s.Accounts {
				if a.Spread != tc.want[a.Name] {
					t.Errorf("%s: spread %s, want %s", a.Name, a.Spread, tc.want[a.Name])
				}
				if got, want := a.Offset(), runner.Offset(a.Name, a.Spread); got != want || (a.Spread > 0 && got == 0) {
					t.Errorf("%s: offset %s, want %s", a.Name, got, want)
				}
			}
		})
	}
	t.Run("one account without accounts: never delayed", func(t *testing.T) {
		s, err := Load(sinktest.ConfigFile(t, "schedule: \"0 2 * * *\"\nschedule_spread: 30m\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if a := s.Accounts[0]; a.Spread != 30*time.Minute || a.Offset() != 0 {
			t.Errorf("spread %s, offset %s: want 30m, 0", a.Spread, a.Offset())
		}
	})
}
