// Command hrsync keeps a warehouse in step with an Employee Records service, onboards new hires
// from CSV files, and serves the warehouse back out as the same /v1 interface.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "hrsync: "+config.OneLine(err.Error()))
		os.Exit(exitCode(err))
	}
}
