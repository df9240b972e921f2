package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

// tenant is one account of a multi-account test: its store, its data and a reference server, a
// single-account handler over its store alone (what its keys must see, byte for byte).
type tenant struct {
	name   string
	marker string // in every name of its records, and in no other account's
	keys   []string
	store  *sink.Store
	ref    *httptest.Server
	// records are its records by collection and id, each as a name holding the marker.
	records map[string]map[int64]string
}

// tenantData are the accounts of the routing tests: different ids and names, and employee 100
// and department 5 present in two or three accounts with different content.
var tenantData = []struct {
	name, marker string
	keys         []string
	employees    map[int64]string
	departments  map[int64]string
	reasons      map[int64]string
}{
	{"acme", "Acmeish", []string{"acme-key-1-9f2c4e7a1b3d5f60a8e2", "acme-key-2-9f2c4e7a1b3d5f60a8e2"},
		map[int64]string{1: "Ana", 2: "Ben", 100: "Shared"}, map[int64]string{5: "R&D"}, map[int64]string{41: "Jury"}},
	{"bolt", "Boltish", []string{"bolt-key-9f2c4e7a1b3d5f60a8e2"},
		map[int64]string{3: "Cy", 100: "Shared"}, map[int64]string{5: "Sales", 6: "Ops"}, nil},
	{"core", "Coreish", []string{"core-key-9f2c4e7a1b3d5f60a8e2"},
		map[int64]string{7: "Dee", 100: "Shared", 101: "Eve"}, nil, map[int64]string{42: "Moving"}},
}

// newTenants opens each account's store on backend, loads its records and starts its reference
// server.
func newTenants(t *testing.T, backend string) []*tenant {
	t.Helper()
	var ts []*tenant
	for _, d := range tenantData {
		tn := &tenant{name: d.name, marker: d.marker, keys: d.keys, records: map[string]map[int64]string{}}
		tn.store = sinktest.Store(t, backend, sink.Options{Now: func() time.Time { return fixedNow }})
		f := &fixture{store: tn.store}
		tn.records["employees"] = map[int64]string{}
		for id, first := range d.employees {
			name := first + " " + d.marker
			f.put(t, fmt.Sprintf(`{"id":%d,"first_name":%q,"last_name":%q,"email":"e%d@%s.example.com"}`, id, first, d.marker, id, d.name))
			tn.records["employees"][id] = name
		}
		for _, c := range []struct {
			coll *v1.Collection
			recs map[int64]string
		}{{v1.Departments, d.departments}, {v1.OtherLeaveReasons, d.reasons}} {
			if len(c.recs) == 0 {
				continue
			}
			tn.records[c.coll.Name] = map[int64]string{}
			var raws []string
			for id, n := range c.recs {
				name := n + " " + d.marker
				raws = append(raws, fmt.Sprintf(`{"id":%d,"name":%q}`, id, name))
				tn.records[c.coll.Name][id] = name
			}
			f.walk(t, c.coll, raws...)
		}
		ref, err := server.NewHandler(tn.store, server.Options{APIKeys: []string{"ref-key-9f2c4e7a1b3d5f60a8e2"}})
		if err != nil {
			t.Fatal(err)
		}
		tn.ref = httptest.NewServer(ref)
		t.Cleanup(tn.ref.Close)
		ts = append(ts, tn)
	}
	return ts
}

// multiOptions are the options of one handler serving every tenant, each key reading its own.
func multiOptions(ts []*tenant) server.Options {
	var opts server.Options
	for _, tn := range ts {
		opts.Accounts = append(opts.Accounts, server.Account{Name: tn.name, Store: tn.store})
		for i, k := range tn.keys {
			opts.Keys = append(opts.Keys, server.Key{Name: fmt.Sprintf("%s %d", tn.name, i+1), Key: k, Account: tn.name})
		}
	}
	return opts
}

type answer struct {
	status int
	total  string
	body   string
}

func get(t *testing.T, srv *httptest.Server, key, path string, header ...string) (*http.Response, answer) {
	t.Helper()
	resp, b := send(t, "GET", srv.URL+path, key, nil, header...)
	return resp, answer{resp.StatusCode, resp.Header.Get("Total"), string(b)}
}

// TestKeysReadOnlyTheirAccount tries every key on every account's records: the list of every
// declared collection, the index, and each record of each account by id. A key's answer is what
// a handler over its account's store alone answers, holds no other account's names, and an id
// only another account has is 404.
func TestKeysReadOnlyTheirAccount(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			ts := newTenants(t, backend)
			h, err := server.New(multiOptions(ts))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()

			paths := []string{"/v1"}
			for _, c := range append([]string{"employees", "working_patterns"}, collectionNames()...) {
				paths = append(paths, "/v1/"+c+"?per_page=100")
			}
			type one struct {
				coll string
				id   int64
			}
			var ones []one
			for _, tn := range ts {
				for coll, recs := range tn.records {
					for id := range recs {
						ones = append(ones, one{coll, id})
					}
				}
			}
			var only404 int
			for _, tn := range ts {
				for _, key := range tn.keys {
					check := func(path string, wantStatus int, wantMine bool) {
						t.Helper()
						_, got := get(t, srv, key, path)
						_, want := get(t, tn.ref, "ref-key-9f2c4e7a1b3d5f60a8e2", path)
						if got != want {
							t.Errorf("%s with %s's key %q:\n got %+v\nwant %+v", path, tn.name, key, got, want)
						}
						if wantStatus != 0 && got.status != wantStatus {
							t.Errorf("%s with %s's key: status %d, want %d", path, tn.name, got.status, wantStatus)
						}
						if wantMine && !strings.Contains(got.body, tn.marker) {
							t.Errorf("%s with %s's key: %s lacks its own record", path, tn.name, got.body)
						}
						for _, o := range ts {
							if o != tn && strings.Contains(got.body, o.marker) {
								t.Errorf("%s with %s's key reads %s's data: %s", path, tn.name, o.name, got.body)
							}
						}
					}
					for _, p := range paths {
						check(p, 200, false)
					}
					// Every collection holding records in the account lists them all, and only them.
					for coll, recs := range tn.records {
						_, got := get(t, srv, key, "/v1/"+coll+"?per_page=100")
						if got.total != fmt.Sprint(len(recs)) || strings.Count(got.body, tn.marker) != len(recs) {
							t.Errorf("%s with %s's key: Total %s, want %d: %s", coll, tn.name, got.total, len(recs), got.body)
						}
					}
					for _, o := range ones {
						_, mine := tn.records[o.coll][o.id]
						status := 404
						if mine {
							status = 200
						} else {
							only404++
						}
						check(fmt.Sprintf("/v1/%s/%d", o.coll, o.id), status, mine)
					}
				}
			}
			if only404 == 0 {
				t.Error("no key tried an id only another account has")
			}

			// A create lands in the key's account's store only.
			for _, tn := range ts {
				for i, key := range tn.keys {
					email := fmt.Sprintf("new%d@%s.example.com", i, tn.name)
					body, ct := form(map[string]string{"first_name": "New", "last_name": tn.marker, "email": email, "join_date": "2024-02-29"})
					req, _ := http.NewRequest("POST", srv.URL+"/v1/employees", body)
					req.Header.Set("X-API-KEY", key)
					req.Header.Set("Content-Type", ct)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 201 {
						t.Fatalf("create with %s's key: %d %s", tn.name, resp.StatusCode, b)
					}
					for _, o := range ts {
						taken, err := o.store.EmailTaken(context.Background(), email)
						if err != nil {
							t.Fatal(err)
						}
						if taken != (o == tn) {
							t.Errorf("created with %s's key: in %s's store: %v", tn.name, o.name, taken)
						}
					}
					loc := strings.TrimPrefix(resp.Header.Get("Location"), srv.URL)
					if _, got := get(t, srv, key, loc); got.status != 200 || !strings.Contains(got.body, email) {
						t.Errorf("GET %s with %s's key: %+v", loc, tn.name, got)
					}
				}
			}
		})
	}
}

func collectionNames() []string {
	var names []string
	for _, c := range v1.Collections {
		names = append(names, c.Name)
	}
	return names
}

// Two accounts whose stores hold the same data at the same version answer different ETags, so
// a client that changes keys never gets a 304 for the other account's page.
func TestETagsDifferAcrossAccounts(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var opts server.Options
			for _, name := range []string{"one", "two"} {
				s := sinktest.Store(t, backend, sink.Options{Now: func() time.Time { return fixedNow }})
				(&fixture{store: s}).putN(t, 3)
				opts.Accounts = append(opts.Accounts, server.Account{Name: name, Store: s})
				opts.Keys = append(opts.Keys, server.Key{Name: name, Key: name + "-key-9f2c4e7a1b3d5f60a8e2", Account: name})
			}
			ctx := context.Background()
			ver1, err := opts.Accounts[0].Store.Version(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ver2, err := opts.Accounts[1].Store.Version(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ver1 != ver2 {
				t.Fatalf("versions %d and %d: the test needs them equal", ver1, ver2)
			}
			h, err := server.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			for _, path := range []string{"/v1", "/v1/employees", "/v1/employees/2", "/v1/departments"} {
				r1, a1 := get(t, srv, "one-key-9f2c4e7a1b3d5f60a8e2", path)
				r2, a2 := get(t, srv, "two-key-9f2c4e7a1b3d5f60a8e2", path)
				if a1.status != 200 || a1 != a2 {
					t.Fatalf("%s: the accounts answer differently: %+v, %+v", path, a1, a2)
				}
				tag1, tag2 := r1.Header.Get("ETag"), r2.Header.Get("ETag")
				if tag1 == "" || tag1 == tag2 {
					t.Errorf("%s: ETags %s and %s", path, tag1, tag2)
				}
				if _, a := get(t, srv, "two-key-9f2c4e7a1b3d5f60a8e2", path, "If-None-Match", tag1); a.status != 200 {
					t.Errorf("%s: account one's tag with account two's key: %d", path, a.status)
				}
				if _, a := get(t, srv, "two-key-9f2c4e7a1b3d5f60a8e2", path, "If-None-Match", tag2); a.status != 304 {
					t.Errorf("%s: account two's own tag: %d", path, a.status)
				}
			}
		})
	}
}

// creator records the creates an account's upstream receives.
type creator struct {
	id int64
	mu sync.Mutex
	ne []v1.NewEmployee
}

func (c *creator) CreateEmployee(ctx context.Context, ne v1.NewEmployee) (v1.Employee, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ne = append(c.ne, ne)
	return v1.Employee{ID: c.id, FirstName: ne.FirstName, LastName: ne.LastName, Email: ne.Email}, nil
}

// In forward mode a create goes to the key's account's upstream, and its answer into that
// account's store only.
func TestForwardGoesToTheKeysAccount(t *testing.T) {
	t.Parallel()
	var opts server.Options
	opts.Writes = server.WritesForward
	ups := map[string]*creator{"one": {id: 9001}, "two": {id: 9002}}
	stores := map[string]*sink.Store{}
	for _, name := range []string{"one", "two"} {
		stores[name] = sinktest.Store(t, "sqlite", sink.Options{})
		opts.Accounts = append(opts.Accounts, server.Account{Name: name, Store: stores[name], Upstream: ups[name]})
		opts.Keys = append(opts.Keys, server.Key{Name: name, Key: name + "-key-9f2c4e7a1b3d5f60a8e2", Account: name})
	}
	h, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	body, ct := form(map[string]string{"first_name": "Ana", "last_name": "Two", "email": "ana@two.example.com", "join_date": "2024-02-29"})
	req, _ := http.NewRequest("POST", srv.URL+"/v1/employees", body)
	req.Header.Set("X-API-KEY", "two-key-9f2c4e7a1b3d5f60a8e2")
	req.Header.Set("Content-Type", ct)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 || len(ups["two"].ne) != 1 || len(ups["one"].ne) != 0 {
		t.Fatalf("status %d; upstream one got %d, two %d", resp.StatusCode, len(ups["one"].ne), len(ups["two"].ne))
	}
	for name, want := range map[string]int{"one": 404, "two": 200} {
		if _, _, err := stores[name].Employee(context.Background(), 9002); (err == nil) != (want == 200) {
			t.Errorf("store %s: employee 9002: %v", name, err)
		}
		if _, a := get(t, srv, name+"-key-9f2c4e7a1b3d5f60a8e2", "/v1/employees/9002"); a.status != want {
			t.Errorf("GET 9002 with %s's key: %d, want %d", name, a.status, want)
		}
	}
}

// Each account's creates go as its own write mode says: left unset, forwarded for an account
// with an upstream (a replica of a source) and created locally for one without (standalone);
// an Account.Writes wins over Options.Writes.
func TestWritesPerAccount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		writes   server.Writes // Options.Writes
		accounts map[string]server.Writes
		upstream map[string]bool
		status   map[string]int
		forward  map[string]bool // the create reached the account's upstream
	}{
		{"unset: forward with an upstream, local without", "", map[string]server.Writes{}, map[string]bool{"rep": true},
			map[string]int{"rep": 201, "solo": 201}, map[string]bool{"rep": true}},
		{"Options.Writes for all", server.WritesOff, map[string]server.Writes{}, map[string]bool{"rep": true},
			map[string]int{"rep": 405, "solo": 405}, map[string]bool{}},
		{"an account's own mode wins", server.WritesOff, map[string]server.Writes{"rep": server.WritesLocal}, map[string]bool{"rep": true},
			map[string]int{"rep": 201, "solo": 405}, map[string]bool{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := server.Options{Writes: tt.writes}
			ups := map[string]*creator{}
			stores := map[string]*sink.Store{}
			for _, name := range []string{"rep", "solo"} {
				stores[name] = sinktest.Store(t, "sqlite", sink.Options{})
				ac := server.Account{Name: name, Store: stores[name], Writes: tt.accounts[name]}
				if tt.upstream[name] {
					ups[name] = &creator{id: 9001}
					ac.Upstream = ups[name]
				}
				opts.Accounts = append(opts.Accounts, ac)
				opts.Keys = append(opts.Keys, server.Key{Name: name, Key: name + "-key-9f2c4e7a1b3d5f60a8e2", Account: name})
			}
			h, err := server.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			for _, name := range []string{"rep", "solo"} {
				body, ct := form(map[string]string{"first_name": "Ana", "last_name": "Em", "email": "ana@" + name + ".example.com", "join_date": "2024-02-29"})
				req, _ := http.NewRequest("POST", srv.URL+"/v1/employees", body)
				req.Header.Set("X-API-KEY", name+"-key-9f2c4e7a1b3d5f60a8e2")
				req.Header.Set("Content-Type", ct)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tt.status[name] {
					t.Errorf("%s: status %d, want %d", name, resp.StatusCode, tt.status[name])
				}
				if got := ups[name] != nil && len(ups[name].ne) > 0; got != tt.forward[name] {
					t.Errorf("%s: forwarded %v, want %v", name, got, tt.forward[name])
				}
			}
		})
	}
}

// The access log and Observe name the key and its account, never the key itself; an unknown key
// is 401 exactly as with one account, with neither named.
func TestAccessLogAndObserveNameTheAccount(t *testing.T) {
	t.Parallel()
	ts := newTenants(t, "sqlite")[:2]
	var logs bytes.Buffer
	var mu sync.Mutex
	var observed []string
	opts := multiOptions(ts)
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	opts.Observe = func(account, route string, status int, d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		observed = append(observed, fmt.Sprintf("%s %s %d", account, route, status))
	}
	h, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	tests := []struct {
		key, path string
		status    int
		log, obs  string
	}{
		{"bolt-key-9f2c4e7a1b3d5f60a8e2", "/v1/employees/3", 200, `key="bolt 1" account=bolt status=200`, "bolt /v1/employees/{id} 200"},
		{"acme-key-2-9f2c4e7a1b3d5f60a8e2", "/v1/employees/3", 404, `key="acme 2" account=acme status=404`, "acme /v1/employees/{id} 404"},
		{"acme-key-1-9f2c4e7a1b3d5f60a8e2", "/v1/nowhere", 404, `key="acme 1" account=acme status=404`, "acme unmatched 404"},
		{"nobody-key", "/v1/employees", 401, `key="" account="" status=401`, " unmatched 401"},
		{"", "/v1/employees", 401, `key="" account="" status=401`, " unmatched 401"},
	}
	for _, tt := range tests {
		logs.Reset()
		mu.Lock()
		observed = nil
		mu.Unlock()
		_, a := get(t, srv, tt.key, tt.path)
		if a.status != tt.status {
			t.Errorf("%s with %q: %d, want %d", tt.path, tt.key, a.status, tt.status)
		}
		if tt.status == 401 && a.body != "{\"error\":\"401 Unauthorized\"}\n" {
			t.Errorf("401 body %q", a.body)
		}
		line := logs.String()
		if !strings.Contains(line, " "+tt.log+" ") {
			t.Errorf("log %q lacks %s", line, tt.log)
		}
		for _, tn := range ts {
			for _, k := range tn.keys {
				if strings.Contains(line, k) {
					t.Errorf("log holds the key %q: %s", k, line)
				}
			}
		}
		mu.Lock()
		if !slices.Equal(observed, []string{tt.obs}) {
			t.Errorf("observed %q, want %q", observed, tt.obs)
		}
		mu.Unlock()
	}
}

// TestAccountsConfig: every configuration error is refused with a message naming the key by
// its name, never the key itself.
func TestAccountsConfig(t *testing.T) {
	t.Parallel()
	s1 := sinktest.Store(t, "sqlite", sink.Options{})
	s2 := sinktest.Store(t, "sqlite", sink.Options{})
	up := &creator{}
	two := []server.Account{{Name: "a", Store: s1}, {Name: "b", Store: s2}}
	tests := []struct {
		name     string
		opts     server.Options
		wantErr  string
		keyShown string
	}{
		{"valid", server.Options{Accounts: two, Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "a"}, {Name: "kb", Key: "secret-b-9f2c4e7a1b3d5f60a8e2", Account: "b"}}}, "", ""},
		{"one account, key names none", server.Options{Accounts: two[:1], Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: ""}}}, "", ""},
		{"one account and APIKeys", server.Options{Accounts: two[:1], APIKeys: []string{"secret-a-9f2c4e7a1b3d5f60a8e2"}}, "", ""},
		{"no accounts", server.Options{Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: ""}}}, "no accounts", ""},
		{"no keys", server.Options{Accounts: two}, "no API keys", ""},
		{"key names no account of several", server.Options{Accounts: two, Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: ""}}}, `key "ka" names no account`, "secret-a-9f2c4e7a1b3d5f60a8e2"},
		{"key names an undeclared account", server.Options{Accounts: two, Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "c"}}}, `key "ka" reads account "c", which is not declared`, "secret-a-9f2c4e7a1b3d5f60a8e2"},
		{"empty key", server.Options{Accounts: two, Keys: []server.Key{{Name: "ka", Key: "", Account: "a"}}}, `key "ka": empty API key`, ""},
		{"unnamed key", server.Options{Accounts: two, Keys: []server.Key{{Name: "", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "a"}}}, "key 1 has no name", "secret-a-9f2c4e7a1b3d5f60a8e2"},
		{"key name twice", server.Options{Accounts: two, Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "a"}, {Name: "ka", Key: "secret-b-9f2c4e7a1b3d5f60a8e2", Account: "b"}}}, `key "ka" named twice`, "secret"},
		{"same key twice", server.Options{Accounts: two, Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "a"}, {Name: "kb", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "b"}}}, `keys "ka" and "kb" are the same key`, "secret-a-9f2c4e7a1b3d5f60a8e2"},
		{"APIKeys repeat a key", server.Options{Accounts: two[:1], Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: ""}}, APIKeys: []string{"secret-a-9f2c4e7a1b3d5f60a8e2"}}, `keys "ka" and "key 1" are the same key`, "secret-a-9f2c4e7a1b3d5f60a8e2"},
		{"APIKeys with several accounts", server.Options{Accounts: two, APIKeys: []string{"secret-a-9f2c4e7a1b3d5f60a8e2"}}, "with several accounts use Keys", "secret-a-9f2c4e7a1b3d5f60a8e2"},
		{"account twice", server.Options{Accounts: []server.Account{two[0], two[0]}, Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "a"}}}, `account "a" declared twice`, ""},
		{"unnamed account of several", server.Options{Accounts: []server.Account{two[0], {Store: s2}}, Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "a"}}}, "account 2 has no name", ""},
		{"account without a store", server.Options{Accounts: []server.Account{two[0], {Name: "b"}}, Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "a"}}}, `account "b" has no store`, ""},
		{"forward without an upstream", server.Options{Writes: server.WritesForward, Accounts: []server.Account{{Name: "a", Store: s1, Upstream: up}, two[1]}, Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "a"}}}, `account "b": forward writes need an upstream`, ""},
		{"forward with every upstream", server.Options{Writes: server.WritesForward, Accounts: []server.Account{{Name: "a", Store: s1, Upstream: up}, {Name: "b", Store: s2, Upstream: up}}, Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "a"}}}, "", ""},
		{"an account forwarding without an upstream", server.Options{Accounts: []server.Account{{Name: "a", Store: s1, Writes: server.WritesForward}, two[1]}, Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "a"}}}, `account "a": forward writes need an upstream`, ""},
		{"unknown write mode", server.Options{Writes: "sometimes", Accounts: two, Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "a"}}}, `writes mode "sometimes": want local, forward or off`, ""},
		{"an account's unknown write mode", server.Options{Accounts: []server.Account{{Name: "a", Store: s1, Writes: "remote"}, two[1]}, Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "a"}}}, `account "a": writes mode "remote"`, ""},
		{"Options.Upstream with New", server.Options{Upstream: up, Accounts: two, Keys: []server.Key{{Name: "ka", Key: "secret-a-9f2c4e7a1b3d5f60a8e2", Account: "a"}}}, "Options.Upstream is for NewHandler", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := server.New(tt.opts)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantErr == "":
				return
			case err == nil:
				t.Fatalf("accepted, want %q", tt.wantErr)
			case !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("error %q, want %q", err, tt.wantErr)
			}
			if tt.keyShown != "" && strings.Contains(err.Error(), tt.keyShown) {
				t.Errorf("error %q shows the key", err)
			}
		})
	}
	// NewHandler keeps its one-store form: Options.Accounts belong to New.
	if _, err := server.NewHandler(s1, server.Options{Accounts: two, APIKeys: []string{testKey}}); err == nil {
		t.Error("NewHandler accepted Options.Accounts")
	}
	if _, err := server.NewHandler(s1, server.Options{Writes: server.WritesForward, APIKeys: []string{testKey}}); err == nil || !strings.Contains(err.Error(), "forward writes need an upstream") {
		t.Errorf("NewHandler forward without upstream: %v", err)
	}
}
