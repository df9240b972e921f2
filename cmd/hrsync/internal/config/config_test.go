package config

import (
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/sync/walk"
)

// TestConfigFileDocumentsEveryKey keeps config.yaml, its defaults and the Config struct in
// agreement: every key of the struct is in the file, nothing else is, and the file's values are
// the defaults.
func TestConfigFileDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile("../../../../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tree map[string]any
	if err := yaml.Unmarshal(data, &tree); err != nil {
		t.Fatal(err)
	}
	var fileKeys []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			name := prefix + "_" + strings.ToUpper(k)
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 { // {}: a key whose value is a map (personal_data.members)
				walk(name, sub)
				continue
			}
			fileKeys = append(fileKeys, name)
		}
	}
	walk("HRSYNC", tree)
	slices.Sort(fileKeys)
	structKeys := EnvNames()
	slices.Sort(structKeys)
	if !slices.Equal(fileKeys, structKeys) {
		t.Errorf("config.yaml keys\n %v\nstruct keys\n %v", fileKeys, structKeys)
	}
	fromFile, err := Load("../../../../config.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalize(fromFile.Config), normalize(Defaults())) {
		t.Errorf("config.yaml values differ from the defaults:\n file %+v\n code %+v", fromFile, Defaults())
	}
}

func normalize(c Config) Config {
	for _, l := range []*[]string{&c.Serve.APIKeys, &c.Serve.CORSOrigins, &c.Serve.TrustedProxies, &c.Serve.AllowedHosts,
		&c.Models.ClosureDays, &c.Models.Bradford.ExcludeSicknessTypes, &c.PersonalData.Purposes, &c.PersonalData.LawfulBasis, &c.PersonalData.Recipients, &c.Sync.Guards.Accept} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	return c
}

func TestContractVariablesExist(t *testing.T) {
	names := EnvNames()
	for _, v := range []string{"HRSYNC_SOURCE_URL", "HRSYNC_SOURCE_API_KEY", "HRSYNC_SOURCE_RATE_LIMIT",
		"HRSYNC_WAREHOUSE_URL", "HRSYNC_SERVE_ADDR", "HRSYNC_SERVE_API_KEYS", "HRSYNC_ONBOARDING_DIR",
		"HRSYNC_SCHEDULE", "HRSYNC_METRICS_ADDR"} {
		if !slices.Contains(names, v) {
			t.Errorf("%s is not read", v)
		}
	}
}

func TestEnvironmentWinsOverFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte("serve:\n  addr: \":1\"\n  writes: off\nsource:\n  rate_limit: 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, []string{"HRSYNC_SERVE_ADDR=:2", "HRSYNC_SERVE_API_KEYS= a-4f9a0c7e2b1d8e6f3a5c9b0d, b-4f9a0c7e2b1d8e6f3a5c9b0d ,,", "HRSYNC_SOURCE_RATE_LIMIT=0", "OTHER=x"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Serve.Addr != ":2" || cfg.Serve.Writes != "off" || cfg.Source.RateLimit != 0 || !slices.Equal(cfg.Serve.APIKeys, []string{"a-4f9a0c7e2b1d8e6f3a5c9b0d", "b-4f9a0c7e2b1d8e6f3a5c9b0d"}) {
		t.Errorf("got %+v", cfg)
	}
}

// Load parses the configuration's strings once, into the values the commands use: none of
// them parses a string of it again.
func TestLoadConfigParsesOnce(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want func(Settings) bool
	}{
		{"shared budget off", []string{"HRSYNC_SOURCE_SHARED_BUDGET=false", "HRSYNC_SOURCE_ACCOUNT=acme", "HRSYNC_SOURCE_BUDGET_SHARE=3"}, func(s Settings) bool {
			return !s.Source.SharedBudget && s.Source.Account == "acme" && s.Source.BudgetShare == 3
		}},
		{"defaults", nil, func(s Settings) bool {
			return s.Source.SharedBudget && s.Source.Account == "default" && s.Source.BudgetShare == 2 && s.Accounts[0].Location == time.UTC && s.LogLevel == slog.LevelInfo && s.Writes == "" && s.Accounts[0].Writes == server.WritesLocal &&
				s.PublicURL == nil && s.Accounts[0].PollInterval == 30*time.Second && s.Accounts[0].Settle == 5*time.Second
		}},
		{"set", []string{"HRSYNC_SCHEDULE_TIMEZONE=Europe/London", "HRSYNC_LOG_LEVEL=debug", "HRSYNC_SERVE_WRITES=forward",
			"HRSYNC_SERVE_PUBLIC_URL=https://hr.example/base", "HRSYNC_ONBOARDING_POLL_SECONDS=7", "HRSYNC_ONBOARDING_SETTLE_SECONDS=0"},
			func(s Settings) bool {
				return s.Accounts[0].Location.String() == "Europe/London" && s.LogLevel == slog.LevelDebug && s.Writes == server.WritesForward &&
					s.PublicURL != nil && s.PublicURL.String() == "https://hr.example/base" &&
					s.Accounts[0].PollInterval == 7*time.Second && s.Accounts[0].Settle == 0
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "empty.yaml")
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Load(path, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.want(s) {
				t.Errorf("parsed %+v", s)
			}
		})
	}
}

// TestWarehouseDurations: warehouse.statement_timeout and warehouse.lock_ttl are durations
// that reach the warehouse's options, from the file or the environment, defaulting to sink's.
func TestWarehouseDurations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("warehouse:\n  statement_timeout: 90s\n  lock_ttl: 10s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	statement := func(o sink.Options) time.Duration { return o.StatementTimeout }
	lock := func(o sink.Options) time.Duration { return o.LockTTL }
	tests := []struct {
		name, path string
		env        []string
		option     func(sink.Options) time.Duration
		want       time.Duration
	}{
		{"statement timeout default", "", nil, statement, 5 * time.Minute},
		{"statement timeout file", path, nil, statement, 90 * time.Second},
		{"statement timeout environment wins", path, []string{"HRSYNC_WAREHOUSE_STATEMENT_TIMEOUT=2m30s"}, statement, 150 * time.Second},
		{"lock ttl default", "", nil, lock, sink.DefaultLockTTL},
		{"lock ttl file", path, nil, lock, 10 * time.Second},
		{"lock ttl environment wins", path, []string{"HRSYNC_WAREHOUSE_LOCK_TTL=5s"}, lock, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.path == "" {
				t.Chdir(t.TempDir()) // no ./config.yaml
			}
			cfg, err := Load(tt.path, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			section := sink.Options{StatementTimeout: cfg.Warehouse.StatementTimeout, LockTTL: cfg.Warehouse.LockTTL}
			if got, sent := tt.option(section), tt.option(cfg.Accounts[0].SinkOptions()); got != tt.want || sent != tt.want {
				t.Errorf("%s (to the warehouse %s), want %s", got, sent, tt.want)
			}
		})
	}
}

func TestConfigErrorsAreOneLine(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, file string
		env        []string
		want       string
	}{
		{"unknown key", "serve:\n  adr: x\n", nil, "line 2: unknown key serve.adr (did you mean serve.addr?)"},
		{"unknown nested key", "source:\n  url: http://x\n  apikey: k\n", nil, "line 3: unknown key source.apikey (did you mean source.api_key?)"},
		{"unknown section", "warehose:\n  url: a.db\n", nil, "line 1: unknown key warehose (did you mean warehouse?)"},
		{"unknown key far from any", "colour: blue\n", nil, "line 1: unknown key colour"},
		{"wrong type", "sync:\n  concurrency: lots\n", nil, "line 2: `lots` is not a whole number"},
		{"scalar for a section", "sync: 3\n", nil, "line 1: `3` is not a section of keys"},
		{"schedule words", "", []string{"HRSYNC_SCHEDULE=nightly"}, "@daily"},
		{"bad writes", "", []string{"HRSYNC_SERVE_WRITES=sometimes"}, "serve.writes"},
		{"bad rate", "", []string{"HRSYNC_SOURCE_RATE_LIMIT=fast"}, "HRSYNC_SOURCE_RATE_LIMIT: want an integer"},
		{"negative rate", "", []string{"HRSYNC_SOURCE_RATE_LIMIT=-1"}, "source.rate_limit"},
		{"no budget share", "", []string{"HRSYNC_SOURCE_BUDGET_SHARE=0"}, "source.budget_share must be at least 1"},
		{"blank account", "source:\n  account: \" \"\n", nil, "source.account"},
		{"bad shared budget", "", []string{"HRSYNC_SOURCE_SHARED_BUDGET=maybe"}, "HRSYNC_SOURCE_SHARED_BUDGET"},
		{"bad source url", "", []string{"HRSYNC_SOURCE_URL=ftp://x"}, "source.url"},
		{"bad public url", "", []string{"HRSYNC_SERVE_PUBLIC_URL=/relative"}, "serve.public_url"},
		{"bad log format", "", []string{"HRSYNC_LOG_FORMAT=xml"}, "log.format"},
		{"short idempotency ttl", "", []string{"HRSYNC_SERVE_IDEMPOTENCY_TTL=10s"}, "serve.idempotency_ttl 10s: want at least 1m"},
		{"bad cors origin", "", []string{"HRSYNC_SERVE_CORS_ORIGINS=https://a.example,dash.example.com"}, "serve.cors_origins: origin \"dash.example.com\""},
		{"bad trusted proxy", "", []string{"HRSYNC_SERVE_TRUSTED_PROXIES=10.0.0.0/8,10.0.0.300"}, "serve.trusted_proxies: \"10.0.0.300\""},
		{"bad allowed host", "serve:\n  allowed_hosts: [\"replica.internal/x\"]\n", nil, "serve.allowed_hosts: \"replica.internal/x\""},
		{"empty warehouse", "", []string{"HRSYNC_WAREHOUSE_URL="}, "warehouse.url"},
		{"statement timeout not a duration", "", []string{"HRSYNC_WAREHOUSE_STATEMENT_TIMEOUT=300"}, "HRSYNC_WAREHOUSE_STATEMENT_TIMEOUT: want a duration"},
		{"statement timeout too short", "warehouse:\n  statement_timeout: 10ms\n", nil, "warehouse.statement_timeout"},
		{"statement timeout bad in file", "warehouse:\n  statement_timeout: soon\n", nil, "soon"},
		{"lock ttl too short", "", []string{"HRSYNC_WAREHOUSE_LOCK_TTL=1s"}, "warehouse.lock_ttl must be a duration from 3s to 1h"},
		{"lock ttl too long", "warehouse:\n  lock_ttl: 2h\n", nil, "warehouse.lock_ttl must be a duration from 3s to 1h"},
		{"short etag secret", "", []string{"HRSYNC_SERVE_ETAG_SECRET=tooshort-secret"}, "serve.etag_secret is 15 bytes: want at least 32"},
		{"etag secret twice", "serve:\n  etag_secret_file: /nonexistent\n", []string{"HRSYNC_SERVE_ETAG_SECRET=" + strings.Repeat("s", 32)}, "serve.etag_secret and serve.etag_secret_file are both set"},
		{"missing etag secret file", "serve:\n  etag_secret_file: /nonexistent/etag\n", nil, "serve.etag_secret_file:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".yaml")
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, tt.env)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") ||
				namesGoType(err.Error()) || strings.Contains(err.Error(), "did you mean log") {
				t.Errorf("err %v, want one line containing %q", err, tt.want)
			}
		})
	}
}

// TestSyncResources: sync.resources from the default, the file and the environment, loaded in
// the sync's order whatever order they are named in; an unknown name is an error that names the
// key, the closest known name and all of them.
func TestSyncResources(t *testing.T) {
	all := walk.Resources
	seeds := []sink.Resource{sink.WorkingPatterns, sink.Employees}
	nonSensitive := []sink.Resource{"departments", "divisions", "locations", "holiday_allowances", "other_leave_reasons",
		"statutory_holiday_countries", "company_training_types", sink.WorkingPatterns, sink.Employees,
		"absences", "sicknesses", "leave_requests", "employee_training_courses"}
	tests := []struct {
		name, file string
		env        []string
		want       []sink.Resource
		wantErr    []string // all in the error; nil: no error
	}{
		{name: "default: every collection the sync knows", want: all},
		{name: "file", file: "sync:\n  resources: [employees]\n", want: []sink.Resource{sink.Employees}},
		{name: "file in another order", file: "sync:\n  resources:\n    - employees\n    - working_patterns\n", want: seeds},
		{name: "environment", env: []string{"HRSYNC_SYNC_RESOURCES=working_patterns"}, want: []sink.Resource{sink.WorkingPatterns}},
		{name: "environment wins, in the sync's order", file: "sync:\n  resources: [working_patterns]\n",
			env: []string{"HRSYNC_SYNC_RESOURCES= employees , working_patterns,employees"}, want: seeds},
		{name: "unknown name in the file", file: "sync:\n  resources: [employes]\n",
			wantErr: []string{"sync.resources", `unknown collection "employes"`, "did you mean employees?", "known: departments, divisions, locations, holiday_allowances, other_leave_reasons, statutory_holiday_countries, company_training_types, working_patterns, employees, absences"}},
		{name: "unknown name in the environment", env: []string{"HRSYNC_SYNC_RESOURCES=employees,workingpatterns"},
			wantErr: []string{"sync.resources", `"workingpatterns"`, "did you mean working_patterns?"}},
		{name: "unknown name far from any", env: []string{"HRSYNC_SYNC_RESOURCES=payslips"},
			wantErr: []string{"sync.resources", `unknown collection "payslips"; known: departments, `}},
		{name: "empty: every collection", file: "sync:\n  resources: [employees]\n", env: []string{"HRSYNC_SYNC_RESOURCES="}, want: all},
		{name: "empty in the file: every collection", file: "sync:\n  resources: []\n", want: all},
		{name: "only commas", env: []string{"HRSYNC_SYNC_RESOURCES=, ,"}, want: all},
		// The financial module is walked only when named: all leaves it out.
		{name: "all", env: []string{"HRSYNC_SYNC_RESOURCES=all"}, want: nonSensitive},
		{name: "all and a sensitive one", file: "sync:\n  resources: [salaries, all]\n",
			want: append(slices.Clone(nonSensitive), "salaries")},
		{name: "a sensitive one named", env: []string{"HRSYNC_SYNC_RESOURCES=benefits,employees"},
			want: []sink.Resource{sink.Employees, "benefits"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Load(path, tt.env)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("no error; resources %v", s.Accounts[0].Resources)
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
						t.Errorf("err %q, want one line containing %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.Accounts[0].Resources, tt.want) {
				t.Errorf("resources %v, want %v", s.Accounts[0].Resources, tt.want)
			}
		})
	}
}

func TestMissingExplicitConfigIsAnError(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), nil); err == nil {
		t.Error("no error for a missing --config file")
	}
}

// FuzzConfigFile: whatever an operator writes in config.yaml, loading it never panics, and a
// refusal is one line that names no Go type.
func FuzzConfigFile(f *testing.F) {
	for _, seed := range []string{"", "source:\n  apikey: x\n", "serve:\n  keys: [1, 2]\n", "a: [", "sync: 3\n",
		"accounts:\n  - name: x\n", "- a\n- b\n", "sync:\n  resources: [employes, 3]\n", "sync:\n  resources: employees\n", "source:\n  url: http://x\n  api_key: k\nschedule: '@daily'\n"} {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data string) {
		path := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, nil)
		if err != nil && (strings.Contains(err.Error(), "\n") || namesGoType(err.Error())) {
			t.Errorf("not one operator line: %q", err)
		}
	})
}

// TestETagSecretSetting: serve.etag_secret from the environment or the file, or read from
// serve.etag_secret_file, and a short one refused without echoing it.
func TestETagSecretSetting(t *testing.T) {
	dir := t.TempDir()
	secret := "0123456789abcdef0123456789abcdef-from-a-file"
	secretFile := filepath.Join(dir, "etag.secret")
	if err := os.WriteFile(secretFile, []byte("# the serve pods' ETag secret\n"+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte("serve:\n  etag_secret_file: "+secretFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, nil)
	if err != nil || cfg.Serve.ETagSecret != secret {
		t.Errorf("from the file: %q, %v", cfg.Serve.ETagSecret, err)
	}
	env := strings.Repeat("e", 40)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err = Load(path, []string{"HRSYNC_SERVE_ETAG_SECRET=" + env}); err != nil || cfg.Serve.ETagSecret != env {
		t.Errorf("from the environment: %q, %v", cfg.Serve.ETagSecret, err)
	}
	if cfg, err = Load(path, nil); err != nil || cfg.Serve.ETagSecret != "" {
		t.Errorf("by default: %q, %v", cfg.Serve.ETagSecret, err)
	}
	short := "SHORTSECRETVALUE"
	if _, err = Load(path, []string{"HRSYNC_SERVE_ETAG_SECRET=" + short}); err == nil || strings.Contains(err.Error(), short) {
		t.Errorf("a short secret: %v", err)
	}
}

// goType is a Go type of this package or another, as yaml's errors would name it
// (config.SourceConfig, main.Config): an operator's message names none.
var goType = regexp.MustCompile(`\b(main|config|time)\.[A-Z]`)

func namesGoType(msg string) bool { return goType.MatchString(msg) }
