package fakeupstream

import (
	"testing"
	"time"
)

func TestLondon(t *testing.T) {
	for _, tt := range []struct {
		utc  string
		want string
	}{
		{"2026-01-15T12:00:00Z", "2026-01-15T12:00:00+00:00"},
		{"2026-03-29T00:59:59Z", "2026-03-29T00:59:59+00:00"}, // the last Sunday of March
		{"2026-03-29T01:00:00Z", "2026-03-29T02:00:00+01:00"},
		{"2026-07-01T23:30:00Z", "2026-07-02T00:30:00+01:00"},
		{"2026-10-25T00:59:59Z", "2026-10-25T01:59:59+01:00"}, // the last Sunday of October
		{"2026-10-25T01:00:00Z", "2026-10-25T01:00:00+00:00"},
		{"2025-03-30T01:00:00Z", "2025-03-30T02:00:00+01:00"},
		{"2025-03-29T01:00:00Z", "2025-03-29T01:00:00+00:00"},
	} {
		at, err := time.Parse(time.RFC3339, tt.utc)
		if err != nil {
			t.Fatal(err)
		}
		if got := london(at); got != tt.want {
			t.Errorf("london(%s) = %s, want %s", tt.utc, got, tt.want)
		}
	}
}
