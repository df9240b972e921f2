package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/hrsync/hrsync/sink/sinktest"
	v1 "github.com/hrsync/hrsync/source/v1"
)

// TestPersonalDataMembers: personal_data.members are read from the file and the environment
// (which replaces the file's), each account lays its own over the top-level ones member by
// member, and the account's declarations, its warehouse's options included, class them.
func TestPersonalDataMembers(t *testing.T) {
	s, err := Load(sinktest.ConfigFile(t, "warehouse: {url: w.db}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Accounts[0].Declarations.Members(); len(m) != 0 {
		t.Errorf("members by default: %v", m)
	}

	s, err = Load(sinktest.ConfigFile(t, `
warehouse: {url: w.db}
personal_data:
  members:
    employees: {cost_centre: employment, payroll_number: Identifying}
    absences: {approval_code: not-personal}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := v1.Members{"employees": {"cost_centre": v1.Employment, "payroll_number": v1.Identifying}, "absences": {"approval_code": v1.NotPersonal}}
	if got := s.Accounts[0].Declarations.Members(); !reflect.DeepEqual(got, want) {
		t.Errorf("file: %v, want %v", got, want)
	}
	if got := s.Accounts[0].SinkOptions().Declarations.Members(); !reflect.DeepEqual(got, want) {
		t.Errorf("sink options: %v, want %v", got, want)
	}

	s, err = Load(sinktest.ConfigFile(t, `
warehouse: {url: w.db}
personal_data: {members: {employees: {cost_centre: identifying}}}
`), []string{"HRSYNC_PERSONAL_DATA_MEMBERS=employees.cost_centre=employment, sicknesses.absence_code=not_personal"})
	if err != nil {
		t.Fatal(err)
	}
	want = v1.Members{"employees": {"cost_centre": v1.Employment}, "sicknesses": {"absence_code": v1.NotPersonal}}
	if got := s.Accounts[0].Declarations.Members(); !reflect.DeepEqual(got, want) {
		t.Errorf("environment: %v, want %v", got, want)
	}

	s, err = Load(sinktest.ConfigFile(t, `
warehouse: {url: /data/w.db}
personal_data: {members: {employees: {cost_centre: employment, payroll_number: identifying}}}
accounts:
  - name: acme
    personal_data: {members: {employees: {payroll_number: not_personal}, absences: {approval_code: not_personal}}}
  - name: globex
  - name: initech
`), []string{"HRSYNC_ACCOUNTS_INITECH_PERSONAL_DATA_MEMBERS=employees.badge=employment"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []v1.Members{
		{"employees": {"cost_centre": v1.Employment, "payroll_number": v1.NotPersonal}, "absences": {"approval_code": v1.NotPersonal}},
		{"employees": {"cost_centre": v1.Employment, "payroll_number": v1.Identifying}},
		{"employees": {"badge": v1.Employment}},
	} {
		if got := s.Accounts[i].Declarations.Members(); !reflect.DeepEqual(got, want) {
			t.Errorf("account %s: %v, want %v", s.Accounts[i].Name, got, want)
		}
	}
	if got := s.PersonalData.Members; !reflect.DeepEqual(got, MemberClasses{"employees": {"cost_centre": "employment", "payroll_number": "identifying"}}) {
		t.Errorf("an account's section changed the top-level one: %v", got)
	}
}

// TestPersonalDataMembersRefused: an unknown collection (with the closest), an unknown class, a
// member that is declared already and a variable that does not read are each one line naming
// the key.
func TestPersonalDataMembersRefused(t *testing.T) {
	for _, tc := range []struct {
		file string
		env  []string
		says string
	}{
		{"personal_data: {members: {employes: {cost_centre: employment}}}\n", nil,
			`personal_data.members: unknown collection "employes" (did you mean employees?)`},
		{"personal_data: {members: {employees: {cost_centre: secret}}}\n", nil,
			`personal_data.members.employees.cost_centre: unknown personal-data class "secret"`},
		{"personal_data: {members: {employees: {first_name: employment}}}\n", nil,
			"personal_data.members.employees.first_name: declared as identifying already (declarations are code"},
		{"personal_data: {members: {sicknesses: {reason: employment}}}\n", nil,
			"personal_data.members.sicknesses.reason: declared as health already"},
		{"personal_data: {members: {employees: {cost_centre: employment}}}\naccounts:\n  - name: acme\n    personal_data: {members: {employees: {Cost_Centre: health}}}\n", nil,
			"account acme: personal_data.members.employees.cost_centre: classed employment, and employees.Cost_Centre health: one member in two cases"},
		{"personal_data: {member: {}}\n", nil, "unknown key personal_data.member (did you mean personal_data.members?)"},
		{"", []string{"HRSYNC_PERSONAL_DATA_MEMBERS=employees.x=employment,cost_centre:employment"}, "HRSYNC_PERSONAL_DATA_MEMBERS: item 2: want collection.member=class"},
		{"", []string{"HRSYNC_PERSONAL_DATA_MEMBER=x"}, "did you mean HRSYNC_PERSONAL_DATA_MEMBERS?"},
		{"accounts:\n  - name: acme\n    personal_data: {members: {employees: {job_title: identifying}}}\n", nil,
			"account acme: personal_data.members.employees.job_title: declared as employment already"},
		{"personal_data: {purposes: [Payroll, \"  \"]}\n", nil, "personal_data.purposes[1]: empty"},
		{"personal_data: {lawful_basis: [\"Contract\\nand more\"]}\n", nil, "personal_data.lawful_basis[0]: want one line of text"},
		{"personal_data: {recipients: [" + strings.Repeat("x", 1001) + "]}\n", nil, "personal_data.recipients[0]: 1001 bytes, more than 1000"},
		{"accounts:\n  - name: acme\n    personal_data: {recipients: [\"\"]}\n", nil, "account acme: personal_data.recipients[0]: empty"},
		{"personal_data: {purpose: [x]}\n", nil, "unknown key personal_data.purpose (did you mean personal_data.purposes?)"},
	} {
		_, err := Load(sinktest.ConfigFile(t, "warehouse: {url: w.db}\n"+tc.file), tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q %v: %v, want one line saying %s", tc.file, tc.env, err, tc.says)
		}
	}
}

// TestPersonalDataStatements: personal_data's purposes, lawful basis and recipients reach the
// account as written; an account's lists replace the top-level ones, and one that sets none
// takes them; the environment sets them comma-separated.
func TestPersonalDataStatements(t *testing.T) {
	s, err := Load(sinktest.ConfigFile(t, `warehouse: {url: w.db}
personal_data:
  purposes: [Payroll, "Managing absence: sickness and holidays"]
  lawful_basis: ["Contract (Art. 6(1)(b))"]
  recipients: [Acme Payroll Ltd]
accounts:
  - name: acme
  - name: globex
    personal_data: {recipients: [Globex Pensions]}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	acme, globex := s.Accounts[0].PersonalData, s.Accounts[1].PersonalData
	if fmt.Sprint(acme.Purposes) != "[Payroll Managing absence: sickness and holidays]" || fmt.Sprint(acme.LawfulBasis) != "[Contract (Art. 6(1)(b))]" ||
		fmt.Sprint(acme.Recipients) != "[Acme Payroll Ltd]" {
		t.Errorf("acme: %+v", acme)
	}
	if fmt.Sprint(globex.Recipients) != "[Globex Pensions]" || fmt.Sprint(globex.Purposes) != fmt.Sprint(acme.Purposes) {
		t.Errorf("globex: %+v", globex)
	}
	s, err = Load(sinktest.ConfigFile(t, "warehouse: {url: w.db}\n"), []string{"HRSYNC_PERSONAL_DATA_PURPOSES=Payroll, Reporting"})
	if err != nil || fmt.Sprint(s.Accounts[0].PersonalData.Purposes) != "[Payroll Reporting]" {
		t.Errorf("from the environment: %v, %v", s.Accounts, err)
	}
}

// TestPersonalDataDocsExample: docs/personal-data.md's example is a configuration hrsync reads.
func TestPersonalDataDocsExample(t *testing.T) {
	data, err := os.ReadFile("../../../../docs/personal-data.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "## Members no declaration names")
	_, block, ok := strings.Cut(section, "```yaml\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("docs/personal-data.md: no yaml example under Members no declaration names")
	}
	s, err := Load(sinktest.ConfigFile(t, "warehouse: {url: w.db}\n"+block), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Accounts[0].Declarations.Members(); m["employees"]["cost_centre"] != v1.Employment || len(m) != 2 {
		t.Errorf("the example classes %v", m)
	}
}

// TestSubjectAccessDocsExample: docs/personal-data.md's example of personal_data's statements is
// a configuration hrsync reads, its sentences as written.
func TestSubjectAccessDocsExample(t *testing.T) {
	data, err := os.ReadFile("../../../../docs/personal-data.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "## Subject access")
	_, block, ok := strings.Cut(section, "```yaml\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("docs/personal-data.md: no yaml example under Subject access")
	}
	s, err := Load(sinktest.ConfigFile(t, "warehouse: {url: w.db}\n"+block), nil)
	if err != nil {
		t.Fatal(err)
	}
	pd := s.Accounts[0].PersonalData
	if len(pd.Purposes) != 2 || pd.LawfulBasis[0] != "Contract of employment (UK GDPR Art. 6(1)(b))" || pd.Recipients[0] != "Acme Payroll Ltd, our payroll processor" {
		t.Errorf("the example reads %+v", pd)
	}
}
