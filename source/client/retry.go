package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/hrsync/hrsync/source/budget"
	"github.com/hrsync/hrsync/source/v1"
)

// Retries. A read (GET) is retried after a 5xx, a timeout or a dropped connection, with
// exponential backoff and jitter; a create (POST) is not idempotent, so it is retried only when
// the upstream certainly did not see it: a 429, or a connection refused before anything was
// sent. Either is retried after a 429, once the rate-limit window is over. 401 and 403 and every
// other 4xx stop at once. Attempts are bounded by ClientOptions.MaxAttempts and MaxElapsed.

// Retry defaults.
const (
	DefaultMaxAttempts     = 6
	DefaultMaxElapsed      = 5 * time.Minute
	DefaultRateLimitWindow = time.Minute
	DefaultRetryInitial    = time.Second
	DefaultRetryMax        = 30 * time.Second
)

// maxAnswerBytes bounds an answer's body; a 100-record page is far below it.
const maxAnswerBytes = 32 << 20

// RequestEvent describes one HTTP attempt (ClientOptions.Observe).
type RequestEvent struct {
	Method string
	// Route is the path pattern of the request below the base address, e.g. "/v1/employees".
	Route string
	// Status is the answer's status code, 0 when the attempt failed without one.
	Status int
	// Duration is the time from sending the request to having read the answer.
	Duration time.Duration
	// Waited is the time the attempt waited for the request budget before it was sent.
	Waited time.Duration
	// Attempt counts the attempts of one call from 1; above 1 the attempt is a retry.
	Attempt int
	// Retried reports that the attempt failed and the client retries it.
	Retried bool
	// RequestID is the answer's X-Request-Id.
	RequestID string
}

// call is one logical request; each attempt sends it anew.
type call struct {
	method      string
	route       string // "/v1/employees"
	url         string
	body        []byte
	contentType string
	kind        budget.Kind // what the request's slot of the budget is drawn as
}

// do sends c within the request budget, retrying as described above, and returns the answer of
// the last attempt with its body read. The error of a failed call is the last attempt's, wrapped
// with how many attempts were made when retries ran out.
func (c *Client) do(ctx context.Context, cl call) (*Response, []byte, error) {
	stats := StatsFrom(ctx)
	bo := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(c.opts.RetryInitial),
		backoff.WithMaxInterval(c.opts.RetryMax),
		backoff.WithMaxElapsedTime(0), // bounded below, rate-limit windows included
	)
	var first time.Time
	for attempt := 1; ; attempt++ {
		waited, err := c.pacer.wait(ctx, cl.kind)
		stats.addWaited(waited)
		if err != nil {
			return nil, nil, err
		}
		start := c.clock.Now()
		if attempt == 1 {
			first = start
		}
		resp, body, err := c.send(ctx, cl)
		stats.addRequest(attempt > 1)
		ev := RequestEvent{Method: cl.method, Route: cl.route, Duration: c.clock.Now().Sub(start), Waited: waited, Attempt: attempt}
		if resp != nil {
			ev.Status, ev.RequestID = resp.StatusCode, resp.RequestID
		}
		if err == nil {
			c.observe(ev)
			return resp, body, nil
		}

		var rl *v1.RateLimitError
		rateLimited := errors.As(err, &rl)
		stats.addFailure(rateLimited)
		wait, retry := c.retryWait(ctx, cl.method, err, bo)
		if retry {
			switch elapsed := c.clock.Now().Add(wait).Sub(first); {
			case attempt >= c.opts.MaxAttempts:
				if attempt > 1 {
					err = fmt.Errorf("giving up after %d attempts: %w", attempt, err)
				}
				retry = false
			case elapsed > c.opts.MaxElapsed:
				err = fmt.Errorf("giving up after %s (waiting %s more would pass the retry budget of %s): %w",
					attempts(attempt), wait.Round(time.Millisecond), c.opts.MaxElapsed, err)
				retry = false
			case pastDeadline(ctx, wait):
				err = fmt.Errorf("giving up after %s (waiting %s more would pass the context's deadline): %w",
					attempts(attempt), wait.Round(time.Millisecond), err)
				retry = false
			}
		}
		ev.Retried = retry
		c.observe(ev)
		if !retry {
			return resp, body, err
		}
		c.log.LogAttrs(ctx, slog.LevelWarn, "source request failed; retrying",
			slog.String("method", cl.method), slog.String("route", cl.route),
			slog.Int("attempt", attempt), slog.Int("status", ev.Status),
			slog.String("request_id", ev.RequestID), slog.Duration("wait", wait),
			slog.String("err", err.Error()))
		if rateLimited {
			// The budget is the account's: every request of this Client waits the window out.
			// The next pacer.wait sleeps it (counted as Waited).
			c.pacer.pauseUntil(c.clock.Now().Add(wait))
			continue
		}
		sleepStart := c.clock.Now()
		serr := c.clock.Sleep(ctx, wait)
		stats.addBackedOff(c.clock.Now().Sub(sleepStart))
		if serr != nil {
			return resp, nil, fmt.Errorf("wait to retry: %w", serr)
		}
	}
}

// pastDeadline reports whether waiting d would end after ctx's deadline.
func pastDeadline(ctx context.Context, d time.Duration) bool {
	dl, ok := ctx.Deadline()
	return ok && d > time.Until(dl)
}

func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

func (c *Client) observe(ev RequestEvent) {
	if c.opts.Observe != nil {
		c.opts.Observe(ev)
	}
}

// retryWait decides whether a failed attempt is retried, and after how long.
func (c *Client) retryWait(ctx context.Context, method string, err error, bo backoff.BackOff) (time.Duration, bool) {
	if ctx.Err() != nil {
		return 0, false
	}
	var rl *v1.RateLimitError
	if errors.As(err, &rl) {
		if rl.RetryAfter > 0 {
			return rl.RetryAfter, true
		}
		return c.opts.RateLimitWindow, true
	}
	idempotent := method == http.MethodGet || method == http.MethodHead
	var er *ErrorResponse
	switch {
	case errors.As(err, &er):
		if !idempotent || er.Status < 500 {
			return 0, false
		}
	case errors.Is(err, v1.ErrUnauthorized):
		return 0, false
	case idempotent && transient(err):
	case !idempotent && refusedBeforeSend(err):
	default:
		return 0, false
	}
	d := bo.NextBackOff()
	if d == backoff.Stop {
		return 0, false
	}
	return d, true
}

// transient reports whether a transport error is worth another attempt of a read: a timeout, a
// refused, reset or dropped connection, a temporary DNS failure.
func transient(err error) bool {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		// The HTTP client's own timeout; the caller's context was checked before.
		errors.Is(err, context.DeadlineExceeded):
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) && (dns.IsTemporary || dns.IsTimeout)
}

// refusedBeforeSend reports whether the connection was refused while dialing: the request never
// reached the upstream, so even a create may be sent again.
func refusedBeforeSend(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" && errors.Is(op.Err, syscall.ECONNREFUSED)
}

// send makes one attempt: the request with the key, its answer read in full and checked.
func (c *Client) send(ctx context.Context, cl call) (*Response, []byte, error) {
	var body io.Reader
	if cl.body != nil {
		body = bytes.NewReader(cl.body)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, cl.url, body)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("X-API-KEY", c.apiKey)
	req.Header.Set("Accept", "application/json")
	if cl.contentType != "" {
		req.Header.Set("Content-Type", cl.contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, unwrapRedirect(err)
	}
	defer resp.Body.Close()
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	r := newResponse(resp)
	resp.Body = io.NopCloser(bytes.NewReader(data))
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	switch {
	case !ok:
		// The status decides; a body cut short only loses detail.
		return r, nil, checkResponse(r)
	case rerr != nil:
		return r, nil, fmt.Errorf("read answer: %w", rerr)
	case len(data) > maxAnswerBytes:
		return r, nil, fmt.Errorf("read answer: larger than %d bytes", maxAnswerBytes)
	}
	return r, data, nil
}
