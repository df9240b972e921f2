package server

import (
	"container/list"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Failed authentications a client may make: AuthFailureBurst at once, then one per
// 1/AuthFailureRate seconds; beyond that it is answered 429 with Retry-After. A right key is
// never refused for it. At most maxAuthClients clients are followed (the least recently
// refused forgotten first), so memory stays bounded however many addresses send keys.
const (
	AuthFailureBurst = 10
	AuthFailureRate  = rate.Limit(1)
	maxAuthClients   = 10000
)

// authLimiter counts failed authentications per client.
type authLimiter struct {
	mu      sync.Mutex
	max     int
	order   *list.List // of *authClient, the most recently refused first
	clients map[string]*list.Element
}

type authClient struct {
	id  string
	lim *rate.Limiter
}

func newAuthLimiter(max int) *authLimiter {
	return &authLimiter{max: max, order: list.New(), clients: make(map[string]*list.Element)}
}

// fail notes a failed authentication of client at now: ok when it is within the client's
// allowance, else how long until the next one is.
func (l *authLimiter) fail(client string, now time.Time) (ok bool, retry time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var c *authClient
	if e := l.clients[client]; e != nil {
		l.order.MoveToFront(e)
		c = e.Value.(*authClient)
	} else {
		if l.order.Len() >= l.max {
			oldest := l.order.Back()
			l.order.Remove(oldest)
			delete(l.clients, oldest.Value.(*authClient).id)
		}
		c = &authClient{id: client, lim: rate.NewLimiter(AuthFailureRate, AuthFailureBurst)}
		l.clients[client] = l.order.PushFront(c)
	}
	if c.lim.AllowN(now, 1) {
		return true, 0
	}
	missing := 1 - c.lim.TokensAt(now)
	return false, time.Duration(math.Ceil(missing / float64(AuthFailureRate) * float64(time.Second)))
}

// len is how many clients are followed.
func (l *authLimiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.clients)
}
