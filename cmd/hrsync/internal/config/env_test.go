package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestUnknownEnvironmentVariables: an HRSYNC_ variable hrsync does not read is refused as an
// unknown key of the file is, named with the closest one it reads, never with its value; the
// variables it reads (the configuration's, each listed account's, those of the tests and
// scripts) are not.
func TestUnknownEnvironmentVariables(t *testing.T) {
	const secret = "Sup3r-Secret-value-9f2c"
	accounts := "accounts:\n  - name: acme\n  - name: globex-uk\n"
	tests := []struct {
		name string
		file string
		env  []string
		want string // "" for accepted
	}{
		{"misspelt key", "", []string{"HRSYNC_SOURCE_APIKEY=" + secret}, "config: environment: unknown variable HRSYNC_SOURCE_APIKEY (did you mean HRSYNC_SOURCE_API_KEY?)"},
		{"a letter short", "", []string{"HRSYNC_SERVE_WRITE=forward"}, "unknown variable HRSYNC_SERVE_WRITE (did you mean HRSYNC_SERVE_WRITES?)"},
		{"URI for URL", "", []string{"HRSYNC_WAREHOUSE_URI=" + secret}, "unknown variable HRSYNC_WAREHOUSE_URI (did you mean HRSYNC_WAREHOUSE_URL?)"},
		{"nested key", "", []string{"HRSYNC_SYNC_WINDOW_DAYSBACK=30"}, "(did you mean HRSYNC_SYNC_WINDOW_DAYS_BACK?)"},
		{"nothing near", "", []string{"HRSYNC_COLOUR=blue"}, "config: environment: unknown variable HRSYNC_COLOUR"},
		{"several, each named", "", []string{"HRSYNC_SOURCE_URLL=x", "HRSYNC_LOG_LEVL=debug"},
			"unknown variable HRSYNC_LOG_LEVL (did you mean HRSYNC_LOG_LEVEL?); unknown variable HRSYNC_SOURCE_URLL (did you mean HRSYNC_SOURCE_URL?)"},
		{"a file-only key", "", []string{"HRSYNC_SERVE_KEYS=" + secret}, "HRSYNC_SERVE_KEYS: serve.keys is read from the config file only"},
		{"accounts is file-only", "", []string{"HRSYNC_ACCOUNTS=acme"}, "HRSYNC_ACCOUNTS: accounts is read from the config file only"},
		{"an account's misspelt key", accounts, []string{"HRSYNC_ACCOUNTS_ACME_SOURCE_APIKEY=" + secret}, "unknown variable HRSYNC_ACCOUNTS_ACME_SOURCE_APIKEY (did you mean HRSYNC_ACCOUNTS_ACME_SOURCE_API_KEY?)"},
		{"a misspelt account", accounts, []string{"HRSYNC_ACCOUNTS_ACMEE_SOURCE_API_KEY=" + secret}, "unknown variable HRSYNC_ACCOUNTS_ACMEE_SOURCE_API_KEY (did you mean HRSYNC_ACCOUNTS_ACME_SOURCE_API_KEY?)"},
		{"an account not listed", "", []string{"HRSYNC_ACCOUNTS_ACME_SOURCE_API_KEY=" + secret}, "unknown variable HRSYNC_ACCOUNTS_ACME_SOURCE_API_KEY (an account's variables need the account listed under accounts in the config file)"},
		{"an account's name is the file's", accounts, []string{"HRSYNC_ACCOUNTS_ACME_NAME=other"}, "unknown variable HRSYNC_ACCOUNTS_ACME_NAME"},

		{"configuration", "", []string{"HRSYNC_SOURCE_API_KEY=" + secret, "HRSYNC_SOURCE_API_KEY_FILE=", "HRSYNC_SYNC_WINDOW_DAYS_BACK=30", "HRSYNC_SERVE_ETAG_SECRET_FILE="}, ""},
		{"an account's", accounts, []string{"HRSYNC_ACCOUNTS_ACME_SOURCE_RATE_LIMIT=30", "HRSYNC_ACCOUNTS_GLOBEX_UK_SYNC_CONCURRENCY=2"}, ""},
		{"the tests' and scripts'", "", []string{"HRSYNC_TEST_DATABASE_URL=postgres://u:" + secret + "@db/x", "HRSYNC_TEST_THROWAWAY=1", "HRSYNC_LINT_ONLY=1", "HRSYNC_BIN=/tmp/h", "HRSYNC_CHECK_METRICS_URL=http://x"}, ""},
		{"other variables", "", []string{"HRSYNCX=1", "MY_HRSYNC_SOURCE_APIKEY=1", "PATH=/bin"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, tt.env)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want == "":
				return
			case err == nil:
				t.Fatalf("accepted, want %q", tt.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error\n %s\nwant it to hold\n %s", msg, tt.want)
			}
			if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
				t.Errorf("error shows a value or is not one line: %q", msg)
			}
		})
	}
}

// hrsyncName is an HRSYNC_ name as the repository writes it; one ending in _ is a prefix.
var hrsyncName = regexp.MustCompile(`HRSYNC_[A-Z0-9_]+`)

// misspeltExamples are the wrong names the docs show as examples of what is refused: each
// must be refused.
var misspeltExamples = []string{"HRSYNC_SOURCE_APIKEY"}

// TestEveryHRSYNCNameIsKnown finds every HRSYNC_ name in the repository (code, scripts, docs,
// deployment files): each is a variable hrsync reads (the configuration's, an account's), one
// of nonConfigEnv (read by the tests or the scripts), or a misspelt example the docs show; and
// every name of nonConfigEnv is still written somewhere. So a variable a script or test starts
// reading must be added to nonConfigEnv (else hrsync would refuse it in a developer's shell),
// and a name in the docs that hrsync would refuse fails here.
func TestEveryHRSYNCNameIsKnown(t *testing.T) {
	config := EnvNames()
	accountVars := envNamesOf(reflect.TypeFor[AccountConfig](), "")
	seen := map[string]bool{}
	root := filepath.Join("..", "..", "..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		// This package's own tests write wrong names on purpose (as inputs to refuse).
		if strings.HasPrefix(rel, filepath.Join("cmd", "hrsync")+string(filepath.Separator)) && strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > 4<<20 || !info.Mode().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for line, text := range strings.Split(string(data), "\n") {
			for _, name := range hrsyncName.FindAllString(text, -1) {
				if strings.HasSuffix(name, "_") {
					continue // a prefix: HRSYNC_, HRSYNC_ACCOUNTS_<NAME>_
				}
				if rel != filepath.Join("cmd", "hrsync", "internal", "config", "config.go") {
					seen[name] = true
				}
				if slices.Contains(config, name) || slices.Contains(nonConfigEnv, name) || slices.Contains(misspeltExamples, name) || isAccountVar(name, accountVars) {
					continue
				}
				t.Errorf("%s:%d: %s is neither a variable hrsync reads nor one of nonConfigEnv (a test's or a script's): "+
					"add it there if something reads it, else correct it", rel, line+1, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range nonConfigEnv {
		if !seen[name] {
			t.Errorf("nonConfigEnv lists %s, which nothing in the repository writes any more: take it out", name)
		}
	}
	for _, name := range misspeltExamples {
		if len(unknownEnv(map[string]string{name: "x"}, nil)) == 0 {
			t.Errorf("the docs' misspelt example %s is accepted", name)
		}
	}
}

// isAccountVar reports whether name is HRSYNC_ACCOUNTS_<NAME> + one of an account's variables
// (vars, each starting with _).
func isAccountVar(name string, vars []string) bool {
	rest, ok := strings.CutPrefix(name, accountsEnvPrefix)
	if !ok {
		return false
	}
	for _, v := range vars {
		if acct, ok := strings.CutSuffix(rest, v); ok && acct != "" {
			return true
		}
	}
	return false
}

// FuzzUnknownEnv: whatever HRSYNC_ variable a process is given, loading the configuration never
// panics and never prints the variable's value.
func FuzzUnknownEnv(f *testing.F) {
	for _, s := range []string{"SOURCE_APIKEY", "ACCOUNTS_ACME_SOURCE_URL", "SERVE_KEYS", "", "_", "ACCOUNTS_", "SOURCE_API_KEY_FILE"} {
		f.Add(s)
	}
	dir := f.TempDir()
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte("accounts:\n  - name: acme\n"), 0o600); err != nil {
		f.Fatal(err)
	}
	const value = "ZQZ-value-never-shown"
	f.Fuzz(func(t *testing.T, name string) {
		_, err := Load(path, []string{"HRSYNC_" + name + "=" + value})
		if err != nil && strings.Contains(err.Error(), value) {
			t.Fatalf("HRSYNC_%s: the error shows the value: %v", name, err)
		}
	})
}
