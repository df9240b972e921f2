package fakeupstream

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hrsync/hrsync/source/v1"
)

// collection is one collection a Service serves at /v1/<name>: GET lists it a page at a time
// (Total, Per-Page, Link), its records under <name> in the envelope. When set, filter reads the
// query's filters (a malformed one is answered 400), byID answers GET /v1/<name>/<id> and create
// answers POST /v1/<name>. Anything else under /v1 is 404.
type collection struct {
	name   string
	page   func(s *Service, name string, m match, p v1.Page) (items []json.RawMessage, total int64)
	filter func(q url.Values) (match, error)
	byID   func(s *Service, name, id string) answer
	create func(s *Service, w http.ResponseWriter, r *http.Request, f Fault) answer
	// held: the records are Options.Collections[name]; without them the collection is not
	// offered (404).
	held bool
}

// collections are the collections a Service serves, all of them, in this one place: serving
// another is a line here, the records it holds, and the reader of one page of them. The
// reference data and events are held as given (Options.Collections, GenerateAccount).
var collections = []collection{
	{name: "employees", page: (*Service).employeePage, byID: (*Service).employee, create: (*Service).create},
	{name: "working_patterns", page: (*Service).patternPage},
	{name: "departments", page: (*Service).heldPage, byID: (*Service).heldByID, held: true},
	{name: "divisions", page: (*Service).heldPage, byID: (*Service).heldByID, held: true},
	{name: "locations", page: (*Service).heldPage, byID: (*Service).heldByID, held: true},
	{name: "holiday_allowances", page: (*Service).heldPage, byID: (*Service).heldByID, held: true},
	{name: "other_leave_reasons", page: (*Service).heldPage, byID: (*Service).heldByID, held: true},
	{name: "statutory_holiday_countries", page: (*Service).heldPage, byID: (*Service).heldByID, held: true},
	{name: "company_training_types", page: (*Service).heldPage, byID: (*Service).heldByID, held: true},
	{name: "absences", page: (*Service).heldPage, byID: (*Service).heldByID, held: true, filter: absenceFilter},
	{name: "sicknesses", page: (*Service).heldPage, byID: (*Service).heldByID, held: true, filter: sicknessFilter},
	{name: "leave_requests", page: (*Service).heldPage, byID: (*Service).heldByID, held: true, filter: leaveRequestFilter},
	{name: "employee_training_courses", page: (*Service).heldPage, byID: (*Service).heldByID, held: true},
	{name: "salaries", page: (*Service).heldPage, byID: (*Service).heldByID, held: true},
	{name: "bonuses", page: (*Service).heldPage, byID: (*Service).heldByID, held: true},
	{name: "benefits", page: (*Service).heldPage, byID: (*Service).heldByID, held: true},
}

// CollectionNames are the names of the collections a Service can serve, at /v1/<name>, in the
// order of collections.go: employees and working_patterns, then those of Options.Collections.
func CollectionNames() []string {
	names := make([]string, len(collections))
	for i, c := range collections {
		names[i] = c.name
	}
	return names
}

// employeePage is one page of the employees, read under the lock.
func (s *Service) employeePage(_ string, _ match, p v1.Page) ([]json.RawMessage, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	total := int64(len(s.employees))
	var items []json.RawMessage
	for i := p.Offset(); i < total && i < p.Offset()+p.Size; i++ {
		items = append(items, s.employees[i].raw)
	}
	return items, total
}

// patternPage is one page of the working patterns, read under the lock.
func (s *Service) patternPage(_ string, _ match, p v1.Page) ([]json.RawMessage, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return pageOf(s.patterns, p), int64(len(s.patterns))
}

// pageOf is page p of records held as they are served.
func pageOf(records []json.RawMessage, p v1.Page) []json.RawMessage {
	total := int64(len(records))
	var items []json.RawMessage
	for i := p.Offset(); i < total && i < p.Offset()+p.Size; i++ {
		items = append(items, records[i])
	}
	return items
}

// held are the records of one collection of Options.Collections, with what its filters read
// of each, and the records kept by the filters asked for lately (a walk asks for the same
// filters page after page).
type held struct {
	items []item
	kept  map[match][]int
}

// item is a held record and what the filters read of it. Dates are YYYY-MM-DD, "" when absent
// or unreadable; an absent end_date (a sickness still going on) is open.
type item struct {
	raw         json.RawMessage
	id          int64
	start, end  string
	employee    int64
	typ         string
	cancelled   bool
	status      string
	leaveReason int64
}

// maxKept bounds the filtered lists a held collection remembers.
const maxKept = 32

func newItem(raw json.RawMessage) item {
	it := item{raw: slices.Clone(raw)}
	var m struct {
		ID          json.RawMessage `json:"id"`
		StartDate   json.RawMessage `json:"start_date"`
		EndDate     json.RawMessage `json:"end_date"`
		Employee    json.RawMessage `json:"employee"`
		Type        json.RawMessage `json:"type"`
		Cancelled   json.RawMessage `json:"cancelled"`
		Status      json.RawMessage `json:"status"`
		LeaveReason json.RawMessage `json:"leave_reason"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return it // a test may serve records that are not valid on purpose
	}
	it.id = jsonInt(m.ID)
	it.start, it.end = jsonDate(m.StartDate), jsonDate(m.EndDate)
	it.employee = nestedID(m.Employee)
	it.typ = jsonString(m.Type)
	it.cancelled = string(m.Cancelled) == "true" || jsonString(m.Cancelled) == "true"
	it.status = jsonString(m.Status)
	it.leaveReason = nestedID(m.LeaveReason)
	return it
}

func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// jsonDate reads a date written YYYY-MM-DD (or YYYY/MM/DD); "" for anything else.
func jsonDate(raw json.RawMessage) string {
	s := jsonString(raw)
	for _, layout := range []string{time.DateOnly, "2006/01/02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format(time.DateOnly)
		}
	}
	return ""
}

// nestedID is the id of a nested object ({"id":…}); 0 for null, "" or anything else.
func nestedID(raw json.RawMessage) int64 {
	var o struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return 0
	}
	return jsonInt(o.ID)
}

// SetCollection replaces the records of a collection of Options.Collections (copied), from the
// next request on; nil stops serving it (404, as an account without it). Employees and working
// patterns have SetEmployees and SetWorkingPatterns: under their names, as under names
// collections.go does not list, the records are kept but never served.
func (s *Service) SetCollection(name string, raws []json.RawMessage) {
	var h *held
	if raws != nil {
		h = &held{items: make([]item, len(raws)), kept: make(map[match][]int)}
		for i, raw := range raws {
			h.items[i] = newItem(raw)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if h == nil {
		delete(s.others, name)
		return
	}
	s.others[name] = h
}

// Collection returns the records of a collection of Options.Collections, in order; nil when it
// is not served.
func (s *Service) Collection(name string) []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.others[name]
	if !ok {
		return nil
	}
	out := make([]json.RawMessage, len(h.items))
	for i, it := range h.items {
		out[i] = slices.Clone(it.raw)
	}
	return out
}

// SetUnavailable answers every request for the named collection with status (403 or 404, as
// an account without that module), from the next request on; 0 serves it again.
func (s *Service) SetUnavailable(name string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		delete(s.unavailable, name)
		return
	}
	s.unavailable[name] = status
}

// offered is 0 when the collection is served, else the status it is answered with.
func (s *Service) offered(c collection) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status, ok := s.unavailable[c.name]; ok {
		return status
	}
	if _, ok := s.others[c.name]; c.held && !ok {
		return http.StatusNotFound
	}
	return 0
}

// heldPage is one page of a held collection, of the records its filters keep, read under the
// lock.
func (s *Service) heldPage(name string, m match, p v1.Page) ([]json.RawMessage, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.others[name]
	if h == nil {
		return nil, 0
	}
	if m == (match{}) {
		total := int64(len(h.items))
		var items []json.RawMessage
		for i := p.Offset(); i < total && i < p.Offset()+p.Size; i++ {
			items = append(items, h.items[i].raw)
		}
		return items, total
	}
	kept, ok := h.kept[m]
	if !ok {
		var inDept map[int64]bool
		if m.department != 0 {
			inDept = make(map[int64]bool)
			for _, e := range s.employees {
				if e.dept == m.department {
					inDept[e.id] = true
				}
			}
		}
		kept = []int{}
		for i := range h.items {
			if m.keeps(&h.items[i], inDept) {
				kept = append(kept, i)
			}
		}
		// Which employees are in a department changes with the employees: not remembered.
		if m.department == 0 {
			if len(h.kept) >= maxKept {
				clear(h.kept)
			}
			h.kept[m] = kept
		}
	}
	total := int64(len(kept))
	var items []json.RawMessage
	for i := p.Offset(); i < total && i < p.Offset()+p.Size; i++ {
		items = append(items, h.items[kept[i]].raw)
	}
	return items, total
}

// heldByID answers GET /v1/<name>/<id> of a held collection.
func (s *Service) heldByID(name, idText string) answer {
	id, err := strconv.ParseInt(idText, 10, 64)
	if err == nil {
		s.mu.Lock()
		var raw json.RawMessage
		if h := s.others[name]; h != nil {
			if i := slices.IndexFunc(h.items, func(it item) bool { return it.id == id }); i >= 0 {
				raw = h.items[i].raw
			}
		}
		s.mu.Unlock()
		if raw != nil {
			return reply(http.StatusOK, envelope(name, []json.RawMessage{raw}))
		}
	}
	return reply(http.StatusNotFound, v1.ErrorBody(http.StatusNotFound, ""))
}

// match is what a request's filters keep; the zero match keeps everything.
type match struct {
	from, to    string // YYYY-MM-DD, "" when not given
	byStart     bool   // the dates match the record's start date, not its overlap with [from, to]
	employee    int64
	typ         string
	leaveReason int64
	department  int64 // the employee's department, as the employees served say
	noCancelled bool  // absences: cancelled false; leave requests: status not cancelled
}

// keeps reports whether the filters keep it; inDept holds the employees of m.department.
func (m *match) keeps(it *item, inDept map[int64]bool) bool {
	if m.from != "" || m.to != "" {
		if it.start == "" {
			return false
		}
		if m.byStart {
			if (m.from != "" && it.start < m.from) || (m.to != "" && it.start > m.to) {
				return false
			}
		} else {
			// Overlap: the record starts no later than to and ends (an open end never ends) no
			// earlier than from.
			if (m.to != "" && it.start > m.to) || (m.from != "" && it.end != "" && it.end < m.from) {
				return false
			}
		}
	}
	switch {
	case m.employee != 0 && it.employee != m.employee,
		m.typ != "" && !strings.EqualFold(it.typ, m.typ),
		m.leaveReason != 0 && it.leaveReason != m.leaveReason,
		m.department != 0 && !inDept[it.employee],
		m.noCancelled && (it.cancelled || strings.EqualFold(it.status, "cancelled")):
		return false
	}
	return true
}

// absenceFilter reads the filters of /v1/absences: start_date and end_date (matched by overlap
// with the absence's dates), type, employee_id, department_id (the department of the absence's
// employee among the employees served), other_leave_reason_id and exclude_cancelled_absences.
func absenceFilter(q url.Values) (match, error) {
	m, err := dateFilter(q)
	if err != nil {
		return m, err
	}
	if m.employee, err = idParam(q, "employee_id"); err != nil {
		return m, err
	}
	if m.leaveReason, err = idParam(q, "other_leave_reason_id"); err != nil {
		return m, err
	}
	if m.department, err = idParam(q, "department_id"); err != nil {
		return m, err
	}
	m.typ = q.Get("type")
	m.noCancelled = boolParam(q, "exclude_cancelled_absences")
	return m, nil
}

// sicknessFilter reads the filters of /v1/sicknesses: start_date and end_date (matched by
// overlap; a sickness without an end date is still going on) and employee_id.
func sicknessFilter(q url.Values) (match, error) {
	m, err := dateFilter(q)
	if err != nil {
		return m, err
	}
	m.employee, err = idParam(q, "employee_id")
	return m, err
}

// leaveRequestFilter reads the filters of /v1/leave_requests: start_date and end_date, matched
// by the request's start date, employee_id and exclude_cancelled_requests.
func leaveRequestFilter(q url.Values) (match, error) {
	m, err := dateFilter(q)
	if err != nil {
		return m, err
	}
	m.byStart = true
	if m.employee, err = idParam(q, "employee_id"); err != nil {
		return m, err
	}
	m.noCancelled = boolParam(q, "exclude_cancelled_requests")
	return m, nil
}

func dateFilter(q url.Values) (match, error) {
	var m match
	for _, p := range []struct {
		name string
		to   *string
	}{{"start_date", &m.from}, {"end_date", &m.to}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return m, fmt.Errorf("%s %q is not a date YYYY-MM-DD", p.name, v)
		}
		*p.to = t.Format(time.DateOnly)
	}
	return m, nil
}

func idParam(q url.Values, name string) (int64, error) {
	v := q.Get(name)
	if v == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%s %q is not an id", name, v)
	}
	return id, nil
}

func boolParam(q url.Values, name string) bool {
	switch strings.ToLower(q.Get(name)) {
	case "true", "1", "yes":
		return true
	}
	return false
}
