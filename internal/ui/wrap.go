package ui

import (
	"regexp"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Wrap fits every line of s into width terminal cells (0: no limit). A
// longer line is broken between words (a word longer than the room is
// cut), and its continuation lines are indented by the line's own indent
// plus two spaces, so a wrapped item still reads as one. A style open at a
// break is closed before it and opened again after the indent (see
// CloseStyles).
func Wrap(s string, width int) string {
	if width <= 0 {
		return s
	}
	// Masked before a fold could split a secret (SetMask).
	s = masked(s)
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
		parts, tight := wrapLines(line, width)
		if len(parts) > 1 {
			// Wrap the rest again at the narrower width left by the
			// indent.
			rest := parts[1]
			for i, p := range parts[2:] {
				if !tight[i+1] {
					rest += " "
				}
				rest += p
			}
			more, _ := wrapLines(rest, width-len(cont))
			parts = append(parts[:1], more...)
			for i := 1; i < len(parts); i++ {
				parts[i] = cont + strings.TrimLeft(parts[i], " ")
			}
		}
		for i := range parts {
			parts[i] = strings.TrimRight(parts[i], " ")
		}
		out = append(out, strings.Split(CloseStyles(strings.Join(parts, "\n")), "\n")...)
	}
	return strings.Join(out, "\n")
}

// wrapLines is ansi.Wrap of s at width, split into lines, with any line
// it leaves too wide (a word of exactly width cells followed by a hyphen
// it breaks after) cut hard. tight[i] is whether line i+1 continues line
// i without a space (a break after a hyphen, or a word cut), for joining
// them again: read off the text itself, where a break between words
// leaves a blank.
func wrapLines(s string, width int) (lines []string, tight []bool) {
	for _, l := range strings.Split(ansi.Wrap(s, width, " "), "\n") {
		if ansi.StringWidth(l) > width {
			lines = append(lines, strings.Split(ansi.Hardwrap(l, width, true), "\n")...)
			continue
		}
		lines = append(lines, l)
	}
	rest := ansi.Strip(s)
	for _, l := range lines {
		rest = strings.TrimPrefix(strings.TrimLeft(rest, " "), strings.TrimSpace(ansi.Strip(l)))
		tight = append(tight, rest != "" && rest[0] != ' ')
	}
	return lines, tight
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
