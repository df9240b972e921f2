package httpserve

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
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
// key. With detail (the metrics port), a /readyz that fails says why; without (the API port,
// open to whoever reaches the replica), only that it is not ready: the reason names warehouses,
// accounts and drivers' errors, which are the operator's to read, in the log and on the metrics
// port.
func Health(store Readier, log *slog.Logger, detail bool) map[string]http.Handler {
	level := slog.LevelWarn
	if !detail {
		level = slog.LevelDebug // the metrics port's probe logs it at warn; a client cannot fill the log
	}
	return map[string]http.Handler{
		"/healthz": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeHealth(w, http.StatusOK, "ok", "", "")
		}),
		"/readyz": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
			defer cancel()
			if err := store.Ready(rctx); err != nil {
				log.Log(r.Context(), level, "not ready", "err", err)
				reason := ""
				if detail {
					reason = config.OneLine(err.Error())
				}
				writeHealth(w, http.StatusServiceUnavailable, "unavailable", reason, "")
				return
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
