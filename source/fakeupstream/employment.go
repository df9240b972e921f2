package fakeupstream

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"time"
)

// What GenerateAccount's employees carry beyond Generate's, as the real service sends it where
// an account records it (UPSTREAM.md): a leaving date, a statutory holiday country, and among
// them a few zero-hours staff and a few future starters. Each employee draws the same number of
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
	return x
}

// dates are the join date and the leaving day of an employee of status who joined on join in
// Generate's record: a future starter's join date moves after the data's today; an
// Ex-employee left after joining and before the data's today; a Pending leaver leaves within
// the next one to three months.
func (x *accountDraws) dates(status string, join time.Time) (time.Time, time.Time) {
	switch status {
	case "Current employee":
		if x.future {
			return reference.AddDate(0, 0, x.startsIn), time.Time{}
		}
	case "Ex-employee":
		return join, leftAfter(join, x.tenure)
	case "Pending leaver":
		return join, reference.AddDate(0, 1, x.notice)
	}
	return join, time.Time{}
}

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
