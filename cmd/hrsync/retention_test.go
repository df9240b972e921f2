package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// TestRetentionCommand: hrsync retention with no rule says so and changes nothing; --dry-run says
// per rule what it would erase, and erases nothing; the run then erases the same, printing counts
// per rule and table and never a value; a second run erases nothing.
func TestRetentionCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := warehouseOf(t,
		`{"id":42,"first_name":"Zorblax","last_name":"Quendrith","email":"zq@marker.example","status":"Ex-employee","leaving_date":"2001-01-31","department":{"id":2,"name":"Kitchen"}}`,
		`{"id":43,"first_name":"Quinella","status":"Current employee","department":{"id":2,"name":"Kitchen"}}`,
	)
	env := []string{"HRSYNC_WAREHOUSE_URL=" + path}

	var out bytes.Buffer
	if err := run(ctx, []string{"retention"}, env, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "no retention rule is configured") {
		t.Errorf("with no rule: %q", got)
	}

	env = append(env, "HRSYNC_RETENTION_LEAVERS_IDENTIFYING=6y", "HRSYNC_RETENTION_SICKNESS_DETAILS=1y")
	out.Reset()
	if err := run(ctx, []string{"retention", "--dry-run"}, env, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	dry := out.String()
	for _, want := range []string{"dry run: nothing is changed", "leavers.identifying (6y after leaving): would erase 1 person", "  employees ", "sickness_details (1y after it ended): would erase 0 sicknesses"} {
		if !strings.Contains(dry, want) {
			t.Errorf("dry run: no %q in\n%s", want, dry)
		}
	}
	s2, err := sink.Open(ctx, path, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := sinktest.MarkersIn(t, s2, []string{"Zorblax"}); len(got) == 0 {
		t.Error("the dry run erased")
	}
	s2.Close()

	out.Reset()
	if err := run(ctx, []string{"retention"}, env, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"leavers.identifying (6y after leaving): erased 1 person", "erasure_log"} {
		if !strings.Contains(got, want) {
			t.Errorf("run: no %q in\n%s", want, got)
		}
	}
	// The same counts as the dry run said.
	if strings.ReplaceAll(strings.TrimPrefix(dry, "dry run: nothing is changed\n"), "would erase", "erased") !=
		strings.TrimSuffix(got, "the run is in erasure_log (action retention)\n") {
		t.Errorf("the dry run said\n%s\nthe run did\n%s", dry, got)
	}
	for _, v := range []string{"Zorblax", "Quendrith", "zq@marker", "Quinella"} {
		if strings.Contains(got, v) {
			t.Errorf("the output holds a value, %s:\n%s", v, got)
		}
	}
	s3, err := sink.Open(ctx, path, sink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if found := sinktest.MarkersIn(t, s3, []string{"Zorblax", "Quendrith", "zq@marker.example"}); len(found) > 0 {
		t.Errorf("after the run, found %v", found)
	}
	if found := sinktest.MarkersIn(t, s3, []string{"Quinella"}); len(found) == 0 {
		t.Error("the current employee was erased")
	}

	out.Reset()
	if err := run(ctx, []string{"retention"}, env, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "erased 0 people") || strings.Contains(got, "  employees") {
		t.Errorf("second run:\n%s", got)
	}
}
