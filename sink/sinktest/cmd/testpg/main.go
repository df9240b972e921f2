// Command testpg holds one throwaway Postgres cluster for a whole test run, so that the test
// processes of every package share it instead of each starting its own (sinktest.StartCluster:
// the installed initdb/pg_ctl, run as the postgres OS user when testpg runs as root).
//
// It prints the cluster's admin URL on standard output, one line, once the server accepts
// connections:
//
//	postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable
//
// The caller exports it as HRSYNC_TEST_DATABASE_URL. testpg then waits until its standard
// input closes or SIGINT, SIGTERM or SIGHUP arrives, stops the server, removes its files and
// exits 0. Standard input is the caller's leash: a pipe the caller holds open (scripts/test.sh
// runs testpg as a coprocess), which closes when the caller exits, however it dies, so the
// cluster never outlives it. Run from a terminal, Ctrl-D or Ctrl-C stops it.
//
// When no cluster can be started, or stopping it fails, testpg says why on standard error in
// one line and exits 1.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hrsync/hrsync/sink/sinktest"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testpg:", err)
		os.Exit(1)
	}
}

func run(stdin io.Reader, stdout io.Writer) error {
	// Caught before the cluster is started, so that neither a signal nor the caller's end
	// during initdb leaves one behind: it is stopped as soon as it is up.
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stopSignals()
	// Asked for, SIGPIPE turns a write to a reader that is gone into an error; left alone, it
	// would kill testpg with the server still running.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	stdinClosed := make(chan struct{})
	go func() {
		// What the caller writes is not read for anything; only the end counts.
		_, _ = io.Copy(io.Discard, stdin)
		close(stdinClosed)
	}()

	url, stop, err := sinktest.StartCluster()
	if err != nil {
		return fmt.Errorf("no throwaway Postgres cluster: %w", err)
	}
	if _, err := fmt.Fprintln(stdout, url); err != nil {
		if stopErr := stop(); stopErr != nil {
			return fmt.Errorf("writing the URL: %v; %w", err, stopErr)
		}
		return fmt.Errorf("writing the URL: %w", err)
	}
	select {
	case <-stdinClosed:
	case <-ctx.Done():
	}
	return stop()
}
