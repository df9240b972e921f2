package fakeupstream

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"
)

// The financial module (UPSTREAM.md: /v1/salaries, /v1/bonuses, /v1/benefits, shapes unknown,
// sensitive). GenerateAccount gives every listed employee a salary history (the starting
// salary, then the yearly reviews since April 2023), an occasional bonus and a benefit or two, in the style of the other
// collections: decimal strings, dates, +01:00 timestamps, a nested employee, null and "" for
// empty values. The fields beyond id and employee are plausible, not recorded: hrsync keeps
// them as sent.

var (
	benefitKinds = []struct{ name, provider, value, frequency string }{
		{"Private medical insurance", "Bupa", "1320.0", "Annual"},
		{"Pension (employer contribution)", "Aviva", "5.0", "Percent"},
		{"Cycle to work", "Cyclescheme", "1000.0", "One-off"},
		{"Life assurance", "Legal & General", "4.0", "Salary multiple"},
		{"Gym membership", "", "35.0", "Monthly"},
	}
	bonusReasons = []string{"Annual performance", "Q4 targets", "Referral", "Project delivery", ""}
)

// financial makes the three collections for the employees who (the listed ones), from its own
// random source so that the other collections stay the bytes they were.
func financial(who []staff, seed int64) (salaries, bonuses, benefits []json.RawMessage) {
	rng := rand.New(rand.NewPCG(uint64(seed)^0x2545f4914f6cdd1d, 0x9fb21c651e98df25))
	sid, bid, fid := int64(8000001), int64(8500001), int64(8800001)
	for _, p := range who {
		emp := newObject().set("id", p.id).set("first_name", p.first).set("last_name", p.last).raw()
		currency := "GBP"
		if chance(rng, 20) {
			currency = "EUR"
		}
		amount := 24000 + 500*rng.IntN(100)
		// The starting salary, then the yearly reviews since reviewsFrom, while employed: a
		// leaver's last salary ends on their leaving day, and a Pending leaver's will.
		dates := []time.Time{p.join}
		for t := nextReview(p.join); t.Before(reference) && p.booked(t); t = nextReview(t) {
			if t.Before(reviewsFrom) {
				continue
			}
			dates = append(dates, t)
		}
		for i, t := range dates {
			end := any(nil)
			switch {
			case i+1 < len(dates):
				end = dates[i+1].AddDate(0, 0, -1).Format(time.DateOnly)
			case !p.left.IsZero():
				end = p.left.Format(time.DateOnly)
			}
			reason := "Starting salary"
			if i > 0 {
				reason = pick(rng, []string{"Annual review", "Annual review", "Promotion", "Market adjustment", ""})
				amount += amount * (2 + rng.IntN(6)) / 100 / 100 * 100
			}
			created := t.AddDate(0, 0, -rng.IntN(20)).Add(time.Duration(rng.IntN(86400)) * time.Second)
			salaries = append(salaries, newObject().set("id", sid).set("employee", emp).
				set("amount", fmt.Sprintf("%d.0", amount)).set("currency", currency).set("period", "Annum").
				set("effective_date", t.Format(time.DateOnly)).set("end_date", end).set("reason", reason).
				set("created_at", london(created)).set("updated_at", london(created)).raw())
			sid++
		}
		// Bonuses while employed, up to the data's today (none yet for a future starter).
		last := reference
		if !p.left.IsZero() && p.left.Before(last) {
			last = p.left
		}
		n := rng.IntN(3)
		if p.join.After(reference) {
			n = 0
		}
		for ; n > 0; n-- {
			on := p.join.AddDate(0, 0, rng.IntN(max(1, int(last.Sub(p.join).Hours()/24))))
			bonuses = append(bonuses, newObject().set("id", bid).set("employee", emp).
				set("amount", fmt.Sprintf("%d.%02d", 250*(1+rng.IntN(20)), 50*rng.IntN(2))).set("currency", currency).
				set("awarded_on", on.Format(time.DateOnly)).set("reason", pick(rng, bonusReasons)).
				set("paid", on.Before(reference.AddDate(0, -1, 0))).raw())
			bid++
		}
		for _, i := range rng.Perm(len(benefitKinds))[:rng.IntN(3)] {
			b := benefitKinds[i]
			var provider any = b.provider
			if b.provider == "" && chance(rng, 50) {
				provider = nil
			}
			// A benefit starts three months in and ends on the leaving day; none for someone
			// who left before then.
			start := p.join.AddDate(0, 3, 0)
			var end any
			if !p.left.IsZero() {
				if p.left.Before(start) {
					continue
				}
				end = p.left.Format(time.DateOnly)
			}
			benefits = append(benefits, newObject().set("id", fid).set("employee", emp).
				set("name", b.name).set("provider", provider).set("value", b.value).set("frequency", b.frequency).
				set("start_date", start.Format(time.DateOnly)).set("end_date", end).raw())
			fid++
		}
	}
	return salaries, bonuses, benefits
}

// reviewsFrom is the first review a salary history shows beyond the starting salary.
var reviewsFrom = date(2023, 4, 1, 0, 0, 0)

// nextReview is the first of April after t: salaries are reviewed once a year.
func nextReview(t time.Time) time.Time {
	r := time.Date(t.Year(), time.April, 1, 0, 0, 0, 0, time.UTC)
	if !r.After(t) {
		r = r.AddDate(1, 0, 0)
	}
	return r
}
