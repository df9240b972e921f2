package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// forwardTimeout bounds a forwarded create, pacing included, within the server's write timeout.
const forwardTimeout = 30 * time.Second

// ReadOnlyMessage is the error of a create refused because the warehouse is a read-only
// replica: it says why, and where creates go.
const ReadOnlyMessage = "this replica serves a read-only copy of the warehouse (a Postgres hot standby) and takes no creates; send POST /v1/employees to a replica whose warehouse is the primary"

func appendEnvelope(b []byte, e *v1.Employee, appendItem func(*v1.Employee, []byte) []byte) []byte {
	b = append(b, `{"employees":[`...)
	b = appendItem(e, b)
	return append(b, "]}\n"...)
}

func (a *account) createEmployee(w http.ResponseWriter, r *http.Request) {
	if a.writes == WritesOff {
		w.Header().Set("Allow", "GET, HEAD")
		WriteError(w, http.StatusMethodNotAllowed, "this replica does not accept writes (serve.writes is off)")
		return
	}
	// Every create writes to the warehouse, local or forwarded alike: the employee, or the
	// forwarded answer's copy, its Idempotency-Key and its slot of the shared request budget.
	// A standby takes none of them, so it is refused before anything is sent upstream; asked
	// per create (one short statement), so a standby promoted to primary takes creates at once.
	if ro, err := a.store.ReadOnly(r.Context()); err != nil {
		a.internal(w, r, "check the warehouse is writable", err)
		return
	} else if ro {
		w.Header().Set("Allow", "GET, HEAD")
		WriteError(w, http.StatusMethodNotAllowed, ReadOnlyMessage)
		return
	}
	if s := scopeOf(r); s != nil && s.readOnly {
		WriteError(w, http.StatusForbidden, "this key may not create employees")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, a.h.opts.MaxBodyBytes)
	ne, err := v1.ReadNewEmployee(r.Header.Get("Content-Type"), r.Body)
	var verr *v1.ValidationError
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", a.h.opts.MaxBodyBytes))
		return
	case errors.As(err, &verr):
		writeJSON(w, http.StatusBadRequest, verr.AppendJSON(nil))
		return
	case errors.Is(err, v1.ErrUnsupportedMediaType):
		WriteError(w, http.StatusUnsupportedMediaType, err.Error())
		return
	case errors.Is(err, v1.ErrUnreadableBody):
		// The reader's error names the connection's addresses: the log has it, the answer not.
		a.h.log.WarnContext(r.Context(), "create: body could not be read", "request_id", w.Header().Get("X-Request-Id"), "account", a.name, "err", err)
		WriteError(w, http.StatusBadRequest, "the request body could not be read to its end")
		return
	case err != nil:
		WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	a.createOnce(w, r, ne)
}

// create makes the employee as serve.writes says and answers; key is the Idempotency-Key it
// was reserved under, or "".
func (a *account) create(w http.ResponseWriter, r *http.Request, ne v1.NewEmployee, key string) {
	ctx := r.Context()
	var e v1.Employee
	var err error
	switch a.writes {
	case WritesForward:
		taken, err := a.store.EmailTaken(ctx, ne.Email)
		if err != nil {
			a.internal(w, r, "check email", err)
			return
		}
		if taken {
			writeJSON(w, http.StatusBadRequest, emailTaken().AppendJSON(nil))
			return
		}
		fctx, cancel := context.WithTimeout(ctx, forwardTimeout)
		e, err = a.upstream.CreateEmployee(fctx, ne)
		cancel()
		if err != nil {
			a.upstreamFailed(w, r, err)
			return
		}
		// The record exists upstream now: a failure to keep our copy must not turn the answer
		// into an error the client would retry (creating it twice). The next sync converges.
		if err := a.store.PutEmployee(ctx, e); err != nil {
			a.h.log.ErrorContext(ctx, "store forwarded create", "request_id", w.Header().Get("X-Request-Id"), "account", a.name, "employee_id", e.ID, "err", err)
		}
	default:
		if key != "" {
			e, err = a.store.CreateEmployeeOnce(ctx, ne, keyOf(r).id, key)
		} else {
			e, err = a.store.CreateEmployee(ctx, ne)
		}
		if errors.Is(err, v1.ErrEmailTaken) {
			writeJSON(w, http.StatusBadRequest, emailTaken().AppendJSON(nil))
			return
		}
		if err != nil {
			a.internal(w, r, "create employee", err)
			return
		}
	}
	if cw, ok := w.(*capture); ok {
		cw.employeeID = e.ID
	}
	a.created(w, r, &e)
}

// created answers a create: 201, the employee in its envelope, its Location.
func (a *account) created(w http.ResponseWriter, r *http.Request, e *v1.Employee) {
	w.Header().Set("Location", a.h.baseURL(r).JoinPath(strconv.FormatInt(e.ID, 10)).String())
	writeJSON(w, http.StatusCreated, appendEnvelope(nil, e, projected(r, "employees", (*v1.Employee).AppendJSON)))
}

func emailTaken() *v1.ValidationError {
	v := &v1.ValidationError{}
	v.Add("employee[email]", "has already been taken")
	return v
}

// upstreamFailed answers a forwarded create the upstream did not accept.
func (a *account) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	var verr *v1.ValidationError
	var rl *v1.RateLimitError
	switch {
	case errors.As(err, &verr):
		writeJSON(w, http.StatusBadRequest, verr.AppendJSON(nil))
	case errors.As(err, &rl):
		if rl.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int((rl.RetryAfter+time.Second-1)/time.Second)))
		}
		WriteError(w, http.StatusTooManyRequests, "the upstream service's rate limit is reached; retry later")
	case errors.Is(err, v1.ErrUnauthorized):
		a.h.log.ErrorContext(r.Context(), "forward create: upstream refused the configured source API key", "request_id", w.Header().Get("X-Request-Id"), "account", a.name)
		WriteError(w, http.StatusBadGateway, "the upstream service refused this replica's credentials")
	default:
		a.h.log.ErrorContext(r.Context(), "forward create", "request_id", w.Header().Get("X-Request-Id"), "account", a.name, "err", err)
		WriteError(w, http.StatusBadGateway, "the upstream service did not accept the create")
	}
}
