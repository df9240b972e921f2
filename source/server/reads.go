package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/hrsync/hrsync/source/v1"
)

func (a *account) listEmployees(w http.ResponseWriter, r *http.Request) {
	if !readable(w, r, "employees") {
		return
	}
	serveList(a, w, r, "employees", a.store.ListEmployees, projected(r, "employees", (*v1.Employee).AppendJSON))
}

func (a *account) listWorkingPatterns(w http.ResponseWriter, r *http.Request) {
	if !readable(w, r, "working_patterns") {
		return
	}
	serveList(a, w, r, "working_patterns", a.store.ListWorkingPatterns, projected(r, "working_patterns", (*v1.WorkingPattern).AppendJSON))
}

// serveList answers one page of a collection, with Total, Per-Page, Link and ETag, or a 304 when
// the client's tag is still current (one cheap version read, no page query).
func serveList[T any](a *account, w http.ResponseWriter, r *http.Request, key string,
	fetch func(context.Context, v1.Page) (v1.List[T], error), appendItem func(*T, []byte) []byte) {
	ctx := r.Context()
	lq, err := parseListQuery(r.URL.Query())
	if err != nil {
		WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	p := lq.page
	base := a.h.baseURL(r)
	t, done := a.begin(w, r, answerKey{route: routeList, coll: key, page: p, perPage: lq.perPage, base: base.String()})
	if done {
		return
	}
	defer t.end()
	list, err := fetch(ctx, p)
	if errors.Is(err, errNotOffered) {
		WriteError(w, http.StatusNotFound, "the account does not offer "+key+" (its latest sync found it unavailable)")
		return
	}
	if err != nil {
		a.internal(w, r, "list "+key, err)
		return
	}
	hdr := w.Header()
	hdr.Set("Total", strconv.FormatInt(list.Total, 10))
	hdr.Set("Per-Page", strconv.FormatInt(p.Size, 10))
	// Links carry the interface's parameters only, as read: a client's other parameters are not
	// echoed into a header, and the answer is what its key (answerKey) says.
	if link := v1.FormatLink(base, lq.linkQuery(), p, list.Total); link != "" {
		hdr.Set("Link", link)
	}
	bp := a.h.bufs.Get().(*[]byte)
	b := append((*bp)[:0], `{"`...)
	b = append(b, key...)
	b = append(b, `":[`...)
	for i := range list.Items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendItem(&list.Items[i], b)
	}
	b = append(b, "]}\n"...)
	t.write(w, list.Version, b)
	*bp = b
	a.h.bufs.Put(bp)
}

func (a *account) getEmployee(w http.ResponseWriter, r *http.Request) {
	if !readable(w, r, "employees") {
		return
	}
	serveOne(a, w, r, "employees", "employee", a.store.Employee, projected(r, "employees", (*v1.Employee).AppendJSON))
}

// index answers GET /v1 (an extension: the source has no such resource) with the collections
// the replica serves, each with its path and Total: {"collections":[{"name":…,"path":…,
// "total":…},…]}, and the store's ETag.
func (a *account) index(w http.ResponseWriter, r *http.Request) {
	t, done := a.begin(w, r, answerKey{route: routeIndex})
	if done {
		return
	}
	defer t.end()
	version, totals, err := a.store.Totals(r.Context())
	if err != nil {
		a.internal(w, r, "read totals", err)
		return
	}
	type entry struct {
		Name  string `json:"name"`
		Path  string `json:"path"`
		Total int64  `json:"total"`
	}
	idx := struct {
		Collections []entry `json:"collections"`
	}{Collections: make([]entry, 0, len(a.h.collections))}
	s := scopeOf(r)
	for _, name := range a.h.collections {
		if s.mayRead(name) {
			idx.Collections = append(idx.Collections, entry{Name: name, Path: "/v1/" + name, Total: totals[name]})
		}
	}
	b, err := json.Marshal(idx)
	if err != nil {
		a.internal(w, r, "encode index", err)
		return
	}
	t.write(w, version, append(b, '\n'))
}

// errNotOffered is a list's answer for a collection the account does not offer: the source's
// 404, not an empty list.
var errNotOffered = errors.New("the account does not offer this collection")

// listRecords answers one page of a collection the wire declares. One the replica holds no
// record of, whose latest sync found the account does not offer it (a module the account lacks),
// is answered 404 as the source answers it, so a client of the replica sees what it would see
// upstream.
func (a *account) listRecords(w http.ResponseWriter, r *http.Request, c *v1.Collection) {
	if !readable(w, r, c.Name) {
		return
	}
	serveList(a, w, r, c.Name,
		func(ctx context.Context, p v1.Page) (v1.List[v1.Record], error) {
			list, err := a.store.ListRecords(ctx, c.Name, p)
			if err != nil || list.Total > 0 {
				return list, err
			}
			// Only an empty collection costs this second read.
			if un, err := a.store.Unavailable(ctx, c.Name); err != nil || un {
				return list, cmp.Or(err, errNotOffered)
			}
			return list, nil
		},
		projected(r, c.Name, func(rec *v1.Record, b []byte) []byte { return c.AppendJSON(b, rec) }))
}

// getRecord answers one record of a collection the wire declares.
func (a *account) getRecord(w http.ResponseWriter, r *http.Request, c *v1.Collection) {
	if !readable(w, r, c.Name) {
		return
	}
	serveOne(a, w, r, c.Name, "record",
		func(ctx context.Context, id int64) (v1.Record, int64, error) { return a.store.Record(ctx, c.Name, id) },
		projected(r, c.Name, func(rec *v1.Record, b []byte) []byte { return c.AppendJSON(b, rec) }))
}

// serveOne answers GET /v1/<key>/{id}: the record in the collection's envelope, with its ETag,
// or a 304 when the client's tag is still current; a 404 JSON error for an id that is not a
// listed record.
func serveOne[T any](a *account, w http.ResponseWriter, r *http.Request, key, noun string,
	fetch func(context.Context, int64) (T, int64, error), appendItem func(*T, []byte) []byte) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		WriteError(w, http.StatusNotFound, "no "+noun+" with that id")
		return
	}
	t, done := a.begin(w, r, answerKey{route: routeOne, coll: key, id: id})
	if done {
		return
	}
	defer t.end()
	rec, v, err := fetch(r.Context(), id)
	if errors.Is(err, v1.ErrNotFound) {
		WriteError(w, http.StatusNotFound, "no "+noun+" with that id")
		return
	}
	if err != nil {
		a.internal(w, r, "get "+noun, err)
		return
	}
	b := append([]byte(`{"`), key...)
	b = append(b, `":[`...)
	b = appendItem(&rec, b)
	t.write(w, v, append(b, "]}\n"...))
}
