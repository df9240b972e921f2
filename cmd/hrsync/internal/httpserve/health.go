package httpserve

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/schema"
	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/source/server"
)

// Readier is what /readyz asks.
type Readier interface {
	Ready(ctx context.Context) error
}

// ReadOnlyReporter is a Readier that can say its warehouse takes no writes now (a Postgres hot
// standby): /readyz then says so beside "ok", since a read replica is ready for what it does.
type ReadOnlyReporter interface {
	ReadOnly(ctx context.Context) (bool, error)
}

// Health is /healthz (alive) and /readyz (warehouse reachable, schema current); they need no
// key. With detail (the metrics port), a /readyz that fails says why in general words (Reason):
// the port needs no key either, and a driver's error names the warehouse's host, port, database,
// user or file. Without (the API port, open to whoever reaches the replica), only that it is not
// ready. The error itself, which the operator needs, is logged, once per change of state.
func Health(store Readier, log *slog.Logger, detail bool) map[string]http.Handler {
	level := slog.LevelWarn
	if !detail {
		level = slog.LevelDebug // the metrics port's probe logs it at warn; a client cannot fill the log
	}
	var st readyState
	return map[string]http.Handler{
		"/healthz": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeHealth(w, http.StatusOK, "ok", "", "")
		}),
		"/readyz": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
			defer cancel()
			if err := store.Ready(rctx); err != nil {
				reason := Reason(err)
				if st.change(reason) {
					log.Log(r.Context(), level, "not ready", "reason", reason, "err", config.OneLine(err.Error()))
				}
				if !detail {
					reason = ""
				}
				writeHealth(w, http.StatusServiceUnavailable, "unavailable", reason, "")
				return
			}
			if st.change("") {
				log.Log(r.Context(), level, "ready again")
			}
			if ro, ok := store.(ReadOnlyReporter); ok {
				// Ready already: a failure here is the next probe's to report.
				if yes, err := ro.ReadOnly(rctx); err == nil && yes {
					writeHealth(w, http.StatusOK, "ok", "", "read-only replica (hot standby): reads only, creates refused")
					return
				}
			}
			writeHealth(w, http.StatusOK, "ok", "", "")
		}),
	}
}

// readyState is what /readyz last said: "" ready, otherwise its reason.
type readyState struct {
	mu     sync.Mutex
	reason string
}

// change records reason and reports whether it differs from the last one.
func (s *readyState) change(reason string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := s.reason != reason
	s.reason = reason
	return changed
}

// accountPrefix is how an account's error is named ("account acme: ", "account acme: not
// started: "); account names are of config's accountName form.
var accountPrefix = regexp.MustCompile(`^account [a-z][a-z0-9_-]{0,39}: (not started: )?`)

// Reason is why a warehouse is not ready, for /readyz: the accounts named, each one's cause in
// words that name no host, port, database, user, schema or file (a driver's error names them:
// it goes to the log). For several failures, joined (errors.Join), each is said, "; " between.
func Reason(err error) string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var parts []string
		for _, e := range j.Unwrap() {
			if e != nil {
				parts = append(parts, Reason(e))
			}
		}
		return strings.Join(parts, "; ")
	}
	return accountPrefix.FindString(err.Error()) + cause(err)
}

// cause is what the warehouse's error is, in general words.
func cause(err error) string {
	var behind *schema.BehindError
	switch {
	case errors.As(err, &behind) && behind.Current == 0:
		return "the warehouse schema is not set up: run `hrsync migrate`"
	case errors.As(err, &behind):
		return "the warehouse schema is behind: run `hrsync migrate`"
	case errors.Is(err, schema.ErrAhead):
		return "the warehouse schema is newer than this build: upgrade hrsync"
	case errors.Is(err, sink.ErrBadURL):
		return "the warehouse URL cannot be used (the log says why)"
	case errors.Is(err, sink.ErrNoAnswer), errors.Is(err, context.DeadlineExceeded):
		return "the warehouse did not answer in time (the log says more)"
	}
	return "the warehouse cannot be reached (the log says why)"
}

// GetRoutes answers GET and HEAD on exactly the paths of routes, and hands every other path to
// other (nil: a JSON 404). Unlike http.ServeMux it never redirects a path it would clean, and
// every refusal is JSON.
func GetRoutes(routes map[string]http.Handler, other http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := routes[r.URL.Path]
		switch {
		case !ok && other != nil:
			other.ServeHTTP(w, r)
		case !ok:
			server.WriteError(w, http.StatusNotFound, "no such endpoint: "+strings.Join(slices.Sorted(maps.Keys(routes)), ", ")+" are served here")
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			w.Header().Set("Allow", "GET, HEAD")
			server.WriteError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed here; allowed: GET, HEAD")
		default:
			h.ServeHTTP(w, r)
		}
	})
}
