package jcs

import (
	"strings"
	"testing"
)

// plainLenBytewise is PlainLen one byte at a time.
func plainLenBytewise(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
	}
	return len(s)
}

// TestPlainLen: every byte value, at any of twenty positions, stops the
// plain prefix exactly where the comparisons stop it.
func TestPlainLen(t *testing.T) {
	for c := 0; c < 256; c++ {
		for n := 0; n < 20; n++ {
			for _, base := range []string{"a", "~", " ", "\x7f"} {
				s := strings.Repeat(base, n) + string(rune(0)) + "bcdefghijklmnop"
				s = s[:n] + string([]byte{byte(c)}) + s[n+1:]
				if got, want := PlainLen(s), plainLenBytewise(s); got != want {
					t.Fatalf("PlainLen(%q) = %d, want %d", s, got, want)
				}
				if got, want := PlainLen([]byte(s)), plainLenBytewise(s); got != want {
					t.Fatalf("PlainLen([]byte(%q)) = %d, want %d", s, got, want)
				}
			}
		}
	}
}

func FuzzPlainLen(f *testing.F) {
	f.Add("0123456789abcdef\"")
	f.Add("bench/task-00000#10\x1f")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := PlainLen(s), plainLenBytewise(s); got != want {
			t.Fatalf("PlainLen(%q) = %d, want %d", s, got, want)
		}
	})
}

// BenchmarkPlainLen scans a SHA-256 digest in hex, as PlainLen and as
// the four comparisons a byte AppendString made.
func BenchmarkPlainLen(b *testing.B) {
	s := []byte(strings.Repeat("b4cb88b99d42cf07", 4) + `"`)
	b.Run("table", func(b *testing.B) {
		for b.Loop() {
			PlainLen(s)
		}
	})
	b.Run("comparisons", func(b *testing.B) {
		for b.Loop() {
			plainLenBytewise(string(s))
		}
	})
}
