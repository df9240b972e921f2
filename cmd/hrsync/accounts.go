package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
)

// openStore opens the account's warehouse, refusing one whose schema is behind. Once ctx ends
// (SIGTERM), whatever is still waiting on the warehouse stopGrace later is interrupted.
func openStore(ctx context.Context, a *config.Account, log *slog.Logger) (*sink.Store, error) {
	opts := a.SinkOptions()
	opts.Logger = log
	store, err := sink.Open(ctx, a.Warehouse.URL, opts)
	if err != nil {
		return nil, a.Wrap(err)
	}
	context.AfterFunc(ctx, func() { time.AfterFunc(stopGrace, store.Interrupt) })
	return store, nil
}

// eachAccount runs one account's part of a command for each account in turn, going on past one
// that fails, and returns every failure. Once ctx ends (the command is stopping) it starts no
// more: the part that was running said why it stopped.
func eachAccount(ctx context.Context, accts []*config.Account, part func(*config.Account) error) error {
	var errs []error
	for _, a := range accts {
		if ctx.Err() != nil {
			break
		}
		errs = append(errs, part(a))
	}
	return errors.Join(errs...)
}
