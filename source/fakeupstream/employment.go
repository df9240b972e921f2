package fakeupstream

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"time"
)

// What GenerateAccount's employees carry beyond Generate's, as the real service sends it where
// an account records it (UPSTREAM.md): a leaving date, a statutory holiday country, and among
// them a few zero-hours staff and a few future starters; and the movements of a real account
// over the last three years, which Generate's statuses and join dates lack (its leavers are
// 4 %, its joins end in December 2025): recent hires, and Current employees who have left
// since. Each employee draws the same number of
// values from aux (drawAccount) whatever its record says, so one employee's members never shift
// another's.
const (
	// futureStarterPercent of the current employees start after the data's today, within
	// futureStartDays of it.
	futureStarterPercent = 1
	futureStartDays      = 60
	// zeroHoursPercent of the employees work the zero-hours pattern.
	zeroHoursPercent = 3
	// undatedLeaverPercent of the Ex-employees' records have no leaving_date: accounts that did
	// not record it (their events still end on the day they left).
	undatedLeaverPercent = 10
	// meanTenureDays is the mean time to leaving of an Ex-employee, before it is cut to the
	// time between their joining and the data's today (a truncated exponential: leavers of
	// every year since 2012, more of them in recent years, as the workforce grew).
	meanTenureDays = 4 * 365
	// A Pending leaver leaves a month after the data's today, plus up to noticeDays more:
	// within the next one to three months.
	noticeDays = 62
	// recordedPercent of those who receive statutory holidays have the country named, and
	// recordedWithoutPercent of those who do not.
	recordedPercent        = 95
	recordedWithoutPercent = 40
	// quitPercent of the Current employees (not future starters) are drawn a day of the
	// quitYears before the data's today: those who had joined by then left on it, as
	// Ex-employees. Leavers of every month of those years, in step with the headcount: on a
	// 2,500-person account about 200 a year, a 12-month turnover of 11 to 14 % (UK employers
	// lose 10-15 % a year; 10.5 to 13 % where the undated tenth count as still employed), with
	// the Ex-employees of before (leftAfter) mostly years earlier.
	quitPercent = 34
	quitYears   = 3
	// recentHirePercent of the employees joined in the quitYears before the data's today, not
	// when Generate says (recentJoin), so that starters join at one steady rate through those
	// years, 2026 included, about as many as leave.
	recentHirePercent = 16
)

// joinsFrom and joinsUntil bound Generate's join dates: 2012-01-01 plus up to 14·365 − 1 days,
// the last 2025-12-27.
var (
	joinsFrom  = date(2012, 1, 1, 0, 0, 0)
	joinsUntil = joinsFrom.AddDate(0, 0, 14*365)
)

// accountDraws are one employee's draws from aux for the members GenerateAccount adds.
type accountDraws struct {
	future    bool    // a Current employee is a future starter
	startsIn  int     // a future starter's first day: days after the data's today, 1 … futureStartDays
	zeroHours bool    // works the zeroHours pattern
	tenure    float64 // [0, 1): where between joining and the data's today an Ex-employee left
	undated   bool    // an Ex-employee's record has no leaving_date
	notice    int     // a Pending leaver's leaving day: days after a month from the data's today
	region    int     // [0, 100): the UK country of someone not in an office abroad
	recorded  int     // [0, 100): whether the record names the statutory holiday country
	made      int     // hours before the data's today (beyond a day) a future starter's record was made
	quit      bool    // a Current employee has left in the last quitYears, if they had joined by then
	quitAt    float64 // [0, 1): where in those years
	hired     bool    // joined in the last quitYears (recentJoin)
	hiredAt   float64 // [0, 1): when in those years
}

func drawAccount(aux *rand.Rand) *accountDraws {
	x := &accountDraws{}
	x.future = chance(aux, futureStarterPercent)
	x.startsIn = 1 + aux.IntN(futureStartDays)
	x.zeroHours = chance(aux, zeroHoursPercent)
	x.tenure = aux.Float64()
	x.undated = chance(aux, undatedLeaverPercent)
	x.notice = aux.IntN(noticeDays)
	x.region = aux.IntN(100)
	x.recorded = aux.IntN(100)
	x.made = aux.IntN(45 * 24)
	x.quit = chance(aux, quitPercent)
	x.quitAt = aux.Float64()
	x.hired = chance(aux, recentHirePercent)
	x.hiredAt = aux.Float64()
	return x
}

// dates are the status, the join date and the leaving day of an employee of status who joined
// on join in Generate's record. A recent hire's join date moves into the last quitYears
// (recentJoin); a future starter's after the data's today. A Current employee drawn to quit
// becomes an Ex-employee who left on their quit day (quitDay), when that is after joining; an
// Ex-employee left after joining and before the data's today (leftAfter); a Pending leaver
// leaves within the next one to three months.
func (x *accountDraws) dates(status string, join time.Time) (string, time.Time, time.Time) {
	if x.hired {
		join = recentJoin(x.hiredAt)
	}
	switch status {
	case "Current employee":
		if x.future {
			return status, reference.AddDate(0, 0, x.startsIn), time.Time{}
		}
		if left := quitDay(x.quitAt); x.quit && left.After(join) {
			return "Ex-employee", join, left
		}
	case "Ex-employee":
		return status, join, leftAfter(join, x.tenure)
	case "Pending leaver":
		return status, join, reference.AddDate(0, 1, x.notice)
	}
	return status, join, time.Time{}
}

// quitDay is the day u (in [0, 1)) of the way through the quitYears before the data's today:
// from 2023-06-01 (u = 0) to 2026-05-31.
func quitDay(u float64) time.Time {
	from := reference.AddDate(-quitYears, 0, 0)
	return from.AddDate(0, 0, int(u*float64(days(from, reference))))
}

// recentJoin is a recent hire's join date, u (in [0, 1)) of the way through the last quitYears
// split in two: below recentGapShare, the days from joinsUntil (2025-12-28) to the day before
// the data's today (the gap after Generate's joins); above it, the days from quitYears before
// the data's today (2023-06-01) to joinsUntil's eve.
func recentJoin(u float64) time.Time {
	from, g := reference.AddDate(-quitYears, 0, 0), recentGapShare()
	if u < g {
		return joinsUntil.AddDate(0, 0, int(u/g*float64(days(joinsUntil, reference))))
	}
	return from.AddDate(0, 0, int((u-g)/(1-g)*float64(days(from, joinsUntil))))
}

// recentGapShare is the share g of the recent hires who join in the gap after Generate's joins,
// such that every day of the quitYears has as many starters: with h the recent hires' share,
// Generate's other joins are (1 − h)/(14·365) of the employees a day; the recent hires before
// the gap h(1 − g)/before, those in it hg/gap. Their sum before the gap equals the rate in it
// when g = ((1 − h)/(14·365) + h/before) / (h/gap + h/before). With h = 0.16, gap = 155 days
// (28 December 2025 to 31 May 2026) and before = 941 (1 June 2023 to 27 December 2025):
// (0.0001644 + 0.0001700) / (0.0010323 + 0.0001700) = 0.278, a rate of 0.00029 of the
// employees a day: about 260 starters a year on a 2,500-person account.
func recentGapShare() float64 {
	h := float64(recentHirePercent) / 100
	gap := float64(days(joinsUntil, reference))
	before := float64(days(reference.AddDate(-quitYears, 0, 0), joinsUntil))
	return ((1-h)/(14*365) + h/before) / (h/gap + h/before)
}

// days is the whole days from a to b.
func days(a, b time.Time) int { return int(b.Sub(a).Hours() / 24) }

// leftAfter is the last day employed of someone who joined on join and has left by the data's
// today: one of the n days from the day after joining to the day before today, the day after
// joining plus the whole days of the point u (in [0, 1)) of an exponential distribution of mean
// meanTenureDays cut to [0, n).
func leftAfter(join time.Time, u float64) time.Time {
	n := max(1, int(reference.Sub(join).Hours()/24)-1)
	days := -meanTenureDays * math.Log(1-u*(1-math.Exp(-float64(n)/meanTenureDays)))
	return join.AddDate(0, 0, 1+min(int(days), n-1))
}

// leavingDate is the leaving_date member of someone leaving on left: null when they are not
// leaving, and for the Ex-employees of an account that did not record it.
func (x *accountDraws) leavingDate(left time.Time) any {
	if left.IsZero() || (x.undated && left.Before(reference)) {
		return nil
	}
	return left.Format(time.DateOnly)
}

// country is the statutory_holiday_country member of an employee at location (0: none) who
// receives statutory holidays or not: the office's country (London and Manchester England and
// Wales, Dublin Ireland, Kraków Poland, Lisboa Portugal); for the remote and those of no
// location mostly England and Wales, some Scotland, a few Northern Ireland; null where the
// account does not record it (mostly those who do not receive them).
func (x *accountDraws) country(location int64, receives bool) any {
	if (receives && x.recorded >= recordedPercent) || (!receives && x.recorded >= recordedWithoutPercent) {
		return nil
	}
	// Indexes of statutoryHolidayCountries (account.go), whose names the collection serves.
	const englandAndWales, scotland, northernIreland, ireland, poland, portugal = 0, 1, 2, 3, 4, 5
	c := englandAndWales
	switch location {
	case 701, 702: // London, Manchester
	case 703: // Dublin
		c = ireland
	case 704: // Kraków
		c = poland
	case 705: // Lisboa
		c = portugal
	default: // Remote, or no location
		switch {
		case x.region >= 92:
			c = northernIreland
		case x.region >= 75:
			c = scotland
		}
	}
	return nestedRef(statutoryHolidayCountries[c])
}

// futureStamps are a future starter's created_at and updated_at: the record was made one to
// 46 days before the data's today, and last changed that day or a day later.
func (x *accountDraws) futureStamps(created time.Time) (time.Time, time.Time) {
	c := reference.Add(-time.Duration(24+x.made)*time.Hour + time.Duration(created.Second()+60*created.Minute())*time.Second)
	return c, c.Add(time.Duration(x.made%24) * time.Hour)
}

// accountPatterns are the working patterns of GenerateAccount's account: WorkingPatterns and
// the zero-hours pattern some of its employees work.
func accountPatterns() []json.RawMessage {
	return append(WorkingPatterns(), zeroHours.record())
}
