package fakeupstream_test

import (
	"testing"

	"github.com/hrsync/hrsync/source/fakeupstream"
)

// BenchmarkGenerateAccount measures making 200 employees' two years of events.
func BenchmarkGenerateAccount(b *testing.B) {
	for b.Loop() {
		fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 200, Seed: 42, AbsenceYears: 2})
	}
}

// BenchmarkNew measures reading a generated account's records into a Service.
func BenchmarkNew(b *testing.B) {
	a := fakeupstream.GenerateAccount(fakeupstream.AccountOptions{Employees: 200, Seed: 42, AbsenceYears: 2})
	for b.Loop() {
		fakeupstream.New(a.Options())
	}
}
