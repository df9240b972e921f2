package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sync/walk"
)

// defaultGuards is sync.guards as config.yaml writes it: sink.DefaultGuards, but max_shrink
// 0, which takes sync.max_delete_share.
func defaultGuards() GuardsConfig {
	d := sink.DefaultGuards
	return GuardsConfig{MinRecords: d.MinRecords, FillFloor: d.FillFloor, FillDrop: d.FillDrop, MaxGrowth: d.MaxGrowth,
		GrowthMinRecords: d.GrowthMinRecords, UnlistedRise: d.UnlistedRise}
}

// thresholds are sync.guards' own thresholds.
func (g GuardsConfig) thresholds() GuardThresholds {
	return GuardThresholds{MinRecords: g.MinRecords, FillFloor: g.FillFloor, FillDrop: g.FillDrop, MaxShrink: g.MaxShrink,
		MaxGrowth: g.MaxGrowth, GrowthMinRecords: g.GrowthMinRecords, UnlistedRise: g.UnlistedRise}
}

// clone is a copy of g whose collections an account's section can be laid over without
// touching the top-level one every account starts from.
func (g GuardsConfig) clone() GuardsConfig {
	g.Accept = slices.Clone(g.Accept)
	g.Collections = maps.Clone(g.Collections)
	return g
}

// check says what is wrong with t, its keys under path ("sync.guards").
func (t GuardThresholds) check(path string) error {
	if t.MinRecords < 0 || t.GrowthMinRecords < 0 {
		return fmt.Errorf("%s.min_records and growth_min_records must not be negative (0: the default)", path)
	}
	if t.FillFloor < 0 || t.FillFloor > 1 {
		return fmt.Errorf("%s.fill_floor must be a share from 0 (the default, 0.20) to 1", path)
	}
	for _, s := range []struct {
		key   string
		v     float64
		upper bool // a share of at most 1
	}{{"fill_drop", t.FillDrop, true}, {"max_shrink", t.MaxShrink, true}, {"unlisted_rise", t.UnlistedRise, true}, {"max_growth", t.MaxGrowth, false}} {
		if s.upper && s.v > 1 {
			return fmt.Errorf("%s.%s must be a share of at most 1 (0: the default; -1: the guard off)", path, s.key)
		}
	}
	return nil
}

// settings are t as the sink reads them.
func (t GuardThresholds) settings() sink.GuardSettings {
	return sink.GuardSettings{MinRecords: t.MinRecords, FillFloor: t.FillFloor, FillDrop: t.FillDrop, MaxShrink: t.MaxShrink,
		MaxGrowth: t.MaxGrowth, GrowthMinRecords: t.GrowthMinRecords, UnlistedRise: t.UnlistedRise}
}

// parseGuards validates sync.guards into the account's guard settings.
func (acct *Account) parseGuards(g GuardsConfig) error {
	base := g.thresholds()
	if err := base.check("sync.guards"); err != nil {
		return err
	}
	acct.Guards = base.settings()
	for _, key := range g.Accept {
		key = strings.TrimSpace(key)
		if key == "" {
			continue
		}
		if err := sink.ValidGuardKey(key); err != nil {
			return fmt.Errorf("sync.guards.accept: %w", err)
		}
		acct.AcceptForGood = append(acct.AcceptForGood, key)
	}
	known := ResourceNames(walk.Known)
	names := slices.Sorted(maps.Keys(g.Collections))
	for _, name := range names {
		if !slices.Contains(known, name) {
			msg := fmt.Sprintf("sync.guards.collections: unknown collection %q", name)
			if near := closest(name, known); near != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", near)
			}
			return fmt.Errorf("%s; known: %s", msg, strings.Join(known, ", "))
		}
		own := g.Collections[name]
		if err := own.check("sync.guards.collections." + name); err != nil {
			return err
		}
		if acct.CollectionGuards == nil {
			acct.CollectionGuards = map[sink.Resource]sink.GuardSettings{}
		}
		acct.CollectionGuards[sink.Resource(name)] = own.settings() // laid over Guards by the walk (GuardSettings.Over)
	}
	return nil
}

// WalkOptions are the options of the account's syncs that its configuration sets: the
// concurrency, the walks, the load guards, the window and the models. A command adds its own
// (its flags, its logger, its metrics).
func (a *Account) WalkOptions() walk.Options {
	return walk.Options{Concurrency: a.Sync.Concurrency, MaxWalks: a.Sync.MaxWalks, MaxDeleteShare: a.Sync.MaxDeleteShare,
		Guards: a.Guards, CollectionGuards: a.CollectionGuards, AcceptForGood: a.AcceptForGood,
		Window: a.Window, Models: &a.Models}
}
