package walk_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/sync/walk"
)

// TestFirstSyncOfANewWarehouse: a new warehouse starts with a seeded working pattern and holiday
// allowance (id 1, "Standard"), which a standalone warehouse serves so that a create has a
// default to point at. The first sync from a source gives them way to the source's own
// records: they are no longer served, and yet the run reports nothing deleted and walks once,
// since nothing the source listed went; a source that lists an id 1 of its own replaces the
// seed with it, counted new, not changed.
func TestFirstSyncOfANewWarehouse(t *testing.T) {
	t.Parallel()
	acct := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 30, Seed: 5})
	own := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 30, Seed: 5})
	// The second account lists a pattern and an allowance of id 1 itself.
	own.WorkingPatterns = append([]json.RawMessage{json.RawMessage(
		`{"id":1,"name":"Their standard","default":false,"total_hours":"35.0"}`)}, own.WorkingPatterns...)
	own.Collections["holiday_allowances"] = append([]json.RawMessage{json.RawMessage(`{"id":1,"name":"Their standard"}`)},
		own.Collections["holiday_allowances"]...)
	for _, backend := range sinktest.Backends {
		for _, tc := range []struct {
			name string
			acct fakeupstream.Account
			// served1 is the name id 1 is served under after the sync; "" when it is not.
			served1 string
		}{
			{"seed retired", acct, ""},
			{"seed replaced", own, "Their standard"},
		} {
			t.Run(backend+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				up := newUpstream(t, 0, tc.acct.Options())
				store := sinktest.Store(t, backend, sink.Options{})
				// What the seed is for: a warehouse with no source serves it.
				if p := servedPages(t, store, "/v1/working_patterns"); len(p) != 1 || p[1] == "" {
					t.Fatalf("a new warehouse serves patterns %v, want the seeded one", p)
				}
				c := fastClient(t, up, client.Options{})
				rs, err := walk.New(c, store, walk.Options{}).Run(context.Background(),
					[]sink.Resource{"holiday_allowances", sink.WorkingPatterns})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rs {
					listed := int64(len(tc.acct.WorkingPatterns))
					if r.Resource == "holiday_allowances" {
						listed = int64(len(tc.acct.Collections["holiday_allowances"]))
					}
					if r.Status != sink.RunOK || r.Deleted != 0 || r.Walks != 1 || r.Inserted != listed || r.Updated != 0 {
						t.Errorf("%s: %s, %d walks, %d new, %d changed, %d deleted; want ok, 1 walk, %d new, 0 changed, 0 deleted",
							r.Resource, r.Status, r.Walks, r.Inserted, r.Updated, r.Deleted, listed)
					}
				}
				for _, path := range []string{"/v1/working_patterns", "/v1/holiday_allowances"} {
					served := servedPages(t, store, path)
					var name struct{ Name string }
					if raw, ok := served[1]; ok {
						_ = json.Unmarshal([]byte(raw), &name)
					}
					if _, ok := served[1]; ok != (tc.served1 != "") || name.Name != tc.served1 {
						t.Errorf("%s: id 1 served as %q, want %q", path, name.Name, tc.served1)
					}
				}
			})
		}
	}
}
