package redact

import "testing"

func TestScrubShortSecret(t *testing.T) {
	for _, tc := range []struct{ text, secret, want string }{
		{"http://tuneplane.example/", "t", "http://tuneplane.example/"},
		{"x tok-0123456789 y", "tok-0123456789", "x [REDACTED] y"},
		{"nothing", "", "nothing"},
	} {
		if got := Scrub(tc.text, tc.secret); got != tc.want {
			t.Errorf("Scrub(%q, %q) = %q, want %q", tc.text, tc.secret, got, tc.want)
		}
	}
}
