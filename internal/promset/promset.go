// Package promset keeps the Prometheus series of many accounts as plain numbers, each account's
// in a compact struct of its own, and exposes them through one prometheus.Collector per metric
// family for all the accounts of a set, as constant metrics carrying the account label. A
// client_golang vector per account kept an object per series (its label pairs, its creation
// time, its own collector registration), about 25 KB of heap for an idle account of a worker;
// here a series is its label values (strings the caller already holds) and its number.
//
// A Set's families, help texts, label names, types and buckets are what the exposition shows,
// exactly as a client_golang vector of the same options shows them; counters and histograms
// carry their account's creation time (as client_golang's do their series'), for the formats
// that expose it.
package promset

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Kind is a family's type.
type Kind uint8

const (
	Counter Kind = iota
	Gauge
	Histogram
)

// MaxLabels is the most labels a family may have besides the account's.
const MaxLabels = 3

// Family describes one metric family, without the account label.
type Family struct {
	Name, Help string
	Kind       Kind
	Labels     []string  // at most MaxLabels
	Buckets    []float64 // a Histogram's upper bounds, increasing
}

// Set is the families of many accounts. Register it once; add each account with Account.
type Set struct {
	label string // the account label's name; "" for one account without it
	fams  []Family
	descs []*prometheus.Desc

	mu       sync.RWMutex
	accounts []*Account
}

// New is a set of fams, each series labelled label (e.g. "account") with its account's name; with
// label "" the set holds one account, whose series carry no account label.
func New(label string, fams ...Family) *Set {
	s := &Set{label: label, fams: fams}
	for _, f := range fams {
		if len(f.Labels) > MaxLabels {
			panic(fmt.Sprintf("promset: %s has %d labels, at most %d", f.Name, len(f.Labels), MaxLabels))
		}
		if f.Kind == Histogram && !sort.Float64sAreSorted(f.Buckets) {
			panic("promset: " + f.Name + "'s buckets are not increasing")
		}
		labels := f.Labels
		if label != "" {
			labels = append([]string{label}, f.Labels...)
		}
		s.descs = append(s.descs, prometheus.NewDesc(f.Name, f.Help, labels, nil))
	}
	return s
}

// Register registers on reg one collector for each family of the set.
func (s *Set) Register(reg prometheus.Registerer) {
	cs := make([]prometheus.Collector, len(s.fams))
	for i := range s.fams {
		cs[i] = family{s, i}
	}
	reg.MustRegister(cs...)
}

// Account adds an account to the set and returns its series: each family's without labels at
// zero, the others made by their first use (or Start).
func (s *Set) Account(name string) *Account {
	a := &Account{name: name, created: time.Now().UnixNano(), vecs: make([]Vec, len(s.fams))}
	for i := range a.vecs {
		a.vecs[i].fam = &s.fams[i]
		if len(s.fams[i].Labels) == 0 {
			a.vecs[i].Start()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.label == "" && len(s.accounts) > 0 {
		panic("promset: a set without an account label holds one account")
	}
	s.accounts = append(s.accounts, a)
	return a
}

// family is the collector of one family of a set, for all its accounts.
type family struct {
	s *Set
	i int
}

func (f family) Describe(ch chan<- *prometheus.Desc) { ch <- f.s.descs[f.i] }

func (f family) Collect(ch chan<- prometheus.Metric) {
	f.s.mu.RLock()
	accounts := f.s.accounts[:len(f.s.accounts):len(f.s.accounts)]
	f.s.mu.RUnlock()
	desc := f.s.descs[f.i]
	var ms []prometheus.Metric
	for _, a := range accounts {
		ms = a.vecs[f.i].collect(ms[:0], desc, f.s.label != "", a)
		for _, m := range ms {
			ch <- m
		}
	}
}

// Account is one account's series of every family of its set.
type Account struct {
	name    string
	created int64 // unix nanoseconds: its counters' and histograms' creation time
	vecs    []Vec
}

// Vec is family i's series of the account, in the order of the set's families.
func (a *Account) Vec(i int) *Vec { return &a.vecs[i] }

// Vec is one family's series of one account. Its methods take the series' label values, in the
// order of the family's labels (as client_golang's WithLabelValues does), and panic when there
// are not as many as the family has labels.
type Vec struct {
	fam    *Family
	mu     sync.Mutex
	series []series
}

// series is one series: its label values and its number (a histogram's sum), and a histogram's
// counts.
type series struct {
	labels [MaxLabels]string
	value  float64
	hist   []uint64 // each bucket's observations (not cumulative), then the count
}

// get is the series of lvs, made at zero if it is not there yet; v.mu is held.
func (v *Vec) get(lvs []string) *series {
	if len(lvs) != len(v.fam.Labels) {
		panic(fmt.Sprintf("promset: %s has %d labels, given %d values", v.fam.Name, len(v.fam.Labels), len(lvs)))
	}
	var key [MaxLabels]string
	copy(key[:], lvs)
	for i := range v.series {
		if v.series[i].labels == key {
			return &v.series[i]
		}
	}
	s := series{labels: key}
	if v.fam.Kind == Histogram {
		s.hist = make([]uint64, len(v.fam.Buckets)+1)
	}
	v.series = append(v.series, s)
	return &v.series[len(v.series)-1]
}

// Start makes the series of lvs at zero if it is not there yet, so that increase() sees its first
// event.
func (v *Vec) Start(lvs ...string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.get(lvs)
}

// Add adds d to a counter or gauge; a counter's d must not be negative.
func (v *Vec) Add(d float64, lvs ...string) {
	if d < 0 && v.fam.Kind == Counter {
		panic("promset: " + v.fam.Name + " is a counter and cannot decrease")
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.get(lvs).value += d
}

// Inc adds 1.
func (v *Vec) Inc(lvs ...string) { v.Add(1, lvs...) }

// Set sets a gauge.
func (v *Vec) Set(x float64, lvs ...string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.get(lvs).value = x
}

// Observe adds an observation to a histogram: to the first bucket whose upper bound is x or
// more (or to none but +Inf's), its count and its sum.
func (v *Vec) Observe(x float64, lvs ...string) {
	b := sort.SearchFloat64s(v.fam.Buckets, x)
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.get(lvs)
	if b < len(v.fam.Buckets) {
		s.hist[b]++
	}
	s.hist[len(s.hist)-1]++
	s.value += x
}

// Reset removes every series.
func (v *Vec) Reset() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.series = nil
}

// collect appends the series as constant metrics of desc to ms, the account's name as the first
// label value when labelled.
func (v *Vec) collect(ms []prometheus.Metric, desc *prometheus.Desc, labelled bool, a *Account) []prometheus.Metric {
	created := time.Unix(0, a.created)
	lvs := make([]string, 0, MaxLabels+1)
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := range v.series {
		s := &v.series[i]
		lvs = lvs[:0]
		if labelled {
			lvs = append(lvs, a.name)
		}
		lvs = append(lvs, s.labels[:len(v.fam.Labels)]...)
		switch v.fam.Kind {
		case Counter:
			ms = append(ms, prometheus.MustNewConstMetricWithCreatedTimestamp(desc, prometheus.CounterValue, s.value, created, lvs...))
		case Gauge:
			ms = append(ms, prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, s.value, lvs...))
		case Histogram:
			buckets := make(map[float64]uint64, len(v.fam.Buckets))
			var n uint64
			for j, ub := range v.fam.Buckets {
				n += s.hist[j]
				buckets[ub] = n
			}
			ms = append(ms, prometheus.MustNewConstHistogramWithCreatedTimestamp(desc, s.hist[len(s.hist)-1], s.value, buckets, created, lvs...))
		}
	}
	return ms
}
