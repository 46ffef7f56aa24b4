package ui

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Table is rows of cells laid out in columns by Columns. Cells may carry
// styles: widths are measured in terminal cells, escape sequences not
// counted.
type Table struct {
	// Header, when set, is the first row (bold on a terminal is the
	// caller's choice) and names the columns when rows are stacked.
	Header []string
	Rows   [][]string
	// Elide marks the columns that may be cut short, with "…", to fit
	// the width (free text, IDs, paths); the others are kept whole.
	Elide []bool
	// ElideStart marks the elidable columns cut at their start ("…@step-2000")
	// rather than their end: where the end tells the rows apart, as in a
	// checkpoint's step or a path's file name.
	ElideStart []bool
	// Right marks the columns aligned right (numbers, so their digits line
	// up); the others are aligned left.
	Right []bool
	// MinElided is the width below which an elided column is not cut
	// further (default 12); past that, the rows are stacked.
	MinElided int
	// WrapLast wraps the last column (reasons, messages: text to be read
	// whole) in the room the other columns leave it, its further lines
	// starting under it, instead of cutting it; a line feed in it starts
	// a new line there. With less than minWrapped cells of room the rows
	// are stacked, the value wrapped below its name.
	WrapLast bool
	// Drop lists columns (by index) that may be left out, in this order,
	// when the table does not fit width even with its elidable columns
	// cut: a narrow terminal keeps one line a row for as long as it can,
	// and stacks the rows only when even the columns left do not fit.
	Drop []int
	// CutFirst cuts the elidable columns down to MinElided before leaving
	// any Drop column out (where the elidable column is one whose end or
	// start still tells rows apart, as a checkpoint's step does).
	CutFirst bool
}

// Fit is t with the columns of Drop left out, in order, as few as make it
// fit width, and the headers of the columns it left out. Leaving a column
// out is preferred to cutting a cell short (an ID cut is an ID lost): the
// fewest that let every cell stay whole, else the fewest that fit once the
// elidable columns are cut (with CutFirst, only the latter). t itself when it fits whole, when width is 0,
// or when even leaving out every Drop column does not make it fit
// (Columns then stacks it).
func (t Table) Fit(width int) (Table, []string) {
	if width <= 0 || len(t.Drop) == 0 || t.fits(width, t.CutFirst) {
		return t, nil
	}
	passes := []bool{false, true}
	if t.CutFirst {
		passes = []bool{true}
	}
	for _, cut := range passes {
		for n := 0; n <= len(t.Drop); n++ {
			out := t.without(t.Drop[:n])
			if !out.fits(width, cut) {
				continue
			}
			var names []string
			for _, i := range t.Drop[:n] {
				if i < len(t.Header) {
					names = append(names, t.Header[i])
				}
			}
			return out, names
		}
	}
	return t, nil
}

// fits reports whether t lays out in columns within width, not stacked:
// with every cell whole, or with the elidable columns cut as Columns
// would (cut).
func (t Table) fits(width int, cut bool) bool {
	rows := t.Rows
	if t.Header != nil {
		rows = append([][]string{t.Header}, rows...)
	}
	n := 0
	for _, r := range rows {
		n = max(n, len(r))
	}
	widths := make([]int, n)
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	if t.WrapLast && n > 0 {
		room := width - gap*(n-1)
		for _, v := range widths[:n-1] {
			room -= v
		}
		return room >= minWrapped
	}
	if !cut {
		t.Elide = nil
	}
	return fit(widths, t, width)
}

// Without is t less the columns given by index (its Drop emptied).
func (t Table) Without(columns ...int) Table { return t.without(columns) }

// without is t less the columns drop (indexes into t's columns).
func (t Table) without(drop []int) Table {
	keep := func(i int) bool {
		for _, d := range drop {
			if d == i {
				return false
			}
		}
		return true
	}
	cut := func(r []string) []string {
		var o []string
		for i, c := range r {
			if keep(i) {
				o = append(o, c)
			}
		}
		return o
	}
	cutB := func(r []bool) []bool {
		var o []bool
		for i, c := range r {
			if keep(i) {
				o = append(o, c)
			}
		}
		return o
	}
	out := t
	out.Drop = nil
	if t.Header != nil {
		out.Header = cut(t.Header)
	}
	out.Rows = make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		out.Rows[i] = cut(r)
	}
	out.Elide, out.ElideStart, out.Right = cutB(t.Elide), cutB(t.ElideStart), cutB(t.Right)
	return out
}

// minWrapped is the least room WrapLast wraps a last column into.
const minWrapped = 24

// gap is the space between two columns.
const gap = 2

// Columns writes t aligned in columns within width terminal cells (0: no
// limit). A table wider than width has its elidable columns cut, widest
// first, down to MinElided; if it is still too wide, the columns of Drop
// are left out, in order, as few as make it fit (Fit); if even that does
// not make it fit, every row is stacked:
// its first cell on a line, then one indented "name  value" line per
// other column, each value elided to fit. Trailing blanks are trimmed.
func Columns(w io.Writer, width int, t Table) error {
	t, _ = t.Fit(width)
	// Masked before a cut could halve a secret (SetMask).
	t.Header = maskCells(t.Header)
	t.Rows = append([][]string(nil), t.Rows...)
	for i, r := range t.Rows {
		t.Rows[i] = maskCells(r)
	}
	rows := t.Rows
	if t.Header != nil {
		rows = append([][]string{t.Header}, rows...)
	}
	n := 0
	for _, r := range rows {
		n = max(n, len(r))
	}
	if n == 0 {
		return nil
	}
	widths := make([]int, n)
	for _, r := range rows {
		for i, c := range r {
			if t.WrapLast && i == n-1 {
				for _, l := range strings.Split(c, "\n") {
					widths[i] = max(widths[i], ansi.StringWidth(l))
				}
				continue
			}
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	last := n - 1
	if t.WrapLast && width > 0 {
		room := width - gap*last
		for _, v := range widths[:last] {
			room -= v
		}
		if room < minWrapped {
			return stack(w, width, t)
		}
		widths[last] = min(widths[last], room)
	} else if width > 0 && !fit(widths, t, width) {
		return stack(w, width, t)
	}
	for _, r := range rows {
		var line strings.Builder
		for i, c := range r {
			if t.WrapLast && i == last {
				indent := "\n" + strings.Repeat(" ", ansi.StringWidth(line.String()))
				line.WriteString(strings.ReplaceAll(wrapCell(c, widths[i]), "\n", indent))
				break
			}
			if cw := ansi.StringWidth(c); cw > widths[i] {
				if i < len(t.ElideStart) && t.ElideStart[i] {
					c = ansi.TruncateLeft(c, cw-widths[i]+1, "…")
				} else {
					c = ansi.Truncate(c, widths[i], "…")
				}
			}
			pad := strings.Repeat(" ", widths[i]-ansi.StringWidth(c))
			if i < len(t.Right) && t.Right[i] {
				line.WriteString(pad + c)
				pad = ""
			} else {
				line.WriteString(c)
			}
			if i < len(r)-1 {
				line.WriteString(pad + strings.Repeat(" ", gap))
			}
		}
		if _, err := fmt.Fprintln(w, trimLines(line.String())); err != nil {
			return err
		}
	}
	return nil
}

// fit narrows the elidable columns of widths until the row fits width,
// reporting whether it does.
func fit(widths []int, t Table, width int) bool {
	minW := t.MinElided
	if minW <= 0 {
		minW = 12
	}
	total := func() int {
		s := gap * (len(widths) - 1)
		for _, v := range widths {
			s += v
		}
		return s
	}
	for total() > width {
		widest := -1
		for i, v := range widths {
			if i < len(t.Elide) && t.Elide[i] && v > minW && (widest < 0 || v > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			return false
		}
		// One cell at a time from the widest: the columns cut end up
		// level, not one cut to the bone while another keeps its room.
		widths[widest]--
	}
	return true
}

// stack writes each row as its first cell and then one line per other
// column, named by the header.
func stack(w io.Writer, width int, t Table) error {
	nameW := 0
	for _, h := range t.Header {
		nameW = max(nameW, ansi.StringWidth(h))
	}
	for ri, r := range t.Rows {
		if ri > 0 && t.Header != nil && len(t.Header) > 2 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		if len(r) == 0 {
			continue
		}
		if _, err := fmt.Fprintln(w, fitLine(strings.TrimRight(r[0], " "), width)); err != nil {
			return err
		}
		for i := 1; i < len(r); i++ {
			if strings.TrimSpace(ansi.Strip(r[i])) == "" {
				continue
			}
			name := ""
			if i < len(t.Header) {
				name = t.Header[i]
			}
			lead := "  " + name + strings.Repeat(" ", nameW-ansi.StringWidth(name)+gap)
			if t.WrapLast && i == len(r)-1 {
				// Beside its name, or below it when the room there is
				// too small.
				in, text := len(lead), lead
				if width-in < minWrapped {
					in, text = 4, strings.TrimRight(lead, " ")+"\n    "
				}
				text += strings.ReplaceAll(wrapCell(r[i], width-in), "\n", "\n"+strings.Repeat(" ", in))
				if _, err := fmt.Fprintln(w, trimLines(text)); err != nil {
					return err
				}
				continue
			}
			line := lead + r[i]
			if _, err := fmt.Fprintln(w, fitLine(strings.TrimRight(line, " "), width)); err != nil {
				return err
			}
		}
	}
	return nil
}

// wrapCell is a WrapLast cell folded to width: each of its lines wrapped
// (Wrap), joined by line feeds.
func wrapCell(c string, width int) string {
	lines := strings.Split(c, "\n")
	for i, l := range lines {
		lines[i] = Wrap(l, width)
	}
	return strings.Join(lines, "\n")
}

// trimLines trims the trailing blanks of every line of s.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// fitLine cuts s to width cells with "…".
func fitLine(s string, width int) string {
	if width > 0 && ansi.StringWidth(s) > width {
		return ansi.Truncate(s, width, "…")
	}
	return s
}

// maskCells is r with every cell masked (a copy when one changed).
func maskCells(r []string) []string {
	var out []string
	for i, c := range r {
		if m := masked(c); m != c {
			if out == nil {
				out = append([]string(nil), r...)
			}
			out[i] = m
		}
	}
	if out == nil {
		return r
	}
	return out
}
