package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

// standbyStore is a warehouse that says it takes no writes, as a hot standby does (the real one
// is cmd/hrsync's TestServeOnHotStandby).
type standbyStore struct{ *sink.Store }

func (standbyStore) ReadOnly(context.Context) (bool, error) { return true, nil }

// creatorFunc is an upstream that fails the test if a create reaches it.
type creatorFunc func() (v1.Employee, error)

func (f creatorFunc) CreateEmployee(context.Context, v1.NewEmployee) (v1.Employee, error) { return f() }

// On a read-only warehouse a create is 405 in every write mode, saying why, before anything is
// sent upstream or kept under its Idempotency-Key; reads are served.
func TestCreateOnReadOnlyWarehouse(t *testing.T) {
	t.Parallel()
	for _, backend := range sinktest.Backends {
		for _, writes := range []server.Writes{server.WritesLocal, server.WritesForward} {
			t.Run(backend+"/"+string(writes), func(t *testing.T) {
				store := sinktest.Store(t, backend, sink.Options{Now: func() time.Time { return fixedNow }})
				up := creatorFunc(func() (v1.Employee, error) {
					t.Error("a create on a read-only warehouse reached the upstream")
					return v1.Employee{}, v1.ErrUnauthorized
				})
				f := fixtureOver(t, store, standbyStore{store}, server.Options{Writes: writes, Upstream: up})
				for _, idem := range []string{"", "standby-1"} {
					body, ct := form(map[string]string{"first_name": "Ana", "last_name": "Lopez", "email": "ana@example.com", "join_date": "2024-02-29"})
					resp, b := f.do(t, "POST", "/v1/employees", body, "Content-Type", ct, "Idempotency-Key", idem)
					assertStatus(t, resp, b, 405)
					var e struct {
						Error struct{ Message string }
					}
					if json.Unmarshal(b, &e) != nil || e.Error.Message != server.ReadOnlyMessage || resp.Header.Get("Allow") != "GET, HEAD" {
						t.Errorf("Idempotency-Key %q: Allow %q, body %s", idem, resp.Header.Get("Allow"), b)
					}
				}
				resp, b := f.do(t, "GET", "/v1/employees", nil)
				assertStatus(t, resp, b, 200)
			})
		}
	}
}
