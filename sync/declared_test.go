package sync_test

import (
	"context"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/v1"
	hrsync "github.com/hrsync/hrsync/sync"
)

// TestSyncTheRestOfTheAPI: every collection the sync knows is walked from a generated account
// and served back as the source lists it (every record, in its normal form); a second sync of
// the unchanged account writes nothing; a collection the account does not offer is skipped as
// unavailable.
func TestSyncTheRestOfTheAPI(t *testing.T) {
	acct := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 40, Seed: 11, AbsenceYears: 1})
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			opts := acct.Options()
			opts.Unavailable = map[string]int{"statutory_holiday_countries": 403}
			up := newUpstream(t, 0, opts)
			store := sinktest.Store(t, backend, sink.Options{})
			c := fastClient(t, up, source.ClientOptions{})
			ctx := context.Background()
			rs, err := hrsync.New(c, store, hrsync.Options{Concurrency: 2}).Run(ctx, hrsync.Known)
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
			for _, r := range rs {
				coll := v1.CollectionNamed(string(r.Resource))
				if coll == nil || r.Status != sink.RunOK {
					continue // the seed's two records have tests of their own
				}
				raws := acct.Collections[coll.Name]
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
			before, _ := store.Version(ctx)
			rs, err = hrsync.New(c, store, hrsync.Options{Concurrency: 2}).Run(ctx, hrsync.Known)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				if r.Inserted+r.Updated+r.Deleted != 0 {
					t.Errorf("second sync of %s wrote %d new, %d changed, %d deleted", r.Resource, r.Inserted, r.Updated, r.Deleted)
				}
			}
			if after, _ := store.Version(ctx); after != before {
				t.Errorf("an unchanged account moved the warehouse's version %d → %d", before, after)
			}
		})
	}
}
