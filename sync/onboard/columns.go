package onboard

import (
	"fmt"
	"strings"
	"unicode"
)

// requiredHireFields are the columns a file must have, in the order they are reported.
var requiredHireFields = []string{fieldFirstName, fieldLastName, fieldEmail, fieldJoinDate}

// hireColumns maps a header cell, reduced by headerKey, to the create field it names.
var hireColumns = map[string]string{
	"firstname": fieldFirstName, "firstnames": fieldFirstName, "givenname": fieldFirstName,
	"givennames": fieldFirstName, "forename": fieldFirstName, "forenames": fieldFirstName,

	"lastname": fieldLastName, "surname": fieldLastName, "familyname": fieldLastName,

	"email": fieldEmail, "emailaddress": fieldEmail, "workemail": fieldEmail,
	"workemailaddress": fieldEmail,

	"joindate": fieldJoinDate, "joiningdate": fieldJoinDate, "startdate": fieldJoinDate,
	"companyjoindate": fieldJoinDate, "hiredate": fieldJoinDate,

	"jobtitle": fieldJobTitle, "title": fieldJobTitle, "job": fieldJobTitle,
	"role": fieldJobTitle, "position": fieldJobTitle,
}

// columnHints are header names suggested for a missing column.
var columnHints = map[string]string{
	fieldFirstName: `"First name"`,
	fieldLastName:  `"Last name" or "Surname"`,
	fieldEmail:     `"Email"`,
	fieldJoinDate:  `"Join date" or "Start date"`,
}

// headerKey reduces a header cell to its lower-case letters and digits, ignoring a trailing
// remark in brackets: "First Name", "first_name", "FIRST-NAME" and "First name:" are all
// "firstname", "Start date (YYYY-MM-DD)" is "startdate".
func headerKey(cell string) string {
	if i := strings.IndexAny(cell, "(["); i >= 0 {
		if k := headerKey(cell[:i]); k != "" {
			return k
		}
	}
	var b strings.Builder
	for _, r := range cell {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// knownColumns counts the distinct create fields a header names.
func knownColumns(header []string) int {
	seen := make(map[string]bool)
	for _, c := range header {
		if f, ok := hireColumns[headerKey(c)]; ok {
			seen[f] = true
		}
	}
	return len(seen)
}

// header maps the header's columns to create fields.
func (h *hireReader) header(rec []string, line int) error {
	h.width = len(rec)
	h.cols = make(map[string]int)
	h.first = make(map[string]int)
	for i, c := range rec {
		f, ok := hireColumns[headerKey(c)]
		if !ok {
			continue
		}
		if j, dup := h.cols[f]; dup {
			return fmt.Errorf("line %d: columns %d (%q) and %d (%q) both give %s: keep one", line, j+1, strings.TrimSpace(rec[j]), i+1, strings.TrimSpace(c), f)
		}
		h.cols[f] = i
	}
	if len(h.cols) == 0 {
		return fmt.Errorf("line %d: the first row is not a header: none of its cells names a known column (first_name, last_name, email, join_date, job_title)", line)
	}
	var missing []string
	for _, f := range requiredHireFields {
		if _, ok := h.cols[f]; !ok {
			missing = append(missing, fmt.Sprintf("%s (e.g. %s)", f, columnHints[f]))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("line %d: the header lacks required columns: %s", line, strings.Join(missing, ", "))
	}
	for _, c := range rec {
		if _, ok := hireColumns[headerKey(c)]; !ok && strings.TrimSpace(c) != "" {
			h.ignored = append(h.ignored, cut(oneLine(strings.TrimSpace(c)), maxNameBytes))
		}
	}
	return nil
}

// cell returns the trimmed cell of a field ("" when the row is short or the column absent), a
// copy: the row's other cells are not kept with it.
func (h *hireReader) cell(rec []string, field string) string {
	i, ok := h.cols[field]
	if !ok || i >= len(rec) {
		return ""
	}
	return strings.Clone(strings.TrimSpace(rec[i]))
}
