package hrreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The charts are drawn here as numbers for the template's SVG elements: nothing is computed
// in the page, and the page loads nothing.

// palette colours the series of a chart (departments in their order), cycled beyond its end;
// chosen to stay apart for the common kinds of colour blindness.
var palette = []string{"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#999999"}

// dashes tell apart the series that share a colour once the palette has cycled: the first
// round solid, the second dashed, the third dotted, and so on around again.
var dashes = []string{"", "8 4", "2 3", "8 3 2 3"}

// seriesStyle is the colour and dash of a chart's i-th series.
func seriesStyle(i int) (colour, dash string) {
	return palette[i%len(palette)], dashes[(i/len(palette))%len(dashes)]
}

// totalColour draws the total of a line chart.
const totalColour = "#222222"

// Chart geometry, in SVG user units: the plot is inset from the frame by the margins.
const (
	chartWidth   = 880
	chartHeight  = 300
	marginLeft   = 56
	marginRight  = 170 // the legend
	marginTop    = 40
	marginBottom = 44
)

type label struct {
	X, Y float64
	Text string
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

type legendItem struct {
	X, Y   float64
	Colour string
	Dash   string // a line's: drawn as a short dashed stroke, not a swatch
	Name   string
}

// chart is one SVG chart.
type chart struct {
	ID, Title     string
	Width, Height int
	Grid          []gridLine
	GridClass     string // the grid's labels: axis-y (left of a line) or axis-x (below one)
	XLabels       []label
	RowLabels     []label // a horizontal bar chart's, right-aligned before its bars
	Series        []series
	Bars          []rect
	Legend        []legendItem
	Unit          string // what the y axis counts, beside it
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

// number writes v the short way: no trailing zeros, at most 2 decimals.
func number(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// monthLabel is "Jan 25" of "2025-01-01".
func monthLabel(month string) string {
	if len(month) < 7 {
		return month
	}
	names := [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	m, err := strconv.Atoi(month[5:7])
	if err != nil || m < 1 || m > 12 {
		return month
	}
	return names[m-1] + " " + month[2:4]
}

// frame is a chart's plot area and its axes for months (x) and a scale up to max (y).
type frame struct {
	c       *chart
	months  []string
	top     float64
	plotW   float64
	plotH   float64
	slot    float64 // the width of one month
	percent bool
}

func newFrame(id, title, unit string, months []string, max float64, percent, whole bool) *frame {
	c := &chart{ID: id, Title: title, Width: chartWidth, Height: chartHeight, Unit: unit, GridClass: "axis-y"}
	f := &frame{c: c, months: months, plotW: chartWidth - marginLeft - marginRight,
		plotH: chartHeight - marginTop - marginBottom, percent: percent}
	f.slot = f.plotW / float64(max1(len(months)))
	top, step := niceScale(max, whole)
	f.top = top
	for v := 0.0; v <= top+step/2; v += step {
		y := f.y(v)
		text := number(v)
		if percent {
			text = number(v*100) + " %"
		}
		c.Grid = append(c.Grid, gridLine{X1: marginLeft, Y1: y, X2: marginLeft + f.plotW, Y2: y,
			Label: label{X: marginLeft - 6, Y: y + 4, Text: text}})
	}
	// Every month's label where there is room, else every other (or third…).
	every := (len(months) + 11) / 12
	for i, m := range months {
		if i%every == 0 || i == len(months)-1 && len(months) <= 12 {
			c.XLabels = append(c.XLabels, label{X: f.x(i), Y: chartHeight - marginBottom + 18, Text: monthLabel(m)})
		}
	}
	return f
}

func max1(n int) int { return max(n, 1) }

// x is the middle of month i's slot.
func (f *frame) x(i int) float64 { return marginLeft + f.slot*(float64(i)+0.5) }

// y is value v's height.
func (f *frame) y(v float64) float64 { return marginTop + f.plotH*(1-v/f.top) }

func (f *frame) legend(i int, colour, dash, name string) {
	f.c.Legend = append(f.c.Legend, legendItem{X: chartWidth - marginRight + 16, Y: float64(marginTop + 8 + 20*i), Colour: colour, Dash: dash, Name: name})
}

// line adds a series of values by month (NaN: no point), dashed as dash (empty: solid).
func (f *frame) line(name, colour, dash string, width float64, values []float64) {
	s := series{Name: name, Colour: colour, Dash: dash, Width: width}
	var pts []string
	for i, v := range values {
		if math.IsNaN(v) {
			continue
		}
		x, y := f.x(i), f.y(v)
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		text := number(v)
		if f.percent {
			text = number(v*100) + " %"
		}
		s.Dots = append(s.Dots, label{X: x, Y: y, Text: name + ", " + monthLabel(f.months[i]) + ": " + text})
	}
	s.Points = strings.Join(pts, " ")
	f.legend(len(f.c.Series), colour, dash, name)
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
		f.legend(g, grp.colour, "", grp.name)
	}
}

type barGroup struct {
	name, colour string
	values       []float64
}

// hbarRow is one row of a horizontal stacked bar chart.
type hbarRow struct {
	name  string
	parts []float64 // by the chart's kinds
}

// hbars is a horizontal stacked bar chart: a row per name, its parts side by side by kind.
func hbars(id, title string, kinds []string, rows []hbarRow) *chart {
	rowH := 28.0
	h := int(marginTop + rowH*float64(len(rows)) + marginBottom)
	c := &chart{ID: id, Title: title, Width: chartWidth, Height: h, Unit: "days", GridClass: "axis-x"}
	left := 160.0
	plotW := float64(chartWidth) - left - marginRight
	maxSum := 0.0
	for _, r := range rows {
		sum := 0.0
		for _, p := range r.parts {
			sum += p
		}
		maxSum = max(maxSum, sum)
	}
	top, step := niceScale(maxSum, false)
	bottom := marginTop + rowH*float64(len(rows))
	for v := 0.0; v <= top+step/2; v += step {
		x := left + plotW*v/top
		c.Grid = append(c.Grid, gridLine{X1: x, Y1: marginTop, X2: x, Y2: bottom, Label: label{X: x, Y: bottom + 16, Text: number(v)}})
	}
	for i, r := range rows {
		y := marginTop + rowH*float64(i)
		c.RowLabels = append(c.RowLabels, label{X: left - 8, Y: y + rowH/2 + 4, Text: r.name})
		x := left
		for k, p := range r.parts {
			if p <= 0 {
				continue
			}
			w := plotW * p / top
			c.Bars = append(c.Bars, rect{X: x, Y: y + 4, W: w, H: rowH - 8, Colour: palette[k%len(palette)],
				Title: r.name + ", " + kinds[k] + ": " + number(p)})
			x += w
		}
	}
	for k, name := range kinds {
		c.Legend = append(c.Legend, legendItem{X: chartWidth - marginRight + 16, Y: float64(marginTop + 8 + 20*k), Colour: palette[k%len(palette)], Name: name})
	}
	return c
}
