package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/hrsync/hrsync/source/v1"
)

func (a *account) internal(w http.ResponseWriter, r *http.Request, op string, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		WriteError(w, http.StatusServiceUnavailable, "request canceled")
		return
	}
	if busy(w, err) {
		return
	}
	if errors.Is(err, v1.ErrUnreachable) {
		// Not a fault of the request or of hrsync: one line at WARN, and the client retries.
		a.h.log.WarnContext(r.Context(), op+": the warehouse cannot be reached", "request_id", w.Header().Get("X-Request-Id"), "account", a.name, "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(unreachableRetryAfter))
		WriteError(w, http.StatusServiceUnavailable, "the warehouse cannot be reached; retry later")
		return
	}
	a.h.log.ErrorContext(r.Context(), op, "request_id", w.Header().Get("X-Request-Id"), "account", a.name, "err", err)
	WriteError(w, http.StatusInternalServerError, "internal error")
}

// unreachableRetryAfter is the Retry-After, in seconds, of a 503 for a warehouse out of reach: a
// Postgres restarting or failing over is back within seconds, and the next open is tried at the
// next request, so a client waits a little and no more; a load balancer's readiness probe takes
// the replica out meanwhile if it lasts.
const unreachableRetryAfter = 5

// busy answers an error wrapping ErrBusy (the store could not get its write lock in time): 503
// with Retry-After, so a client retries rather than taking it for a failure. It reports whether
// it answered.
func busy(w http.ResponseWriter, err error) bool {
	if !errors.Is(err, v1.ErrBusy) {
		return false
	}
	w.Header().Set("Retry-After", "5")
	WriteError(w, http.StatusServiceUnavailable, "the warehouse is busy with another write; retry later")
	return true
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError answers an error as JSON (see ErrorBody).
func WriteError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, append(v1.ErrorBody(status, message), '\n'))
}
