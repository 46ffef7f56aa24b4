package redact

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// The plain regexp path is the definition the fast path must agree with:
// every detector's expression run over the whole text, with no
// prefilter, no prefix search without \b (findFast) and no proof that the
// line-joined view is clean (joinedClean).

// plainRedact is builtin:secrets by its expressions alone: each detector
// replaces its matches in turn, then what the scan finds once the text is
// decoded or its folds joined is masked, as Redact does.
func plainRedact(s string) string {
	for _, d := range detectors {
		s = d.redact(s)
	}
	if decodable(s) || hasLineBreak(s) {
		s = patternsOnly().Mask(s)
	}
	return s
}

// plainScan is Scan by the expressions alone: every view (the text, its
// decoded views, the line-joined view of the most decoded one, joined
// word by word) searched
// for every value form and with every pattern's own expression.
func (s *Scanner) plainScan(text string) []Hit {
	counts := make([]int, len(s.values)+len(s.patterns))
	count := func(v string) {
		for i, val := range s.values {
			n := 0
			for _, f := range val.forms {
				n += strings.Count(v, f)
			}
			counts[i] = max(counts[i], n)
		}
		for j, p := range s.patterns {
			counts[len(s.values)+j] = max(counts[len(s.values)+j], len(p.findRegexp(v)))
		}
	}
	count(text)
	last := text
	for _, v := range decodedViews(text, false) {
		count(v.text)
		last = v.text
	}
	if j, ok := joinedTextRef(last); ok {
		count(j)
	}
	return s.hits(counts)
}

// joinedTextRef is joinedText word by word, as it was: the definition
// the piecewise copy must agree with.
func joinedTextRef(text string) (string, bool) {
	if !hasLineBreak(text) {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		j := i
		for j < len(text) && !isBlank(text[j]) {
			j++
		}
		b.WriteString(text[i:j])
		if j == len(text) {
			break
		}
		end, fold := blankRun(text, j)
		if !fold {
			b.WriteString(text[j:end])
		}
		i = end
	}
	return b.String(), true
}

// FuzzFastVsPlain: builtin:secrets (Redact and RedactPrefiltered, the
// transcript path) gives the same text as the plain regexp path, and the
// scan of the input and of the redacted text (Scan, and ScanPrefiltered
// given redaction's prefilter result) finds what the plain scan finds.
func FuzzFastVsPlain(f *testing.F) {
	for _, s := range append(slices.Clone(prefilterSeeds), joinedPieces()...) {
		f.Add(s)
	}
	key := strings.Repeat("a1B2", 9)
	for _, s := range []string{"task-" + key, "x sk-" + key + " Bearer " + key, "ghp_" + key + "\n", "gh\np_" + key,
		`{"content":"token \u0067hp_` + key + `"}`, "ok   github.com/x/pkg\t0.1s coverage: 81.2% of statements\n" + fakeGitHub,
		"-----BEGIN00000PRIVATE KEY\n-----", "AWS_SECRET_ACCESS_KEY=" + fakeAWSSecret, "aws_secret\n_key=" + fakeAWSSecret,
		// The known values, in lines, folded and escaped.
		"job-secret-1234\nok", "job-secret\n-1234", `{"text":"o'brien+x\n"}`, `pw o\u0027brien+x\tdone`, "job-secret-1234"} {
		f.Add(s)
	}
	sc := NewScanner([]string{"TUNEPLANE_JOB_TOKEN=job-secret-1234", "DB_PASSWORD=o'brien+x"})
	f.Fuzz(func(t *testing.T, s string) {
		j, ok := joinedText(s)
		if jr, okr := joinedTextRef(s); j != jr || ok != okr {
			t.Fatalf("joinedText(%q) = %q, %v; word by word %q, %v", s, j, ok, jr, okr)
		}
		want := plainRedact(s)
		if got, _ := Secrets().Redact(context.Background(), s); got != want {
			t.Fatalf("Redact(%q) = %q, plain path %q", s, got, want)
		}
		red, c, err := Secrets().(PrefilterRedactor).RedactPrefiltered(context.Background(), s)
		if err != nil || red != want {
			t.Fatalf("RedactPrefiltered(%q) = %q, %v; plain path %q", s, red, err, want)
		}
		if got, want := sc.Scan("f", s), sc.plainScan(s); !slices.Equal(got, want) {
			t.Fatalf("Scan(%q) = %v, plain scan %v", s, got, want)
		}
		if got, want := sc.ScanPrefiltered("f", red, c), sc.plainScan(red); !slices.Equal(got, want) {
			t.Fatalf("ScanPrefiltered(%q) = %v, plain scan %v", red, got, want)
		}
	})
}
