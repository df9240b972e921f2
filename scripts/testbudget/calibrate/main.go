// Command calibrate measures how fast this machine runs the suite's kind of work, for the
// package budget (scripts/testbudget -calibration): a fixed workload of what the tests spend
// their CPU on — SQLite (modernc.org/sqlite, as the warehouse uses it), encoding/json, maps and
// goroutines — built the way make test builds the tests (the race detector, the same
// -gcflags). It runs the workload three times and prints the fastest, a Go duration ("1.234s"):
// the machine's speed, not the load of the moment.
//
//	go run -race [-gcflags …] ./scripts/testbudget/calibrate
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	_ "modernc.org/sqlite"
)

// rows is the workload's size: about a second on the 2-core machines CI uses, under -race.
const rows = 24000

type record struct {
	ID         int64             `json:"id"`
	FirstName  string            `json:"first_name"`
	LastName   string            `json:"last_name"`
	Email      string            `json:"email"`
	Department map[string]string `json:"department"`
	Salary     float64           `json:"salary"`
}

func workload(ctx context.Context) error {
	db, err := sql.Open("sqlite", "file:calibrate?mode=memory&cache=private")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE r (id INTEGER PRIMARY KEY, email TEXT NOT NULL, dept TEXT NOT NULL, body TEXT NOT NULL);
CREATE INDEX r_dept ON r (dept, email)`); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO r (id, email, dept, body) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	for i := range int64(rows) {
		r := record{ID: i, FirstName: "Zoë" + strconv.FormatInt(i%97, 10), LastName: "Ødegård", Email: "person" + strconv.FormatInt(i, 10) + "@example.com",
			Department: map[string]string{"name": "Dept " + strconv.FormatInt(i%41, 10), "division": "Div " + strconv.FormatInt(i%7, 10)}, Salary: float64(i) * 12.5}
		body, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if _, err := ins.ExecContext(ctx, i, r.Email, r.Department["name"], string(body)); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	// Read it back by department, four readers side by side, each decoding and tallying.
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total = map[string]float64{}
		errs  = make([]error, 4)
	)
	for w := range 4 {
		wg.Go(func() {
			for d := w; d < 41; d += 4 {
				q, err := db.QueryContext(ctx, `SELECT body FROM r WHERE dept = ? ORDER BY email`, "Dept "+strconv.Itoa(d))
				if err != nil {
					errs[w] = err
					return
				}
				for q.Next() {
					var body string
					var r record
					err := q.Scan(&body)
					if err == nil {
						err = json.Unmarshal([]byte(body), &r)
					}
					if err != nil {
						q.Close()
						errs[w] = err
						return
					}
					mu.Lock()
					total[r.Department["division"]] += r.Salary
					mu.Unlock()
				}
				if err := q.Err(); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if len(total) != 7 {
		return fmt.Errorf("the workload tallied %d divisions, want 7", len(total))
	}
	return nil
}

func main() {
	ctx := context.Background()
	best := time.Duration(0)
	for range 3 {
		start := time.Now()
		if err := workload(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "calibrate:", err)
			os.Exit(1)
		}
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
	}
	fmt.Println(best.Round(time.Millisecond))
}
