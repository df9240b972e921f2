package sink

import (
	"strings"

	"github.com/hrsync/hrsync/schema"
)

// PostgresEmployeeSelect is the store's own employee statement on Postgres, without its id
// condition: the serve benchmark builds its OFFSET baselines on it, so they never drift from
// what the store runs.
func PostgresEmployeeSelect() string {
	return strings.TrimSuffix(buildQueries(schema.Postgres).employeeByID, " AND e.id = $1")
}
