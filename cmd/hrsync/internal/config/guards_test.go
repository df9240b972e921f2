package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// sync.guards is read into the walk's options: the defaults with nothing set, a collection's
// thresholds over sync.guards' key by key, an account's over the top-level section (never into
// it), the environment over the file.
func TestGuardsSettings(t *testing.T) {
	path := sinktest.ConfigFile(t, `
sync:
  max_delete_share: 0.2
  guards:
    min_records: 25
    accept: [fill:employees.job_title]
    collections:
      absences: {max_shrink: 0.3}
      salaries: {fill_drop: -1}
accounts:
  - name: acme
    source: {url: "http://acme.example/v1", api_key: acme-key}
    sync:
      guards:
        accept: [shrink:absences, "unlisted:employees.department_id"]
        collections:
          absences: {max_growth: 3}
  - name: globex
    source: {url: "http://globex.example/v1", api_key: globex-key}
`)
	s, err := Load(path, []string{"HRSYNC_ACCOUNTS_GLOBEX_SYNC_GUARDS_FILL_FLOOR=0.4"})
	if err != nil {
		t.Fatal(err)
	}
	acme, globex := s.Accounts[0], s.Accounts[1]
	d := sink.DefaultGuards
	base := sink.GuardSettings{MinRecords: 25, FillFloor: d.FillFloor, FillDrop: d.FillDrop, MaxGrowth: d.MaxGrowth,
		GrowthMinRecords: d.GrowthMinRecords, UnlistedRise: d.UnlistedRise}
	checks := []struct {
		what      string
		got, want any
	}{
		{"acme's guards: the top-level's", acme.Guards, base},
		{"acme's accept: its own", acme.AcceptForGood, []string{"shrink:absences", "unlisted:employees.department_id"}},
		{"acme's absences: its own entry", acme.CollectionGuards[sink.Resource("absences")], sink.GuardSettings{MaxGrowth: 3}},
		{"acme's absences over sync.guards", acme.Guards.Over(acme.CollectionGuards[sink.Resource("absences")]),
			func() sink.GuardSettings { g := base; g.MaxGrowth = 3; return g }()},
		{"acme's salaries: the top-level entry", acme.CollectionGuards[sink.Resource("salaries")], sink.GuardSettings{FillDrop: -1}},
		{"globex's absences: the top-level entry over its own variable", globex.Guards.Over(globex.CollectionGuards[sink.Resource("absences")]),
			func() sink.GuardSettings { g := base; g.FillFloor = 0.4; g.MaxShrink = 0.3; return g }()},
		{"globex's accept: the top-level's", globex.AcceptForGood, []string{"fill:employees.job_title"}},
		{"globex's walk options", globex.WalkOptions().MaxDeleteShare, 0.2},
		{"the top-level file keeps its own collections", len(s.Sync.Guards.Collections), 2},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.what, c.got, c.want)
		}
	}
	if o := acme.WalkOptions(); !reflect.DeepEqual(o.Guards, acme.Guards) || !reflect.DeepEqual(o.AcceptForGood, acme.AcceptForGood) ||
		!reflect.DeepEqual(o.CollectionGuards, acme.CollectionGuards) {
		t.Errorf("walk options %+v", o)
	}

	defaults, err := Load(sinktest.ConfigFile(t, "source: {rate_limit: 5}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := base
	want.MinRecords = d.MinRecords
	if g := defaults.Accounts[0].Guards; g != want || defaults.Accounts[0].CollectionGuards != nil || defaults.Accounts[0].AcceptForGood != nil {
		t.Errorf("defaults: %+v, %+v", g, defaults.Accounts[0].CollectionGuards)
	}
}

// A wrong sync.guards is one line naming what is wrong.
func TestGuardsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		env        []string
		want       string
	}{
		{"a key of no collection", "sync: {guards: {accept: [fill:employes.job_title]}}", nil,
			`config: sync.guards.accept: guard "fill:employes.job_title": "employes" is not a collection hrsync loads`},
		{"a key of no guard", "sync: {guards: {accept: [blank:employees.job_title]}}", nil, `no guard "blank"`},
		{"a fill key without a column", "", []string{"HRSYNC_SYNC_GUARDS_ACCEPT=fill:employees"}, "the fill guard needs a column"},
		{"an unknown collection", "sync: {guards: {collections: {employes: {max_shrink: 0.2}}}}", nil,
			`config: sync.guards.collections: unknown collection "employes" (did you mean employees?)`},
		{"an unknown key of a collection", "sync: {guards: {collections: {employees: {max_shrnk: 0.2}}}}", nil,
			"unknown key sync.guards.collections.employees.max_shrnk (did you mean sync.guards.collections.employees.max_shrink?)"},
		{"a share past 1", "sync: {guards: {fill_drop: 1.5}}", nil, "sync.guards.fill_drop must be a share of at most 1"},
		{"a negative floor", "sync: {guards: {collections: {salaries: {fill_floor: -1}}}}", nil,
			"sync.guards.collections.salaries.fill_floor must be a share from 0"},
		{"negative records", "", []string{"HRSYNC_SYNC_GUARDS_MIN_RECORDS=-3"}, "sync.guards.min_records and growth_min_records must not be negative"},
		{"collections in the environment", "", []string{"HRSYNC_SYNC_GUARDS_COLLECTIONS=x"}, "HRSYNC_SYNC_GUARDS_COLLECTIONS"},
	} {
		_, err := Load(sinktest.ConfigFile(t, tc.file), tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line holding %q", tc.name, err, tc.want)
		}
	}
}
