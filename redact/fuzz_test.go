package redact

import (
	"context"
	"testing"
)

// FuzzRedactThenScan: whatever builtin:secrets leaves, the scan's
// credential patterns do not find (the scan must only fire on what a
// redactor missed, never on builtin:secrets' own output).
func FuzzRedactThenScan(f *testing.F) {
	for _, s := range []string{fakeOpenAI, fakeAnthropic, fakeGitHub, fakeAWSID, fakeJWT, fakePEM, "aws_secret_key=" + fakeAWSSecret, "x sk-ant-" + fakeOpenAI} {
		f.Add(s)
	}
	sc := NewScanner(nil)
	f.Fuzz(func(t *testing.T, s string) {
		red, err := Secrets().Redact(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if hits := sc.Scan("f", red); len(hits) > 0 {
			t.Errorf("hits %v remain after builtin:secrets of %q: %q", hits, s, red)
		}
	})
}
