package ctrf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in    string
		line, text  string
		err         string
		failed, all int
	}{
		{name: "two of three", in: `{"results":{"tool":{"name":"pytest"},"summary":{"tests":3,"passed":1,"failed":2},"tests":[
			{"name":"test_output_matches_golden","status":"failed","message":"AssertionError: expected 42, got 41\nassert 41 == 42","trace":"..."},
			{"name":"test_file_exists","status":"passed"},
			{"name":"test_format","status":"failed","message":"","trace":"Traceback\n  File x\nValueError: bad format\n"}]}}`,
			line: "2 of 3 tests failed: test_output_matches_golden — AssertionError: expected 42, got 41; test_format — ValueError: bad format",
			text: "2 of 3 tests failed:\ntest_output_matches_golden — AssertionError: expected 42, got 41\ntest_format — ValueError: bad format", failed: 2, all: 3},
		{name: "none failed", in: `{"results":{"tests":[{"name":"a","status":"passed"}]}}`, line: "0 of 1 test failed", text: "0 of 1 test failed", all: 1},
		{name: "summary only", in: `{"results":{"summary":{"tests":4,"failed":1}}}`, line: "1 of 4 tests failed", text: "1 of 4 tests failed", failed: 1, all: 4},
		{name: "unknown members", in: `{"reportFormat":"CTRF","specVersion":"1.0.0","results":{"tests":[{"name":"t","status":"failed","message":"m","extra":{"x":1}}],"environment":{}}}`,
			line: "1 of 1 test failed: t — m", text: "1 of 1 test failed:\nt — m", failed: 1, all: 1},
		{name: "control characters", in: `{"results":{"tests":[{"name":"t\u001b[2J","status":"failed","message":"bad\tthing"}]}}`,
			line: "1 of 1 test failed: t [2J — bad thing", text: "1 of 1 test failed:\nt [2J — bad thing", failed: 1, all: 1},
		{name: "no results", in: `{"tests":[]}`, err: "no results"},
		{name: "wrong type", in: `{"results":{"tests":{"name":"x"}}}`, err: "not a CTRF report"},
		{name: "not JSON", in: `PASSED 3 tests`, err: "not a CTRF report"},
		{name: "two documents", in: `{"results":{"tests":[]}} {}`, err: "data after"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Failed) != tc.failed || r.Tests != tc.all {
				t.Errorf("report %+v", r)
			}
			if got := r.Line(400); got != tc.line {
				t.Errorf("Line = %q, want %q", got, tc.line)
			}
			if got := r.Text(2048); got != tc.text {
				t.Errorf("Text = %q, want %q", got, tc.text)
			}
		})
	}
	if _, err := Parse([]byte(`{}`)); !errors.Is(err, ErrNotCTRF) {
		t.Errorf("{}: err = %v", err)
	}
}

func TestCut(t *testing.T) {
	long := `{"results":{"tests":[` + strings.Repeat(`{"name":"tést_long_name_ünïcode","status":"failed","message":"AssertionError: é"},`, 200) + `{"name":"z","status":"passed"}]}}`
	r, err := Parse([]byte(long))
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{10, 400, 2048} {
		for _, s := range []string{r.Line(max), r.Text(max)} {
			if len(s) > max || !utf8.ValidString(s) || !strings.HasSuffix(s, "…") {
				t.Errorf("max %d: %d bytes, valid %v: %q…", max, len(s), utf8.ValidString(s), s[:min(40, len(s))])
			}
		}
	}
}

// FuzzParse: any input gives a report or an error, never a panic, and
// what it gives stays within its bounds as valid UTF-8.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"results":{"tests":[{"name":"a","status":"failed","message":"x\ny"}]}}`))
	f.Add([]byte(`{"results":{"summary":{"tests":2,"failed":9}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Parse(b)
		if err != nil {
			return
		}
		if len(r.Failed) > max(r.Tests, 0) && r.Tests > 0 {
			t.Errorf("%d failed of %d", len(r.Failed), r.Tests)
		}
		for _, s := range []string{r.Line(400), r.Text(2048)} {
			if !utf8.ValidString(s) || len(s) > 2048 {
				t.Errorf("bad text %q", s)
			}
		}
	})
}
