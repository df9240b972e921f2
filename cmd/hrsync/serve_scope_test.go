package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/sourcetest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestServeKeyScopeErrors: a wrong scope in serve.keys is one line naming the key (never its
// value), with the closest collection for a misspelt one.
func TestServeKeyScopeErrors(t *testing.T) {
	t.Parallel()
	sum := sha256Hex("secret-value-4f9a0c7e2b1d8e6f3a5c9b0d")
	tests := []struct{ name, keys, want string }{
		{"key and sha256", "{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, sha256: " + sum + "}", "serve.keys d: set key or key_file, or sha256 (exactly one of them)"},
		{"key_file and sha256", "{name: d, key_file: /x, sha256: " + sum + "}", "serve.keys d: set key or key_file, or sha256"},
		{"none", "{name: d, collections: [employees]}", "serve.keys d: set key or key_file, or sha256"},
		{"short sha256", "{name: d, sha256: " + sum[:40] + "}", "serve.keys d: sha256 is not 64 hex digits (make it with: printf %s \"$KEY\" | sha256sum)"},
		{"not hex", "{name: d, sha256: x" + sum[1:] + "}", "serve.keys d: sha256 is not 64 hex digits"},
		{"misspelt collection", "{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, collections: [employees, departmets], writes: false}", `serve.keys d: collections: no collection "departmets" (did you mean departments?); served: employees, working_patterns, `},
		{"empty collections", "{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, collections: []}", "serve.keys d: collections lists none (leave it out for all)"},
		{"fields and deny", "{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, fields: [id], deny: [dob]}", "serve.keys d: set fields (the fields it may see) or deny (those it may not), not both"},
		{"fields without id", "{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, fields: [first_name, email]}", "serve.keys d: fields: the allow list must include id"},
		{"deny id", "{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, deny: [id]}", "serve.keys d: deny: id cannot be denied"},
		{"empty path segment", "{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, fields: [id, line_manager.]}", `serve.keys d: fields: field path "line_manager." has an empty segment`},
		{"writes without employees", "{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, collections: [departments], writes: true}", "serve.keys d: writes is true but collections leaves out employees: it may create employees but not read them"},
		{"writes not a bool", "{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, writes: maybe}", "is not true or false"},
		{"unknown key", "{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, field: [id]}", "unknown key serve.keys[0].field (did you mean serve.keys[0].fields?)"},
		{"deny **.id", `{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, deny: [dob, "**.id"]}`, "serve.keys d: deny: id cannot be denied"},
		{"deny ID", "{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, deny: [ID]}", "serve.keys d: deny: id cannot be denied"},
		{"** then a path", `{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, deny: ["**.line_manager.email"]}`, `serve.keys d: deny: field path "**.line_manager.email": ** must be followed by one member name (**.email)`},
		{"** alone", `{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, fields: [id, "**"]}`, `serve.keys d: fields: field path "**": ** must be followed by one member name (**.email)`},
		{"* as a wildcard", `{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, deny: ["line_manager.*"]}`, `serve.keys d: deny: field path "line_manager.*": * is no wildcard; a member at every depth is **.name (**.email)`},
		{"** inside a path", `{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, deny: ["a.**.email"]}`, `serve.keys d: deny: field path "a.**.email": * is no wildcard`},
		{"** unquoted", "{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, deny: [**.email]}", `(a field path that starts with * must be quoted: "**.email")`},
		{"unknown class", "{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, deny_classes: [health, medical]}", `serve.keys d: deny_classes: unknown personal-data class "medical": want one of not_personal, employment, identifying, free_text, financial, health`},
		{"no classes", "{name: d, key: secret-value-4f9a0c7e2b1d8e6f3a5c9b0d, deny_classes: []}", "serve.keys d: deny_classes lists none (leave it out to deny none)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Load(sinktest.ConfigFile(t, "serve:\n  keys:\n    - "+tt.keys+"\n"), nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v, want one line containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret-value-4f9a0c7e2b1d8e6f3a5c9b0d") || strings.Contains(err.Error(), sum[:20]) {
				t.Errorf("err %v shows the key", err)
			}
		})
	}
}

// TestServeKeyScopes: serve.keys' scopes reach serve as given; writes left out is true for a key
// without a scope and false for one with any.
func TestServeKeyScopes(t *testing.T) {
	t.Parallel()
	sum := sha256Hex("k")
	cfg, err := config.Load(sinktest.ConfigFile(t, `serve:
  keys:
    - {name: full, key: a-4f9a0c7e2b1d8e6f3a5c9b0d}
    - {name: full-read-only, key: b-4f9a0c7e2b1d8e6f3a5c9b0d, writes: false}
    - name: directory
      sha256: `+strings.ToUpper(sum)+`
      collections: [employees, departments]
      fields: [id, first_name, line_manager.id]
    - {name: deny, key: c-4f9a0c7e2b1d8e6f3a5c9b0d, deny: [dob, bank_details.iban]}
    - {name: deny-writer, key: d-4f9a0c7e2b1d8e6f3a5c9b0d, deny: [dob], writes: true}
    - name: any-depth
      key: e-4f9a0c7e2b1d8e6f3a5c9b0d
      fields:
        - id
        - "**.email"
        - '**.name'
    - {name: no-health, key: f-4f9a0c7e2b1d8e6f3a5c9b0d, deny_classes: [health, Financial, free-text]}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	keys, _, err := config.ServeKeys(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	want := []server.Key{
		{Name: "full", Key: "a-4f9a0c7e2b1d8e6f3a5c9b0d", Account: "default"},
		{Name: "full-read-only", Key: "b-4f9a0c7e2b1d8e6f3a5c9b0d", Account: "default", Scope: server.Scope{ReadOnly: true}},
		{Name: "directory", SHA256: strings.ToUpper(sum), Account: "default", Scope: server.Scope{
			Collections: []string{"employees", "departments"}, Fields: []string{"id", "first_name", "line_manager.id"}, ReadOnly: true}},
		{Name: "deny", Key: "c-4f9a0c7e2b1d8e6f3a5c9b0d", Account: "default", Scope: server.Scope{Deny: []string{"dob", "bank_details.iban"}, ReadOnly: true}},
		{Name: "deny-writer", Key: "d-4f9a0c7e2b1d8e6f3a5c9b0d", Account: "default", Scope: server.Scope{Deny: []string{"dob"}}},
		{Name: "any-depth", Key: "e-4f9a0c7e2b1d8e6f3a5c9b0d", Account: "default", Scope: server.Scope{Fields: []string{"id", "**.email", "**.name"}, ReadOnly: true}},
		{Name: "no-health", Key: "f-4f9a0c7e2b1d8e6f3a5c9b0d", Account: "default", Scope: server.Scope{DenyClasses: []v1.Class{v1.Health, v1.Financial, v1.FreeText}, ReadOnly: true}},
	}
	if len(keys) != len(want) {
		t.Fatalf("keys %+v", keys)
	}
	for i := range want {
		if fmt.Sprintf("%+v", keys[i]) != fmt.Sprintf("%+v", want[i]) {
			t.Errorf("key %d:\n got %+v\nwant %+v", i, keys[i], want[i])
		}
	}
}

// TestScopedKeyServe: a key given in the configuration by its SHA-256, with the directory scope
// of config.yaml, reads over a synced warehouse only its collections and fields: every page of
// employees, the departments, its index; its other reads and its creates are 403, and the
// access log names it, never the key. A key without a scope still reads everything.
func TestScopedKeyServe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	acct := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 230, Seed: 5})
	up := sourcetest.NewServer(fakeupstream.Options{Employees: acct.Employees,
		Collections: map[string][]json.RawMessage{"departments": acct.Collections["departments"]}})
	defer up.Close()
	const dirKey = "directory-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d"
	config := fmt.Sprintf(`
warehouse: {url: %s}
source: {url: %q, api_key: %q, rate_limit: 0}
sync: {resources: [working_patterns, employees, departments]}
serve:
  keys:
    - name: directory
      sha256: %s
      collections: [employees, departments]
      fields: [id, first_name, last_name, email, job_title, name, department,
               line_manager.id, line_manager.name, line_manager.first_name, line_manager.last_name, line_manager.email]
    - {name: admin, key: admin-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d}
`, filepath.Join(dir, "hrsync.db"), up.URL, up.APIKey(), sha256Hex(dirKey))
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--config", path, "sync"}, nil, &out, io.Discard); err != nil {
		t.Fatalf("sync: %v\n%s", err, out.String())
	}
	base, logs, stop := startServe(t, nil, "--config", path)

	allowed := []string{"department", "email", "first_name", "id", "job_title", "last_name", "line_manager"}
	walked, sawDOB := 0, false
	for page := 1; ; page++ {
		url := fmt.Sprintf("%s/v1/employees?page=%d&per_page=100", base, page)
		code, body := get(t, url, dirKey)
		if code != 200 {
			t.Fatalf("page %d: %d %s", page, code, body)
		}
		_, full := get(t, url, "admin-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d")
		sawDOB = sawDOB || strings.Contains(full, `"dob"`)
		var doc struct{ Employees []map[string]json.RawMessage }
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Employees) == 0 {
			break
		}
		for _, e := range doc.Employees {
			walked++
			for k := range e {
				if !slices.Contains(allowed, k) {
					t.Fatalf("employee %s: member %s outside the scope", e["id"], k)
				}
			}
			if _, ok := e["id"]; !ok {
				t.Fatalf("employee without id: %v", e)
			}
			var lm map[string]json.RawMessage
			if json.Unmarshal(e["line_manager"], &lm) == nil {
				for k := range lm {
					if !slices.Contains([]string{"id", "name", "first_name", "last_name", "email"}, k) {
						t.Fatalf("employee %s: line_manager.%s outside the scope", e["id"], k)
					}
				}
			}
		}
	}
	if walked != 230 || !sawDOB {
		t.Errorf("walked %d employees (want 230); the full key saw dob: %v", walked, sawDOB)
	}

	code, body := get(t, base+"/v1/departments", dirKey)
	var deps struct{ Departments []map[string]any }
	if err := json.Unmarshal([]byte(body), &deps); code != 200 || err != nil || len(deps.Departments) == 0 {
		t.Fatalf("departments: %d %s", code, body)
	}
	for _, d := range deps.Departments {
		if got := slices.Sorted(maps.Keys(d)); !slices.Equal(got, []string{"id", "name"}) {
			t.Errorf("department members %v", got)
		}
	}
	if code, body := get(t, base+"/v1/working_patterns", dirKey); code != 403 || body != `{"error":{"type":"Forbidden","message":"this key may not read working_patterns"}}`+"\n" {
		t.Errorf("working_patterns: %d %s", code, body)
	}
	if code, _ := get(t, base+"/v1/working_patterns", "admin-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d"); code != 200 {
		t.Errorf("admin key: working_patterns %d", code)
	}
	if code, body := get(t, base+"/v1", dirKey); code != 200 || !strings.Contains(body, `"name":"employees"`) || !strings.Contains(body, `"name":"departments"`) || strings.Count(body, `"name"`) != 2 {
		t.Errorf("index: %d %s", code, body)
	}
	req, _ := http.NewRequest("POST", base+"/v1/employees", strings.NewReader("employee[first_name]=A&employee[last_name]=B&employee[email]=ab@example.com&employee[join_date]=2025-01-02"))
	req.Header.Set("X-API-KEY", dirKey)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("create with the directory key: %d", resp.StatusCode)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "key=directory") || strings.Contains(logs.String(), dirKey) {
		t.Errorf("access log names the key wrongly:\n%s", logs)
	}
}

// TestConfigDirectoryExample: config.yaml's directory example, uncommented with a real hash,
// is a valid read-only key that reads employees and departments and no personal field.
func TestConfigDirectoryExample(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var block []string
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, "  #   - name: directory") || len(block) > 0 && strings.HasPrefix(line, "  #     ") {
			block = append(block, line)
		} else if len(block) > 0 {
			break
		}
	}
	if len(block) < 4 {
		t.Fatalf("no directory example in config.yaml: %q", block)
	}
	text := strings.ReplaceAll(strings.Join(block, ""), "  # ", "  ")
	text = strings.Replace(text, `"<the key's SHA-256, 64 hex digits>"`, sha256Hex("k"), 1)
	cfg, err := config.Load(sinktest.ConfigFile(t, "serve:\n  keys:\n"+text), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	keys, _, err := config.ServeKeys(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	k := keys[0]
	if k.Name != "directory" || k.SHA256 != sha256Hex("k") || !k.Scope.ReadOnly || !slices.Equal(k.Scope.Collections, []string{"employees", "departments"}) ||
		!slices.Contains(k.Scope.Fields, "id") || !slices.Contains(k.Scope.Fields, "name") || !slices.Contains(k.Scope.Fields, "email") {
		t.Errorf("directory example: %+v", k)
	}
	for _, f := range k.Scope.Fields {
		for seg := range strings.SplitSeq(f, ".") {
			if slices.Contains([]string{"dob", "ni_number", "bank_details", "salary", "custom_fields", "personal_email", "address", "phone", "age", "gender"}, seg) {
				t.Errorf("directory example shows %s", f)
			}
		}
	}
}

// TestServeScopeWarningsAndTheKeyFile: at start, serve names in one line the key whose deny list
// leaves other members of the class it denies readable (deny: [email]), and none for a key
// denying the class (deny_classes: [identifying]); once serve.keys is set, the generated key
// file's key is refused (401) and one line says so and how to keep it; listed as a key_file, it
// is accepted again and the line goes. No log line holds a key.
func TestServeScopeWarningsAndTheKeyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "hrsync.key")
	env := []string{"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(dir, "w.db")), "HRSYNC_SERVE_API_KEY_FILE=" + keyFile}
	// The first start, with no key configured, generates the file.
	base, logs, stop := startServe(t, env)
	b, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	fileKey := strings.TrimSpace(string(b))
	if code, body := get(t, base+"/v1/employees", fileKey); code != 200 {
		t.Fatalf("with the generated key: %d %s", code, body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "no longer accepted") || strings.Contains(logs.String(), "deny_classes") {
		t.Errorf("a warning with no serve.keys:\n%s", logs)
	}

	const analytics, people = "analytics-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d", "people-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d"
	keys := `serve:
  keys:
    - {name: analytics, key: ` + analytics + `, deny: [email]}
    - {name: people, key: ` + people + `, deny_classes: [identifying]}
`
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(keys), 0o600); err != nil {
		t.Fatal(err)
	}
	base, logs, stop = startServe(t, env, "--config", path)
	for key, want := range map[string]int{fileKey: 401, analytics: 200, people: 200} {
		if code, body := get(t, base+"/v1/employees", key); code != want {
			t.Errorf("key %.12s…: %d %s, want %d", key, code, body, want)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(logs.String(), "\n")
	count := func(sub string) (n int) {
		for _, l := range lines {
			if strings.Contains(l, sub) {
				n++
			}
		}
		return n
	}
	// The line docs/serve.md shows, as logged.
	doc, err := os.ReadFile("../../docs/serve.md")
	if err != nil {
		t.Fatal(err)
	}
	_, wantLine, _ := strings.Cut(string(doc), "\nlevel=WARN msg=\"serve.keys: key \\\"analytics\\\"")
	wantLine, _, _ = strings.Cut(wantLine, "\n")
	wantLine = `level=WARN msg="serve.keys: key \"analytics\"` + wantLine
	if !strings.Contains(wantLine, "denies email but can read first_name") || count(wantLine) != 1 {
		t.Errorf("no one warning line for the analytics key as docs/serve.md shows it (%q):\n%s", wantLine, logs)
	}
	if count(`key \"people\"`) != 0 {
		t.Errorf("a warning for a key denying the class:\n%s", logs)
	}
	// The line docs/serve.md shows, as logged (of the file it names).
	_, fileLine, _ := strings.Cut(string(doc), "\nlevel=WARN msg=\"serve.keys is set: ")
	fileLine, _, _ = strings.Cut(fileLine, "\n")
	fileLine = strings.ReplaceAll(`level=WARN msg="serve.keys is set: `+fileLine, "hrsync.key", keyFile)
	if !strings.Contains(fileLine, "no longer accepted") || count(fileLine) != 1 {
		t.Errorf("no one line saying the key file's key is refused as docs/serve.md shows it (%q):\n%s", fileLine, logs)
	}
	for _, k := range []string{fileKey, analytics, people} {
		if strings.Contains(logs.String(), k) {
			t.Errorf("a key in the logs:\n%s", logs)
		}
	}

	// Listed as a key_file, the file's key is accepted again, and nothing is said of it.
	if err := os.WriteFile(path, []byte(keys+"    - {name: admin, key_file: "+keyFile+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, logs, stop = startServe(t, env, "--config", path)
	if code, body := get(t, base+"/v1/employees", fileKey); code != 200 {
		t.Errorf("the key file listed in serve.keys: %d %s", code, body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "no longer accepted") {
		t.Errorf("the key file is said refused while listed:\n%s", logs)
	}
}

// TestRunServeScopeWarnings: hrsync run --serve says at start what serve says of its keys.
func TestRunServeScopeWarnings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "hrsync.key")
	if err := os.WriteFile(keyFile, []byte("hrsync-4f9a0c7e2b1d8e6f3a5c9b0d4f9a0c7e2b1d\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte("serve:\n  keys:\n    - {name: analytics, key: analytics-serve-key-4f9a0c7e2b1d8e6f3a5c9b0d, deny: [email]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(dir, "w.db")), "HRSYNC_SERVE_API_KEY_FILE=" + keyFile,
		"HRSYNC_SERVE_ADDR=" + freeAddr(t), "HRSYNC_METRICS_ADDR=" + freeAddr(t), "HRSYNC_SCHEDULE=@every 24h", "HRSYNC_SOURCE_URL=http://127.0.0.1:9/", "HRSYNC_SOURCE_API_KEY=source-key-4f9a0c7e2b1d8e6f3a5c9b0d"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"--config", path, "run", "--serve"}, env, io.Discard, logs) }()
	want := []string{`key \"analytics\" denies email but can read first_name`, "serve.keys is set: the key in " + keyFile + " is no longer accepted"}
	deadline := time.Now().Add(upWithin)
	for !strings.Contains(logs.String(), want[0]) || !strings.Contains(logs.String(), want[1]) {
		select {
		case err := <-done:
			t.Fatalf("run exited: %v; logs:\n%s", err, logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("run said nothing of its keys (%q); logs:\n%s", want, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(upWithin):
		t.Fatal("run did not stop")
	}
	if strings.Contains(logs.String(), "analytics-serve-key") || strings.Contains(logs.String(), "hrsync-4f9a0c7e") {
		t.Errorf("a key in the logs:\n%s", logs)
	}
}
