package sinktest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lib/pq"
)

// A test's database is dropped in the background, not in its cleanup. DROP DATABASE makes the
// server take an immediate checkpoint and waits for it (PostgreSQL 15: every dirty buffer of the
// cluster written and fsynced). Beside a busy suite on a server with fsync on, that took over 30
// seconds in CI, on the test's own clock. The dropper takes every database queued while it was
// dropping the last ones and drops them together, on connections of its own: concurrent drops
// share one checkpoint, and no test waits for any.
const (
	dropConns        = 4               // drops at once: one checkpoint serves them all
	dropBatchTimeout = 5 * time.Minute // a batch, however many checkpoints it waits for
)

type dropper struct {
	s    *server
	db   *sql.DB
	wake chan struct{} // buffered 1: something was queued, or the dropper should stop
	done chan struct{} // closed when the loop has returned

	mu       sync.Mutex
	pending  []string
	dropping int // names taken from pending and not yet dropped
	stopping bool
	errs     []error
	idle     *sync.Cond // broadcast when pending and dropping are both empty
}

var drops struct {
	mu sync.Mutex
	d  *dropper
}

// dropLater queues a test's database to be dropped, starting the dropper on first use.
func dropLater(s *server, name string) error {
	drops.mu.Lock()
	if drops.d == nil {
		d, err := newDropper(s)
		if err != nil {
			drops.mu.Unlock()
			return fmt.Errorf("dropping database %s: %w", name, err)
		}
		drops.d = d
	}
	d := drops.d
	drops.mu.Unlock()
	d.mu.Lock()
	d.pending = append(d.pending, name)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
	return nil
}

// newDropper starts the dropper, on a pool of its own on s (connected when the first drop
// needs it).
func newDropper(s *server) (*dropper, error) {
	connector, err := pq.NewConnector(withParam(s.url, "connect_timeout", connectTimeout))
	if err != nil {
		return nil, fmt.Errorf("the dropper's pool on %s: %w", s.source, err)
	}
	d := &dropper{s: s, db: sql.OpenDB(connector), wake: make(chan struct{}, 1), done: make(chan struct{})}
	d.idle = sync.NewCond(&d.mu)
	d.db.SetMaxOpenConns(dropConns)
	go d.loop()
	return d, nil
}

func (d *dropper) loop() {
	defer close(d.done)
	for range d.wake {
		for {
			d.mu.Lock()
			batch := d.pending
			d.pending = nil
			d.dropping = len(batch)
			stop := d.stopping
			d.mu.Unlock()
			if len(batch) == 0 {
				d.mu.Lock()
				d.idle.Broadcast()
				d.mu.Unlock()
				if stop {
					return
				}
				break
			}
			errs := d.dropAll(batch)
			d.mu.Lock()
			d.errs = append(d.errs, errs...)
			d.dropping = 0
			d.mu.Unlock()
		}
	}
}

// dropAll drops the batch, dropConns at a time.
func (d *dropper) dropAll(names []string) []error {
	ctx, cancel := context.WithTimeout(context.Background(), dropBatchTimeout)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, dropConns)
	)
	for _, name := range names {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if _, err := d.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name)+" WITH (FORCE)"); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("dropping database %s on %s: %w", name, d.s.source, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

// flush waits until every database queued so far is dropped and returns the drops that failed
// since the last flush.
func (d *dropper) flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.pending) > 0 || d.dropping > 0 {
		d.idle.Wait()
	}
	err := errors.Join(d.errs...)
	d.errs = nil
	return err
}

// stopDropper drops what is still queued, stops the dropper and closes its pool (shutdown, after
// the tests); the drops that failed are its error.
func stopDropper() error {
	drops.mu.Lock()
	d := drops.d
	drops.d = nil
	drops.mu.Unlock()
	if d == nil {
		return nil
	}
	d.mu.Lock()
	d.stopping = true
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
	<-d.done
	d.db.Close()
	d.mu.Lock()
	defer d.mu.Unlock()
	return errors.Join(d.errs...)
}
