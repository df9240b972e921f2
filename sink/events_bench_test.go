package sink_test

import (
	"slices"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// BenchmarkEventsLoad is a nightly load of 5,000 employees of whom 500 moved (a job title each):
// the whole load (stage, merge, derive 500 mover events, publish them) per op, and the events
// it derives a second.
//
//	go test -run '^$' -bench BenchmarkEventsLoad -benchtime 5x ./sink/
func BenchmarkEventsLoad(b *testing.B) {
	for _, backend := range sinktest.Backends {
		b.Run(backend, func(b *testing.B) {
			s := sinktest.Store(b, backend, sink.Options{})
			people := eventPeople(5000)
			sinktest.WalkEmployees(b, s, slices.Clone(people), 1000, sink.MergeOptions{Complete: true})
			derived, round := int64(0), 0
			for b.Loop() {
				round++
				for i := round % 10; i < len(people); i += 10 {
					people[i].JobTitle = "Engineer " + string(rune('A'+round%26))
				}
				res := sinktest.WalkEmployees(b, s, slices.Clone(people), 1000, sink.MergeOptions{Complete: true})
				derived += res.Events.Derived
			}
			b.ReportMetric(float64(derived)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
