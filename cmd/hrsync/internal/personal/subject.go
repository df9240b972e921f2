package personal

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hrsync/hrsync/cmd/hrsync/internal/config"
	"github.com/hrsync/hrsync/sink"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// Subject is a subject-access document (UK/EU GDPR Art. 15) as a data protection officer sends
// it: who it is about, each personal member the warehouse holds of them once, by category
// (the collection or ledger it is in) and class, with where it came from and every value it has
// had; why it is held, on what basis and who receives it (the configuration's personal_data);
// how long it is kept (retention); what was erased. Nothing of the warehouse's own workings: no
// address of it, no bookkeeping column, no model row unless asked for. The same document is
// written as HTML (to read and print), JSON and CSV (Export.Write).
type Subject struct {
	EmployeeID  int64  `json:"employee_id"`
	Name        string `json:"name"`
	GeneratedAt string `json:"generated_at"`
	Hrsync      string `json:"hrsync"`
	// About says what the document holds and leaves out.
	About       []string    `json:"about"`
	Purposes    []string    `json:"purposes"`
	LawfulBasis []string    `json:"lawful_basis"`
	Recipients  []Recipient `json:"recipients"`
	// Retention says, per rule that applies, how long the data is kept.
	Retention []string `json:"retention"`
	// Erasures are the erasures of the person or of their records, in force or lifted; Erased
	// says, in plain words, what is no longer held.
	Erasures []ErasureNote `json:"erasures"`
	Erased   []string      `json:"erased_statement"`
	// Restrictions are restrictions of processing in force: hrsync records none (Art. 18 is
	// the controller's to apply in the HR system), and says so.
	Restrictions []string   `json:"restrictions"`
	Categories   []Category `json:"categories"`
	// Mentions are the records of other people that name the person (as line manager,
	// approver), with only what is about them.
	Mentions []Mention `json:"named_in_others_records"`
}

// Recipient is who receives the person's data: a recipient the configuration names, or a key
// of hrsync's replica (serve.keys) and the classes it can read.
type Recipient struct {
	Name    string   `json:"name"`
	Classes []string `json:"classes,omitempty"`
}

// KeyReading is a key of hrsync's replica (serve.keys, by name) and the classes it reads of
// each collection, by the name the collection is served under.
type KeyReading struct {
	Name  string
	Reads map[string][]v1.Class
}

// keyRecipients are the keys that read personal data of the categories held, each with the
// classes of personal data it reads of them; a key that reads none of it is no recipient.
func keyRecipients(keys []KeyReading, cs []Category) []Recipient {
	var out []Recipient
	for _, k := range keys {
		seen := map[v1.Class]bool{}
		for _, c := range cs {
			for _, class := range k.Reads[c.Key] {
				seen[class] = true
			}
		}
		r := Recipient{Name: k.Name}
		for _, c := range v1.Classes {
			if seen[c] && c.Personal() {
				r.Classes = append(r.Classes, c.String())
			}
		}
		if len(r.Classes) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// ErasureNote is one erasure that touched the person.
type ErasureNote struct {
	ID       int64    `json:"id"`
	Of       string   `json:"of"`
	Classes  []string `json:"classes"`
	Cause    string   `json:"cause"`
	ErasedAt string   `json:"erased_at"`
	LiftedAt string   `json:"lifted_at,omitempty"`
}

// Category is one kind of record held about the person: their employee record, their
// sicknesses, the onboarding ledger's rows.
type Category struct {
	Key    string `json:"category"`
	Title  string `json:"title"`
	Source string `json:"source"`
	// Classes are the classes of the members held or erased, least sensitive first; Erased
	// those of them of which an erasure took every member.
	Classes []string `json:"classes"`
	Erased  []string `json:"classes_erased,omitempty"`
	Records []Record `json:"records"`
}

// Record is one record of a category.
type Record struct {
	ID string `json:"id"`
	// Removed: the record is no longer current (only its history is held).
	Removed bool     `json:"removed,omitempty"`
	Members []Member `json:"members"`
}

// Member is one personal member of a record: its current value and, where the warehouse keeps
// history, each value it has had with the period it was held.
type Member struct {
	Name  string `json:"member"`
	Label string `json:"-"`
	Class string `json:"class"`
	Value string `json:"value"`
	Null  bool   `json:"null,omitempty"`
	// Erased is when an erasure in force took the member's value; "" when it is not erased.
	Erased  string    `json:"erased,omitempty"`
	History []Version `json:"history,omitempty"`
}

// OtherMembers is the name of the member that stands for every member of a record no
// declaration names (what else the source sends) once an erasure in force took their class:
// the erasure leaves not even their names, so the record says that any it had are erased.
const OtherMembers = "*"

// AllErased reports whether the record holds members and an erasure in force took every one.
func (r Record) AllErased() bool {
	for _, m := range r.Members {
		if m.Erased == "" {
			return false
		}
	}
	return len(r.Members) > 0
}

// ErasedText says in a line what was erased of a record whose members were all erased: "Its
// financial data was erased on 29 Nov 2026."
func (r Record) ErasedText() string {
	var order []string
	classes := map[string][]string{} // the day → the classes erased on it
	for _, m := range r.Members {
		d := day(m.Erased)
		if _, ok := classes[d]; !ok {
			order = append(order, d)
		}
		if !slices.Contains(classes[d], m.Class) {
			classes[d] = append(classes[d], m.Class)
		}
	}
	var parts []string
	for _, d := range order {
		cs := make([]string, len(classes[d]))
		for i, c := range sortClasses(classes[d]) {
			cs[i] = strings.ReplaceAll(c, "_", " ")
		}
		parts = append(parts, strings.Join(cs, ", ")+" data on "+d)
	}
	return "Its " + strings.Replace(strings.Join(parts, "; its "), " data on ", " data was erased on ", 1) + "."
}

// sortClasses are the classes cs (their names), least sensitive first.
func sortClasses(cs []string) []string {
	var out []string
	for _, c := range v1.Classes {
		if slices.Contains(cs, c.String()) {
			out = append(out, c.String())
		}
	}
	return out
}

// ClassTag is a class of a category as its summary gives it: erased when every member of it
// the category holds was erased.
type ClassTag struct {
	Class  string
	Erased bool
}

// Tags are the category's classes, each marked erased when it is in Erased.
func (c Category) Tags() []ClassTag {
	out := make([]ClassTag, len(c.Classes))
	for i, class := range c.Classes {
		out[i] = ClassTag{Class: class, Erased: slices.Contains(c.Erased, class)}
	}
	return out
}

// Version is a value a member had, from when to when (to "" for the current one).
type Version struct {
	Value string `json:"value"`
	Null  bool   `json:"null,omitempty"`
	From  string `json:"from"`
	To    string `json:"to,omitempty"`
}

// Mention is a record of another person that names the person.
type Mention struct {
	Category string `json:"category"`
	Record   string `json:"record"`
	As       string `json:"as"`
	Value    string `json:"value"`
	From     string `json:"from,omitempty"`
	To       string `json:"to,omitempty"`
}

// SubjectInput is what a Subject is made of.
type SubjectInput struct {
	Account *config.Account
	Export  sink.SubjectExport
	// Erasures are the warehouse's erasures (sink.Store.Erasures): those of the person and of
	// their records are taken.
	Erasures []sink.Erasure
	// Left is the person's leaving date when they are a leaver (sink.Store.Leavers).
	Left time.Time
	// Keys are the keys of hrsync's replica that read the account, each with the classes it
	// reads of each collection (server.Readable); none: no key.
	Keys []KeyReading
	// Models includes the rows of the warehouse's models.
	Models  bool
	Now     time.Time
	Version string
}

// bookkeeping are the columns a collection's table keeps for the warehouse's own work, and the
// JSON copies of what its members hold already (nested, sent): never a member of the document.
var bookkeeping = map[string]bool{"listed": true, "origin": true, "synced_at": true, "valid_from": true, "valid_to": true,
	"nested": true, "sent": true}

// ownShown are the columns of the warehouse's own tables the document gives, in order: what a
// person can read (a file's name, a status), not the fingerprints, run ids and copies. A table
// not listed gives its personal columns.
var ownShown = map[string][]string{
	"onboarding_rows":  {"file_name", "line", "email", "status", "reason", "created_at", "updated_at"},
	"idempotency_keys": {"client", "status"},
}

// categoryTitles name the categories for a reader.
var categoryTitles = map[string]string{
	"employees": "Employee record", "absences": "Absences", "sicknesses": "Sicknesses",
	"leave_requests": "Leave requests", "employee_training_courses": "Training courses",
	"onboarding_rows": "New-hire files (onboarding)", "idempotency_keys": "Creates through hrsync's API",
}

// NewSubject makes the document of in.
func NewSubject(in SubjectInput) Subject {
	x := in.Export
	s := Subject{EmployeeID: x.EmployeeID, GeneratedAt: in.Now.UTC().Format(time.RFC3339), Hrsync: in.Version,
		About: subjectAbout, Recipients: []Recipient{}, Erasures: []ErasureNote{}, Mentions: []Mention{}}
	pd := in.Account.PersonalData
	s.Purposes, s.LawfulBasis = nonNil(pd.Purposes), nonNil(pd.LawfulBasis)
	for _, r := range pd.Recipients {
		s.Recipients = append(s.Recipients, Recipient{Name: r})
	}

	classes := map[[2]string]v1.Class{}
	for _, it := range sink.InventoryOf(in.Account.Declarations) {
		if _, ok := classes[[2]string{it.Table, it.Column}]; !ok {
			classes[[2]string{it.Table, it.Column}] = it.Class
		}
	}
	// The erasures that touched the person: of them, or of a record of theirs.
	owned := map[string]map[string]bool{} // collection → the person's record ids
	for _, t := range x.Tables {
		if strings.HasPrefix(t.Name, "named_in_") || t.Name != t.Table {
			continue
		}
		collection := strings.TrimSuffix(t.Table, "_history") // a record no longer current is theirs too
		for _, r := range t.Rows {
			if owned[collection] == nil {
				owned[collection] = map[string]bool{}
			}
			owned[collection][valueOf(r, "id").Text] = true
		}
	}
	erased := map[string][]erasedClasses{} // collection/id (or "*" for every record) → in force
	for _, e := range in.Erasures {
		id := strconv.FormatInt(e.SubjectID, 10)
		mine := e.Kind == sink.ErasureEmployee && e.SubjectID == x.EmployeeID ||
			e.Kind == sink.ErasureRecord && owned[e.Collection][id]
		if !mine {
			continue
		}
		n := ErasureNote{ID: e.ID, Of: erasureOf(e, x.EmployeeID), Cause: erasureCause(e.Cause), ErasedAt: e.ErasedAt, LiftedAt: e.LiftedAt}
		for _, c := range e.Classes {
			n.Classes = append(n.Classes, c.String())
		}
		s.Erasures = append(s.Erasures, n)
		if e.LiftedAt != "" {
			continue
		}
		key := "*"
		if e.Kind == sink.ErasureRecord {
			key = e.Collection + "/" + id
		}
		erased[key] = append(erased[key], erasedClasses{e.Classes, e.ErasedAt})
		what := strings.Join(readableClasses(e.Classes), ", ")
		if e.Kind == sink.ErasureEmployee {
			what = "their " + what + " data, in every record"
		} else {
			what = "the " + what + " data of " + n.Of
		}
		s.Erased = append(s.Erased, fmt.Sprintf("On %s, %s, hrsync erased %s. It no longer holds that data, in the current records or any earlier version of them, and a sync does not bring it back while the erasure is in force; where a value below says erased, it is one of these.",
			day(e.ErasedAt), erasureCause(e.Cause), what))
	}
	for _, e := range s.Erasures {
		if e.LiftedAt != "" {
			s.Erased = append(s.Erased, fmt.Sprintf("The erasure of %s made on %s was lifted on %s: what the source holds may be held again.", e.Of, day(e.ErasedAt), day(e.LiftedAt)))
		}
	}
	if len(s.Erasures) == 0 {
		s.Erased = []string{"No erasure of this person's data, or of any record of theirs, has been made in hrsync."}
	}
	s.Restrictions = []string{"hrsync records no restriction of processing (Art. 18): a restriction is applied in the HR system, whose records hrsync copies."}

	history := map[string]sink.SubjectTable{}
	for _, t := range x.Tables {
		if strings.HasSuffix(t.Name, "_history") && t.Name == t.Table {
			history[strings.TrimSuffix(t.Name, "_history")] = t
		}
	}
	for _, t := range x.Tables {
		switch {
		case strings.HasPrefix(t.Name, "named_in_"):
			s.Mentions = append(s.Mentions, mentions(t)...)
			continue
		case strings.HasSuffix(t.Name, "_history"):
			continue
		case strings.HasPrefix(t.Name, "model_") && !in.Models:
			continue
		}
		b := builder{table: t.Table, classes: classes, erased: erased, decls: in.Account.Declarations}
		var c Category
		if isCollection(t.Table) {
			c = b.collection(t, history[t.Table])
		} else {
			c = b.own(t, x.EmployeeID)
		}
		if len(c.Records) > 0 {
			s.Categories = append(s.Categories, c)
		}
	}
	s.Recipients = append(s.Recipients, keyRecipients(in.Keys, s.Categories)...)
	s.Mentions = compactMentions(s.Mentions)
	s.Name = personName(s.Categories, x.EmployeeID)
	s.Retention = retentionSays(in.Account.Retention, in.Left, s.Categories)
	return s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// subjectAbout says what a document holds and leaves out (docs/personal-data.md, "Subject
// access").
var subjectAbout = []string{
	"This is the personal data hrsync holds about the person: a copy of their records in the HR system, kept to report on and to serve to the applications named below as recipients, and the records of the new-hire files and creates it passed on to the HR system.",
	"Each item is given once, with its category, its class (identifying, employment, free text, financial, health) and where it came from; where hrsync keeps the history of a record, every value the item has had is given, with the period it was held. Items with no value are left out.",
	"Other people's data is left out (Art. 15(4)): where a record names another person (a line manager, an approver), only that person's id is given; where another person's record names this person, only what it says of them.",
	"Free text (notes, reasons) is given as written: it may mention others, and is for the controller to review before sending.",
}

// erasedClasses are the classes an erasure in force took, and when.
type erasedClasses struct {
	classes []v1.Class
	at      string
}

// builder makes the categories of a table.
type builder struct {
	table   string
	classes map[[2]string]v1.Class
	erased  map[string][]erasedClasses
	decls   v1.Declarations
}

// isCollection reports whether table is a collection's (its records come from the source).
func isCollection(table string) bool {
	return slices.Contains(v1.DeclaredCollections(), table)
}

// collection makes the category of a collection's table t of the person's own records, with
// the values of its history h (zero when it keeps none).
func (b builder) collection(t, h sink.SubjectTable) Category {
	c := Category{Key: t.Table, Title: categoryTitle(t.Table), Source: "the HR system, its " + strings.ReplaceAll(t.Table, "_", " ") + " (/v1/" + t.Table + ")"}
	versions := map[string][]sink.SubjectRow{}
	var order []string
	for _, r := range h.Rows {
		id := valueOf(r, "id").Text
		if _, ok := versions[id]; !ok {
			order = append(order, id)
		}
		versions[id] = append(versions[id], r)
	}
	current := map[string]bool{}
	for _, r := range t.Rows {
		id := valueOf(r, "id").Text
		current[id] = true
		c.Records = append(c.Records, b.record(id, r, versions[id], false))
	}
	for _, id := range order { // records no longer current, only in the history
		if !current[id] {
			vs := versions[id]
			c.Records = append(c.Records, b.record(id, vs[len(vs)-1], vs, true))
		}
	}
	c.Classes, c.Erased = categoryClasses(c.Records)
	return c
}

// record makes the record id from its current row and its versions.
func (b builder) record(id string, row sink.SubjectRow, versions []sink.SubjectRow, removed bool) Record {
	rec := Record{ID: id, Removed: removed}
	erasedAt := func(class v1.Class) string {
		for _, key := range []string{"*", b.table + "/" + id} {
			for _, e := range b.erased[key] {
				if slices.Contains(e.classes, class) {
					return e.at
				}
			}
		}
		return ""
	}
	_, extraClass, _ := b.decls.Declared(b.table)
	configured := map[string]v1.Class{}
	for _, f := range b.decls.Configured(b.table) {
		configured[f.Name] = f.Class
	}
	nested := map[string]json.RawMessage{}
	if v := valueOf(row, "nested"); !v.Null {
		_ = json.Unmarshal([]byte(v.Text), &nested)
	}
	for _, v := range row {
		col := v.Column
		if bookkeeping[col] || col == "id" || col == "employee_id" && b.table != "employees" {
			continue
		}
		if col == "extra" {
			extra := b.extraMembers(v, versions, configured, extraClass, erasedAt)
			rec.Members = append(rec.Members, extra...)
			// What an erasure took of the members no declaration names leaves not even their
			// names: the record says that any it had are erased (unless it holds some of the
			// class still, an erasure lifted).
			if at := erasedAt(extraClass); at != "" && extraClass.Erasable() && !slices.ContainsFunc(extra, func(m Member) bool {
				_, isConfigured := configured[m.Name]
				return !isConfigured && !m.Null
			}) {
				rec.Members = append(rec.Members, Member{Name: OtherMembers, Label: "Any other items it held", Class: extraClass.String(), Null: true, Erased: at})
			}
			continue
		}
		class := b.classes[[2]string{b.table, col}]
		if !class.Personal() {
			continue
		}
		_, empty := plainHeld(v)
		m := Member{Name: col, Label: b.label(col), Class: class.String(), Value: b.show(col, v, nested), Null: empty}
		if empty {
			m.Value = ""
		}
		if v.Null && class.Erasable() {
			m.Erased = erasedAt(class)
		}
		if len(versions) > 0 {
			m.History = historyOf(versions, func(r sink.SubjectRow) (string, bool) {
				x := valueOf(r, col)
				if _, empty := plainHeld(x); empty {
					return "", true
				}
				return b.show(col, x, nil), false
			})
		}
		if held(m) {
			rec.Members = append(rec.Members, m)
		}
	}
	return rec
}

// extraMembers are the members of a record's extra column (those no declaration names), each
// its own member, classed by the configuration or as the collection's extra members are.
func (b builder) extraMembers(v sink.SubjectValue, versions []sink.SubjectRow, configured map[string]v1.Class, extraClass v1.Class, erasedAt func(v1.Class) string) []Member {
	objects := func(x sink.SubjectValue) map[string]json.RawMessage {
		var o map[string]json.RawMessage
		if !x.Null {
			_ = json.Unmarshal([]byte(x.Text), &o)
		}
		return o
	}
	cur := objects(v)
	names := map[string]bool{}
	for k := range cur {
		names[k] = true
	}
	for k := range configured { // erased, a configured member is still known by its name
		names[k] = true
	}
	for _, r := range versions {
		for k := range objects(valueOf(r, "extra")) {
			names[k] = true
		}
	}
	var out []Member
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range names {
			if !yield(k) {
				return
			}
		}
	}) {
		class, configuredClass := configured[name]
		if !configuredClass {
			class = extraClass
		}
		raw, ok := cur[name]
		text, empty := readable(raw)
		m := Member{Name: name, Label: label(name), Class: class.String(), Value: text, Null: !ok || empty}
		if m.Null {
			m.Value = ""
			if class.Erasable() {
				m.Erased = erasedAt(class)
			}
		}
		if len(versions) > 0 {
			m.History = historyOf(versions, func(r sink.SubjectRow) (string, bool) {
				raw, ok := objects(valueOf(r, "extra"))[name]
				if !ok {
					return "", true
				}
				return readable(raw)
			})
		}
		if held(m) {
			out = append(out, m)
		}
	}
	return out
}

// held reports whether the member has a value, now or in its history, or was erased: one never
// held is left out.
func held(m Member) bool {
	if !m.Null || m.Erased != "" {
		return true
	}
	for _, v := range m.History {
		if !v.Null {
			return true
		}
	}
	return false
}

// people are the references of the builder's collection to employees, by column.
func (b builder) people() map[string]bool {
	out := map[string]bool{}
	fields, _, _ := v1.Declared(b.table)
	for _, f := range fields {
		if f.Nested != nil && f.Nested.Target == "employees" {
			out[f.Name+"_id"] = true
		}
	}
	return out
}

// label is a member's name for a reader; a reference's without its _id.
func (b builder) label(col string) string {
	if col == "deleted_at" {
		return "No longer listed by the HR system since"
	}
	if ref, ok := strings.CutSuffix(col, "_id"); ok && b.table != "onboarding_rows" {
		return label(ref)
	}
	return label(col)
}

// show is the value of column col of a record for a reader: a reference to a named thing (a
// department, a sickness type) with its name beside its id, as the record's nested object
// gives it.
func (b builder) show(col string, v sink.SubjectValue, nested map[string]json.RawMessage) string {
	text := plain(v)
	if v.Null || !strings.HasSuffix(col, "_id") {
		return text
	}
	if b.people()[col] {
		return "employee " + text
	}
	var obj struct {
		Name string `json:"name"`
	}
	if raw, ok := nested[strings.TrimSuffix(col, "_id")]; ok && json.Unmarshal(raw, &obj) == nil && obj.Name != "" {
		return obj.Name + " (" + text + ")"
	}
	return text
}

// own makes the category of one of the warehouse's own tables (the onboarding ledger, the
// answers kept of creates, a model): the columns ownShown gives, or its personal ones; a
// model's every column.
func (b builder) own(t sink.SubjectTable, person int64) Category {
	c := Category{Key: t.Table, Title: categoryTitle(t.Table), Source: ownSource(t.Table)}
	shown, listed := ownShown[t.Table]
	for i, r := range t.Rows {
		id := valueOf(r, "id").Text
		if id == "" || strings.HasPrefix(t.Table, "model_") {
			id = strconv.Itoa(i + 1)
		}
		rec := Record{ID: id}
		for _, v := range r {
			class := b.classes[[2]string{t.Table, v.Column}]
			switch {
			case listed && !slices.Contains(shown, v.Column):
				continue
			case !listed && !strings.HasPrefix(t.Table, "model_") && !class.Personal():
				continue
			case !listed && v.Column == "employee_id" && v.Text == strconv.FormatInt(person, 10):
				continue
			}
			text, empty := plainHeld(v)
			if empty { // left out, as a collection's member with no value is
				continue
			}
			rec.Members = append(rec.Members, Member{Name: v.Column, Label: label(v.Column), Class: class.String(), Value: text})
		}
		c.Records = append(c.Records, rec)
	}
	c.Classes, c.Erased = categoryClasses(c.Records)
	return c
}

// ownSource is where the rows of one of the warehouse's own tables come from.
func ownSource(table string) string {
	switch {
	case table == "onboarding_rows":
		return "hrsync's onboarding: a row of a new-hire CSV file it passed on to the HR system"
	case table == "idempotency_keys":
		return "hrsync's API: an employee created through it, the answer kept for a retry"
	case strings.HasPrefix(table, "model_"):
		return "derived by hrsync from the records above, for reports"
	}
	return "hrsync"
}

func categoryTitle(table string) string {
	if t, ok := categoryTitles[table]; ok {
		return t
	}
	return label(strings.TrimPrefix(table, "model_"))
}

// plain is a value for a reader: JSON as readable writes it, other values as they are; null,
// "" and JSON holding nothing are "" (and not held).
func plain(v sink.SubjectValue) string {
	text, _ := plainHeld(v)
	return text
}

// plainHeld is plain, and whether the value holds nothing.
func plainHeld(v sink.SubjectValue) (string, bool) {
	if v.Null {
		return "", true
	}
	if v.Kind == sink.KindJSON {
		return readable(json.RawMessage(v.Text))
	}
	return v.Text, v.Text == ""
}

func valueOf(r sink.SubjectRow, col string) sink.SubjectValue {
	for _, v := range r {
		if v.Column == col {
			return v
		}
	}
	return sink.SubjectValue{Column: col, Null: true}
}

// historyOf is the values a member had over versions (in order), a value held by successive
// versions merged into one period.
func historyOf(versions []sink.SubjectRow, value func(sink.SubjectRow) (string, bool)) []Version {
	var out []Version
	for _, r := range versions {
		text, null := value(r)
		from, to := valueOf(r, "valid_from"), valueOf(r, "valid_to")
		if n := len(out); n > 0 && out[n-1].Value == text && out[n-1].Null == null {
			out[n-1].To = plain(to)
			continue
		}
		out = append(out, Version{Value: text, Null: null, From: plain(from), To: plain(to)})
	}
	return out
}

// categoryClasses are the classes of the members of records, least sensitive first, and those
// of them of which every member was erased.
func categoryClasses(records []Record) (classes, erased []string) {
	seen := map[string]bool{}
	held := map[string]bool{}
	for _, r := range records {
		for _, m := range r.Members {
			seen[m.Class] = true
			if m.Erased == "" {
				held[m.Class] = true
			}
		}
	}
	for _, c := range v1.Classes {
		if seen[c.String()] {
			classes = append(classes, c.String())
			if !held[c.String()] {
				erased = append(erased, c.String())
			}
		}
	}
	return classes, erased
}
