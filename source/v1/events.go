package v1

import "encoding/json"

// An Event is one joiner, mover or leaver event as GET /v1/events (an extension: the service
// has no such resource) and the webhooks carry it (docs/events.md). Seq is its place in the
// feed, the cursor a client passes back as after.
type Event struct {
	ID          string `json:"id"`
	Seq         int64  `json:"seq"`
	Type        string `json:"type"`
	EmployeeID  int64  `json:"-"`
	EffectiveAt string `json:"effective_at"`
	RunID       string `json:"run_id,omitempty"`
	// Changes are the members that changed, each before and after: a mover's, a moved date's.
	Changes []EventChange `json:"changes,omitempty"`
	// JoinDate and LeavingDate are the dates the event is about (YYYY-MM-DD).
	JoinDate    string `json:"join_date,omitempty"`
	LeavingDate string `json:"leaving_date,omitempty"`
	// Reason says what made a leaver: leaving_date, status or unlisted.
	Reason string `json:"reason,omitempty"`
}

// An EventChange is one member of the employee record that changed, before and after: null, a
// string, or {"id": n} for a reference.
type EventChange struct {
	Member string          `json:"member"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}
