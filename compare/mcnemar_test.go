package compare

import (
	"math"
	"testing"
)

// Expected values were computed independently in exact rational
// arithmetic with Python:
//
//	from fractions import Fraction; from math import comb
//	def p(b, c):
//	    n, k = b + c, min(b, c)
//	    if b == c: return 1.0
//	    return float(min(1, Fraction(2 * sum(comb(n, i) for i in range(k + 1)), 2 ** n)))
//
// and the small ones by hand: b=1, c=6 → 2·(C(7,0)+C(7,1))/2^7 = 16/128.
func TestMcNemar(t *testing.T) {
	tests := []struct {
		name string
		b, c int
		want float64
	}{
		{"no discordant pairs", 0, 0, 1},
		{"balanced", 7, 7, 1},
		{"one pair", 0, 1, 1},
		{"hand computed 1 vs 6", 1, 6, 0.125},
		{"hand computed 6 vs 1 (symmetric)", 6, 1, 0.125},
		{"0 vs 5", 0, 5, 0.0625},
		{"2 vs 8", 2, 8, 0.109375},
		{"3 vs 10", 3, 10, 0.09228515625},
		{"40 vs 60", 40, 60, 0.05688793364098079},
		{"600 vs 700", 600, 700, 0.0060157938610449525},
		{"1000 vs 1100 (large path)", 1000, 1100, 0.030720707864242296},
		// Large counts: 10,200 discordant pairs; lgamma-free and no
		// overflow. The normal approximation with continuity correction,
		// z = (200−1)/√10200 = 1.9704, gives ≈ 0.0488 as a sanity check.
		{"5000 vs 5200", 5000, 5200, 0.04878796312682245},
		// 2^-1999 is below the smallest float64: an honest 0, not NaN.
		{"0 vs 2000 underflows to 0", 0, 2000, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := McNemar(tt.b, tt.c)
			if math.IsNaN(got) || !closeRel(got, tt.want, 1e-11) {
				t.Errorf("McNemar(%d, %d) = %v; want %v", tt.b, tt.c, got, tt.want)
			}
		})
	}
	// Small counts are exact: no tolerance at all.
	if got := McNemar(1, 6); got != 0.125 {
		t.Errorf("McNemar(1, 6) = %v; want exactly 0.125", got)
	}
	for _, bc := range [][2]int{{-1, 3}, {3, -1}} {
		if got := McNemar(bc[0], bc[1]); !math.IsNaN(got) {
			t.Errorf("McNemar(%d, %d) = %v; want NaN for a negative count", bc[0], bc[1], got)
		}
	}
}

// TestMcNemarPathsAgree checks the floating-point path used above
// exactLimit against exact integer arithmetic on the same inputs.
func TestMcNemarPathsAgree(t *testing.T) {
	for _, n := range []int{20, 100, 1025, 3000, 10200} {
		for _, k := range []int{1, 2, n / 10, n/2 - n/20, n/2 - 1} {
			if k < 1 || 2*k >= n {
				continue
			}
			exact, approx := exactTwoSided(n, k), approxTwoSided(n, k)
			if !closeRel(exact, approx, 1e-12) {
				t.Errorf("n=%d k=%d: exact %v, approximate %v", n, k, exact, approx)
			}
		}
	}
}

func TestMcNemarProperties(t *testing.T) {
	prev := 1.0
	for c := 0; c <= 60; c++ {
		p := McNemar(0, c)
		if p > prev {
			t.Errorf("p must not grow as the imbalance grows: McNemar(0,%d) = %v > %v", c, p, prev)
		}
		prev = p
	}
}

func FuzzMcNemar(f *testing.F) {
	for _, s := range [][2]uint16{{0, 0}, {1, 6}, {5000, 5200}, {0, 1025}, {512, 513}, {65535, 0}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, b16, c16 uint16) {
		b, c := int(b16), int(c16)
		p := McNemar(b, c)
		if math.IsNaN(p) || p < 0 || p > 1 {
			t.Fatalf("McNemar(%d, %d) = %v, outside [0, 1]", b, c, p)
		}
		if q := McNemar(c, b); q != p {
			t.Fatalf("not symmetric: McNemar(%d, %d) = %v, McNemar(%d, %d) = %v", b, c, p, c, b, q)
		}
		if b == c && p != 1 {
			t.Fatalf("McNemar(%d, %d) = %v; equal counts give 1", b, c, p)
		}
		if n, k := b+c, min(b, c); n > 1 && n <= 4*exactLimit && 2*k < n {
			if e, a := exactTwoSided(n, k), approxTwoSided(n, k); e > 1e-300 && !closeRel(e, a, 1e-11) {
				t.Fatalf("n=%d k=%d: exact %v, approximate %v", n, k, e, a)
			}
		}
	})
}

func BenchmarkMcNemar(b *testing.B) {
	for _, bc := range []struct {
		name string
		b, c int
	}{{"small_1_6", 1, 6}, {"exact_500_520", 500, 520}, {"large_5000_5200", 5000, 5200}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				McNemar(bc.b, bc.c)
			}
		})
	}
}

func closeRel(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}
