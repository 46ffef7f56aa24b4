package redact

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// scanAlwaysJoined is Scanner.scan as it was before joinedClean: the
// line-joined view of the most decoded text is always searched.
func (s *Scanner) scanAlwaysJoined(text string) []Hit {
	counts := make([]int, len(s.values)+len(s.patterns))
	s.count(text, candidates(text), counts)
	last := text
	if decodable(text) {
		for _, v := range decodedViews(text, false) {
			s.count(v.text, candidates(v.text), counts)
			last = v.text
		}
	}
	if j, ok := joinedText(last); ok {
		s.count(j, candidates(j), counts)
	}
	return s.hits(counts)
}

// joinedScanner knows a short and a longer value, so windows of both
// sizes are exercised; with long set also one longer than a window side,
// which always takes the joined view.
func joinedScanner(long bool) *Scanner {
	env := []string{"TUNEPLANE_JOB_TOKEN=tok-" + strings.Repeat("Jq7", 6), "MY_SECRET=" + strings.Repeat("Zq8/x", 10)}
	if long {
		env = append(env, "LONG_TOKEN="+strings.Repeat("Lk9\\y", 30))
	}
	return NewScanner(env)
}

// joinedPieces are what the random texts are made of: secrets and
// prefilter literals whole and in halves, line breaks, escapes, filler.
func joinedPieces() []string {
	p := []string{"\n", "\r\n", "\n\n", "\r", `\n`, `\\`, `\u0041`, "&amp;", "~1", " ", "x", "token ", "ok 0.1s\n"}
	whole := []string{fakeGitHub, fakeOpenAI, fakeAnthropic, fakeAWSID, fakeGoogle, fakeSlack, fakeHF, fakeGitHubPAT,
		"tok-" + strings.Repeat("Jq7", 6), strings.Repeat("Zq8/x", 10), strings.Repeat("Lk9\\y", 30), "-----BEGIN RSA PRIVATE KEY-----", "Bearer abcdefghijklmnop", "secret=abcdefgh12345678"}
	for _, d := range detectors {
		whole = append(whole, d.pre...)
	}
	for _, w := range whole {
		p = append(p, w)
		for _, cut := range []int{1, len(w) / 2, len(w) - 1} {
			if cut > 0 && cut < len(w) {
				p = append(p, w[:cut], w[cut:])
			}
		}
	}
	return p
}

// TestJoinedCleanAgrees checks that skipping the joined view changes no
// scan: random texts built from whole and split secrets, line breaks and
// escapes get the same hits from Scan as from always searching it.
func TestJoinedCleanAgrees(t *testing.T) {
	scanners := []*Scanner{joinedScanner(false), joinedScanner(true)}
	pieces := joinedPieces()
	splittable := []string{fakeGitHub, fakeAWSID, fakeHF, "tok-" + strings.Repeat("Jq7", 6), strings.Repeat("Zq8/x", 10),
		strings.Repeat("Lk9\\y", 30), "-----BEGIN RSA PRIVATE KEY-----", "Bearer abcdefghijklmnop"}
	rng := rand.New(rand.NewPCG(26, 1))
	skipped, joined := 0, 0
	for range 20000 {
		// Half the texts are mostly plain lines with a few pieces, as
		// transcripts are; the others any mix.
		plain := rng.IntN(2) == 0
		var b strings.Builder
		for range 1 + rng.IntN(30) {
			p := pieces[rng.IntN(len(pieces))]
			if plain && rng.IntN(8) != 0 {
				p = strings.Repeat("lorem ipsum ", rng.IntN(20)) + []string{"\n", "\r\n", ""}[rng.IntN(3)]
			} else if rng.IntN(4) == 0 {
				p = strings.Repeat("lorem ipsum ", rng.IntN(20))
			}
			b.WriteString(p)
		}
		if rng.IntN(3) == 0 {
			// One secret or literal folded by line breaks, in plain lines.
			w := splittable[rng.IntN(len(splittable))]
			cut := 1 + rng.IntN(len(w)-1)
			br := []string{"\n", "\r\n", "\n\n", "\n  \n"}[rng.IntN(4)]
			b.WriteString(w[:cut] + br + w[cut:] + "\n" + strings.Repeat("dolor ", rng.IntN(5)))
		}
		text := b.String()
		s := scanners[rng.IntN(2)]
		got, want := s.Scan("", text), s.scanAlwaysJoined(text)
		if !slices.Equal(got, want) {
			t.Fatalf("Scan(%q) = %v, want %v (the joined view always searched)", text, got, want)
		}
		if strings.ContainsAny(text, "\r\n") {
			if s.joinedClean(text, candidates(text), len(want) > 0) {
				skipped++
			} else {
				joined++
			}
		}
	}
	t.Logf("joined view skipped %d times, searched %d times", skipped, joined)
	// Both paths must have been taken for the test to mean anything.
	if skipped < 100 || joined < 100 {
		t.Fatalf("joined view skipped %d times, searched %d times: the inputs miss a path", skipped, joined)
	}
}

// FuzzJoinedClean: Scan agrees with always searching the joined view.
func FuzzJoinedClean(f *testing.F) {
	for _, p := range joinedPieces() {
		f.Add(p + "\n" + p)
	}
	f.Add("gh\np_" + strings.Repeat("a1B2", 9))
	f.Add("tok-Jq7Jq7\r\nJq7Jq7Jq7Jq7")
	scanners := []*Scanner{joinedScanner(false), joinedScanner(true)}
	f.Fuzz(func(t *testing.T, text string) {
		for _, s := range scanners {
			if got, want := s.Scan("", text), s.scanAlwaysJoined(text); !slices.Equal(got, want) {
				t.Fatalf("Scan(%q) = %v, want %v", text, got, want)
			}
		}
	})
}
