package server

import (
	"context"
	"net/http"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// DefaultIdempotencyTTL is how long a create's answer is kept for its Idempotency-Key.
const DefaultIdempotencyTTL = 24 * time.Hour

// idempotencyStale is when a create still in progress under an Idempotency-Key is taken for
// dead (its process gone) and a retry runs it again: well past a forwarded create's bound.
const idempotencyStale = 2 * time.Minute

// createOnce runs a create, once per Idempotency-Key when the client sends one: a retry with
// the same key and request gets the first answer (Idempotent-Replayed: true), with another
// request 422, while the first runs 409. Answers that are the request's own (201, 400) are
// kept; any other is not, and the retry runs again.
func (a *account) createOnce(w http.ResponseWriter, r *http.Request, ne v1.NewEmployee) {
	ik, sent := r.Header["Idempotency-Key"]
	if !sent {
		a.create(w, r, ne, "")
		return
	}
	if len(ik) != 1 || !v1.ValidIdempotencyKey(ik[0]) {
		WriteError(w, http.StatusBadRequest, "Idempotency-Key must be one value of 1 to 255 printable ASCII characters")
		return
	}
	ctx := r.Context()
	c := v1.IdempotencyClaim{Client: keyOf(r).id, Key: ik[0], Hash: ne.Hash(), TTL: a.h.opts.IdempotencyTTL, Stale: idempotencyStale}
	rec, reserved, err := a.store.ReserveIdempotency(ctx, c)
	if err != nil {
		a.internal(w, r, "reserve idempotency key", err)
		return
	}
	if !reserved {
		a.replay(w, r, c, rec)
		return
	}
	cw := &capture{ResponseWriter: w}
	a.create(cw, r, ne, c.Key)
	// Kept or released whatever happened to the client's connection.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	switch cw.status {
	case http.StatusCreated, http.StatusBadRequest:
		err = a.store.CompleteIdempotency(sctx, c.Client, c.Key, v1.IdempotencyRecord{
			Status: cw.status, Body: cw.body, Location: w.Header().Get("Location"), EmployeeID: cw.employeeID})
	default:
		err = a.store.ReleaseIdempotency(sctx, c.Client, c.Key)
	}
	if err != nil {
		a.h.log.ErrorContext(ctx, "idempotency key: keep the answer", "request_id", w.Header().Get("X-Request-Id"), "account", a.name, "err", err)
	}
}

// replay answers a retry under an Idempotency-Key already claimed.
func (a *account) replay(w http.ResponseWriter, r *http.Request, c v1.IdempotencyClaim, rec v1.IdempotencyRecord) {
	switch {
	case rec.Hash == v1.ErasedRequestHash:
		WriteError(w, http.StatusUnprocessableEntity, "the person this Idempotency-Key created was erased since, so this request can no longer be matched to it; send it with a new key if it should be created again")
	case rec.Hash != c.Hash:
		WriteError(w, http.StatusUnprocessableEntity, "this Idempotency-Key was used with a different request")
	case rec.Status != 0:
		w.Header().Set("Idempotent-Replayed", "true")
		if rec.Location != "" {
			w.Header().Set("Location", rec.Location)
		}
		writeJSON(w, rec.Status, rec.Body)
	case rec.EmployeeID != 0:
		// Created, but the process stopped before it kept the answer: the answer is the
		// employee as created.
		e, _, err := a.store.Employee(r.Context(), rec.EmployeeID)
		if err != nil {
			a.internal(w, r, "replay create", err)
			return
		}
		w.Header().Set("Idempotent-Replayed", "true")
		a.created(w, r, &e)
	default:
		w.Header().Set("Retry-After", "1")
		WriteError(w, http.StatusConflict, "a request with this Idempotency-Key is still being processed; retry later")
	}
}

// capture notes a create's answer, to keep it for the retries of its Idempotency-Key.
type capture struct {
	http.ResponseWriter
	status     int
	body       []byte
	employeeID int64
}

func (c *capture) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *capture) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.body = append(c.body, b...)
	return c.ResponseWriter.Write(b)
}
