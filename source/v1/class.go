package v1

import (
	"fmt"
	"strings"
)

// Class is what kind of personal data a member of a record is (UK/EU GDPR): every declared
// field, every member a nested object carries, and the members a declaration does not name (a
// collection's Extra) have one. Retention and erasure act on the classes that identify a person
// or say something about them beyond the facts of their employment (Erasable); a serve key can
// deny whole classes at every depth. The zero Class is no class: a declaration without one is
// refused (Collection.Validate, TestEveryMemberIsClassified).
type Class uint8

// The classes, from the least to the most sensitive.
const (
	// NotPersonal is data about no one: reference data (a department's name), a record's id.
	NotPersonal Class = iota + 1
	// Employment is a fact of someone's employment that analysts count: department, job title,
	// dates, working pattern, who manages whom (by id), an absence's dates and days. Kept when
	// a person is erased, so that headcount and absence history still add up.
	Employment
	// Identifying names or reaches a person: names, emails, date of birth or age, addresses,
	// phone numbers; and any member no declaration names (Extra), unless configured otherwise.
	Identifying
	// FreeText is text people typed (notes, reasons), which may say anything about anyone.
	FreeText
	// Financial is pay, bonuses and benefits (the financial module).
	Financial
	// Health is a special category (Art. 9): sickness types and reasons, review notes, fit notes.
	Health
)

// Classes are the classes in order, from the least to the most sensitive.
var Classes = []Class{NotPersonal, Employment, Identifying, FreeText, Financial, Health}

var classNames = map[Class]string{NotPersonal: "not_personal", Employment: "employment",
	Identifying: "identifying", FreeText: "free_text", Financial: "financial", Health: "health"}

// String is the class's name as configuration and the inventory write it: not_personal,
// employment, identifying, free_text, financial, health.
func (c Class) String() string {
	if n, ok := classNames[c]; ok {
		return n
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// Valid reports whether c is one of Classes.
func (c Class) Valid() bool { _, ok := classNames[c]; return ok }

// Personal reports whether the class is about a person: every class but NotPersonal.
func (c Class) Personal() bool { return c.Valid() && c != NotPersonal }

// Erasable reports whether retention and erasure take members of the class away: identifying,
// free text, financial and health. Employment facts and what is not personal stay.
func (c Class) Erasable() bool { return c.Valid() && c != NotPersonal && c != Employment }

// ParseClass reads a class by its name (String), case and "-" for "_" forgiven.
func ParseClass(s string) (Class, error) {
	name := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
	for c, n := range classNames {
		if n == name {
			return c, nil
		}
	}
	names := make([]string, len(Classes))
	for i, c := range Classes {
		names[i] = c.String()
	}
	return 0, fmt.Errorf("unknown personal-data class %q: want one of %s", s, strings.Join(names, ", "))
}

// ExtraClass is the class of the members of the collection's records that no declaration names
// (Record.Extra): the declared one, or Identifying, as nothing says what they are.
func (c *Collection) ExtraClass() Class {
	if c.Extra.Valid() {
		return c.Extra
	}
	return Identifying
}

// EmployeeRefs are an employee's nested references as the wire sees them (Employee's
// WorkingPattern … HolidayApprover, decoded by hand in records.go), declared for what they
// hold: each reference's class (who or what it points at, by id, is a fact of employment) and
// the members it carries. The warehouse's foreign keys and serve's classes are taken from here.
var EmployeeRefs = []Field{
	{Name: "working_pattern", Kind: Nested, Class: Employment, Nested: &Nesting{Target: "working_patterns", Fields: []Field{
		f("name", String, Employment), f("total_hours", Decimal, Employment), f("default", Bool, Employment)}}},
	named("holiday_allowance", "holiday_allowances", Employment),
	named("department", "departments", Employment),
	named("division", "divisions", Employment),
	named("location", "locations", Employment),
	person("line_manager"),
	person("holiday_approver"),
}

// EmployeeRef is the declaration of the employee's reference of that name (EmployeeRefs).
func EmployeeRef(name string) Field {
	for _, f := range EmployeeRefs {
		if f.Name == name {
			return f
		}
	}
	panic("v1: no employee reference " + name) // a declaration is code: TestEmployeeRefsAreTheRecords fails first
}

// Declared is the declaration of the members of a served collection's records as the wire sees
// them, for acting on their classes: the declared fields (the seed's two records' plain fields
// and, for employees, their references), and the class of the members they do not name.
// Every record also has an id, which is not among them. ok is false for no such collection.
func Declared(collection string) (fields []Field, extra Class, ok bool) {
	switch collection {
	case "employees":
		for _, p := range EmployeeFields {
			fields = append(fields, Field{Name: p.Name, Kind: p.Kind, Class: p.Class})
		}
		return append(fields, EmployeeRefs...), Identifying, true
	case "working_patterns":
		for _, p := range PatternFields {
			fields = append(fields, Field{Name: p.Name, Kind: p.Kind, Class: p.Class})
		}
		return fields, Identifying, true
	}
	if c := CollectionNamed(collection); c != nil {
		return c.Fields, c.ExtraClass(), true
	}
	return nil, 0, false
}
