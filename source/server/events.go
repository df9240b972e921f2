package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/hrsync/hrsync/source/v1"
)

// GET /v1/events?after=SEQ&per_page=N (an extension: the service has no such resource) is the
// joiner, mover and leaver events' pull feed (docs/events.md): the published events after the
// cursor, oldest first, {"events":[…]}, with a Link rel="next" carrying the last event's seq
// when the page is full. A key reads it when it may read employees, and each event is what the
// key may see of it: the employee's record as GET /v1/employees/{id} would give it to the key
// (only {"id": n} once the warehouse no longer lists them), and only the changes whose member
// the key may read. Nothing is cached: publishing an event does not change the store's version.

// eventsPath is the feed's route.
const eventsPath = "/v1/events"

func (a *account) listEvents(w http.ResponseWriter, r *http.Request) {
	if !readable(w, r, "employees") {
		return
	}
	after, size, err := parseEventsQuery(r.URL.Query())
	if err != nil {
		WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx := r.Context()
	events, err := a.store.FeedEvents(ctx, after, int(size))
	if err != nil {
		a.internal(w, r, "list events", err)
		return
	}
	ids := make([]int64, len(events))
	for i, e := range events {
		ids[i] = e.EmployeeID
	}
	emps, err := a.store.Employees(ctx, ids)
	if err != nil {
		a.internal(w, r, "list events", err)
		return
	}
	s := scopeOf(r)
	b := []byte(`{"events":[`)
	for i := range events {
		if i > 0 {
			b = append(b, ',')
		}
		e := &events[i]
		var empp *v1.Employee // nil: no longer listed
		if emp, ok := emps[e.EmployeeID]; ok {
			empp = &emp
		}
		if b, err = appendEvent(b, s, *e, empp); err != nil {
			a.internal(w, r, "list events", err)
			return
		}
	}
	b = append(b, "]}\n"...)
	hdr := w.Header()
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Per-Page", strconv.FormatInt(size, 10))
	if int64(len(events)) == size {
		next := a.h.baseURL(r)
		q := url.Values{}
		q.Set("after", strconv.FormatInt(events[len(events)-1].Seq, 10))
		q.Set("per_page", strconv.FormatInt(size, 10))
		next.RawQuery = q.Encode()
		hdr.Set("Link", "<"+next.String()+`>; rel="next"`)
	}
	writeJSON(w, http.StatusOK, b)
}

// appendEvent appends event e as scope s lets its key read it: its members, the changes whose
// member s lets through, and the employee emp (nil: no longer listed, {"id": n}) projected by s.
func appendEvent(b []byte, s *scope, e v1.Event, emp *v1.Employee) ([]byte, error) {
	e.Changes = visibleChanges(s, e.EmployeeID, e.Changes)
	item, err := json.Marshal(e)
	if err != nil {
		return b, err
	}
	// The employee after the event's own members: {"id":…,…,"employee":{…}}.
	b = append(b, item[:len(item)-1]...)
	b = append(b, `,"employee":`...)
	if emp == nil {
		b = strconv.AppendInt(append(b, `{"id":`...), e.EmployeeID, 10)
		return append(b, "}}"...), nil
	}
	b = projectedBy(s, "employees", (*v1.Employee).AppendJSON)(emp, b)
	return append(b, '}'), nil
}

// An EventScope is a key's scope as events are given to it: by the pull feed to a serve key,
// by a webhook to a subscriber (sync/events), each event the same for the same scope.
type EventScope struct{ s *scope }

// NewEventScope compiles s against the account's declarations decls, as New does a key's. A
// scope that may not read employees is refused: every event is about an employee.
func NewEventScope(s Scope, decls v1.Declarations) (*EventScope, error) {
	sc, err := compileScope(s, Collections(), decls)
	if err != nil {
		return nil, err
	}
	if !sc.mayRead("employees") {
		return nil, errors.New("the scope does not read employees, which every event is about")
	}
	return &EventScope{sc}, nil
}

// Event is event e as the scope lets its holder read it, the employee emp (nil: no longer
// listed) included: what GET /v1/events gives a key of the same scope.
func (es *EventScope) Event(e v1.Event, emp *v1.Employee) ([]byte, error) {
	return appendEvent(nil, es.s, e, emp)
}

// parseEventsQuery reads after (default 0) and per_page (default v1.DefaultPerPage, at most
// v1.MaxPerPage) and refuses any other parameter.
func parseEventsQuery(q url.Values) (after, size int64, err error) {
	size = v1.DefaultPerPage
	for name, vs := range q {
		if len(vs) != 1 {
			return 0, 0, errors.New("give " + strconv.Quote(name) + " once")
		}
		n, err := strconv.ParseInt(vs[0], 10, 64)
		switch name {
		case "after":
			if err != nil || n < 0 {
				return 0, 0, errors.New("after: want the seq of the last event read (0 or more)")
			}
			after = n
		case "per_page":
			if err != nil || n < 1 {
				return 0, 0, errors.New("per_page: want 1 to " + strconv.Itoa(v1.MaxPerPage))
			}
			size = min(n, v1.MaxPerPage)
		default:
			return 0, 0, errors.New("unknown parameter " + strconv.Quote(name) + "; the events feed takes after and per_page")
		}
	}
	return after, size, nil
}

// visibleChanges are the changes whose member the key of scope s may read of an employee: each
// is put through the key's projection of employees as {"id":…, member: value}, and kept when
// the member survives it.
func visibleChanges(s *scope, id int64, changes []v1.EventChange) []v1.EventChange {
	if len(changes) == 0 {
		return changes
	}
	if s == nil || (s.fields == nil && s.classes["employees"] == nil) {
		return changes
	}
	var out []v1.EventChange
	for _, c := range changes {
		obj := strconv.AppendInt([]byte(`{"id":`), id, 10)
		obj = append(obj, `,"`...)
		obj = append(obj, c.Member...)
		obj = append(obj, `":"x"}`...)
		var m map[string]json.RawMessage
		if json.Unmarshal(projectEmployee(s, obj), &m) == nil {
			if _, ok := m[c.Member]; ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// projectEmployee is an employee object as s lets its key read it.
func projectEmployee(s *scope, obj []byte) []byte {
	src := obj
	if classes := s.classes["employees"]; classes != nil {
		kept, err := classes.appendProject(nil, src)
		if err != nil {
			return nil
		}
		src = kept
	}
	if s.fields == nil {
		return src
	}
	kept, err := s.fields.appendProject(nil, src)
	if err != nil {
		return nil
	}
	return kept
}
