package ui

import (
	"regexp"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Wrap fits every line of s into width terminal cells (0: no limit). A
// longer line is broken at spaces only, never inside a word, so a path,
// an ID or a hyphenated name stays whole on one line when it fits one (a
// word longer than the room is cut), and its continuation lines are
// indented by the line's own indent plus two spaces, so a wrapped item
// still reads as one. A style open at a break is closed before it and
// opened again after the indent (see CloseStyles). mask (the
// invocation's redact.Scanner.Mask; nil masks nothing) runs first, so a
// fold never splits a secret into halves no gate recognises.
func Wrap(s string, width int, mask func(string) string) string {
	if width <= 0 {
		return s
	}
	if mask != nil {
		s = mask(s)
	}
	lines := strings.Split(s, "\n")
	var out []string
	for _, line := range lines {
		if ansi.StringWidth(line) <= width {
			out = append(out, line)
			continue
		}
		plain := ansi.Strip(line)
		indent := plain[:len(plain)-len(strings.TrimLeft(plain, " "))]
		cont := indent + "  "
		if len(cont) >= width/2 {
			cont = ""
		}
		parts := fold(line, width, width-len(cont))
		for i := range parts {
			if i > 0 {
				parts[i] = cont + parts[i]
			}
			parts[i] = strings.TrimRight(parts[i], " ")
		}
		out = append(out, strings.Split(CloseStyles(strings.Join(parts, "\n")), "\n")...)
	}
	return strings.Join(out, "\n")
}

// fold breaks line at spaces into lines of at most first cells, then
// rest cells; a word wider than its line is cut hard. Runs of spaces
// inside a line are kept; those at a break are dropped.
func fold(line string, first, rest int) []string {
	var out []string
	var cur strings.Builder
	curW, limit, started := 0, first, false
	flush := func() {
		out = append(out, cur.String())
		cur.Reset()
		curW, limit, started = 0, rest, false
	}
	for i, w := range strings.Split(line, " ") {
		ww := ansi.StringWidth(w)
		sep := 0
		if i > 0 {
			sep = 1
		}
		if started && curW+sep+ww > limit && strings.TrimSpace(ansi.Strip(cur.String())) != "" {
			flush()
			sep = 0
		}
		if !started && ww == 0 && len(out) > 0 {
			continue // a blank at a break
		}
		if curW+sep+ww > limit {
			// Too wide for a line of its own: cut it.
			pieces := strings.Split(ansi.Hardwrap(w, max(limit-curW-sep, 1), true), "\n")
			if sep == 1 {
				cur.WriteByte(' ')
			}
			cur.WriteString(pieces[0])
			for _, p := range pieces[1:] {
				flush()
				cur.WriteString(p)
				curW = ansi.StringWidth(p)
			}
			started = true
			continue
		}
		if sep == 1 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
		curW += sep + ww
		started = started || ww > 0 || i == 0
	}
	if cur.Len() > 0 || len(out) == 0 {
		out = append(out, cur.String())
	}
	return out
}

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// CloseStyles ends every line of s with its styles closed: a line whose
// last SGR escape leaves a style on gets a reset before the line feed, and
// the next line opens the same escapes again after its leading blanks. A
// pager, a CI log or grep then sees each line stand alone, never
// "\e[2mhint…\n\e[0m".
func CloseStyles(s string) string {
	if !strings.Contains(s, "\x1b[") || !strings.Contains(s, "\n") {
		return s
	}
	lines := strings.Split(s, "\n")
	open := "" // the escapes in force at the end of the previous line
	for i, line := range lines {
		if open != "" {
			trimmed := strings.TrimLeft(line, " ")
			line = line[:len(line)-len(trimmed)] + open + trimmed
		}
		open = ""
		for _, m := range sgr.FindAllString(line, -1) {
			if m == "\x1b[0m" || m == "\x1b[m" {
				open = ""
			} else {
				open += m
			}
		}
		if open != "" && i < len(lines)-1 {
			line += "\x1b[0m"
		}
		lines[i] = line
	}
	return strings.Join(lines, "\n")
}
