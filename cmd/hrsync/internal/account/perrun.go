package account

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/budget"
	"github.com/hrsync/hrsync/source/client"
	v1 "github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/onboard"
	"github.com/hrsync/hrsync/sync/runner"
)

// accountRuns is what one account of hrsync run opens for its runs: its warehouse (a
// *sink.Store, its pool and its goroutines), its source client and its shared budget, opened
// when a run of the account starts and closed when the last of its runs going on ends. Between
// runs an account holds none of them: a worker of a thousand accounts, nearly all of them
// waiting for their schedule, holds the warehouses of the few running, not of every account
// configured. A run pays one open (a connection and the schema's check) as it starts; the
// sync, onboarding and retention of one account running at once share one.
type accountRuns struct {
	acct *config.Account
	// ctx is the worker's: once it ends (SIGTERM), a warehouse still open StopGrace later is
	// interrupted (see Open).
	ctx   context.Context
	log   *slog.Logger
	copts client.Options // the source client's: the shared transport, the request metrics
	// waits adds up the waits of the budgets the runs opened, for the account's budget metrics;
	// nil when the account has no shared budget.
	waits *budgetWaits
	// seen, when set, is told what each open found (readiness: see probeGroup.saw).
	seen func(err error)

	mu      sync.Mutex
	users   int           // runs (and probes) using cur
	cur     *accountRun   // open while users > 0
	opening chan struct{} // closed once an open in progress ends
}

// accountRun is what one account's runs use while any goes on.
type accountRun struct {
	store  *sink.Store
	client *client.Client
	budget *sink.Budget // nil without a shared budget
	stop   func() bool  // ends the interrupt waiting on the worker's ctx
}

// acquire is the account's warehouse and client for one run, opened when no run has them open;
// release ends the use, closing them after the last.
func (r *accountRuns) acquire(ctx context.Context) (*accountRun, error) {
	r.mu.Lock()
	for r.opening != nil { // another run of the account is opening them
		ch := r.opening
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		r.mu.Lock()
	}
	if run := r.cur; run != nil {
		r.users++
		r.mu.Unlock()
		return run, nil
	}
	ch := make(chan struct{})
	r.opening = ch
	r.mu.Unlock()
	run, err := r.open(ctx)
	r.mu.Lock()
	r.opening = nil
	close(ch)
	if err == nil {
		r.cur = run
		r.users++
	}
	r.mu.Unlock()
	if r.seen != nil {
		r.seen(err)
	}
	return run, err
}

// release ends one use of acquire's; the last closes the warehouse.
func (r *accountRuns) release() {
	r.mu.Lock()
	r.users--
	var done *accountRun
	if r.users == 0 {
		done, r.cur = r.cur, nil
	}
	r.mu.Unlock()
	if done != nil {
		done.close(r.waits)
	}
}

// open opens the account's warehouse and builds its client on it.
func (r *accountRuns) open(ctx context.Context) (*accountRun, error) {
	opts := r.acct.SinkOptions()
	opts.Logger = r.log
	store, err := sink.Open(ctx, r.acct.Warehouse.URL, opts)
	if err != nil {
		return nil, err
	}
	if err := store.CheckJournal(ctx); err != nil { // syncs no one erased since a backup restored
		_ = store.Close()
		return nil, err
	}
	run := &accountRun{store: store}
	run.stop = context.AfterFunc(r.ctx, func() { time.AfterFunc(StopGrace, store.Interrupt) })
	if run.client, run.budget, err = NewBudgetedClient(r.acct, r.log, store, r.copts); err != nil {
		run.close(nil)
		return nil, err
	}
	r.waits.add(run.budget)
	return run, nil
}

func (run *accountRun) close(waits *budgetWaits) {
	run.stop()
	waits.retire(run.budget)
	_ = run.store.Close()
}

// ready is whether the account's warehouse answers and its schema is current: asked of the
// warehouse a run has open, otherwise of one opened for the question and closed again (one
// session, for as long as the question takes).
func (r *accountRuns) ready(ctx context.Context) error {
	r.mu.Lock()
	run := r.cur
	if run != nil {
		r.users++
	}
	r.mu.Unlock()
	if run != nil {
		defer r.release()
		return run.store.Ready(ctx)
	}
	opts := r.acct.SinkOptions()
	opts.Logger = r.log
	store, err := sink.Open(ctx, r.acct.Warehouse.URL, opts)
	if err != nil {
		return err
	}
	return store.Close()
}

// job is j (its name, trigger, lock, slots) running, at each run, the job build makes of the
// warehouse and client open for it.
func (r *accountRuns) job(j runner.Job, build func(run *accountRun) runner.Job) runner.Job {
	j.Run = func(ctx context.Context) error {
		run, err := r.acquire(ctx)
		if err != nil {
			return r.acct.Wrap(err)
		}
		defer r.release()
		return build(run).Run(ctx)
	}
	return j
}

// runLocker is the account's warehouse as its runner's lock: it opens the warehouse (acquire)
// to take the lock, and closes it once the lock is given back, or not taken (another process
// holds it), unless another run of the account still uses it. The lock is held for the whole
// run, on the warehouse the run writes through.
type runLocker struct{ runs *accountRuns }

func (l runLocker) TryLock(ctx context.Context, name string) (context.Context, func(), bool, error) {
	run, err := l.runs.acquire(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	held, release, ok, err := run.store.TryLock(ctx, name)
	if !ok {
		l.runs.release()
		return held, release, ok, err
	}
	return held, func() {
		release()
		l.runs.release()
	}, true, nil
}

// runLedger and runUpstream are an account's onboarding's warehouse and source: those of the
// run going on. The Onboarder is the account's for as long as the worker runs (what it warned
// of is said once), its warehouse and client each run's.
type runLedger struct{ runs *accountRuns }

// errNoRun is what onboarding's warehouse and source answer outside a run (a bug: onboarding
// runs as a job, which holds them), rather than a nil dereference.
var errNoRun = errors.New("the account's warehouse and source are open only during a run, and none is going on")

func (l runLedger) store() (*sink.Store, error) {
	l.runs.mu.Lock()
	defer l.runs.mu.Unlock()
	if l.runs.cur == nil || l.runs.cur.store == nil {
		return nil, errNoRun
	}
	return l.runs.cur.store, nil // a run is going on: its job holds the warehouse (accountRuns.job)
}

func (l runLedger) OnboardingRows(ctx context.Context, fileHash string) (map[int]sink.OnboardingRow, error) {
	st, err := l.store()
	if err != nil {
		return nil, err
	}
	return st.OnboardingRows(ctx, fileHash)
}

func (l runLedger) CreatedByEmail(ctx context.Context, email string) (sink.OnboardingRow, error) {
	st, err := l.store()
	if err != nil {
		return sink.OnboardingRow{}, err
	}
	return st.CreatedByEmail(ctx, email)
}

func (l runLedger) PutOnboardingRow(ctx context.Context, row sink.OnboardingRow) error {
	st, err := l.store()
	if err != nil {
		return err
	}
	return st.PutOnboardingRow(ctx, row)
}

func (l runLedger) ConfirmSending(ctx context.Context, email string, employeeID int64, reason string) error {
	st, err := l.store()
	if err != nil {
		return err
	}
	return st.ConfirmSending(ctx, email, employeeID, reason)
}

func (l runLedger) EmailTaken(ctx context.Context, email string) (bool, error) {
	st, err := l.store()
	if err != nil {
		return false, err
	}
	return st.EmailTaken(ctx, email)
}

func (l runLedger) ErasedEmail(ctx context.Context, email string) (int64, error) {
	st, err := l.store()
	if err != nil {
		return 0, err
	}
	return st.ErasedEmail(ctx, email)
}

func (l runLedger) PutEmployee(ctx context.Context, e v1.Employee) error {
	st, err := l.store()
	if err != nil {
		return err
	}
	return st.PutEmployee(ctx, e)
}

type runUpstream struct{ runs *accountRuns }

func (u runUpstream) client() (*client.Client, error) {
	u.runs.mu.Lock()
	defer u.runs.mu.Unlock()
	if u.runs.cur == nil || u.runs.cur.client == nil {
		return nil, errNoRun
	}
	return u.runs.cur.client, nil
}

func (u runUpstream) CreateEmployee(ctx context.Context, ne v1.NewEmployee) (v1.Employee, error) {
	c, err := u.client()
	if err != nil {
		return v1.Employee{}, err
	}
	return c.CreateEmployee(ctx, ne)
}

func (u runUpstream) ListEmployees(ctx context.Context, page int64) ([]v1.Employee, *client.Response, error) {
	c, err := u.client()
	if err != nil {
		return nil, nil, err
	}
	return c.ListEmployees(ctx, page)
}

var (
	_ onboard.Ledger   = runLedger{}
	_ onboard.Upstream = runUpstream{}
)

// budgetWaits are the waits of an account's shared budgets, one after another (a worker opens
// one with each run's warehouse), added up: the account's budget metrics count on across runs.
// A nil *budgetWaits adds nothing.
type budgetWaits struct {
	mu   sync.Mutex
	done map[budget.Kind]sink.KindWaits // of the budgets closed
	open []*sink.Budget
}

func (w *budgetWaits) add(b *sink.Budget) {
	if w == nil || b == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.open = append(w.open, b)
}

// retire folds b's waits into those of the budgets closed.
func (w *budgetWaits) retire(b *sink.Budget) {
	if w == nil || b == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	i := slices.Index(w.open, b)
	if i < 0 {
		return
	}
	w.open = slices.Delete(w.open, i, i+1)
	if w.done == nil {
		w.done = map[budget.Kind]sink.KindWaits{}
	}
	for k, kw := range b.Waits() {
		d := w.done[k]
		d.Granted += kw.Granted
		d.Waited += kw.Waited
		w.done[k] = d
	}
}

// Waits is every budget's waits, per kind: those closed and those open.
func (w *budgetWaits) Waits() map[budget.Kind]sink.KindWaits {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[budget.Kind]sink.KindWaits, len(w.done))
	for k, d := range w.done {
		out[k] = d
	}
	for _, b := range w.open {
		for k, kw := range b.Waits() {
			d := out[k]
			d.Granted += kw.Granted
			d.Waited += kw.Waited
			out[k] = d
		}
	}
	return out
}
