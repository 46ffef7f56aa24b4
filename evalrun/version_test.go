package evalrun

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/redact"
)

func TestVersionAnswer(t *testing.T) {
	cases := []struct{ out, want string }{
		{"0.22.0\n", "0.22.0"},
		{"  0.3.0  \n\n", "0.3.0"},
		// Python warnings printed while Harbor imports come first.
		{"/usr/lib/python3/site-packages/x.py:3: UserWarning: deprecated\n  warnings.warn(\n0.22.0\n", "0.22.0"},
		{"0.23.0.dev1+g4407eb5\n", "0.23.0.dev1+g4407eb5"},
		{"harbor, version 1\n", "harbor, version 1"},
		{"", VersionUnknown},
		{"\n \n", VersionUnknown},
	}
	for _, c := range cases {
		if got := versionAnswer(nil, c.out); got != c.want {
			t.Errorf("versionAnswer(%q) = %q, want %q", c.out, got, c.want)
		}
	}
}

func FuzzVersionAnswer(f *testing.F) {
	for _, s := range []string{"0.22.0\n", "warn\n0.3.0\n", "", "x\ny", "1.2\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		got := versionAnswer(nil, out)
		if got == "" || utf8.RuneCountInString(got) > 80 {
			t.Fatalf("versionAnswer(%q) = %q", out, got)
		}
		if got != versionAnswer(nil, out) {
			t.Fatal("not deterministic")
		}
	})
}

// TestVersionAnswerMasksBeforeClip: a child's answer is masked before it
// is cut to fit a message (issue 35), so a known secret straddling the cut
// shows no part of itself: cut first, its head would pass unrecognised.
func TestVersionAnswerMasksBeforeClip(t *testing.T) {
	const tok = "tok-9f8e7d6c5b4a3210ffee"
	sc := redact.NewScanner([]string{"TUNEPLANE_JOB_TOKEN=" + tok})
	for _, at := range []int{20, 45, 60, 70, 75, 78, 79} {
		out := "Traceback: " + strings.Repeat("x", at-len("Traceback: ")) + tok + " rest of the line\n"
		got := versionAnswer(sc, out)
		if strings.Contains(got, "tok-9f8") || strings.Contains(got, "ffee") {
			t.Errorf("secret at %d: %q shows part of the token", at, got)
		}
		if at <= 45 && !strings.Contains(got, "[REDACTED") {
			t.Errorf("secret at %d: %q does not say it masked one", at, got)
		}
		if n := utf8.RuneCountInString(got); n > 80 {
			t.Errorf("secret at %d: %q is %d runes", at, got, n)
		}
	}
}
