package personal

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"encoding/json"
	"html/template"
	"io"
	"strings"

	"github.com/hrsync/hrsync/sync/onboard"
)

//go:embed subject.html.tmpl
var subjectPage string

// subjectTemplate is the HTML document: self-contained (its style inline, nothing loaded from
// elsewhere), printable (print CSS), every value escaped by html/template.
var subjectTemplate = template.Must(template.New("subject").Funcs(template.FuncMap{
	"classLabel": func(c string) string { return strings.ReplaceAll(c, "_", " ") },
	"label":      label,
	"day":        day,
	"when":       when,
	"shown":      shown,
	"title":      categoryTitle,
}).Parse(subjectPage))

// HTML writes the document as a page to read and print.
func (s Subject) HTML(w io.Writer) error {
	return subjectTemplate.Execute(w, struct {
		Subject
		Generated string
	}{s, when(s.GeneratedAt)})
}

// JSON writes the document as JSON, values as text (& < > as they are).
func (s Subject) JSON(w io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// csvHeader are the CSV file's columns: a row per value a member has had.
var csvHeader = []string{"category", "source", "record", "member", "class", "value", "from", "to", "current", "erased"}

// CSV writes every member of every record, a row per value it has had (its history; one row
// where no history is kept), the current one marked; then the records of others naming the
// person (category named_in_<collection>). Every cell is safe to open in a spreadsheet
// (onboard.SafeCell); a value not held is an empty cell.
func (s Subject) CSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	// A row of its own: the cells passed may be shared (the header is a package variable, and
	// one process may write exports side by side, as the tests run the command).
	write := func(cells ...string) {
		row := make([]string, len(cells))
		for i, c := range cells {
			row[i] = onboard.SafeCell(c)
		}
		_ = cw.Write(row)
	}
	write(csvHeader...)
	for _, c := range s.Categories {
		for _, r := range c.Records {
			for _, m := range r.Members {
				if len(m.History) == 0 {
					write(c.Key, c.Source, r.ID, m.Name, m.Class, m.Value, "", "", "true", m.Erased)
					continue
				}
				for i, v := range m.History {
					current := i == len(m.History)-1 && !r.Removed
					erased := ""
					if current {
						erased = m.Erased
					}
					write(c.Key, c.Source, r.ID, m.Name, m.Class, v.Value, v.From, v.To, boolText(current), erased)
				}
			}
		}
	}
	for _, m := range s.Mentions {
		write("named_in_"+m.Category, "the HR system: a record of another person", m.Record, m.As, "", m.Value, m.From, m.To, boolText(m.From == ""), "")
	}
	cw.Flush()
	return cw.Error()
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
