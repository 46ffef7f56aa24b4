package jsonscan

import (
	"bytes"
	"sort"
	"unicode/utf8"
)

// Positions converts byte offsets in data to 1-based lines and columns,
// columns counting characters (UTF-8 runes), in one forward pass over
// the offsets in ascending order: however many offsets there are, data is
// scanned once (counting each column from the start of its line made a
// document written on one line cost O(offsets × size)).
// pos[i] belongs to offs[i]; offsets past the end are clamped to it.
func Positions(data []byte, offs []int) (pos [][2]int) {
	order := make([]int, len(offs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return offs[order[a]] < offs[order[b]] })
	pos = make([][2]int, len(offs))
	line, lineStart, prev, prevCol := 1, 0, 0, 1
	for _, i := range order {
		off := min(offs[i], len(data))
		seg := data[prev:off]
		col := 0
		if n := bytes.Count(seg, []byte{'\n'}); n > 0 {
			line += n
			lineStart = prev + bytes.LastIndexByte(seg, '\n') + 1
			col = utf8.RuneCount(data[lineStart:off]) + 1
		} else if prev < len(data) && !utf8.RuneStart(data[prev]) {
			// prev splits a rune: counting from it would differ from
			// counting the whole line, so count the line.
			col = utf8.RuneCount(data[lineStart:off]) + 1
		} else {
			// Rune counts add up across a boundary at a rune start.
			col = prevCol + utf8.RuneCount(seg)
		}
		pos[i] = [2]int{line, col}
		prev, prevCol = off, col
	}
	return pos
}
