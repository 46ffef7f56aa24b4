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
	// Mask masks the secrets of the invocation in every cell before a
	// cut could halve one (redact.Scanner.Mask, passed by cmd/tpctl); nil
	// masks nothing.
	Mask func(string) string
}

// minWrapped is the least room WrapLast wraps a last column into.
const minWrapped = 24

// gap is the space between two columns.
const gap = 2

// Columns writes t aligned in columns within width terminal cells (0: no
// limit). A table wider than width has its elidable columns cut, widest
// first, down to MinElided; if it is still too wide, every row is stacked:
// its first cell on a line, then one indented "name  value" line per
// other column, each value elided to fit. Trailing blanks are trimmed.
func Columns(w io.Writer, width int, t Table) error {
	// Masked before a cut could halve a secret.
	if t.Mask != nil {
		t.Header = maskCells(t.Mask, t.Header)
		t.Rows = append([][]string(nil), t.Rows...)
		for i, r := range t.Rows {
			t.Rows[i] = maskCells(t.Mask, r)
		}
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
		lines[i] = Wrap(l, width, nil)
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
func maskCells(mask func(string) string, r []string) []string {
	var out []string
	for i, c := range r {
		if m := mask(c); m != c {
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
