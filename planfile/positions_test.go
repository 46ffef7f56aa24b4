package planfile

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// naivePos is the definition positions must agree with: the line holding
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
		if diff := cmp.Diff(want, positions(data, offs)); diff != "" {
			t.Fatalf("offsets %v (-naive +positions):\n%s", offs, diff)
		}
	}
}

// TestLocateSkipsUnwantedValues checks that pointers are found past values
// that are skipped without being decoded (strings with escaped quotes,
// nested containers, numbers and literals).
func TestLocateSkipsUnwantedValues(t *testing.T) {
	data := []byte(`{"s":"x\"}]","n":[[{"q":[1,2.5e3,true,null]}],{}],"t":[{"k\u0061":-1},{"w":"v"}]}`)
	want := map[string]int{"": -1, "/t": -1, "/t/1": -1, "/t/1/w": -1, "/t/0": -1, "/t/0/ka": -1, "/t/9": -1}
	locate(data, want)
	got := map[string]int{}
	for k, v := range want {
		got[k] = v
	}
	exp := map[string]int{"": 0, "/t": 50, "/t/0": 55, "/t/0/ka": 56, "/t/1": 70, "/t/1/w": 71, "/t/9": 50}
	if diff := cmp.Diff(exp, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestDuplicatesFirstOccurrence pins which earlier entry a duplicate
// names, for trials, folders and retries (including a trial with more
// attempts than are compared directly): always the first in file order.
func TestDuplicatesFirstOccurrence(t *testing.T) {
	atts := []any{}
	for r := 0; r < 20; r++ {
		atts = append(atts, map[string]any{"retry": r % 6, "dir": fmt.Sprintf("m/%d", r)})
	}
	p := basePlan()
	p["trials"] = []any{
		map[string]any{"task": "t", "repeat": 1, "attempts": []any{map[string]any{"retry": 0, "dir": "d/a"}}},
		map[string]any{"task": "t", "repeat": 1, "attempts": []any{map[string]any{"retry": 0, "dir": "d//a"}}},
		map[string]any{"task": "t", "repeat": "1"},
		map[string]any{"task": "t", "repeat": 1, "attempts": []any{map[string]any{"retry": 0, "dir": "d/a"}, map[string]any{"retry": 0, "dir": "e"}}},
		map[string]any{"task": "u", "repeat": 0, "attempts": atts},
	}
	_, fs := Parse(mustJSON(t, p), "plan.json", Options{})
	var got []string
	for _, f := range fs {
		if strings.HasPrefix(f.Code, "duplicate_") {
			got = append(got, f.Pointer+" "+f.Message)
		}
	}
	want := []string{
		`/trials/1 trial "t#1" is planned twice (first at /trials/0)`,
		`/trials/1/attempts/0/dir folder "d//a" is already used at /trials/0/attempts/0/dir`,
		`/trials/3 trial "t#1" is planned twice (first at /trials/0)`,
		`/trials/3/attempts/0/dir folder "d/a" is already used at /trials/0/attempts/0/dir`,
		`/trials/3/attempts/1/retry retry 0 appears twice in trial "t#1" (first at /trials/3/attempts/0)`,
	}
	for r := 6; r < 20; r++ {
		want = append(want, fmt.Sprintf(`/trials/4/attempts/%d/retry retry %d appears twice in trial "u#0" (first at /trials/4/attempts/%d)`, r, r%6, r%6))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}
