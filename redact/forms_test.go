package redact

import (
	"errors"
	"strings"
	"testing"
)

// TestForms: the forms a known secret takes that the gate knows since
// issue 35 — Python's ascii()/repr() escapes (finding 6) and an echo split
// by a tab or an indented line break (finding 8) — are found and masked
// whole; words apart by spaces alone stay apart.
func TestForms(t *testing.T) {
	const pw = "pässwörd-Geheimnis-€-\U0001F511"
	const tok = "tok-9f8e7d6c5b4a3210"
	sc := NewScanner([]string{"DB_PASSWORD=" + pw, "TUNEPLANE_JOB_TOKEN=" + tok})
	for _, tc := range []struct {
		name, text string
	}{
		{"python ascii", `OperationalError('auth failed for p\xe4ssw\xf6rd-Geheimnis-\u20ac-\U0001f511')`},
		{"python ascii in JSON", `{"exc": "auth failed: 'p\\xe4ssw\\xf6rd-Geheimnis-\\u20ac-\\U0001f511'"}`},
		{"tab split", "invalid token tok-9f8e7d6c\t5b4a3210 rejected"},
		{"indented line break", "invalid token tok-9f8e7d6c\n        5b4a3210 rejected"},
		{"CRLF and tab", "token: tok-9f8e\r\n\t7d6c5b4a3210"},
		{"escaped indented break", `{"detail": "token tok-9f8e7d6c\n    5b4a3210"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if h := sc.Scan("", tc.text); len(h) == 0 {
				t.Fatalf("scan found nothing in %q", tc.text)
			}
			m := sc.Mask(tc.text)
			if !strings.Contains(m, "[REDACTED:env:") {
				t.Fatalf("mask = %q", m)
			}
			for _, part := range []string{"ssw", "9f8e7d6c", "5b4a3210", "Geheimnis"} {
				if strings.Contains(m, part) {
					t.Errorf("mask left %q: %q", part, m)
				}
			}
		})
	}
	// Spaces alone are not a fold: "tok-9f8e7d6c 5b4a3210" is two words.
	if h := sc.Scan("", "tok-9f8e7d6c 5b4a3210"); len(h) != 0 {
		t.Errorf("two words apart by a space were taken for the token: %v", h)
	}
}

// TestCheckJSON names the field of a payload that carries a secret by
// JSON pointer, keys and nested arrays included.
func TestCheckJSON(t *testing.T) {
	const tok = "tok-9f8e7d6c5b4a3210"
	sc := NewScanner([]string{"TUNEPLANE_JOB_TOKEN=" + tok})
	for _, tc := range []struct{ doc, field string }{
		{`{"a":1,"predicate":{"plan":{"name":"x-` + tok + `"}}}`, "/predicate/plan/name"},
		{`{"subject":[{"name":"a"},{"name":"b","d":["c","` + tok + `"]}]}`, "/subject/1/d/1"},
		{`{"m":{"k/` + tok + `":true}}`, "a member name in /m"},
		{`{"x":"ok","y":null}`, ""},
	} {
		err := sc.CheckJSON("the statement", []byte(tc.doc))
		var pe *PayloadError
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.doc, err)
			}
			continue
		}
		if !errors.As(err, &pe) {
			t.Fatalf("%s: err = %v", tc.doc, err)
		}
		if pe.Field != tc.field || pe.Detector != "env:TUNEPLANE_JOB_TOKEN" {
			t.Errorf("%s: field %q detector %q", tc.doc, pe.Field, pe.Detector)
		}
		if strings.Contains(pe.Error(), tok) {
			t.Errorf("the error carries the secret: %v", pe)
		}
	}
}

// TestClip masks before it cuts: a secret longer than the room is never
// shown in part.
func TestClip(t *testing.T) {
	const tok = "tok-9f8e7d6c5b4a3210"
	sc := NewScanner([]string{"TUNEPLANE_JOB_TOKEN=" + tok})
	for _, n := range []int{5, 10, 17, 20, 30, 100} {
		got := sc.Clip("exception: login with "+tok+" failed", n)
		if strings.Contains(got, "9f8e") {
			t.Errorf("Clip(%d) = %q shows part of the token", n, got)
		}
		if r := []rune(got); len(r) > n {
			t.Errorf("Clip(%d) = %q is %d runes", n, got, len(r))
		}
	}
	if got := (*Scanner)(nil).Clip("abcdef", 4); got != "abc…" {
		t.Errorf("nil Clip = %q", got)
	}
}
