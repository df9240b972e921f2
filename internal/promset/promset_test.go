package promset_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/hrsync/hrsync/internal/promset"
)

var fams = []promset.Family{
	{Name: "t_runs_total", Help: "Runs.", Kind: promset.Counter, Labels: []string{"resource", "status"}},
	{Name: "t_wait_seconds_total", Help: "Waits.", Kind: promset.Counter},
	{Name: "t_last_timestamp_seconds", Help: "Last.", Kind: promset.Gauge, Labels: []string{"resource"}},
	{Name: "t_duration_seconds", Help: "Durations.", Kind: promset.Histogram, Labels: []string{"resource"}, Buckets: []float64{.5, 1, 5}},
	{Name: "t_requests_total", Help: "Requests.", Kind: promset.Counter, Labels: []string{"route", "method", "code"}},
}

// vectors are fams as client_golang vectors, as the packages registered them for each account.
type vectors struct {
	runs     *prometheus.CounterVec
	wait     prometheus.Counter
	last     *prometheus.GaugeVec
	duration *prometheus.HistogramVec
	requests *prometheus.CounterVec
}

func newVectors(reg prometheus.Registerer) *vectors {
	v := &vectors{
		runs:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: fams[0].Name, Help: fams[0].Help}, fams[0].Labels),
		wait:     prometheus.NewCounter(prometheus.CounterOpts{Name: fams[1].Name, Help: fams[1].Help}),
		last:     prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: fams[2].Name, Help: fams[2].Help}, fams[2].Labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: fams[3].Name, Help: fams[3].Help, Buckets: fams[3].Buckets}, fams[3].Labels),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: fams[4].Name, Help: fams[4].Help}, fams[4].Labels),
	}
	reg.MustRegister(v.runs, v.wait, v.last, v.duration, v.requests)
	return v
}

// work does the same to an account's vectors and to its series of a set.
func work(v *vectors, a *promset.Account, seed float64) {
	for _, st := range []string{"ok", "failed"} {
		v.runs.WithLabelValues("employees", st)
		a.Vec(0).Start("employees", st)
	}
	v.runs.WithLabelValues("employees", "ok").Inc()
	a.Vec(0).Inc("employees", "ok")
	v.runs.WithLabelValues("absences", "ok").Add(2 + seed)
	a.Vec(0).Add(2+seed, "absences", "ok")
	v.wait.Add(1.5 * seed)
	a.Vec(1).Add(1.5 * seed)
	v.last.WithLabelValues("gone").Set(1)
	a.Vec(2).Set(1, "gone")
	v.last.Reset()
	a.Vec(2).Reset()
	v.last.WithLabelValues("employees").Set(1700000000 + seed)
	a.Vec(2).Set(1700000000+seed, "employees")
	for _, x := range []float64{0.1, 0.5, 0.7, 1, 4.9, 5, 7, seed} {
		v.duration.WithLabelValues("employees").Observe(x)
		a.Vec(3).Observe(x, "employees")
	}
	v.requests.WithLabelValues("/v1/employees", "GET", "200").Inc()
	a.Vec(4).Inc("/v1/employees", "GET", "200")
}

func exposition(t *testing.T, g prometheus.Gatherer) string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestSetExposesWhatVectorsDid: a set of two accounts exposes, in the text format, exactly what
// client_golang vectors of the same families registered for each account with the account
// label (prometheus.WrapRegistererWith) exposed after the same events: names, help, types,
// labels, values, a histogram's buckets; and a set without an account label what one account's
// vectors registered as they are.
func TestSetExposesWhatVectorsDid(t *testing.T) {
	t.Run("accounts", func(t *testing.T) {
		old, reg := prometheus.NewRegistry(), prometheus.NewRegistry()
		set := promset.New("account", fams...)
		set.Register(reg)
		for i, name := range []string{"globex", "acme"} {
			work(newVectors(prometheus.WrapRegistererWith(prometheus.Labels{"account": name}, old)), set.Account(name), float64(i))
		}
		want, got := exposition(t, old), exposition(t, reg)
		if got != want {
			t.Errorf("the set exposes\n%s\nclient_golang's vectors\n%s", got, want)
		}
	})
	t.Run("one account without the label", func(t *testing.T) {
		old, reg := prometheus.NewRegistry(), prometheus.NewRegistry()
		set := promset.New("", fams...)
		set.Register(reg)
		work(newVectors(old), set.Account(""), 3)
		want, got := exposition(t, old), exposition(t, reg)
		if got != want {
			t.Errorf("the set exposes\n%s\nclient_golang's vectors\n%s", got, want)
		}
	})
}

// TestSetCountsConcurrently: counters, gauges and histograms of one account updated from many
// goroutines at once, while the set is gathered, lose no event (run with -race).
func TestSetCountsConcurrently(t *testing.T) {
	reg := prometheus.NewRegistry()
	set := promset.New("account", fams...)
	set.Register(reg)
	a := set.Account("acme")
	const workers, each = 8, 1000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				a.Vec(0).Inc("employees", "ok")
				a.Vec(1).Add(0.5)
				a.Vec(3).Observe(float64(i%3), "employees")
				a.Vec(4).Inc("/v1/employees", "GET", string(rune('0'+w)))
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			if _, err := reg.Gather(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			got[mf.GetName()] += m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	want := map[string]float64{"t_runs_total": workers * each, "t_wait_seconds_total": workers * each / 2,
		"t_duration_seconds": workers * each, "t_requests_total": workers * each}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s: %v, want %v", name, got[name], n)
		}
	}
}
