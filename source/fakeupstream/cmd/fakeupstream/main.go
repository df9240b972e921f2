// Command fakeupstream serves the stand-in Employee Records service of package fakeupstream on
// an address, in a process of its own: for measuring hrsync from outside (its memory, its wall
// time), for local development and for demos.
//
//	fakeupstream -addr 127.0.0.1:8099 -employees 100000 -seed 42 -delay 20ms -rate-limit 60
//
// By default it serves the employees and working patterns alone; -account serves every
// collection of the account (fakeupstream.GenerateAccount: reference data, absences,
// sicknesses, leave requests and training courses, -absence-years of them), and -unavailable
// answers some collections as an account without that module does:
//
//	fakeupstream -account -employees 2000 -absence-years 10 -unavailable employee_training_courses=404
//
// It prints the source's URL and API key as environment assignments hrsync reads
// (HRSYNC_SOURCE_URL=…, HRSYNC_SOURCE_API_KEY=…), then serves until SIGINT or SIGTERM, and on
// its way out prints to stderr how many requests it answered, and how many with 429.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hrsync/hrsync/source/fakeupstream"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fakeupstream:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	employees := flag.Int("employees", 1000, "employees to serve (fakeupstream.Generate)")
	seed := flag.Int64("seed", 42, "seed of the generated employees")
	delay := flag.Duration("delay", 0, "hold every answer back this long")
	rateLimit := flag.Int("rate-limit", 0, "answer 429 past this many requests within any -window, as the real service does (0: no limit)")
	window := flag.Duration("window", time.Minute, "the rate limit's sliding window")
	documentedOnly := flag.Bool("documented-only", false, "accept creates only as the interface documents them (form fields employee[...]); refuse JSON with 415")
	account := flag.Bool("account", false, "serve every collection of a generated account (fakeupstream.GenerateAccount), not only employees and working patterns")
	absenceYears := flag.Int("absence-years", 1, "with -account: years of absences, sicknesses, leave requests and training courses")
	unavailable := flag.String("unavailable", "", "collections answered as an account without that module: name=403 or name=404, comma-separated")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if *employees < 0 || *delay < 0 || *rateLimit < 0 || *window <= 0 || *absenceYears <= 0 {
		return errors.New("-employees, -delay and -rate-limit must not be negative, -window and -absence-years must be positive")
	}
	off, err := parseUnavailable(*unavailable)
	if err != nil {
		return err
	}

	// Caught from the start: a background job of a non-interactive shell ignores SIGINT until
	// the signal is asked for.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	opts := fakeupstream.Options{Employees: fakeupstream.Generate(*employees, *seed)}
	if *account {
		opts = fakeupstream.GenerateAccount(fakeupstream.AccountOptions{
			Employees: *employees, Seed: *seed, AbsenceYears: *absenceYears}).Options()
	}
	opts.RateLimit = *rateLimit
	opts.Window = *window
	opts.DocumentedOnly = *documentedOnly
	opts.Unavailable = off
	if *delay > 0 {
		opts.Fault = func(int, *http.Request) fakeupstream.Fault { return fakeupstream.Fault{Delay: *delay} }
	}
	fake := fakeupstream.New(opts)
	defer fake.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: fake, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	fmt.Printf("HRSYNC_SOURCE_URL=http://%s\nHRSYNC_SOURCE_API_KEY=%s\n", ln.Addr(), fake.APIKey())
	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	// Close the fake first: it cuts delayed answers short, so that shutdown does not wait them out.
	fake.Close()
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		return err
	}
	var total, limited int
	for k, n := range fake.Counts() {
		total += n
		if k.Status == http.StatusTooManyRequests {
			limited += n
		}
	}
	fmt.Fprintf(os.Stderr, "fakeupstream: %d requests, %d answered 429; at most %d in one window\n",
		total, limited, fake.MaxInWindow())
	return nil
}

// parseUnavailable reads -unavailable: name=status pairs, comma-separated, of collections the
// fake serves, with status 403 or 404.
func parseUnavailable(s string) (map[string]int, error) {
	if s == "" {
		return nil, nil
	}
	out := make(map[string]int)
	for _, pair := range strings.Split(s, ",") {
		name, text, ok := strings.Cut(strings.TrimSpace(pair), "=")
		status, err := strconv.Atoi(text)
		switch {
		case !ok || err != nil || (status != 403 && status != 404):
			return nil, fmt.Errorf("-unavailable %q: want name=403 or name=404", pair)
		case !slices.Contains(fakeupstream.CollectionNames(), name):
			return nil, fmt.Errorf("-unavailable: no collection %q (there are %s)", name, strings.Join(fakeupstream.CollectionNames(), ", "))
		}
		out[name] = status
	}
	return out, nil
}
