// Command testbudget reads the JSON events of a go test run (go test -json, or gotestsum's
// --jsonfile), prints how long each package's tests took, slowest first, and fails when the
// slowest passed the budget: the suite's time is a limit on every change, so a package that
// grows past it is found by the run that made it grow, not by CI's timeout months later.
//
//	go run ./scripts/testbudget -budget 10m [-reference 0.7s -calibration 1.3s] [-markdown] FILE.json
//
// The budget is stated for a machine of a given speed: one where the calibrate command (a fixed
// workload of the suite's kind, built as the tests are) takes -reference. Given what it took on
// this machine (-calibration), the budget is scaled by the ratio, so a machine twice slower has
// twice the budget, and a package that grew is still found on either.
//
// Exit status: 0 within the budget, 1 over it, 2 for a bad command line or a file it cannot read.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hrsync/hrsync/internal/slowness"
)

// event is the part of a test2json event testbudget reads (go doc cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64 // seconds
}

// Package is one package's result: how long its test binary ran, and how it ended.
type Package struct {
	Name    string
	Elapsed time.Duration
	Action  string // pass, fail or skip
}

// Packages reads test2json events from r and returns each package's result, slowest first (by
// name among equals). A package's result is its package-level (Test empty) pass, fail or skip
// event; a package without one (the run was cut short) is left out. Lines that are not JSON
// objects (a build error printed among the events) are skipped.
func Packages(r io.Reader) ([]Package, error) {
	byName := map[string]Package{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20) // a test may print long lines
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e event
		if json.Unmarshal(line, &e) != nil || e.Test != "" || e.Package == "" {
			continue
		}
		switch e.Action {
		case "pass", "fail", "skip":
			if !(e.Elapsed >= 0 && e.Elapsed < 1e9) { // a time.Duration holds 292 years
				continue
			}
			byName[e.Package] = Package{Name: e.Package, Elapsed: time.Duration(e.Elapsed * float64(time.Second)), Action: e.Action}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := make([]Package, 0, len(byName))
	for _, p := range byName {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Package) int {
		if a.Elapsed != b.Elapsed {
			return int(b.Elapsed - a.Elapsed)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// Over is the budget error: the slowest package took longer than the budget.
type Over struct {
	Package Package
	Budget  time.Duration
}

func (e *Over) Error() string {
	return fmt.Sprintf("%s took %s, over the budget of %s for one package (docs/development.md#the-suites-time)",
		e.Package.Name, e.Package.Elapsed.Round(time.Second), e.Budget)
}

// Check is nil when every package of pkgs took at most budget; else an *Over for the slowest.
func Check(pkgs []Package, budget time.Duration) error {
	if len(pkgs) > 0 && pkgs[0].Elapsed > budget {
		return &Over{Package: pkgs[0], Budget: budget}
	}
	return nil
}

// Scaled is budget for a machine whose calibration took calibration, where one whose calibration
// took reference has budget itself. The ratio is held within [1/4, 4]: a calibration run on a
// machine busy with something else must not lift the budget out of reach. Without both figures,
// budget as it is.
func Scaled(budget, reference, calibration time.Duration) time.Duration {
	return time.Duration(float64(budget) * slowness.Ratio(reference, calibration)).Round(time.Second)
}

// Table writes pkgs as a table: a markdown one, or aligned text. Packages without tests (0 s)
// are left out. The module path is cut from each name.
func Table(w io.Writer, pkgs []Package, module string, markdown bool) error {
	var b strings.Builder
	if markdown {
		b.WriteString("| package | seconds |\n|---|---:|\n")
	}
	for _, p := range pkgs {
		if p.Elapsed < time.Second/100 {
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(p.Name, module), "/")
		if name == "" {
			name = "."
		}
		secs := fmt.Sprintf("%.1f", p.Elapsed.Seconds())
		status := ""
		if p.Action != "pass" {
			status = " (" + p.Action + ")"
		}
		if markdown {
			fmt.Fprintf(&b, "| %s | %s%s |\n", name, secs, status)
		} else {
			fmt.Fprintf(&b, "%8s s  %s%s\n", secs, name, status)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func main() {
	budget := flag.Duration("budget", 10*time.Minute, "the most one package's tests may take (on a machine whose calibration takes -reference)")
	reference := flag.Duration("reference", slowness.DefaultReference, "the calibration's time on a machine where -budget holds as given (0: not scaled)")
	calibration := flag.Duration("calibration", 0, "the calibration's time on this machine (scripts/testbudget/calibrate)")
	markdown := flag.Bool("markdown", false, "print the table as markdown (for docs/development.md)")
	module := flag.String("module", "github.com/hrsync/hrsync", "module path cut from package names")
	flag.Parse()
	if flag.NArg() != 1 || *budget <= 0 {
		fmt.Fprintln(os.Stderr, "usage: testbudget [-budget 10m] [-reference D -calibration D] [-markdown] FILE.json")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "testbudget:", err)
		os.Exit(2)
	}
	defer f.Close()
	pkgs, err := Packages(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testbudget: read", flag.Arg(0)+":", err)
		os.Exit(2)
	}
	if err := Table(os.Stdout, pkgs, *module, *markdown); err != nil {
		fmt.Fprintln(os.Stderr, "testbudget:", err)
		os.Exit(2)
	}
	limit := Scaled(*budget, *reference, *calibration)
	if limit != *budget {
		fmt.Printf("budget: %s where the calibration takes %s; it took %s here: %s\n", *budget, *reference, *calibration, limit)
	}
	if err := Check(pkgs, limit); err != nil {
		var over *Over
		if errors.As(err, &over) {
			fmt.Fprintln(os.Stderr, "testbudget: FAIL:", err)
			os.Exit(1)
		}
	}
}
