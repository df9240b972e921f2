package account

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/sync/runner"
	"github.com/hrsync/hrsync/sync/walk"
)

// Syncer is one hrsync sync of an account: its warehouse (one that takes writes) and its
// client on the account's budget, open until Close.
type Syncer struct {
	acct  *config.Account
	store *sink.Store
	src   *client.Client
}

// OpenSync checks the account's source and opens its warehouse and client for a sync.
func OpenSync(ctx context.Context, a *config.Account, log *slog.Logger) (*Syncer, error) {
	if err := CheckSource(a); err != nil {
		return nil, fmt.Errorf("sync: %w", err)
	}
	store, err := OpenWritable(ctx, a, log)
	if err != nil {
		return nil, err
	}
	src, err := NewClient(a, log, store, nil, client.Options{})
	if err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("sync: %w", err)
	}
	return &Syncer{acct: a, store: store, src: src}, nil
}

// ErrSyncLocked is wrapped by Run's error when another process holds the warehouse's sync lock.
var ErrSyncLocked = runner.ErrLocked

// Run syncs resources with opts under the warehouse's sync lock. The results are each
// resource's, as far as the walk went. Another process syncing fails it at once, with an error
// that says so (errors.Is ErrSyncLocked).
func (s *Syncer) Run(ctx context.Context, opts walk.Options, resources []sink.Resource) ([]walk.Result, error) {
	var results []walk.Result
	err := walk.WithLock(ctx, s.store, func(ctx context.Context) error {
		var err error
		results, err = walk.New(s.src, s.store, opts).Run(ctx, resources)
		return err
	})
	if errors.Is(err, runner.ErrLocked) {
		return results, fmt.Errorf("sync: %w; try again when it is done", s.acct.Wrap(err))
	}
	return results, err
}

// Close closes the warehouse.
func (s *Syncer) Close() error { return s.store.Close() }
