package prom

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/budget"
)

// The shared budget's waits are exported per kind of request, once a kind has had a slot.
func TestBudgetMetrics(t *testing.T) {
	ctx := context.Background()
	store, err := sink.Open(ctx, filepath.Join(t.TempDir(), "hrsync.db"), sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	b, err := store.NewBudget(sink.BudgetOptions{PerMinute: 6000})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewBudgetCollector(b))
	for _, k := range []budget.Kind{budget.KindWalk, budget.KindWalk, budget.KindForward} {
		if _, err := b.Wait(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			got[mf.GetName()+"/"+m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	if got["hrsync_source_budget_granted_total/walk"] != 2 || got["hrsync_source_budget_granted_total/forward"] != 1 || len(got) != 4 {
		t.Errorf("metrics %v, want 2 walk and 1 forward slots, and the wait of each", got)
	}
	if _, ok := got["hrsync_source_budget_wait_seconds_total/walk"]; !ok {
		t.Errorf("no wait of walks: %v", got)
	}
}
