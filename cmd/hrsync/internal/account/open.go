package account

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
)

// Open opens the account's warehouse, refusing one whose schema is behind. Once ctx ends
// (SIGTERM), whatever is still waiting on the warehouse StopGrace later is interrupted.
func Open(ctx context.Context, a *config.Account, log *slog.Logger) (*sink.Store, error) {
	return openWith(ctx, sink.Open, a, log)
}

// OpenExisting is Open for a command about what a warehouse already holds (erase,
// subject-access, retention): where there is none it makes none (sink.OpenExisting), and says
// so in one line.
func OpenExisting(ctx context.Context, a *config.Account, log *slog.Logger) (*sink.Store, error) {
	return openWith(ctx, sink.OpenExisting, a, log)
}

// OpenExistingWritable is OpenExisting for such a command that writes (see OpenWritable).
func OpenExistingWritable(ctx context.Context, a *config.Account, log *slog.Logger) (*sink.Store, error) {
	store, err := OpenExisting(ctx, a, log)
	return writable(ctx, a, store, err)
}

func openWith(ctx context.Context, open func(context.Context, string, sink.Options) (*sink.Store, error), a *config.Account, log *slog.Logger) (*sink.Store, error) {
	opts := a.SinkOptions()
	opts.Logger = log
	store, err := open(ctx, a.Warehouse.URL, opts)
	if err != nil {
		return nil, a.Wrap(err)
	}
	context.AfterFunc(ctx, func() { time.AfterFunc(StopGrace, store.Interrupt) })
	return store, nil
}

// OpenWritable is Open for a command that writes: a warehouse that takes none (a Postgres
// hot standby) is refused now, in one line naming it, rather than by the first statement that
// writes, mid-way through a sync, a folder or an erasure. So is one that lacks erasures of its
// erasure journal (sink.Store.CheckJournal): a sync or an onboarding would bring back people
// erased since the backup it was restored from.
func OpenWritable(ctx context.Context, a *config.Account, log *slog.Logger) (*sink.Store, error) {
	store, err := Open(ctx, a, log)
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

// Each runs one account's part of a command for each account in turn, going on past one
// that fails, and returns every failure. Once ctx ends (the command is stopping) it starts no
// more: the part that was running said why it stopped.
func Each(ctx context.Context, accts []*config.Account, part func(*config.Account) error) error {
	var errs []error
	for _, a := range accts {
		if ctx.Err() != nil {
			break
		}
		errs = append(errs, part(a))
	}
	return errors.Join(errs...)
}

// StopGrace is how long, once a command is asked to stop, its warehouse statements may go on
// (a run's ledger entry, a lock's release) before their connections are closed under them: a
// stop never waits on a warehouse that stopped answering.
const StopGrace = 15 * time.Second
