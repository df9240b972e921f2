package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hrsync/hrsync/sink"
	"github.com/hrsync/hrsync/sink/sinktest"
)

// The models section: its defaults, a global section with an account's own keys laid over it,
// the environment over the file.
func TestModelsSettings(t *testing.T) {
	s, err := Load(sinktest.ConfigFile(t, "warehouse: {url: /data/hrsync.db}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Accounts[0].Models, sink.DefaultModelSettings(); !reflect.DeepEqual(got, want) {
		t.Errorf("defaults: %+v, want %+v", got, want)
	}

	path := sinktest.ConfigFile(t, `
warehouse: {url: /data/hrsync.db}
models:
  holiday_calendar: scotland
  closure_days: [2024-12-24, 2024-12-27]
  bradford: {window_weeks: 26, exclude_sickness_types: [Pregnancy related, Disability related]}
accounts:
  - name: acme
    source: {url: "http://acme.example/v1", api_key: acme-key}
  - name: globex
    source: {url: "http://globex.example/v1", api_key: globex-key}
    models:
      holiday_calendar: northern-ireland
      bradford: {bands: [40, 120, 400]}
`)
	s, err = Load(path, []string{"HRSYNC_ACCOUNTS_ACME_MODELS_BRADFORD_WINDOW_WEEKS=13"})
	if err != nil {
		t.Fatal(err)
	}
	day := func(d int) time.Time { return time.Date(2024, 12, d, 0, 0, 0, 0, time.UTC) }
	acme, globex := s.Accounts[0].Models, s.Accounts[1].Models
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"acme calendar: the global section's", acme.HolidayCalendar, "scotland"},
		{"acme closure days", acme.ClosureDays, []time.Time{day(24), day(27)}},
		{"acme window: its own variable", acme.Bradford.WindowWeeks, 13},
		{"acme bands: the defaults", acme.Bradford.Bands, []float64{51, 201, 401, 601}},
		{"acme exclusions", acme.Bradford.ExcludeSicknessTypes, []string{"Pregnancy related", "Disability related"}},
		{"globex calendar: its own", globex.HolidayCalendar, "northern-ireland"},
		{"globex bands: its own", globex.Bradford.Bands, []float64{40, 120, 400}},
		{"globex window: the global section's", globex.Bradford.WindowWeeks, 26},
		{"globex closure days: the global section's", globex.ClosureDays, []time.Time{day(24), day(27)}},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
}

// A models section hrsync cannot use is a one-line error naming the key.
func TestModelsSettingsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		env        []string
		want       string
	}{
		{"unknown calendar", "models: {holiday_calendar: wales}", nil,
			`config: models.holiday_calendar "wales": want one of england-and-wales, ireland, northern-ireland, poland, scotland, or none`},
		{"bad date", "models: {closure_days: [2024-12-32]}", nil,
			`config: models.closure_days "2024-12-32": want a date such as 2024-12-24`},
		{"day first", "models: {closure_days: [24/12/2024]}", nil,
			`config: models.closure_days "24/12/2024": want a date such as 2024-12-24`},
		{"bands not rising", "models: {bradford: {bands: [51, 401, 201]}}", nil,
			"config: models.bradford.bands 51, 401, 201: want thresholds above 0, each above the one before"},
		{"a band not a number", "", []string{"HRSYNC_MODELS_BRADFORD_BANDS=51,lots"},
			`config: models.bradford.bands "lots": want numbers, such as 51, 201, 401, 601`},
		{"window", "models: {bradford: {window_weeks: 0}}", nil,
			"config: models.bradford.window_weeks 0: want 1 to 520"},
		{"an account's own", "accounts:\n  - name: acme\n    source: {url: \"http://acme.example\", api_key: k}\n    models: {holiday_calendar: atlantis}", nil,
			`config: account acme: models.holiday_calendar "atlantis": want one of england-and-wales, ireland, northern-ireland, poland, scotland, or none`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(sinktest.ConfigFile(t, "warehouse: {url: /data/hrsync.db}\n"+tc.yaml+"\n"), tc.env)
			if err == nil {
				t.Fatalf("Load: no error, want %s", tc.want)
			}
			if got := err.Error(); got != tc.want || strings.Contains(got, "\n") {
				t.Errorf("Load:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
