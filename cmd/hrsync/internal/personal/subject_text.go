package personal

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hrsync/hrsync/sink"
	v1 "github.com/hrsync/hrsync/source/v1"
	"github.com/hrsync/hrsync/sync/retention"
)

// What a subject-access document says in words: the records of others naming the person, the
// erasures, the retention that applies.

// mentions are the rows of a named_in_ section: a record of another that names the person.
func mentions(t sink.SubjectTable) []Mention {
	var out []Mention
	for _, r := range t.Rows {
		out = append(out, Mention{Category: strings.TrimSuffix(t.Table, "_history"), Record: valueOf(r, "id").Text,
			As: valueOf(r, "field").Text, Value: personText(valueOf(r, "nested")),
			From: plain(valueOf(r, "valid_from")), To: plain(valueOf(r, "valid_to"))})
	}
	return out
}

// personText is a nested person for a reader: "First Last, email (employee ID)"; what is not a
// person as text.
func personText(v sink.SubjectValue) string {
	var p struct {
		ID        int64  `json:"id"`
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
		Email     string `json:"email"`
	}
	if v.Null || json.Unmarshal([]byte(v.Text), &p) != nil || p.ID == 0 {
		return plain(v)
	}
	var parts []string
	if n := strings.TrimSpace(p.FirstName + " " + p.LastName); n != "" {
		parts = append(parts, n)
	}
	if p.Email != "" {
		parts = append(parts, p.Email)
	}
	return strings.TrimSpace(strings.Join(parts, ", ") + " (employee " + strconv.FormatInt(p.ID, 10) + ")")
}

// compactMentions keeps one mention per record, field and value: the current one, else the
// history's widest period.
func compactMentions(ms []Mention) []Mention {
	out := []Mention{}
	idx := map[[4]string]int{}
	for _, m := range ms {
		k := [4]string{m.Category, m.Record, m.As, m.Value}
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			out = append(out, m)
			continue
		}
		o := &out[i]
		if o.From == "" || m.From == "" { // a current record: no period
			o.From, o.To = "", ""
			continue
		}
		if m.From < o.From {
			o.From = m.From
		}
		if o.To != "" && (m.To == "" || m.To > o.To) {
			o.To = m.To
		}
	}
	return out
}

// personName is the person's name from their employee record, or "employee ID".
func personName(cs []Category, id int64) string {
	for _, c := range cs {
		if c.Key != "employees" || len(c.Records) == 0 {
			continue
		}
		var first, last string
		for _, m := range c.Records[0].Members {
			switch m.Name {
			case "first_name":
				first = m.Value
			case "last_name":
				last = m.Value
			}
		}
		if n := strings.TrimSpace(first + " " + last); n != "" {
			return n
		}
	}
	return "employee " + strconv.FormatInt(id, 10)
}

// erasureOf says what an erasure was of, for the person id.
func erasureOf(e sink.Erasure, id int64) string {
	if e.Kind == sink.ErasureEmployee {
		return "this person, in every record"
	}
	return "their " + singularOf(e.Collection) + " " + strconv.FormatInt(e.SubjectID, 10)
}

var singulars = map[string]string{"sicknesses": "sickness", "absences": "absence", "leave_requests": "leave request",
	"employee_training_courses": "training course", "employees": "employee record"}

func singularOf(collection string) string {
	if s, ok := singulars[collection]; ok {
		return s
	}
	return strings.ReplaceAll(collection, "_", " ") + " record"
}

// erasureCause says why an erasure was made: at the person's request, or by a retention rule.
func erasureCause(cause string) string {
	if rule, ok := strings.CutPrefix(cause, sink.ErasureCauseRetention); ok {
		return "by the retention rule " + rule
	}
	if cause == sink.ErasureCauseRequest {
		return "at the person's request"
	}
	return cause
}

func readableClasses(cs []v1.Class) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = strings.ReplaceAll(c.String(), "_", " ")
	}
	return out
}

// periodText is a period in words: "6 years", "1 year and 6 months".
func periodText(p retention.Period) string {
	var parts []string
	for _, u := range []struct {
		n    int
		unit string
	}{{p.Years, "year"}, {p.Months, "month"}, {p.Days, "day"}} {
		switch {
		case u.n == 1:
			parts = append(parts, "1 "+u.unit)
		case u.n > 1:
			parts = append(parts, strconv.Itoa(u.n)+" "+u.unit+"s")
		}
	}
	if len(parts) > 1 {
		return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return strings.Join(parts, "")
}

// retentionSays says how long the data held is kept: each rule of the account's retention that
// applies to a category held, with its date for a leaver; none set, that it is kept until
// erased.
func retentionSays(rules retention.Rules, left time.Time, cs []Category) []string {
	held := map[string]bool{}
	for _, c := range cs {
		held[c.Key] = true
		for _, k := range c.Classes {
			held["class:"+k] = true
		}
	}
	var out []string
	for _, c := range retention.LeaverClasses {
		p := rules.Leavers[c]
		if p.IsZero() {
			continue
		}
		what := strings.ReplaceAll(c.String(), "_", " ")
		if left.IsZero() {
			out = append(out, fmt.Sprintf("Their %s data is kept while they are employed, and for %s after they leave.", what, periodText(p)))
		} else {
			out = append(out, fmt.Sprintf("Their %s data is kept for %s after they left (%s): until %s.", what, periodText(p), left.Format(dateLayout), p.From(left).Format(dateLayout)))
		}
	}
	if p := rules.SicknessDetails; !p.IsZero() && held["sicknesses"] {
		out = append(out, fmt.Sprintf("The health details of a sickness (its type, reason, review notes and fit note) are kept for %s after it ended.", periodText(p)))
	}
	if p := rules.OnboardingFiles; !p.IsZero() && held["onboarding_rows"] {
		out = append(out, fmt.Sprintf("The rows of new-hire files are kept for %s after their last change.", periodText(p)))
	}
	if len(out) == 0 {
		return []string{"No retention period is set in hrsync's configuration: the data is kept until it is erased, or the HR system no longer holds it."}
	}
	out = append(out, "Facts of employment (dates, department, job title, days of absence) are kept for headcount and absence figures.")
	return out
}
