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
	return openWith(ctx, sink.Open, a, log)
}

// openExisting is openStore for a command about what a warehouse already holds (erase,
// subject-access, retention): where there is none it makes none (sink.OpenExisting), and says
// so in one line.
func openExisting(ctx context.Context, a *config.Account, log *slog.Logger) (*sink.Store, error) {
	return openWith(ctx, sink.OpenExisting, a, log)
}

// openExistingWritable is openExisting for such a command that writes (see openWritable).
func openExistingWritable(ctx context.Context, a *config.Account, log *slog.Logger) (*sink.Store, error) {
	store, err := openExisting(ctx, a, log)
	return writable(ctx, a, store, err)
}

func openWith(ctx context.Context, open func(context.Context, string, sink.Options) (*sink.Store, error), a *config.Account, log *slog.Logger) (*sink.Store, error) {
	opts := a.SinkOptions()
	opts.Logger = log
	store, err := open(ctx, a.Warehouse.URL, opts)
	if err != nil {
		return nil, a.Wrap(err)
	}
	context.AfterFunc(ctx, func() { time.AfterFunc(stopGrace, store.Interrupt) })
	return store, nil
}

// openWritable is openStore for a command that writes: a warehouse that takes none (a Postgres
// hot standby) is refused now, in one line naming it, rather than by the first statement that
// writes, mid-way through a sync, a folder or an erasure. So is one that lacks erasures of its
// erasure journal (sink.Store.CheckJournal): a sync or an onboarding would bring back people
// erased since the backup it was restored from.
func openWritable(ctx context.Context, a *config.Account, log *slog.Logger) (*sink.Store, error) {
	store, err := openStore(ctx, a, log)
	store, err = writable(ctx, a, store, err)
	if err != nil {
		return nil, err
	}
	if err := store.CheckJournal(ctx); err != nil {
		_ = store.Close()
		return nil, a.Wrap(err)
	}
	return store, nil
}

// writable passes on a store just opened (store, err) when the warehouse takes writes, and
// otherwise closes it and says so (sink.Store.Writable).
func writable(ctx context.Context, a *config.Account, store *sink.Store, err error) (*sink.Store, error) {
	if err != nil {
		return nil, err
	}
	if err := store.Writable(ctx); err != nil {
		_ = store.Close()
		return nil, a.Wrap(err)
	}
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
