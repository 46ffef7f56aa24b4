package report_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tuneplane/tpctl/internal/benchcmd"
)

func TestMain(m *testing.M) {
	code := m.Run()
	benchcmd.Cleanup()
	os.Exit(code)
}

// BenchmarkReportCmd times the built tpctl writing the report of a
// generated Harbor round of 10,000 and 100,000 trials, `--out FILE`
// alternating with `--out -` (whose floor is --out FILE: the same page,
// the same read), in TPCTL_BENCH_ROUNDS alternating pairs after one
// untimed warm-up: the median wall time and the peak RSS (measured by
// /usr/bin/time, internal/benchcmd) of each. The targets (issue 36):
// under 256 MiB at 100k, and --out - costing what --out FILE costs.
func BenchmarkReportCmd(b *testing.B) {
	bin := benchcmd.Tpctl(b, "..")
	n := benchcmd.Rounds(b)
	for _, trials := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("trials=%d", trials), func(b *testing.B) {
			if testing.Short() && trials > 10_000 {
				b.Skip("-short: the 10,000-trial case only")
			}
			snap := harborRound(b, trials, 0)
			work := b.TempDir()
			usage := filepath.Join(work, "usage")
			out := filepath.Join(work, "round.html")
			type sample struct{ wall, rss []float64 }
			var file, stdout sample
			for i := -1; i < n; i++ {
				f := benchcmd.Time(b, usage, bin, "report", snap, "--out", out, "--force")
				s := benchcmd.Time(b, usage, bin, "report", snap, "--out", "-")
				page, err := os.ReadFile(out)
				if err != nil {
					b.Fatal(err)
				}
				if !bytes.Equal(s.Output, page) {
					b.Fatalf("--out - wrote %d bytes, --out FILE %d: the pages differ", len(s.Output), len(page))
				}
				if i < 0 {
					continue
				}
				file.wall, file.rss = append(file.wall, f.Wall.Seconds()), append(file.rss, f.RSSMiB())
				stdout.wall, stdout.rss = append(stdout.wall, s.Wall.Seconds()), append(stdout.rss, s.RSSMiB())
			}
			fw, sw := benchcmd.SpreadOf(file.wall), benchcmd.SpreadOf(stdout.wall)
			b.Logf("report of %d trials: --out FILE wall s %v, peak RSS %.1f MiB; --out - wall s %v, peak RSS %.1f MiB",
				trials, fw, slices.Max(file.rss), sw, slices.Max(stdout.rss))
			b.ReportMetric(fw.Med, "file-s")
			b.ReportMetric(slices.Max(file.rss), "file-peak-RSS-MiB")
			b.ReportMetric(sw.Med, "stdout-s")
			b.ReportMetric(slices.Max(stdout.rss), "stdout-peak-RSS-MiB")
		})
	}
}
