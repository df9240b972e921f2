package events_test

import (
	"testing"

	"github.com/hrsync/hrsync/sink/sinktest"
)

// TestMain runs the tests through sinktest.Main, which drops the databases they make on
// Postgres (and the template they copy) when they end.
func TestMain(m *testing.M) { sinktest.Main(m) }
