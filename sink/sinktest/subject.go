package sinktest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// Subject is a warehouse holding a person P for a subject access (GDPR Art. 15): P's employees
// row renamed between loads (a version of its history per name), an absence and a leave request
// approved by A (another person, P's line manager), an absence P approved themselves, a
// sickness, a leave request of Q's that P approved, Q line-managed by P, an onboarding row of P's first email (in other case)
// and an idempotency record of P's create. A and Q have rows of their own of each kind, none
// of which is about P.
type Subject struct {
	P, A, Q int64
	// Versions are the distinctive first names of P's employees row, one per load, in order.
	Versions []string
	// PEmails are P's email in each version.
	PEmails []string
	// Others are A's and Q's own names and emails: none is about P.
	Others []string
}

// SubjectMarkers are the ids and marker strings of the Subject every call builds.
var SubjectMarkers = Subject{P: 100, A: 200, Q: 300,
	Versions: []string{"Pversionone", "Pversiontwo", "Pversionthree"},
	PEmails:  []string{"p.one@example.com", "p.two@example.com", "p.three@example.com"},
	Others: []string{"Afirstmarker", "Alastmarker", "a.marker@example.com",
		"Qfirstmarker", "Qlastmarker", "q.marker@example.com", "Qsickmarker", "Qnotemarker"}}

// LoadSubject fills s with the Subject (SubjectMarkers): three loads of the employees, the events
// between them, the onboarding row and the idempotency record.
func LoadSubject(t testing.TB, s *sink.Store) Subject {
	t.Helper()
	ctx := context.Background()
	m := SubjectMarkers
	a := `{"id":200,"first_name":"Afirstmarker","last_name":"Alastmarker","email":"a.marker@example.com"}`
	q := `{"id":300,"first_name":"Qfirstmarker","last_name":"Qlastmarker","email":"q.marker@example.com"}`
	for i, first := range m.Versions {
		p := fmt.Sprintf(`{"id":100,"first_name":%q,"last_name":"Plast","email":%q}`, first, m.PEmails[i])
		es := Employees(t,
			fmt.Sprintf(`{"id":100,"first_name":%q,"last_name":"Plast","email":%q,"job_title":"R&D <Analyst>","line_manager":%s,"holiday_approver":%s}`,
				first, m.PEmails[i], a, a),
			`{"id":200,"first_name":"Afirstmarker","last_name":"Alastmarker","email":"a.marker@example.com","job_title":"Head"}`,
			fmt.Sprintf(`{"id":300,"first_name":"Qfirstmarker","last_name":"Qlastmarker","email":"q.marker@example.com","job_title":"Clerk","line_manager":%s}`, p))
		WalkEmployees(t, s, es, 10, sink.MergeOptions{Complete: true})
		status := []string{"pending", "approved", "approved"}[i]
		mergeSubjectRecords(t, s, v1.Absences,
			`{"id":501,"employee":`+p+`,"approved_by":`+a+`,"start_date":"2026-03-02","end_date":"2026-03-03","type":"Holiday","notes":"=HYPERLINK(\"x\")"}`,
			`{"id":502,"employee":`+p+`,"approved_by":`+p+`,"start_date":"2026-04-06","end_date":"2026-04-06","type":"Holiday"}`,
			`{"id":503,"employee":`+a+`,"approved_by":`+q+`,"start_date":"2026-04-06","end_date":"2026-04-06","type":"Holiday"}`)
		mergeSubjectRecords(t, s, v1.Sicknesses,
			`{"id":601,"employee":`+p+`,"start_date":"2026-02-02","end_date":"2026-02-04","status":"returned","reason":"Migraine"}`,
			`{"id":602,"employee":`+q+`,"start_date":"2026-02-02","end_date":null,"status":"off_sick","reason":"Qsickmarker"}`)
		mergeSubjectRecords(t, s, v1.LeaveRequests,
			`{"id":701,"employee":`+p+`,"approved_by":`+a+`,"start_date":"2026-08-03","end_date":"2026-08-07","status":"`+status+`"}`,
			`{"id":702,"employee":`+q+`,"approved_by":`+p+`,"start_date":"2026-09-07","end_date":"2026-09-08","status":"`+status+`","notes":"Qnotemarker"}`)
		time.Sleep(2 * time.Millisecond) // SQLite's periods are to the millisecond
	}
	for _, r := range []sink.OnboardingRow{
		{FileHash: "f1", FileName: "march.csv", Line: 2, Email: "P.One@Example.com", Status: sink.RowCreated},
		{FileHash: "f1", FileName: "march.csv", Line: 3, Email: "q.marker@example.com", Status: sink.RowCreated, EmployeeID: 300},
	} {
		if err := s.PutOnboardingRow(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []struct {
		key  string
		id   int64
		body string
	}{
		// As serve keeps a create's answer: the envelope of the employee created.
		{"k-p", 100, `{"employees":[{"id":100,"first_name":"Pversionone","line_manager":` + a + `}]}`},
		{"k-q", 300, `{"employees":[` + q + `]}`},
	} {
		claim := v1.IdempotencyClaim{Client: "hr-portal", Key: k.key, Hash: "h-" + k.key, TTL: 24 * time.Hour, Stale: time.Minute}
		if _, ok, err := s.ReserveIdempotency(ctx, claim); err != nil || !ok {
			t.Fatalf("reserve %s: %v %v", k.key, ok, err)
		}
		if err := s.CompleteIdempotency(ctx, claim.Client, k.key, v1.IdempotencyRecord{Status: 201, Body: []byte(k.body),
			Location: fmt.Sprintf("/v1/employees/%d", k.id), EmployeeID: k.id}); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// mergeSubjectRecords stages and merges one complete walk of records of c.
func mergeSubjectRecords(t testing.TB, s *sink.Store, c *v1.Collection, bodies ...string) {
	t.Helper()
	WalkRecords(t, s, c, Records(t, c, bodies...), sink.MergeOptions{Complete: true})
}
