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
