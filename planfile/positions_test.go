package planfile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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

// TestSyntaxErrorsPlaced pins the wording, pointer and position of every
// kind of malformed JSON: the byte that breaks the grammar (the end of the
// input when it ends too soon), and the member or element being read
// (a missing separator belongs to the container).
func TestSyntaxErrorsPlaced(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a": [1,]}`, `/a/1 1:10 invalid JSON: unexpected character ']' looking for the beginning of a value`},
		{`{"a": [1 2]}`, `/a 1:10 invalid JSON: unexpected character '2' after an array element (expected ',' or ']')`},
		{`{"a": [1`, `/a 1:9 invalid JSON: unexpected end of input after an array element (expected ',' or ']')`},
		{`{"a": [`, `/a/0 1:8 invalid JSON: unexpected end of input (a value is missing)`},
		{"{\"a\": 1,\n \"é\" 2}", ` 2:6 invalid JSON: unexpected character '2' after a member name (expected ':')`},
		{`{"a": 1 "b"}`, ` 1:9 invalid JSON: unexpected character '"' after an object member (expected ',' or '}')`},
		{`{"a": 1, }`, ` 1:10 invalid JSON: unexpected character '}' where a member name (a string) was expected`},
		{`{"a": {`, `/a 1:8 invalid JSON: unexpected end of input where a member name (a string) was expected`},
		{`{"a": trué}`, `/a 1:10 invalid JSON: unexpected character 'é' in literal true`},
		{`{"a": nul`, `/a 1:10 invalid JSON: unexpected end of input in literal null`},
		{`{"a": -x}`, `/a 1:8 invalid JSON: unexpected character 'x' in number (expected a digit)`},
		{`{"a": 1.}`, `/a 1:9 invalid JSON: unexpected character '}' after a decimal point (expected a digit)`},
		{`{"a": 1e+`, `/a 1:10 invalid JSON: unexpected end of input in exponent (expected a digit)`},
		{"{\"a\": \"x\ty\"}", `/a 1:9 invalid JSON: control character in string (escape it, e.g. \n)`},
		{`{"a": "x`, `/a 1:9 invalid JSON: unexpected end of input in string (missing closing quote)`},
		{`{"a\q": 1}`, ` 1:5 invalid JSON: unexpected character 'q' in string escape`},
		{`{"a": "\u00g0"}`, `/a 1:12 invalid JSON: unexpected character 'g' in \u escape (expected 4 hex digits)`},
		{`{"trials": [{"task": "t", "repeat": 0} {}]}`, `/trials 1:40 invalid JSON: unexpected character '{' after an array element (expected ',' or ']')`},
		{`{"trials": [{"task": "t", "repeat": 0}, {"task": "t" "repeat": 0}]}`, `/trials/1 1:54 invalid JSON: unexpected character '"' after an object member (expected ',' or '}')`},
		{`{"trials": [{"task": "t", "repeat": 01}]}`, `/trials/0 1:38 invalid JSON: unexpected character '1' after an object member (expected ',' or '}')`},
	} {
		_, fs := Parse([]byte(tc.in), "plan.json", Options{})
		if len(fs) != 1 || fs[0].Code != CodeJSONSyntax {
			t.Errorf("%s: findings %+v, want one %s", tc.in, fs, CodeJSONSyntax)
			continue
		}
		if got := fmt.Sprintf("%s %d:%d %s", fs[0].Pointer, fs[0].Line, fs[0].Column, fs[0].Message); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}
