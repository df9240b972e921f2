package hrreport

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The page writes months as "Jul 2024" and days as "30 Jun 2026" everywhere (axes, ranges,
// tables): "Jul 24" reads as the 24th of July.

var monthNames = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// monthOf is the year and month (1-12) of "2024-07-01" (a month is its first day); ok false
// when month is not a date.
func monthOf(month string) (year, m int, ok bool) {
	t, err := time.Parse(time.DateOnly, month[:min(len(month), len(time.DateOnly))])
	if err != nil {
		return 0, 0, false
	}
	return t.Year(), int(t.Month()), true
}

// monthLabel is "Jul 2024" of "2024-07-01"; what it cannot read, as it is.
func monthLabel(month string) string {
	y, m, ok := monthOf(month)
	if !ok {
		return month
	}
	return monthNames[m-1] + " " + strconv.Itoa(y)
}

// monthRange is "Jul 2024 to Jun 2026" of its first and last month, or the one month.
func monthRange(first, last string) string {
	if first == last {
		return monthLabel(first)
	}
	return monthLabel(first) + " to " + monthLabel(last)
}

// dayLabel is "30 Jun 2026" of "2026-06-30"; what it cannot read, as it is.
func dayLabel(day string) string {
	t, err := time.Parse(time.DateOnly, day[:min(len(day), len(time.DateOnly))])
	if err != nil {
		return day
	}
	return strconv.Itoa(t.Day()) + " " + monthNames[t.Month()-1] + " " + strconv.Itoa(t.Year())
}

// number writes v the short way: no trailing zeros, at most 2 decimals, thousands grouped with
// commas ("1,806.12").
func number(v float64) string {
	v = math.Round(v*100) / 100
	if v == 0 {
		v = 0 // no "-0"
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		return sign + b.String() + "." + frac
	}
	return sign + b.String()
}

// fixed writes v with exactly places decimals and its thousands grouped ("26.10", "1,806.12"),
// for a table's column, whose decimals line up.
func fixed(v float64, places int) string {
	s := number(v)
	whole, frac, _ := strings.Cut(s, ".")
	if places == 0 {
		return number(math.Round(v))
	}
	return whole + "." + (frac + strings.Repeat("0", places))[:places]
}

// count writes a whole number with its thousands grouped.
func count(n int64) string { return number(float64(n)) }

// percent writes a fraction as a percentage to 1 decimal ("4.2 %"); "–" when not known.
func percent(v float64, ok bool) string {
	if !ok || math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(math.Round(v*1000)/10, 'f', 1, 64) + " %"
}

// plural is "1 person", "2 people": n and the noun it takes.
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return count(n) + " " + many
}

// naturalCompare orders strings as people read them: runs of digits by their value ("Dept 2"
// before "Dept 10"), the rest letter by letter without regard to case, and where two read the
// same (leading zeros, case), by their bytes, so that the order is total.
func naturalCompare(a, b string) int {
	if c := naturalFold(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func naturalFold(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if isDigit(ra) && isDigit(rb) {
			da, db := digits(a), digits(b)
			ta, tb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
			if len(ta) != len(tb) {
				return cmpInt(len(ta), len(tb))
			}
			if c := strings.Compare(ta, tb); c != 0 {
				return c
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if ra != rb {
			fa, fb := unicode.ToLower(ra), unicode.ToLower(rb)
			if fa != fb {
				return cmpInt(int(fa), int(fb))
			}
		}
		a, b = a[na:], b[nb:]
	}
	return cmpInt(len(a), len(b))
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// digits is the run of ASCII digits s begins with.
func digits(s string) string {
	i := 0
	for i < len(s) && isDigit(rune(s[i])) {
		i++
	}
	return s[:i]
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// textWidth estimates how wide s is drawn in a sans-serif font of size px, erring wide (the
// widest common fallback, DejaVu Sans, is the yardstick): what the charts lay text out by,
// since the page runs no script to measure it.
func textWidth(s string, px float64) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) ||
			unicode.Is(unicode.Hangul, r) || r >= 0xff00 && r <= 0xffef:
			w += 1.0
		case r == ' ' || r == '.' || r == ',' || r == '\'' || r == 'i' || r == 'l' || r == 'j' || r == '|' || r == '’':
			w += 0.34
		case unicode.IsUpper(r) || r == 'm' || r == 'w' || r == '%' || r == '@':
			w += 0.8
		default:
			w += 0.64
		}
	}
	return w * px
}

// fitText is s cut, with an ellipsis, to be at most width wide at px; s when it fits.
func fitText(s string, width, px float64) string {
	if textWidth(s, px) <= width {
		return s
	}
	runes := []rune(s)
	for n := len(runes) - 1; n > 0; n-- {
		t := strings.TrimRightFunc(string(runes[:n]), unicode.IsSpace) + "…"
		if textWidth(t, px) <= width {
			return t
		}
	}
	return "…"
}
