package importer

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The command benchmark measures the child's peak RSS with /usr/bin/time.
// The child's own rusage cannot be used: Go starts children with
// vfork-like clone(CLONE_VM), and Linux folds the high-water RSS of the
// address space a process leaves at exec (here the test process's, which
// generated the job) into the child's ru_maxrss, so it reports the larger
// of the two (80 MiB instead of 55 at 100k). /usr/bin/time is itself such
// a child, but it reports its own child's usage, started from a small
// process. Without /usr/bin/time the rusage figure is reported as an
// upper bound. Linux-only: ru_maxrss units and /usr/bin/time -f differ
// elsewhere.

var (
	tpctlOnce sync.Once
	tpctlBin  string
	tpctlErr  error
)

// buildTpctl builds the command once per test process.
func buildTpctl(b *testing.B) string {
	b.Helper()
	tpctlOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tpctl-bench-bin-")
		if err != nil {
			tpctlErr = err
			return
		}
		benchCleanup = append(benchCleanup, func() { os.RemoveAll(dir) })
		tpctlBin = filepath.Join(dir, "tpctl")
		out, err := exec.Command("go", "build", "-o", tpctlBin, "../cmd/tpctl").CombinedOutput()
		if err != nil {
			tpctlErr = fmt.Errorf("go build ../cmd/tpctl: %v\n%s", err, out)
		}
	})
	if tpctlErr != nil {
		b.Fatal(tpctlErr)
	}
	return tpctlBin
}

// catBaseline times the README's baseline, reading every result.json of
// the job with cat, and returns the fastest of three runs (the first also
// warms the page cache for the import).
func catBaseline(b *testing.B, root string) time.Duration {
	b.Helper()
	best := time.Duration(math.MaxInt64)
	for range 3 {
		cmd := exec.Command("sh", "-c", `find "$1" -name result.json -print0 | xargs -0 cat > /dev/null`, "sh", root)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Skipf("cannot run the cat baseline (sh, find, xargs, cat): %v %s", err, out)
		}
		best = min(best, time.Since(start))
	}
	return best
}

// BenchmarkImportCmd runs the built tpctl import as a child process on
// generated jobs of 10,000 and 100,000 trials and reports what the
// performance targets are about (issue 3): wall time per import (ns/op),
// CPU time (cpu-s/op), peak resident memory of the child (peak-RSS-MiB,
// from its rusage; target < 64) and the ratio of the import's wall time to
// reading the same files with cat (x-cat; target <= 2). The 100,000-trial
// case is skipped with -short. make bench runs it.
func BenchmarkImportCmd(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("trials=%d", n), func(b *testing.B) {
			if n > 10_000 && testing.Short() {
				b.Skip("generates a 100,000-trial job; run without -short")
			}
			bin := buildTpctl(b)
			job := benchJob(b, n)
			cat := catBaseline(b, job.Root)
			outs := b.TempDir()
			timeBin, timeErr := exec.LookPath("/usr/bin/time")
			if timeErr != nil {
				b.Logf("no /usr/bin/time: peak-RSS-MiB is the child's ru_maxrss, an upper bound that includes this process's peak")
			}
			var cpu time.Duration
			var peakKiB int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out := filepath.Join(outs, strconv.Itoa(i))
				args := []string{bin, "import", "--plan", job.PlanPath, "--root", job.Root, "--out", out}
				usage := filepath.Join(outs, "usage")
				if timeErr == nil {
					args = append([]string{timeBin, "-o", usage, "-f", "%M"}, args...)
				}
				cmd := exec.Command(args[0], args[1:]...)
				if msg, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("tpctl import: %v\n%.2000s", err, msg)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				kib := int64(-1)
				if timeErr == nil {
					u, err := os.ReadFile(usage)
					if err == nil {
						kib, err = strconv.ParseInt(strings.TrimSpace(string(u)), 10, 64)
					}
					if err != nil {
						b.Fatalf("reading the peak RSS /usr/bin/time wrote: %v (%q)", err, u)
					}
				} else if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					kib = int64(ru.Maxrss) // KiB on Linux
				}
				peakKiB = max(peakKiB, kib)
				b.StopTimer()
				os.RemoveAll(out)
				b.StartTimer()
			}
			b.StopTimer()
			perOp := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(peakKiB)/1024, "peak-RSS-MiB")
			b.ReportMetric(cat.Seconds(), "cat-s")
			b.ReportMetric(float64(perOp)/float64(cat), "x-cat")
		})
	}
}
