package trend_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/internal/benchcmd"
)

// BenchmarkTrendCmd times the built tpctl over 100 rounds of one protocol,
// 1,000 trials each (100 tasks × 10 correlated repeats, comparetest.Grid),
// given in reverse checkpoint order: `tpctl trend --order checkpoint` to
// the terminal view, and with --out to the HTML page. Every round is
// verified first, as the command always does. The target (issue 23) is
// under 2 s. TPCTL_BENCH_ROUNDS sets the timed runs (default 5; one
// untimed warm-up first); the median is reported with min and max, peak
// RSS from /usr/bin/time when present (internal/benchcmd).
func BenchmarkTrendCmd(b *testing.B) {
	const rounds, tasks, repeats = 100, 100, 10
	work := b.TempDir()
	bin := filepath.Join(work, "tpctl")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/tpctl").CombinedOutput(); err != nil {
		b.Fatalf("go build ../cmd/tpctl: %v\n%s", err, out)
	}
	var dirs []string
	for i := range rounds {
		// A rate that climbs with the step, with noise: round i's chance
		// is the base difficulty plus a lift of up to 30 points.
		_, trials := comparetest.Grid(tasks, repeats, 7, 0.3*float64(i)/rounds)
		d := filepath.Join(work, fmt.Sprintf("round-%03d", i))
		if _, err := comparetest.Build(d, comparetest.Spec{Checkpoint: fmt.Sprintf("hf://acme/m@step-%d", (i+1)*500), Trials: trials}); err != nil {
			b.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	slices.Reverse(dirs)
	n := 5
	if v := os.Getenv("TPCTL_BENCH_ROUNDS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("TPCTL_BENCH_ROUNDS=%q: want a positive count", v)
		}
	}
	usage := filepath.Join(work, "usage")
	for _, bc := range []struct {
		name string
		args func(i int) []string
	}{
		{"text", func(int) []string { return nil }},
		{"html", func(i int) []string { return []string{"--out", filepath.Join(work, fmt.Sprintf("trend-%d.html", i+1))} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var wall, cpu, rss []float64
			for i := -1; i < n; i++ {
				args := append(append([]string{bin, "trend", "--order", "checkpoint", "--no-color"}, dirs...), bc.args(i)...)
				r := benchcmd.Time(b, usage, args...)
				if !strings.Contains(string(r.Output), "trend over 100 rounds of one protocol") {
					b.Fatalf("tpctl trend printed:\n%.2000s", r.Output)
				}
				if i >= 0 {
					wall, cpu, rss = append(wall, r.Wall.Seconds()), append(cpu, r.CPU.Seconds()), append(rss, float64(r.RSSKiB)/1024)
				}
			}
			ws, cs := benchcmd.SpreadOf(wall), benchcmd.SpreadOf(cpu)
			b.Logf("trend over %d rounds of %d trials (%s): wall s %v; CPU s median %.3f; peak RSS %.1f MiB",
				rounds, tasks*repeats, bc.name, ws, cs.Med, slices.Max(rss))
			b.ReportMetric(ws.Med, "s/run")
			b.ReportMetric(cs.Med, "cpu-s")
			b.ReportMetric(slices.Max(rss), "peak-RSS-MiB")
		})
	}
}
