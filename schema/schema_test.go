package schema_test

import (
	"testing"

	"github.com/hrsync/hrsync/schema"
)

// TestDialectsMigrateInStep: both dialects have the same numbered steps with the same names, so
// a warehouse at version N means the same model on either.
func TestDialectsMigrateInStep(t *testing.T) {
	pg, err := schema.Migrations(schema.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	lite, err := schema.Migrations(schema.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if len(pg) == 0 || len(pg) != len(lite) {
		t.Fatalf("postgres has %d migrations, sqlite %d", len(pg), len(lite))
	}
	for i := range pg {
		if pg[i].Version != lite[i].Version || pg[i].Name != lite[i].Name {
			t.Errorf("step %d: postgres %04d_%s, sqlite %04d_%s", i+1, pg[i].Version, pg[i].Name, lite[i].Version, lite[i].Name)
		}
	}
	if got := schema.Latest(schema.Postgres); got != len(pg) {
		t.Errorf("Latest = %d, want %d", got, len(pg))
	}
}
