package hrreport

import (
	"fmt"
	"math"
	"strings"
)

// The charts are drawn here as numbers for the template's SVG elements: nothing is computed
// in the page, and the page loads nothing. Each chart's title and legend are HTML around its
// SVG (they wrap, as text does, whatever their length); inside the SVG only the axes' labels,
// laid out here so that none overlaps another or leaves the chart (textWidth errs wide).

// palette colours a chart's departments, in their order (the largest first): chosen to stay
// apart for the common kinds of colour blindness (Okabe and Ito's, and Tol's wine for a
// seventh). A chart shows at most maxSeries departments, so colours never repeat.
var palette = []string{"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#882255"}

// otherColour and otherDash draw the "Other departments" series: grey and dashed, a group
// rather than one department.
const (
	otherColour = "#8a8a8a"
	otherDash   = "6 4"
)

// totalColour draws the account's total.
const totalColour = "#222222"

// Chart geometry, in SVG user units (the SVG scales to the page's width, text with it).
const (
	chartWidth   = 880
	fontSize     = 12  // svg text's, as the page's style sets it
	marginTop    = 30  // above the plot: the unit's label
	marginRight  = 36  // half the last month's label
	marginBottom = 28  // below the plot: the months' labels
	unitY        = 13  // the unit label's baseline, clear of the top tick's label
	labelGap     = 14  // between two labels of the month axis, at least
	minLeft      = 36  // the plot's left edge, at least
	tickPad      = 8   // between a tick's label and the plot
	hbarRowH     = 40  // a horizontal bar chart's row: the name above, the bar below
	hbarValueW   = 64  // room right of the longest bar for its figure
	lineDotsUpTo = 36  // months: more, and a line has no dots (they would touch)
	maxLineWidth = 3.0 // the total's line
)

type label struct {
	X, Y  float64
	Text  string
	Title string // the whole text, where Text is cut
}

type gridLine struct {
	X1, Y1, X2, Y2 float64
	Label          label
}

type series struct {
	Name   string
	Colour string
	Dash   string // stroke-dasharray; empty: solid
	Width  float64
	Points string // a polyline's "x,y x,y …"
	Dots   []label
}

type rect struct {
	X, Y, W, H float64
	Colour     string
	Title      string // the bar's figure, shown on hover
}

// legendItem is one entry of a chart's legend (HTML, below the chart).
type legendItem struct {
	Colour string
	Dash   string // a line's stroke-dasharray
	Line   bool   // drawn as a stroke (a line's series), else a swatch (bars)
	Name   string
}

// chart is one figure: a title, an SVG, a legend.
type chart struct {
	ID, Title     string
	Width, Height int
	Unit          string // what the y axis counts, above its labels
	Grid          []gridLine
	GridClass     string // the grid's labels: axis-y (left of a line) or axis-x (below one)
	XLabels       []label
	RowLabels     []label // a horizontal bar chart's names, above their bars
	ValueLabels   []label // a horizontal bar chart's figures, right of their bars
	Series        []series
	Bars          []rect
	Legend        []legendItem
}

// niceScale is a maximum at or above max and its tick step (1, 2 or 5 times a power of 10),
// about five ticks; 0 and below scale to 1. whole keeps the step whole (counts).
func niceScale(max float64, whole bool) (top, step float64) {
	if max <= 0 || math.IsNaN(max) {
		if whole {
			return 1, 1
		}
		return 1, 0.2
	}
	if whole && max <= 5 { // counts of people: no tick between two whole numbers
		return math.Ceil(max), 1
	}
	raw := max / 5
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		step = m * pow
		if step >= raw {
			break
		}
	}
	return math.Ceil(max/step) * step, step
}

// labelEvery is how many months apart the month axis is labelled when a month's slot is slot
// wide: the fewest of 1, 2, 3, 6, 12… that leaves each label its width and a gap, so that the
// labels fall on the quarters, half years or years.
func labelEvery(slot float64) int {
	need := textWidth("May 2024", fontSize) + labelGap
	for _, k := range []int{1, 2, 3, 6, 12, 24, 60, 120, 240} {
		if float64(k)*slot >= need {
			return k
		}
	}
	return 240
}

// frame is a chart's plot area and its axes for months (x) and a scale up to max (y).
type frame struct {
	c       *chart
	months  []string
	top     float64
	left    float64
	plotW   float64
	plotH   float64
	slot    float64 // the width of one month
	percent bool
}

// tickText is how the y axis writes v.
func (f *frame) tickText(v float64) string {
	if f.percent {
		return number(v*100) + " %"
	}
	return number(v)
}

func newFrame(id, title, unit string, height int, months []string, max float64, percent, whole bool) *frame {
	c := &chart{ID: id, Title: title, Width: chartWidth, Height: height, Unit: unit, GridClass: "axis-y"}
	f := &frame{c: c, months: months, percent: percent, plotH: float64(height - marginTop - marginBottom)}
	if percent && !(max > 0) {
		max = 0.05 // nothing to show: a scale of 0 to 5 %, not to 100 %
	}
	top, step := niceScale(max, whole)
	f.top = top
	var ticks []float64
	widest := 0.0
	for v := 0.0; v <= top+step/2; v += step {
		ticks = append(ticks, v)
		widest = math.Max(widest, textWidth(f.tickText(v), fontSize))
	}
	f.left = math.Max(minLeft, math.Ceil(widest)+tickPad+4)
	f.plotW = chartWidth - f.left - marginRight
	f.slot = f.plotW / float64(max1(len(months)))
	for _, v := range ticks {
		y := f.y(v)
		c.Grid = append(c.Grid, gridLine{X1: f.left, Y1: y, X2: f.left + f.plotW, Y2: y,
			Label: label{X: f.left - tickPad, Y: y + 4, Text: f.tickText(v)}})
	}
	// The months labelled fall on the calendar (quarters, half years, years); with none of
	// them in range (a short report), the first.
	every := labelEvery(f.slot)
	for i, m := range months {
		y, mo, ok := monthOf(m)
		if every == 1 || ok && (y*12+mo-1)%every == 0 {
			c.XLabels = append(c.XLabels, label{X: f.x(i), Y: float64(height - marginBottom + 18), Text: monthLabel(m)})
		}
	}
	if len(c.XLabels) == 0 && len(months) > 0 {
		c.XLabels = append(c.XLabels, label{X: f.x(0), Y: float64(height - marginBottom + 18), Text: monthLabel(months[0])})
	}
	return f
}

func max1(n int) int { return max(n, 1) }

// x is the middle of month i's slot.
func (f *frame) x(i int) float64 { return f.left + f.slot*(float64(i)+0.5) }

// y is value v's height.
func (f *frame) y(v float64) float64 { return marginTop + f.plotH*(1-v/f.top) }

// line adds a series of values by month (NaN: no point), dashed as dash (empty: solid); legend
// adds it to the chart's legend.
func (f *frame) line(name, colour, dash string, width float64, values []float64, legend bool) {
	s := series{Name: name, Colour: colour, Dash: dash, Width: width}
	var pts []string
	for i, v := range values {
		if math.IsNaN(v) {
			continue
		}
		x, y := f.x(i), f.y(v)
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		if len(values) <= lineDotsUpTo || len(values) == 1 {
			s.Dots = append(s.Dots, label{X: x, Y: y, Text: name + ", " + monthLabel(f.months[i]) + ": " + f.tickText(v)})
		}
	}
	s.Points = strings.Join(pts, " ")
	if legend {
		f.c.Legend = append(f.c.Legend, legendItem{Colour: colour, Dash: dash, Line: true, Name: name})
	}
	f.c.Series = append(f.c.Series, s)
}

// bars adds side-by-side bars per month, one per group of values.
func (f *frame) bars(groups []barGroup) {
	n := float64(len(groups))
	w := f.slot * 0.8 / n
	for g, grp := range groups {
		for i, v := range grp.values {
			if v <= 0 {
				continue
			}
			x := f.x(i) - f.slot*0.4 + w*float64(g)
			y := f.y(v)
			f.c.Bars = append(f.c.Bars, rect{X: x, Y: y, W: w, H: marginTop + f.plotH - y, Colour: grp.colour,
				Title: grp.name + ", " + monthLabel(f.months[i]) + ": " + number(v)})
		}
		f.c.Legend = append(f.c.Legend, legendItem{Colour: grp.colour, Name: grp.name})
	}
}

type barGroup struct {
	name, colour string
	values       []float64
}

// hbarRow is one row of a horizontal bar chart: a name, and a fraction (its bar) or none.
type hbarRow struct {
	name   string
	value  float64
	ok     bool // a value; else "–" and no bar
	colour string
}

// rateBars is a horizontal bar chart of fractions, a row per name: the name above its bar
// (the chart's whole width, cut with an ellipsis beyond it, whole in its title), the figure
// right of the bar.
func rateBars(id, title string, rows []hbarRow) *chart {
	h := marginTop/2 + hbarRowH*len(rows) + 8
	c := &chart{ID: id, Title: title, Width: chartWidth, Height: h}
	left := 8.0
	plotW := float64(chartWidth) - left - hbarValueW
	top := 0.0
	for _, r := range rows {
		if r.ok {
			top = math.Max(top, r.value)
		}
	}
	if top <= 0 {
		top = 1
	}
	for i, r := range rows {
		y := float64(marginTop/2 + hbarRowH*i)
		name := fitText(r.name, float64(chartWidth)-2*left, fontSize)
		whole := ""
		if name != r.name {
			whole = r.name
		}
		c.RowLabels = append(c.RowLabels, label{X: left, Y: y + 12, Text: name, Title: whole})
		w := 0.0
		if r.ok {
			w = plotW * r.value / top
			c.Bars = append(c.Bars, rect{X: left, Y: y + 18, W: w, H: 12, Colour: r.colour, Title: r.name + ": " + percent(r.value, true)})
		}
		c.ValueLabels = append(c.ValueLabels, label{X: left + w + 6, Y: y + 28, Text: percent(r.value, r.ok)})
	}
	return c
}
