package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// clockedFixture is a fixture whose store's clock starts at fixedNow and moves on by later.
func clockedFixture(t *testing.T, backend string, opts server.Options) (f *fixture, later func(time.Duration)) {
	t.Helper()
	var mu sync.Mutex
	now := fixedNow
	store := sinktest.Store(t, backend, sink.Options{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	return fixtureOver(t, store, store, opts), func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
}

// hire is a create's form body and content type.
func hire(email string) (string, string) {
	return "employee[first_name]=Ida&employee[last_name]=Em&employee[email]=" + email + "&employee[join_date]=2026-01-05",
		"application/x-www-form-urlencoded"
}

// employeesNamed counts the warehouse's employees with the email.
func employeesNamed(t *testing.T, store *sink.Store, email string) int {
	t.Helper()
	var n int
	if err := sinktest.DB(store).QueryRowContext(context.Background(), sinktest.DB(store).Rebind(`SELECT count(*) FROM employees WHERE email = ?`), email).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestIdempotencyKey: a retried create with the same Idempotency-Key and request gets the first
// answer, replayed, and creates nothing; the same key with another request is 422; a 400 is
// replayed too; another client's same key is its own; a record past its lifetime is forgotten;
// a malformed key is 400.
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			f, later := clockedFixture(t, backend, server.Options{APIKeys: []string{testKey, "other-key-9f2c4e7a1b3d5f60a8e2"}, IdempotencyTTL: time.Hour})
			store, srv := f.store, f.srv
			post := func(key, body, ct string, header ...string) (*http.Response, []byte) {
				t.Helper()
				return send(t, "POST", srv.URL+"/v1/employees", key, strings.NewReader(body), append([]string{"Content-Type", ct}, header...)...)
			}

			body, ct := hire("ida@example.com")
			first, b1 := post(testKey, body, ct, "Idempotency-Key", "onboard-42")
			assertStatus(t, first, b1, 201)
			if first.Header.Get("Idempotent-Replayed") != "" {
				t.Error("a first answer says it is replayed")
			}
			// The same employee as JSON is the same request.
			again, b2 := post(testKey, `{"employee":{"first_name":"Ida","last_name":"Em","email":"ida@example.com","join_date":"2026-01-05"}}`, "application/json", "Idempotency-Key", "onboard-42")
			assertStatus(t, again, b2, 201)
			if string(b2) != string(b1) || again.Header.Get("Location") != first.Header.Get("Location") || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("replay: %s %q %q, first %s %q", b2, again.Header.Get("Location"), again.Header.Get("Idempotent-Replayed"), b1, first.Header.Get("Location"))
			}
			if n := employeesNamed(t, store, "ida@example.com"); n != 1 {
				t.Errorf("%d employees after a retry", n)
			}
			// Without the key, a retry is the plain create: email taken.
			plain, b := post(testKey, body, ct)
			assertStatus(t, plain, b, 400)

			// Same key, another request.
			otherBody, _ := hire("someone@example.com")
			resp, b := post(testKey, otherBody, ct, "Idempotency-Key", "onboard-42")
			assertStatus(t, resp, b, 422)
			if !json.Valid(b) || !strings.Contains(string(b), "different request") {
				t.Errorf("422 body %s", b)
			}

			// Another client's same key is its own: a new create (here: email taken, 400, kept).
			resp, b = post("other-key-9f2c4e7a1b3d5f60a8e2", body, ct, "Idempotency-Key", "onboard-42")
			assertStatus(t, resp, b, 400)
			resp2, b2 := post("other-key-9f2c4e7a1b3d5f60a8e2", body, ct, "Idempotency-Key", "onboard-42")
			assertStatus(t, resp2, b2, 400)
			if string(b2) != string(b) || resp2.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("a 400 not replayed: %s %q", b2, resp2.Header.Get("Idempotent-Replayed"))
			}

			// Past its lifetime, the key is forgotten: the retry runs again (email taken now).
			later(time.Hour + time.Minute)
			resp, b = post(testKey, body, ct, "Idempotency-Key", "onboard-42")
			assertStatus(t, resp, b, 400)
			if resp.Header.Get("Idempotent-Replayed") != "" {
				t.Error("an expired answer was replayed")
			}

			for _, bad := range []string{"", strings.Repeat("k", 256), "with space", "é"} {
				var resp *http.Response
				var b []byte
				if bad != "" {
					resp, b = post(testKey, otherBody, ct, "Idempotency-Key", bad)
				} else {
					// An empty value: Go's client drops the header, so set it raw.
					req, _ := http.NewRequest("POST", srv.URL+"/v1/employees", strings.NewReader(otherBody))
					req.Header.Set("X-API-KEY", testKey)
					req.Header.Set("Content-Type", ct)
					req.Header["Idempotency-Key"] = []string{""}
					r, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					r.Body.Close()
					resp, b = r, []byte("(empty key)")
				}
				if resp.StatusCode != 400 {
					t.Errorf("key %q: %d %s", bad, resp.StatusCode, b)
				}
			}
			if n := employeesNamed(t, store, "someone@example.com"); n != 0 {
				t.Errorf("a refused request created %d", n)
			}
		})
	}
}

// TestIdempotencyKeyConcurrent: eight identical creates at once under one key make one
// employee; every answer is that create's (first or replayed) or 409 while it runs.
func TestIdempotencyKeyConcurrent(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend, server.Options{})
			body, ct := hire("race@example.com")
			var wg sync.WaitGroup
			var created, conflict, replayed atomic.Int32
			var bodies sync.Map
			for range 8 {
				wg.Go(func() {
					resp, b := f.do(t, "POST", "/v1/employees", strings.NewReader(body), "Content-Type", ct, "Idempotency-Key", "same")
					switch {
					case resp.StatusCode == 201 && resp.Header.Get("Idempotent-Replayed") == "true":
						replayed.Add(1)
						bodies.Store(string(b), true)
					case resp.StatusCode == 201:
						created.Add(1)
						bodies.Store(string(b), true)
					case resp.StatusCode == 409 && resp.Header.Get("Retry-After") != "":
						conflict.Add(1)
					case resp.StatusCode == 503: // SQLite's writer lock, busy: retried by clients
					default:
						t.Errorf("%d %s", resp.StatusCode, b)
					}
				})
			}
			wg.Wait()
			n := 0
			bodies.Range(func(any, any) bool { n++; return true })
			if created.Load() != 1 || n != 1 {
				t.Errorf("created %d, replayed %d, conflicts %d, distinct bodies %d", created.Load(), replayed.Load(), conflict.Load(), n)
			}
			if c := employeesNamed(t, f.store, "race@example.com"); c != 1 {
				t.Errorf("%d employees", c)
			}
		})
	}
}

// flaky is an upstream that fails its first creates with the given error, then creates.
type flaky struct {
	mu    sync.Mutex
	fails []error
	calls int
}

func (u *flaky) CreateEmployee(_ context.Context, ne v1.NewEmployee) (v1.Employee, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls++
	if len(u.fails) > 0 {
		err := u.fails[0]
		u.fails = u.fails[1:]
		return v1.Employee{}, err
	}
	return v1.Employee{ID: 7000 + int64(u.calls), FirstName: ne.FirstName, LastName: ne.LastName, Email: ne.Email}, nil
}

// TestIdempotencyKeyForward: in forward mode a failure the client should retry (429, 502) is
// not kept, so the retry is sent upstream; once created, a retry is answered from the replica
// without a call upstream.
func TestIdempotencyKeyForward(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			up := &flaky{fails: []error{&v1.RateLimitError{RetryAfter: time.Second}, fmt.Errorf("connection reset")}}
			f := newFixture(t, backend, server.Options{Writes: server.WritesForward, Upstream: up})
			body, ct := hire("fwd@example.com")
			for _, want := range []int{429, 502, 201} {
				resp, b := f.do(t, "POST", "/v1/employees", strings.NewReader(body), "Content-Type", ct, "Idempotency-Key", "fwd-1")
				assertStatus(t, resp, b, want)
			}
			resp, b := f.do(t, "POST", "/v1/employees", strings.NewReader(body), "Content-Type", ct, "Idempotency-Key", "fwd-1")
			assertStatus(t, resp, b, 201)
			if resp.Header.Get("Idempotent-Replayed") != "true" || up.calls != 3 {
				t.Errorf("replayed %q, upstream called %d times (want 3)", resp.Header.Get("Idempotent-Replayed"), up.calls)
			}
		})
	}
}

// TestIdempotencyKeyStalled: a create whose process died before it answered is taken over
// after the stale bound; one that created the employee first is answered with that employee.
func TestIdempotencyKeyStalled(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			// A named key's Idempotency-Keys are kept under its name.
			f, later := clockedFixture(t, backend, server.Options{Keys: []server.Key{{Name: "stalled", Key: testKey}}, APIKeys: []string{}})
			store, srv := f.store, f.srv
			ctx := context.Background()
			body, ct := hire("stall@example.com")
			ne := v1.NewEmployee{FirstName: "Ida", LastName: "Em", Email: "stall@example.com", JoinDate: "2026-01-05"}
			claim := v1.IdempotencyClaim{Client: "stalled", Key: "dead", Hash: ne.Hash(), TTL: time.Hour, Stale: 2 * time.Minute}
			if _, ok, err := store.ReserveIdempotency(ctx, claim); err != nil || !ok {
				t.Fatalf("reserve: %v %v", ok, err)
			}
			resp, b := send(t, "POST", srv.URL+"/v1/employees", testKey, strings.NewReader(body), "Content-Type", ct, "Idempotency-Key", "dead")
			assertStatus(t, resp, b, 409)
			later(3 * time.Minute)
			resp, b = send(t, "POST", srv.URL+"/v1/employees", testKey, strings.NewReader(body), "Content-Type", ct, "Idempotency-Key", "dead")
			assertStatus(t, resp, b, 201)

			// Created in the reserving transaction, then the process died: the retry gets the
			// employee as created, not a second one.
			claim.Key = "half"
			ne.Email = "half@example.com"
			claim.Hash = ne.Hash()
			if _, ok, err := store.ReserveIdempotency(ctx, claim); err != nil || !ok {
				t.Fatalf("reserve: %v %v", ok, err)
			}
			e, err := store.CreateEmployeeOnce(ctx, ne, "stalled", "half")
			if err != nil {
				t.Fatal(err)
			}
			body, _ = hire("half@example.com")
			resp, b = send(t, "POST", srv.URL+"/v1/employees", testKey, strings.NewReader(body), "Content-Type", ct, "Idempotency-Key", "half")
			assertStatus(t, resp, b, 201)
			if !strings.Contains(string(b), fmt.Sprintf(`"id":%d,`, e.ID)) || resp.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("after a crash: %s", b)
			}
			if n := employeesNamed(t, store, "half@example.com"); n != 1 {
				t.Errorf("%d employees", n)
			}
		})
	}
}

// TestIdempotencyKeyOfAnErasedPerson: once the person a keyed create made is erased, the record
// keeps no hash of their request (issue 41, 6a), and a retry under the key is told plainly why it
// cannot be matched: a 422 naming the erasure, no replay of the person, nothing created.
func TestIdempotencyKeyOfAnErasedPerson(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			f, _ := clockedFixture(t, backend, server.Options{APIKeys: []string{testKey}, IdempotencyTTL: time.Hour})
			body, ct := hire("ida-erased@example.com")
			post := func() (*http.Response, []byte) {
				return send(t, "POST", f.srv.URL+"/v1/employees", testKey, strings.NewReader(body), "Content-Type", ct, "Idempotency-Key", "onboard-7")
			}
			resp, b := post()
			assertStatus(t, resp, b, 201)
			var created struct {
				Employees []struct {
					ID int64 `json:"id"`
				} `json:"employees"`
			}
			if err := json.Unmarshal(b, &created); err != nil || len(created.Employees) != 1 {
				t.Fatalf("created %s: %v", b, err)
			}
			if _, err := f.store.EraseEmployee(context.Background(), created.Employees[0].ID, nil, "ticket"); err != nil {
				t.Fatal(err)
			}
			resp, b = post()
			assertStatus(t, resp, b, 422)
			if !json.Valid(b) || !strings.Contains(string(b), "was erased since") || resp.Header.Get("Idempotent-Replayed") != "" {
				t.Errorf("a retry after the erasure: %s %q", b, resp.Header.Get("Idempotent-Replayed"))
			}
			if n := employeesNamed(t, f.store, "ida-erased@example.com"); n != 0 {
				t.Errorf("%d employees with the erased email", n)
			}
		})
	}
}
