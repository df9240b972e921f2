package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
	"github.com/hrsync/hrsync/source/server"
	"github.com/hrsync/hrsync/source/v1"
)

// feedEvent is an event as GET /v1/events gives it.
type feedEvent struct {
	ID          string           `json:"id"`
	Seq         int64            `json:"seq"`
	Type        string           `json:"type"`
	EffectiveAt string           `json:"effective_at"`
	Changes     []v1.EventChange `json:"changes"`
	Employee    map[string]any   `json:"employee"`
}

func feed(t *testing.T, f *fixture, key, query string) ([]feedEvent, *http.Response) {
	t.Helper()
	resp, body := send(t, "GET", f.srv.URL+"/v1/events"+query, key, nil)
	assertStatus(t, resp, body, 200)
	var env struct{ Events []feedEvent }
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return env.Events, resp
}

// TestEventsFeed: GET /v1/events pages the published events by their seq, each with the
// employee as the key may read them and only the changes whose member the key may read: the
// same events, with less in them, for a key denied identifying or employment data; a key that
// may not read employees is refused; a bad cursor is a 400.
func TestEventsFeed(t *testing.T) {
	t.Parallel()
	const (
		noIdentity   = "deny-identifying-events-key-5b1e9c3a7d2f"
		noEmployment = "deny-employment-events-key-8c2d4e6f1a3b"
		departments  = "departments-only-events-key-3f7a9c1e5b2d"
	)
	for _, backend := range sinktest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, backend, server.Options{Keys: []server.Key{
				{Name: "no-identity", Key: noIdentity, Scope: server.Scope{DenyClasses: []v1.Class{v1.Identifying}}},
				{Name: "no-employment", Key: noEmployment, Scope: server.Scope{DenyClasses: []v1.Class{v1.Employment}}},
				{Name: "departments", Key: departments, Scope: server.Scope{Collections: []string{"departments"}, ReadOnly: true}},
			}})
			people := []v1.Employee{sinktest.Employee(1, 1, 0, "Chief"), sinktest.Employee(2, 1, 1, "Engineer"), sinktest.Employee(3, 1, 1, "Engineer")}
			for i := range people {
				people[i].Sent = nil // written from the fields the test changes
			}
			sinktest.WalkEmployees(t, f.store, slices.Clone(people), 10, sink.MergeOptions{Complete: true})
			people[1].JobTitle = "Lead engineer"
			people[2].LeavingDate = "2026-01-31"
			sinktest.WalkEmployees(t, f.store, slices.Clone(people), 10, sink.MergeOptions{Complete: true})

			full, _ := feed(t, f, testKey, "")
			var types []string
			for i, e := range full {
				types = append(types, e.Type)
				if e.Seq != int64(i+1) || e.ID == "" || e.EffectiveAt == "" {
					t.Errorf("event %d: %+v", i, e)
				}
			}
			if !slices.Equal(types, []string{"mover", "leaver.effective"}) {
				t.Fatalf("the feed: %q", types)
			}
			if e := full[0]; len(e.Changes) != 1 || e.Changes[0].Member != "job_title" || string(e.Changes[0].After) != `"Lead engineer"` ||
				e.Employee["id"] != float64(2) || e.Employee["email"] != "e2@example.com" || e.Employee["job_title"] != "Lead engineer" {
				t.Errorf("the mover: %+v", e)
			}

			hidden, _ := feed(t, f, noIdentity, "")
			if len(hidden) != 2 || hidden[0].ID != full[0].ID || hidden[0].Employee["email"] != nil || hidden[0].Employee["first_name"] != nil ||
				hidden[0].Employee["id"] != float64(2) || len(hidden[0].Changes) != 1 {
				t.Errorf("denied identifying: %+v", hidden)
			}
			noJob, _ := feed(t, f, noEmployment, "")
			if len(noJob) != 2 || len(noJob[0].Changes) != 0 || noJob[0].Employee["job_title"] != nil || noJob[0].Employee["email"] == nil {
				t.Errorf("denied employment: %+v", noJob)
			}
			resp, body := send(t, "GET", f.srv.URL+"/v1/events", departments, nil)
			assertStatus(t, resp, body, 403)

			page, resp := feed(t, f, testKey, "?per_page=1")
			link := resp.Header.Get("Link")
			if len(page) != 1 || page[0].ID != full[0].ID || !strings.Contains(link, "after=1") || !strings.Contains(link, `rel="next"`) {
				t.Fatalf("page 1: %+v, Link %q", page, link)
			}
			next, _ := feed(t, f, testKey, "?after=1&per_page=1")
			if len(next) != 1 || next[0].ID != full[1].ID {
				t.Errorf("after 1: %+v", next)
			}
			if rest, resp := feed(t, f, testKey, "?after=2"); len(rest) != 0 || resp.Header.Get("Link") != "" {
				t.Errorf("after the last: %+v, Link %q", rest, resp.Header.Get("Link"))
			}
			for _, q := range []string{"?after=-1", "?after=x", "?per_page=0", "?page=2", "?after=1&after=2"} {
				resp, body := send(t, "GET", f.srv.URL+"/v1/events"+q, testKey, nil)
				assertStatus(t, resp, body, 400)
			}
		})
	}
}
