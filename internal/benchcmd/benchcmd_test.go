package benchcmd

import (
	"path/filepath"
	"testing"
)

func TestSpreadOf(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want Spread
	}{
		{[]float64{3}, Spread{3, 3, 3}},
		{[]float64{4, 1, 3, 2}, Spread{1, 2.5, 4}},
		{[]float64{5, 1, 9}, Spread{1, 5, 9}},
	} {
		if got := SpreadOf(c.in); got != c.want {
			t.Errorf("SpreadOf(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestTime: a child's wall and CPU time are measured and its peak RSS is
// known (from /usr/bin/time, or the rusage bound on Linux).
func TestTime(t *testing.T) {
	r := Time(t, filepath.Join(t.TempDir(), "usage"), "sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done")
	if r.Wall <= 0 || r.CPU <= 0 {
		t.Errorf("run = %+v", r)
	}
	if r.RSSKiB == 0 {
		t.Errorf("peak RSS 0 KiB")
	}
}

func TestRounds(t *testing.T) {
	t.Setenv("TPCTL_BENCH_ROUNDS", "")
	if n := Rounds(t); n != 5 {
		t.Errorf("default rounds %d", n)
	}
	t.Setenv("TPCTL_BENCH_ROUNDS", "2")
	if n := Rounds(t); n != 2 {
		t.Errorf("rounds %d", n)
	}
}
