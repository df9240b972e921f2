package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/internal/slowness"
)

const run = `{"Action":"start","Package":"github.com/hrsync/hrsync/sink"}
{"Action":"run","Package":"github.com/hrsync/hrsync/sink","Test":"TestA"}
{"Action":"pass","Package":"github.com/hrsync/hrsync/sink","Test":"TestA","Elapsed":400}
# github.com/hrsync/hrsync/broken [build failed]
{"Action":"pass","Package":"github.com/hrsync/hrsync/sink","Elapsed":412.5}
{"Action":"skip","Package":"github.com/hrsync/hrsync/schema","Elapsed":0}
{"Action":"fail","Package":"github.com/hrsync/hrsync/cmd/hrsync","Elapsed":501.25}
{"Action":"pass","Package":"github.com/hrsync/hrsync/source/v1","Elapsed":3}
{"Action":"output","Package":"github.com/hrsync/hrsync/source/v1","Output":"ok\n"}
{"Action":"run","Package":"github.com/hrsync/hrsync/cut","Test":"TestCut"}
`

func TestPackagesAndBudget(t *testing.T) {
	t.Parallel()
	pkgs, err := Packages(strings.NewReader(run))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pkgs {
		names = append(names, p.Name+" "+p.Action)
	}
	want := "github.com/hrsync/hrsync/cmd/hrsync fail,github.com/hrsync/hrsync/sink pass,github.com/hrsync/hrsync/source/v1 pass,github.com/hrsync/hrsync/schema skip"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("packages %s\nwant %s", got, want)
	}
	tests := []struct {
		budget time.Duration
		over   string
	}{
		{10 * time.Minute, ""},
		{501250 * time.Millisecond, ""}, // at the budget is within it
		{8 * time.Minute, "github.com/hrsync/hrsync/cmd/hrsync took 8m21s, over the budget of 8m0s"},
	}
	for _, tt := range tests {
		err := Check(pkgs, tt.budget)
		var over *Over
		switch {
		case tt.over == "" && err != nil:
			t.Errorf("budget %s: %v, want none", tt.budget, err)
		case tt.over != "" && (!errors.As(err, &over) || !strings.HasPrefix(err.Error(), tt.over)):
			t.Errorf("budget %s: %v, want %q", tt.budget, err, tt.over)
		}
	}
	var b bytes.Buffer
	if err := Table(&b, pkgs, "github.com/hrsync/hrsync", true); err != nil {
		t.Fatal(err)
	}
	wantTable := "| package | seconds |\n|---|---:|\n| cmd/hrsync | 501.2 (fail) |\n| sink | 412.5 |\n| source/v1 | 3.0 |\n"
	if b.String() != wantTable {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), wantTable)
	}
}

func TestScaled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		budget, reference, calibration, want time.Duration
	}{
		{10 * time.Minute, 800 * time.Millisecond, 1300 * time.Millisecond, 16*time.Minute + 15*time.Second}, // a slower machine
		{10 * time.Minute, 800 * time.Millisecond, 400 * time.Millisecond, 5 * time.Minute},                  // a faster one
		{10 * time.Minute, 800 * time.Millisecond, 800 * time.Millisecond, 10 * time.Minute},
		{10 * time.Minute, 800 * time.Millisecond, 30 * time.Second, 40 * time.Minute}, // a busy machine: at most 4 times
		{10 * time.Minute, 800 * time.Millisecond, time.Millisecond, 150 * time.Second},
		{10 * time.Minute, 0, 1300 * time.Millisecond, 10 * time.Minute}, // not scaled
		{10 * time.Minute, 800 * time.Millisecond, 0, 10 * time.Minute},
	}
	for _, tt := range tests {
		if got := Scaled(tt.budget, tt.reference, tt.calibration); got != tt.want {
			t.Errorf("Scaled(%s, %s, %s) = %s, want %s", tt.budget, tt.reference, tt.calibration, got, tt.want)
		}
	}
}

// FuzzPackages: any input, however broken, gives an answer or a read error, and never a
// package with a negative time.
func FuzzPackages(f *testing.F) {
	f.Add(run)
	f.Add(`{"Action":"pass","Package":"p","Elapsed":-1}`)
	f.Add(`{"Action":"pass","Package":"p","Elapsed":1e400}`)
	f.Fuzz(func(t *testing.T, in string) {
		pkgs, err := Packages(strings.NewReader(in))
		if err != nil {
			return
		}
		for i, p := range pkgs {
			if p.Elapsed < 0 {
				t.Errorf("package %q: elapsed %v", p.Name, p.Elapsed)
			}
			if i > 0 && p.Elapsed > pkgs[i-1].Elapsed {
				t.Errorf("not slowest first: %v", pkgs)
			}
		}
	})
}

// The reference is stated in one place, internal/slowness; the page that explains the budget
// gives the same figure, and the script leaves it to the code.
func TestReferenceIsStatedOnce(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/development.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`HRSYNC_BUDGET_REFERENCE` \\(default ([0-9.]+) s\\)").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/development.md does not state HRSYNC_BUDGET_REFERENCE's default as (default N s)")
	}
	if d, err := time.ParseDuration(string(m[1]) + "s"); err != nil || d != slowness.DefaultReference {
		t.Errorf("docs/development.md gives the reference as %s s; internal/slowness.DefaultReference is %s", m[1], slowness.DefaultReference)
	}
	script, err := os.ReadFile("../test.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{slowness.DefaultReference.String(), fmt.Sprintf("%gs", slowness.DefaultReference.Seconds()), "HRSYNC_BUDGET_REFERENCE:-"} {
		if bytes.Contains(script, []byte(s)) {
			t.Errorf("scripts/test.sh spells the reference (%s) again; it is internal/slowness.DefaultReference", s)
		}
	}
}
