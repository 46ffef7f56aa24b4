package jsonscan_test

import (
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// naivePos is the definition Positions must agree with: the line holding
// off and the number of characters from the line's start, plus one.
func naivePos(data []byte, off int) [2]int {
	off = min(off, len(data))
	start := strings.LastIndexByte(string(data[:off]), '\n') + 1
	return [2]int{strings.Count(string(data[:off]), "\n") + 1, utf8.RuneCount(data[start:off]) + 1}
}

// TestPositionsMatchNaive checks the one-pass line/column computation
// against counting each offset from scratch, on text with multi-byte and
// invalid UTF-8, offsets in any order, repeated, inside a rune and past
// the end.
func TestPositionsMatchNaive(t *testing.T) {
	data := []byte("{\"a\": \"é€😀\",\n  \"b\": [1, \xff\xfe 2],\n\n\"c\": \"😀😀\" }")
	r := rand.New(rand.NewSource(7))
	for round := 0; round < 200; round++ {
		offs := make([]int, r.Intn(12))
		for i := range offs {
			offs[i] = r.Intn(len(data) + 3)
		}
		want := make([][2]int, len(offs))
		for i, off := range offs {
			want[i] = naivePos(data, off)
		}
		if diff := cmp.Diff(want, jsonscan.Positions(data, offs)); diff != "" {
			t.Fatalf("offsets %v (-naive +positions):\n%s", offs, diff)
		}
	}
}

// TestPositions pins a few positions by hand: a line's first byte is
// column 1, a newline ends its line, columns count runes, an offset past
// the end is clamped.
func TestPositions(t *testing.T) {
	got := jsonscan.Positions([]byte("ab\ncé"), []int{99, 0, 2, 3, 6, 4})
	want := [][2]int{{2, 3}, {1, 1}, {1, 3}, {2, 1}, {2, 3}, {2, 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
