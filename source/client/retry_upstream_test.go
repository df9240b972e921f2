package client_test

// The Client against the fake upstream (package sourcetest): a whole walk, the upstream's
// faults and its rate limit, end to end over real connections.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hrsync/hrsync/source/client"
	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
	"github.com/hrsync/hrsync/source/v1"
)

func newClient(t *testing.T, srv *sourcetest.Server, opts client.Options) *client.Client {
	t.Helper()
	if opts.HTTPClient == nil {
		opts.HTTPClient = srv.Client()
	}
	c, err := client.New(srv.URL, srv.APIKey(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ids(t *testing.T, raws []json.RawMessage) []int64 {
	t.Helper()
	out := make([]int64, len(raws))
	for i, raw := range raws {
		var e v1.Employee
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		out[i] = e.ID
	}
	return out
}

// walk follows next links from page 1, as a sync would, refusing other origins.
func walk(t *testing.T, ctx context.Context, c *client.Client) ([]v1.Employee, []*client.Response) {
	t.Helper()
	var all []v1.Employee
	var resps []*client.Response
	for page := int64(1); ; {
		emps, resp, err := c.ListEmployees(ctx, page)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		all = append(all, emps...)
		resps = append(resps, resp)
		next, ok := resp.Links["next"]
		if !ok {
			return all, resps
		}
		if !c.SameOrigin(next) {
			t.Fatalf("page %d: next link %q on another origin", page, next)
		}
		page = v1.PageOf(next)
	}
}

func TestClientWalksTheFakeUpstream(t *testing.T) {
	t.Parallel()
	emps := fakeupstream.Generate(250, 7)
	srv := sourcetest.NewServer(fakeupstream.Options{Employees: emps})
	defer srv.Close()
	c := newClient(t, srv, client.Options{})
	var stats client.Stats
	got, resps := walk(t, client.WithStats(context.Background(), &stats), c)
	if len(resps) != 3 {
		t.Fatalf("%d pages, want 3", len(resps))
	}
	for i, r := range resps {
		if r.Total != 250 || r.PerPage != client.PerPage || r.RequestID == "" {
			t.Errorf("page %d: %+v", i+1, r)
		}
	}
	gotIDs := make([]int64, len(got))
	for i, e := range got {
		gotIDs[i] = e.ID
	}
	if want := ids(t, emps); !slices.Equal(gotIDs, want) {
		t.Errorf("walk read %d ids, want the %d served in order", len(gotIDs), len(want))
	}
	for _, r := range srv.Requests() {
		if r.Query.Get("per_page") != "100" {
			t.Errorf("request %d without per_page=100: %v", r.N, r.Query)
		}
	}
	if s := stats.Snapshot(); s.Requests != 3 || s.Retries != 0 {
		t.Errorf("stats %+v", s)
	}

	wps, resp, err := c.ListWorkingPatterns(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(wps) != len(fakeupstream.WorkingPatterns()) || resp.Total != int64(len(wps)) || resp.Links != nil || !*wps[0].Default {
		t.Errorf("working patterns %d, response %+v", len(wps), resp)
	}
}

func TestClientRecoversFromUpstreamFaults(t *testing.T) {
	t.Parallel()
	srv := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(120, 1)})
	defer srv.Close()
	srv.InjectFaults(
		fakeupstream.Fault{Status: http.StatusServiceUnavailable},
		fakeupstream.Fault{Drop: true},
		fakeupstream.Fault{Status: http.StatusTooManyRequests},
		fakeupstream.Fault{Drop: true, Reset: true},
		fakeupstream.Fault{Status: http.StatusBadGateway, Body: "<html>Bad Gateway</html>"},
	)
	var events []client.RequestEvent
	c := newClient(t, srv, client.Options{
		// Every request on a new connection: a drop reaches the client, not the transport's
		// own retry of an idempotent request on a reused connection.
		HTTPClient:      &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
		RateLimitWindow: 10 * time.Millisecond,
		RetryInitial:    time.Millisecond,
		Observe:         func(e client.RequestEvent) { events = append(events, e) },
	})
	var stats client.Stats
	emps, resp, err := c.ListEmployees(client.WithStats(context.Background(), &stats), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(emps) != 100 || resp.Total != 120 {
		t.Errorf("%d employees, Total %d", len(emps), resp.Total)
	}
	if s := stats.Snapshot(); s.Requests != 6 || s.Retries != 5 || s.RateLimited != 1 || s.Failures != 5 {
		t.Errorf("stats %+v", s)
	}
	var statuses []int
	for _, e := range events {
		statuses = append(statuses, e.Status)
	}
	if want := []int{503, 0, 429, 0, 502, 200}; !slices.Equal(statuses, want) {
		t.Errorf("attempt statuses %v, want %v", statuses, want)
	}
	if srv.NumRequests() != 6 {
		t.Errorf("upstream saw %d requests", srv.NumRequests())
	}
}

// Unpaced, the client meets the upstream's limit, waits the window out and carries on. The
// upstream's clock stands still but for a jump of one window whenever the client meets a 429, so
// the count of 429s does not depend on how fast the machine is.
func TestClientWaitsOutTheUpstreamLimit(t *testing.T) {
	t.Parallel()
	const window = time.Minute
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	srv := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(30, 1), RateLimit: 4, Window: window, Now: clock})
	defer srv.Close()
	c := newClient(t, srv, client.Options{
		RateLimitWindow: 5 * time.Millisecond, // the client's real wait
		Observe: func(e client.RequestEvent) {
			if e.Status == http.StatusTooManyRequests {
				mu.Lock()
				now = now.Add(window)
				mu.Unlock()
			}
		},
	})
	var stats client.Stats
	ctx := client.WithStats(context.Background(), &stats)
	for i := range 10 {
		if _, _, err := c.ListEmployees(ctx, 1); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	// 4 answered, a 429, 4 answered, a 429, 2 answered.
	limited := srv.Count("/v1/employees", http.StatusTooManyRequests)
	if s := stats.Snapshot(); limited != 2 || s.RateLimited != 2 || s.Requests != 12 || s.Retries != 2 || s.Waited < 10*time.Millisecond {
		t.Errorf("upstream answered %d 429s; stats %+v", limited, s)
	}
}

func TestClientRefusesForeignLinks(t *testing.T) {
	t.Parallel()
	srv := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(150, 1)})
	defer srv.Close()
	c := newClient(t, srv, client.Options{})
	srv.InjectFaults(fakeupstream.Fault{LinkOrigin: "https://elsewhere.example"})
	_, resp, err := c.ListEmployees(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if next := resp.Links["next"]; next != "https://elsewhere.example/v1/employees?page=2&per_page=100" || c.SameOrigin(next) {
		t.Errorf("next %q accepted as same origin", next)
	}
	_, resp, err = c.ListEmployees(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if next := resp.Links["next"]; !c.SameOrigin(next) {
		t.Errorf("next %q refused", next)
	}
}

func TestClientWithWrongKey(t *testing.T) {
	t.Parallel()
	srv := sourcetest.NewServer(fakeupstream.Options{})
	defer srv.Close()
	c, err := client.New(srv.URL, "sandbox-wrong-key", client.Options{HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.ListEmployees(context.Background(), 1)
	if !errors.Is(err, v1.ErrUnauthorized) || srv.NumRequests() != 1 {
		t.Errorf("error %v after %d requests, want ErrUnauthorized after 1", err, srv.NumRequests())
	}
}

func TestClientCreatesOnTheFakeUpstream(t *testing.T) {
	t.Parallel()
	srv := sourcetest.NewServer(fakeupstream.Options{Employees: fakeupstream.Generate(3, 1)})
	defer srv.Close()
	c := newClient(t, srv, client.Options{RateLimitWindow: time.Millisecond})
	ne := v1.NewEmployee{FirstName: "Ana", LastName: "López", Email: "ana@example.com", JobTitle: "Engineer", JoinDate: "2024-02-29"}

	// A 429 is retried: the upstream did not act on it.
	srv.InjectFaults(fakeupstream.Fault{Status: http.StatusTooManyRequests})
	e, err := c.CreateEmployee(context.Background(), ne)
	if err != nil {
		t.Fatal(err)
	}
	if e.ID == 0 || e.FirstName != "Ana" || e.CompanyJoinDate != "2024-02-29" || e.WorkingPattern == nil {
		t.Errorf("created %+v", e)
	}
	// A 500 is not: the record may exist.
	srv.InjectFaults(fakeupstream.Fault{Status: http.StatusInternalServerError})
	ne.Email = "zoe@example.com"
	before := srv.NumRequests()
	if _, err := c.CreateEmployee(context.Background(), ne); err == nil {
		t.Fatal("create succeeded through a 500")
	}
	if srv.NumRequests() != before+1 {
		t.Errorf("a create that met a 500 was sent %d times", srv.NumRequests()-before)
	}
	if n := len(srv.Employees()); n != 4 {
		t.Errorf("%d employees", n)
	}
}
