package account

import (
	"context"
	"sync"
)

// A worker of many accounts answers /readyz without a session for every account at every probe.
// Its accounts' warehouses mostly share one server (a schema each), and a warehouse with no work
// holds no connection (sink.DefaultConnMaxIdleTime): asking each account's warehouse at every
// probe (every 10 s in the manifests) would open a session per account each time, more than a
// server's max_connections at a few hundred accounts. So the accounts on one warehouse URL form a
// probeGroup: a probe asks the first of them (the server answers, its schema is current) and one
// more in turn (its schema is current), at most two sessions a probe; every account's schema is
// checked within as many probes as the group has accounts, and one found behind stays unready
// until a later look finds it current. An account's own jobs still fail, and say so, the moment
// its warehouse does. A worker of one account asks it at every probe, as before.

// probeGroups are the groups of a worker's accounts, by warehouse URL.
type probeGroups struct {
	mu     sync.Mutex
	groups map[string]*probeGroup
}

// join puts w in the group of its warehouse URL.
func (p *probeGroups) join(w *Worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.groups == nil {
		p.groups = map[string]*probeGroup{}
	}
	g := p.groups[w.acct.Warehouse.URL]
	if g == nil {
		g = &probeGroup{last: map[*Worker]error{}}
		p.groups[w.acct.Warehouse.URL] = g
	}
	g.mu.Lock()
	g.members = append(g.members, w)
	g.mu.Unlock()
	w.probe = g
}

// probeGroup is the accounts of one warehouse URL.
type probeGroup struct {
	mu      sync.Mutex
	members []*Worker         // in the order they opened; the first is asked at every probe
	next    int               // the next of the others to ask
	last    map[*Worker]error // what each of the others said when last asked
}

// ready is w's readiness: asked of the warehouse for the group's first account, with one more
// account's look in turn; for the others, what their last look said.
func (g *probeGroup) ready(ctx context.Context, w *Worker) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if w != g.members[0] {
		return g.last[w]
	}
	err := w.runs.ready(ctx)
	if others := g.members[1:]; err == nil && len(others) > 0 {
		o := others[g.next%len(others)]
		g.next = (g.next + 1) % len(others)
		g.last[o] = o.runs.ready(ctx)
	}
	return err
}

// saw records what opening w's warehouse for a run found: for an account other than the
// group's first (asked at every probe), its readiness until the next look, a probe's or a run's.
func (g *probeGroup) saw(w *Worker, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.members) > 0 && w != g.members[0] {
		g.last[w] = err
	}
}
