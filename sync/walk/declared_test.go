package walk_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/walk"
)

// TestSyncTheRestOfTheAPI: every collection the sync knows is walked from a generated account
// and served back as the source lists it (every record, in its normal form); a second sync of
// the unchanged account writes nothing; a collection the account does not offer is skipped as
// unavailable.
func TestSyncTheRestOfTheAPI(t *testing.T) {
	t.Parallel()
	acct := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 40, Seed: 11, AbsenceYears: 1})
	// Fields no declaration names, on every third record of every collection: kept and served
	// back like the rest.
	for name, raws := range acct.Collections {
		raws = slices.Clone(raws)
		for i := 0; i < len(raws); i += 3 {
			raws[i] = json.RawMessage(`{"custom_fields":{"badge":"A-7","since":[2019,"x"]},"x_flag":null,` + string(raws[i][1:]))
		}
		acct.Collections[name] = raws
	}
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			opts := acct.Options()
			opts.Unavailable = map[string]int{"statutory_holiday_countries": 403}
			up, store, c := newSync(t, backend, 0, opts)
			ctx := context.Background()
			rs, err := walk.New(c, store, walk.Options{Concurrency: 2}).Run(ctx, walk.Known)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				want := sink.RunOK
				if r.Resource == "statutory_holiday_countries" {
					want = sink.RunUnavailable
				}
				if r.Status != want {
					t.Errorf("%s: %s (%v), want %s", r.Resource, r.Status, r.Err, want)
				}
			}
			assertReplica(t, up, store, true) // employees and working patterns, by their own types
			for _, r := range rs {
				coll := v1.CollectionNamed(string(r.Resource))
				if coll == nil || r.Status != sink.RunOK {
					continue // the seed's two records have tests of their own
				}
				raws := acct.Collections[coll.Name]
				// Through serve mode's HTTP interface, every page by Link: each record field for
				// field as the source sent it (in the seed's normal forms), unknown fields too.
				served := servedPages(t, store, "/v1/"+coll.Name)
				if len(served) != len(raws) {
					t.Errorf("%s: serve mode served %d records, the account has %d", coll.Name, len(served), len(raws))
				}
				for i, raw := range raws {
					want, err := coll.Decode(raw)
					if err != nil {
						t.Fatal(err)
					}
					if i == 0 && !strings.Contains(served[want.ID], `"custom_fields":{"badge":"A-7","since":[2019,"x"]}`) {
						t.Errorf("%s %d: the unknown fields were not served back: %s", coll.Name, want.ID, served[want.ID])
					}
					if w := string(coll.AppendJSON(nil, &want)); served[want.ID] != w {
						t.Errorf("%s %d served as\n %s\nthe source's\n %s", coll.Name, want.ID, served[want.ID], w)
						break
					}
				}
				list, err := store.ListRecords(ctx, coll.Name, v1.Page{Number: 1, Size: int64(len(raws) + 1)})
				if err != nil {
					t.Fatal(err)
				}
				if list.Total != int64(len(raws)) || len(list.Items) != len(raws) {
					t.Errorf("%s: served %d of Total %d, the account has %d", coll.Name, len(list.Items), list.Total, len(raws))
					continue
				}
				for i, raw := range raws {
					want, err := coll.Decode(raw)
					if err != nil {
						t.Fatal(err)
					}
					if got, w := string(coll.AppendJSON(nil, &list.Items[i])), string(coll.AppendJSON(nil, &want)); got != w {
						t.Errorf("%s %d:\n got %s\nwant %s", coll.Name, want.ID, got, w)
						break
					}
				}
			}
			syncAgainWritesNothing(t, c, store)
		})
	}
}
