package fakeupstream

import (
	"encoding/json"
	"net/http"

	"github.com/hrsync/hrsync/source/v1"
)

// collection is one collection a Service serves at /v1/<name>: GET lists it a page at a time
// (Total, Per-Page, Link), its records under <name> in the envelope. When set, byID answers GET
// /v1/<name>/<id> and create answers POST /v1/<name>. Anything else under /v1 is 404.
type collection struct {
	name   string
	page   func(s *Service, p v1.Page) (items []json.RawMessage, total int64)
	byID   func(s *Service, id string) answer
	create func(s *Service, w http.ResponseWriter, r *http.Request, f Fault) answer
}

// collections are the collections a Service serves, all of them, in this one place: serving
// another is a line here, the records it holds, and the reader of one page of them.
var collections = []collection{
	{name: "employees", page: (*Service).employeePage, byID: (*Service).employee, create: (*Service).create},
	{name: "working_patterns", page: (*Service).patternPage},
}

// employeePage is one page of the employees, read under the lock.
func (s *Service) employeePage(p v1.Page) ([]json.RawMessage, int64) {
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
func (s *Service) patternPage(p v1.Page) ([]json.RawMessage, int64) {
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
