// Package ctrf reads the Common Test Report Format (ctrf.json, ctrf.io):
// the report a verifier's test runner writes (pytest-json-ctrf and
// others), of which tpctl keeps the failed tests and their messages as
// the verifier's own words about an attempt.
package ctrf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxSize caps the report tpctl reads: a report of a few thousand tests
// with their traces fits; a larger one is not read (the caller falls back
// to the verifier's output).
const MaxSize = 8 << 20

// Statuses of a test (CTRF's).
const (
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
	StatusPending = "pending"
	StatusOther   = "other"
)

// Report is what tpctl reads of a CTRF report.
type Report struct {
	// Tests counts every test of the report.
	Tests int
	// Failed are the tests whose status is failed, in report order.
	Failed []Test
}

// Test is one test: its name and the first line of its message (else of
// its trace's last line), "" when it has none.
type Test struct {
	Name    string
	Message string
}

// report is the document's shape (CTRF 1.0: results.summary, results.tests).
type report struct {
	Results *struct {
		Summary *struct {
			Tests  *int `json:"tests"`
			Failed *int `json:"failed"`
		} `json:"summary"`
		Tests []struct {
			Name    string `json:"name"`
			Status  string `json:"status"`
			Message string `json:"message"`
			Trace   string `json:"trace"`
		} `json:"tests"`
	} `json:"results"`
}

// ErrNotCTRF is wrapped by Parse's error for a document that is JSON but
// has no results.
var ErrNotCTRF = errors.New("not a CTRF report: no results.tests or results.summary")

// Parse reads a CTRF report. Unknown members are ignored (the format grows
// by adding them); a member of the wrong type, or no results, is an error.
func Parse(data []byte) (*Report, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("the report is %d bytes, over the %d tpctl reads", len(data), MaxSize)
	}
	var doc report
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not a CTRF report: %w", err)
	}
	if dec.More() {
		return nil, errors.New("not a CTRF report: data after the document")
	}
	res := doc.Results
	if res == nil || (res.Tests == nil && res.Summary == nil) {
		return nil, ErrNotCTRF
	}
	r := &Report{Tests: len(res.Tests)}
	for _, t := range res.Tests {
		if t.Status != StatusFailed {
			continue
		}
		msg := firstLine(t.Message)
		if msg == "" {
			msg = lastLine(t.Trace)
		}
		r.Failed = append(r.Failed, Test{Name: oneLine(t.Name), Message: msg})
	}
	// A report that lists no tests may still count them.
	if len(res.Tests) == 0 && res.Summary != nil && res.Summary.Tests != nil && *res.Summary.Tests > 0 {
		r.Tests = *res.Summary.Tests
		if f := res.Summary.Failed; f != nil && *f > 0 {
			for range min(*f, r.Tests) {
				r.Failed = append(r.Failed, Test{})
			}
		}
	}
	return r, nil
}

// Headline is the count of failed tests: "2 of 3 tests failed".
func (r *Report) Headline() string {
	noun := "tests"
	if r.Tests == 1 {
		noun = "test"
	}
	return fmt.Sprintf("%d of %d %s failed", len(r.Failed), r.Tests, noun)
}

// Line is the report in one line for a detail: "2 of 3 tests failed:
// test_a — AssertionError: expected 42, got 41; test_b — …", cut to max
// bytes at a character boundary with "…".
func (r *Report) Line(max int) string {
	var b strings.Builder
	b.WriteString(r.Headline())
	for i, t := range r.Failed {
		if t.Name == "" {
			continue
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(t.Name)
		if t.Message != "" {
			b.WriteString(" — " + t.Message)
		}
	}
	return Cut(b.String(), max)
}

// Text is the report a test a line, headline first, cut to max bytes at a
// line or character boundary with "…".
func (r *Report) Text(max int) string {
	lines := []string{r.Headline() + ":"}
	for _, t := range r.Failed {
		if t.Name == "" {
			continue
		}
		l := t.Name
		if t.Message != "" {
			l += " — " + t.Message
		}
		lines = append(lines, l)
	}
	if len(lines) == 1 {
		lines[0] = r.Headline()
	}
	return Cut(strings.Join(lines, "\n"), max)
}

// Cut cuts s to at most max bytes at a character boundary, ending it with
// "…" when it cut.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max - len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if n < 0 {
		n = 0
	}
	return s[:n] + "…"
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = oneLine(l); l != "" {
			return l
		}
	}
	return ""
}

func lastLine(s string) string {
	ls := strings.Split(s, "\n")
	for i := len(ls) - 1; i >= 0; i-- {
		if l := oneLine(ls[i]); l != "" {
			return l
		}
	}
	return ""
}

// oneLine is s trimmed, its control characters spaces, at most 300 bytes.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return Cut(strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD")), 300)
}
