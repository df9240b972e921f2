package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/source/fakeupstream"
	"github.com/hrsync/hrsync/source/sourcetest"
)

// setMember is raw with member set to v.
func setMember(t *testing.T, raw json.RawMessage, member string, v any) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	m[member] = b
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEventsCommand is hrsync events as an operator uses it after syncs: the first sync is the
// baseline; the next, where one person changed job title and six left (over the brake's five),
// publishes the mover and holds the leavers, saying so in the log; `hrsync events` lists them,
// `--state held` the held ones, `show` one whole, `release` lets them go once (a second release
// says nothing is held), and a wrong verb is a usage error.
func TestEventsCommand(t *testing.T) {
	t.Parallel()
	raws := fakeupstream.Generate(40, 7)
	up := sourcetest.NewServer(fakeupstream.Options{Employees: raws})
	defer up.Close()
	env := []string{"HRSYNC_SOURCE_URL=" + up.URL, "HRSYNC_SOURCE_API_KEY=" + up.APIKey(), "HRSYNC_SOURCE_RATE_LIMIT=0",
		"HRSYNC_SYNC_RESOURCES=employees", "HRSYNC_WAREHOUSE_URL=" + warehouseFile(t, filepath.Join(t.TempDir(), "w.db"))}
	ctx := context.Background()
	cmd := func(args ...string) (string, string, error) {
		t.Helper()
		var out, logs bytes.Buffer
		err := run(ctx, args, env, &out, &logs)
		return out.String(), logs.String(), err
	}
	if out, logs, err := cmd("sync"); err != nil {
		t.Fatalf("first sync: %v\n%s\n%s", err, out, logs)
	}
	next := slices.Clone(raws)
	next[0] = setMember(t, next[0], "job_title", "Head of Cartography")
	for i := 10; i < 16; i++ {
		next[i] = setMember(t, next[i], "leaving_date", "2026-01-31")
	}
	up.SetEmployees(next)
	out, logs, err := cmd("sync")
	if err != nil {
		t.Fatalf("second sync: %v\n%s\n%s", err, out, logs)
	}
	if !strings.Contains(logs, "events: a mass leaving; its leaver events are held until released") || !strings.Contains(logs, "leavers=6") {
		t.Errorf("the sync's log does not say the leavers are held:\n%s", logs)
	}

	list, _, err := cmd("events")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(list, " leaver.effective "); n != 6 || strings.Count(list, " mover ") != 1 || strings.Count(list, "held by ") != 6 {
		t.Errorf("hrsync events:\n%s", list)
	}
	held, _, err := cmd("events", "--state", "held")
	if err != nil || strings.Count(held, "\n") != 7 || strings.Contains(held, " mover ") {
		t.Errorf("hrsync events --state held (%v):\n%s", err, held)
	}
	id := regexp.MustCompile(`evt_[0-9a-f]+`).FindString(held)
	show, _, err := cmd("events", "show", id)
	if err != nil || !strings.Contains(show, "type:          leaver.effective") || !strings.Contains(show, "leaving date:  2026-01-31") || !strings.Contains(show, "state:         held") {
		t.Errorf("hrsync events show %s (%v):\n%s", id, err, show)
	}
	released, _, err := cmd("events", "release")
	if err != nil || !strings.Contains(released, "released 6 held events; 6 published now") {
		t.Errorf("hrsync events release (%v): %s", err, released)
	}
	if _, _, err := cmd("events", "release"); err == nil || !strings.Contains(err.Error(), "no events are held") || exitCode(err) != 1 {
		t.Errorf("a second release: %v (exit %d)", err, exitCode(err))
	}
	published, _, _ := cmd("events", "--state", "published")
	if strings.Count(published, "\n") != 8 {
		t.Errorf("published after the release:\n%s", published)
	}
	for _, args := range [][]string{{"events", "bogus"}, {"events", "show"}, {"events", "--state", "gone"}, {"events", "list", "extra"}} {
		if _, _, err := cmd(args...); err == nil || exitCode(err) != 2 {
			t.Errorf("hrsync %s: %v (exit %d), want a usage error", strings.Join(args, " "), err, exitCode(err))
		}
	}
}
