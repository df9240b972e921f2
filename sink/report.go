package sink

import (
	"context"
	"fmt"
)

// HeadcountByDepartmentQuery is the statement HeadcountByDepartment runs: the served employees
// counted by department, largest first (ties by name), those in no department last as "(none)".
// It is one line, the same on both backends and without parameters, so a person can paste it as
// it is into sqlite3 or into psql (with search_path set to the warehouse's schema) and get the
// same answer.
const HeadcountByDepartmentQuery = `SELECT coalesce(d.name, '(none)') AS department, count(*) AS employees ` +
	`FROM employees e LEFT JOIN departments d ON d.id = e.department_id ` +
	`WHERE e.listed AND e.deleted_at IS NULL GROUP BY d.name ORDER BY d.name IS NULL, employees DESC, department`

// DepartmentCount is one line of HeadcountByDepartment.
type DepartmentCount struct {
	// Department is the department's name; "(none)" for the employees in no department.
	Department string
	Employees  int64
}

// HeadcountByDepartment counts the served employees (listed, not deleted) by department, in the
// order of HeadcountByDepartmentQuery, which it runs.
func (s *Store) HeadcountByDepartment(ctx context.Context) ([]DepartmentCount, error) {
	rows, err := s.db.QueryContext(ctx, HeadcountByDepartmentQuery)
	if err != nil {
		return nil, fmt.Errorf("headcount by department: %w", err)
	}
	defer rows.Close()
	counts := []DepartmentCount{}
	for rows.Next() {
		var c DepartmentCount
		if err := rows.Scan(&c.Department, &c.Employees); err != nil {
			return nil, fmt.Errorf("headcount by department: %w", err)
		}
		counts = append(counts, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("headcount by department: %w", err)
	}
	return counts, nil
}
