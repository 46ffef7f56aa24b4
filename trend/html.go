package trend

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/snapshot"
)

//go:embed page.tmpl
var pageTmpl string

var page = template.Must(template.New("trend").Funcs(template.FuncMap{
	"pct":      pct,
	"interval": interval,
	"inc":      func(i int) int { return i + 1 },
	"signed":   signedPct,
	"paired":   pairedInterval,
	"family":   familyInterval,
	"cut":      cut,
	"cost":     costCell,
	"usd":      usdCell,
	"bounds":   boundsCell,
}).Parse(pageTmpl))

// costCell is a round's known spend, with its coverage when partial; "—"
// when nothing is known (never $0).
func costCell(c snapshot.Cost) string {
	switch {
	case c.USDAllAttempts == nil:
		return "—"
	case c.WithCost < c.Attempts:
		return fmt.Sprintf("%s (%d of %d attempts)", snapshot.USD(*c.USDAllAttempts), c.WithCost, c.Attempts)
	}
	return snapshot.USD(*c.USDAllAttempts)
}

// boundsCell is a degraded round's worst and best case of the success
// rate (Manski bounds); "" when every planned trial was scored.
func boundsCell(b *snapshot.RateBounds) string {
	if b == nil || b.NotScored == 0 {
		return ""
	}
	return fmt.Sprintf("worst–best case %.1f–%.1f%% (%d of %d planned trials not scored)", 100*b.WorstCase, 100*b.BestCase, b.NotScored, b.Planned)
}

func usdCell(v *float64) string {
	if v == nil {
		return "—"
	}
	return snapshot.USD(*v)
}

// HTML renders the trend as one self-contained page: no script, no
// request, an inline SVG chart that reads without colour (markers and
// line styles carry the meaning, every value is written), the task ×
// round table and the regressions.
func HTML(r *Result) ([]byte, error) {
	data := struct {
		*Result
		Chart     template.HTML
		Cells     [][]cellView
		Regressed []Pair
	}{Result: r, Chart: template.HTML(chart(r))}
	for _, t := range r.Tasks {
		row := make([]cellView, len(t.Rounds))
		for j, c := range t.Rounds {
			row[j] = cellOf(c)
			if j > 0 {
				prev := t.Rounds[j-1]
				switch {
				case c.Scored > 0 && prev.Scored > 0 && c.Success*prev.Scored < prev.Success*c.Scored:
					row[j].Mark, row[j].Title = "▼", "fewer successes than the round before"
				case c.Scored > 0 && prev.Scored > 0 && c.Success*prev.Scored > prev.Success*c.Scored:
					row[j].Mark, row[j].Title = "▲", "more successes than the round before"
				}
			}
		}
		data.Cells = append(data.Cells, row)
	}
	for _, p := range r.Pairs {
		// A pair that is not comparable has no regressions to name: its
		// success counts measure different things (the pairs table says why).
		if p.Kind == PairAdjacent && p.Comparable && len(p.Regressed) > 0 {
			data.Regressed = append(data.Regressed, p)
		}
	}
	var b bytes.Buffer
	if err := page.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

type cellView struct {
	Text, Mark, Title, Class string
}

func cellOf(c TaskCell) cellView {
	v := cellView{Text: fmt.Sprintf("%d/%d", c.Success, c.Scored)}
	switch {
	case c.Scored == 0:
		v.Text, v.Class = "—", "none"
	case c.Success == c.Scored:
		v.Class = "all"
	case c.Success == 0:
		v.Class = "zero"
	}
	if c.Scored < c.Planned {
		v.Text += fmt.Sprintf(" of %d", c.Planned)
		v.Title = fmt.Sprintf("%d of %d planned trials not scored", c.Planned-c.Scored, c.Planned)
	}
	return v
}

// Chart geometry, in SVG user units.
const (
	chartW, chartH         = 960, 360
	padL, padR, padT, padB = 56, 72, 28, 72
)

// chart draws the success rate of each round with its intervals: a solid
// whisker for Wilson, a dashed box for task-clustered; a filled circle for
// a clean round, a hollow square for a degraded one; the rate written
// above each point.
func chart(r *Result) string {
	var b strings.Builder
	n := len(r.Rounds)
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	x := func(i int) float64 {
		if n == 1 {
			return padL + plotW/2
		}
		return padL + plotW*(0.04+0.92*float64(i)/float64(n-1))
	}
	y := func(v float64) float64 { return padT + plotH*(1-v) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-labelledby="chart-title chart-desc" class="chart">`, chartW, chartH)
	b.WriteString(`<title id="chart-title">Success rate per round with 95% intervals</title>`)
	var desc []string
	for i, p := range r.Rounds {
		desc = append(desc, fmt.Sprintf("round %d %s: %s, Wilson %s, clustered %s, %s", i+1, p.Checkpoint.Ref, pct(p.SuccessRate), interval(p.SuccessRateCI95), interval(p.SuccessRateCI95Clustered), p.Label))
	}
	fmt.Fprintf(&b, `<desc id="chart-desc">%s</desc>`, template.HTMLEscapeString(strings.Join(desc, "; ")))
	for _, g := range []float64{0, 0.25, 0.5, 0.75, 1} {
		fmt.Fprintf(&b, `<line class="grid" x1="%d" x2="%d" y1="%s" y2="%s"/>`, padL, chartW-padR, f(y(g)), f(y(g)))
		fmt.Fprintf(&b, `<text class="axis" x="%d" y="%s" text-anchor="end">%d%%</text>`, padL-8, f(y(g)+4), int(g*100))
	}
	// The line through the rates, broken where a round has none.
	var path []string
	for i, p := range r.Rounds {
		if p.SuccessRate == nil {
			if len(path) > 1 {
				fmt.Fprintf(&b, `<polyline class="rate" points="%s"/>`, strings.Join(path, " "))
			}
			path = nil
			continue
		}
		path = append(path, f(x(i))+","+f(y(*p.SuccessRate)))
	}
	if len(path) > 1 {
		fmt.Fprintf(&b, `<polyline class="rate" points="%s"/>`, strings.Join(path, " "))
	}
	half := min(14, plotW/float64(max(n, 1))/3)
	// A 12-unit label is about 7 units a character; each needs its slot
	// (the space between two rounds), the outer ones half of it inside the
	// chart.
	slot := plotW * 0.92 / float64(max(n-1, 1))
	if n == 1 {
		slot = plotW
	}
	refsFit := true
	for _, p := range r.Rounds {
		w := 7 * float64(utf8.RuneCountInString(tail(p.Checkpoint.Ref)))
		refsFit = refsFit && w <= slot-8 && w/2 <= padL+plotW*0.04
	}
	labelEvery := max(1, (n+23)/24) // at most about 24 axis labels
	for i, p := range r.Rounds {
		cx := x(i)
		if ci := p.SuccessRateCI95Clustered; ci != nil {
			fmt.Fprintf(&b, `<rect class="clustered" x="%s" y="%s" width="%s" height="%s"/>`, f(cx-half), f(y(ci[1])), f(2*half), f(max(0.5, y(ci[0])-y(ci[1]))))
		}
		if ci := p.SuccessRateCI95; ci != nil {
			fmt.Fprintf(&b, `<path class="wilson" d="M%s %sV%sM%s %sH%sM%s %sH%s"/>`, f(cx), f(y(ci[0])), f(y(ci[1])),
				f(cx-half/2), f(y(ci[0])), f(cx+half/2), f(cx-half/2), f(y(ci[1])), f(cx+half/2))
		}
		if p.SuccessRate != nil {
			cy := y(*p.SuccessRate)
			if p.Label == snapshot.LabelClean {
				fmt.Fprintf(&b, `<circle class="clean" cx="%s" cy="%s" r="5"><title>round %d: %s (clean)</title></circle>`, f(cx), f(cy), i+1, pct(p.SuccessRate))
			} else {
				fmt.Fprintf(&b, `<rect class="degraded" x="%s" y="%s" width="10" height="10"><title>round %d: %s (degraded)</title></rect>`, f(cx-5), f(cy-5), i+1, pct(p.SuccessRate))
			}
			if n <= 40 {
				// Above the higher of the two intervals, so no edge crosses it.
				top := *p.SuccessRate
				for _, ci := range []*[2]float64{p.SuccessRateCI95, p.SuccessRateCI95Clustered} {
					if ci != nil {
						top = max(top, ci[1])
					}
				}
				ty := y(top) - 6
				fmt.Fprintf(&b, `<text class="value" x="%s" y="%s" text-anchor="middle">%s</text>`, f(cx), f(max(12, ty)), pct(p.SuccessRate))
			}
		}
		if i%labelEvery == 0 || i == n-1 {
			fmt.Fprintf(&b, `<text class="axis" x="%s" y="%d" text-anchor="middle">%d</text>`, f(cx), chartH-padB+18, i+1)
			// The checkpoint under its number only when every one fits
			// whole in its slot: a cut label names no checkpoint (the
			// rounds table below has each in full, by the same number).
			if refsFit {
				fmt.Fprintf(&b, `<text class="axis ref" x="%s" y="%d" text-anchor="middle">%s</text>`, f(cx), chartH-padB+34, template.HTMLEscapeString(tail(p.Checkpoint.Ref)))
			}
		}
	}
	// Legend: shapes and line styles, each named.
	ly := chartH - 14
	fmt.Fprintf(&b, `<g class="legend"><circle class="clean" cx="%d" cy="%d" r="5"/><text x="%d" y="%d">clean round</text>`, padL, ly-4, padL+10, ly)
	fmt.Fprintf(&b, `<rect class="degraded" x="%d" y="%d" width="10" height="10"/><text x="%d" y="%d">degraded round</text>`, padL+115, ly-9, padL+131, ly)
	fmt.Fprintf(&b, `<path class="wilson" d="M%d %dV%d"/><text x="%d" y="%d">Wilson 95%% interval</text>`, padL+268, ly-12, ly+2, padL+278, ly)
	fmt.Fprintf(&b, `<rect class="clustered" x="%d" y="%d" width="14" height="14"/><text x="%d" y="%d">task-clustered 95%% interval</text></g>`, padL+440, ly-11, padL+460, ly)
	b.WriteString(`</svg>`)
	return b.String()
}

// tail is the part of a checkpoint ref after its last '/' or '@' that
// still names it (hf://org/model@rev → model@rev).
func tail(ref string) string {
	if i := strings.LastIndexByte(ref, '/'); i >= 0 && i < len(ref)-1 {
		return ref[i+1:]
	}
	return ref
}
