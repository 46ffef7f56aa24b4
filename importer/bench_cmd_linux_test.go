package importer

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/benchcmd"
	"github.com/tuneplane/tpctl/internal/harborgen"
	"github.com/tuneplane/tpctl/upload/ingesttest"
)

// The command benchmarks run the built tpctl as a child, side by side with
// the floor a user would compare it with: cat of the same files, read from
// a file list computed beforehand (xargs cat < list), so neither side pays
// for a tree walk. Runs alternate (cat, import, cat, import, …) after one
// untimed warm-up of each, so both sides see the same page cache and the
// same background load, and both are summarised by the same statistic: the
// median, printed with the min and max. TPCTL_BENCH_ROUNDS sets the number
// of pairs (default 5); make bench runs them. The harness (the build, the
// timing and peak RSS of a child, the spreads) is internal/benchcmd's.

// buildTpctl builds the command once per test process.
func buildTpctl(b *testing.B) string {
	b.Helper()
	return benchcmd.Tpctl(b, "..")
}

// sideBySide is the result of alternating runs of tpctl and cat.
type sideBySide struct {
	tool, cat, cpu, rss benchcmd.Spread
	floor               string // what cat holds the times of: cat, sha256sum
}

// alternate writes list (one file per line) and runs cat over it and
// tool(i) alternately: one warm-up each, then rounds timed pairs.
func alternate(b *testing.B, files []string, tool func(i int) []string) sideBySide {
	return alternateWith(b, "cat", files, tool)
}

// alternateWith is alternate with another floor over the same list:
// xargs floor < list (cat, sha256sum).
func alternateWith(b *testing.B, floor string, files []string, tool func(i int) []string) sideBySide {
	b.Helper()
	list := writeList(b, files)
	return alternateArgs(b, floor, []string{"sh", "-c", `xargs "$2" < "$1" > /dev/null`, "sh", list, floor}, tool)
}

// writeList writes files, one a line, to a new file and returns its path.
func writeList(b *testing.B, files []string) string {
	b.Helper()
	list := filepath.Join(b.TempDir(), "files")
	if err := os.WriteFile(list, []byte(strings.Join(files, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return list
}

// alternateArgs runs the floor command floorArgs (named floor in the
// report) and tool(i) alternately: one warm-up each, then rounds timed
// pairs.
func alternateArgs(b *testing.B, floor string, floorArgs []string, tool func(i int) []string) sideBySide {
	b.Helper()
	usage := filepath.Join(b.TempDir(), "usage")
	benchcmd.Time(b, usage, floorArgs...)
	benchcmd.Time(b, usage, tool(-1)...)
	var tool_, cat, cpu, rss []float64
	for i := range benchcmd.Rounds(b) {
		c := benchcmd.Time(b, usage, floorArgs...)
		t := benchcmd.Time(b, usage, tool(i)...)
		cat = append(cat, c.Wall.Seconds())
		tool_ = append(tool_, t.Wall.Seconds())
		cpu = append(cpu, t.CPU.Seconds())
		rss = append(rss, t.RSSMiB())
	}
	return sideBySide{tool: benchcmd.SpreadOf(tool_), cat: benchcmd.SpreadOf(cat), cpu: benchcmd.SpreadOf(cpu), rss: benchcmd.SpreadOf(rss), floor: floor}
}

// report logs the spreads and reports the medians.
func (r sideBySide) report(b *testing.B, what string) {
	b.Helper()
	ratio := r.tool.Med / r.cat.Med
	b.Logf("%s wall s: %v", what, r.tool)
	b.Logf("%s wall s: %v", r.floor, r.cat)
	b.Logf("%s CPU s: %v", what, r.cpu)
	b.Logf("%s peak RSS MiB: %v", what, r.rss)
	b.Logf("ratio of medians: %.2f× %s", ratio, r.floor)
	b.ReportMetric(r.tool.Med, "s/run")
	b.ReportMetric(r.cat.Med, r.floor+"-s")
	b.ReportMetric(ratio, "x-"+r.floor)
	b.ReportMetric(r.cpu.Med, "cpu-s")
	b.ReportMetric(r.rss.Max, "peak-RSS-MiB")
}

// resultFiles lists the job's result.json files in plan order.
func resultFiles(b *testing.B, job *harborgen.Job) []string {
	files, err := filepath.Glob(filepath.Join(job.Root, "jobs", "*", "*", "result.json"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no result.json files under %s: %v", job.Root, err)
	}
	return files
}

// BenchmarkImportCmd imports generated jobs of 10,000 trials (compact
// plan), 100,000 trials (indented plan; skipped with -short) and 1,000,000
// trials (indented plan; only with TPCTL_BENCH_1M=1, about 10 GB of
// temporary disk), the large ones also with the plan's trials shuffled
// (…/shuffled: sorted on the way, issue 36), side by side with cat of their result.json files, and
// reports the import's median wall time (s/run), CPU (cpu-s), peak RSS
// (peak-RSS-MiB, the largest seen) and the ratio of medians (x-cat).
func BenchmarkImportCmd(b *testing.B) {
	for _, bc := range []struct {
		n               int
		indent, shuffle bool
	}{{10_000, false, false}, {100_000, true, false}, {100_000, true, true}, {1_000_000, true, false}, {1_000_000, true, true}} {
		name := fmt.Sprintf("trials=%d", bc.n)
		if bc.shuffle {
			name += "/shuffled"
		}
		b.Run(name, func(b *testing.B) {
			if bc.n > 10_000 && testing.Short() {
				b.Skip("generates a large job; run without -short")
			}
			if bc.n > 100_000 && os.Getenv("TPCTL_BENCH_1M") != "1" {
				b.Skip("set TPCTL_BENCH_1M=1 to generate and import a 1,000,000-trial job")
			}
			bin := buildTpctl(b)
			job := benchJobWith(b, bc.n, harborgen.Options{IndentPlan: bc.indent, ShufflePlan: bc.shuffle})
			outs := b.TempDir()
			for b.Loop() {
				r := alternate(b, resultFiles(b, job), func(i int) []string {
					out := filepath.Join(outs, strconv.Itoa(i+1))
					os.RemoveAll(out)
					return []string{bin, "import", "--plan", job.PlanPath, "--root", job.Root, "--out", out}
				})
				r.report(b, "import")
			}
		})
	}
}

// BenchmarkTranscriptsCmd imports a generated job whose 32 trials each
// carry an 8 MiB ATIF trajectory and exports all of them with
// builtin:secrets, side by side with the naive Python redactor
// (testdata/naive-redactor.py: builtin:secrets' expressions applied with
// Python's re, line by line, one core, output thrown away) over the same
// files, the floor issue 36 measures against. MB/s is trajectory bytes
// over the import's median wall time, MB/cpu-s over its median CPU time,
// speedup-vs-python the Python redactor's median wall time over the
// import's. Skipped with -short, and when python3 is not on PATH.
func BenchmarkTranscriptsCmd(b *testing.B) {
	if testing.Short() {
		b.Skip("generates 256 MiB of trajectories; run without -short")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("python3 is not on PATH: it runs this benchmark's floor, the naive Python redactor")
	}
	naive, err := filepath.Abs(filepath.Join("testdata", "naive-redactor.py"))
	if err != nil {
		b.Fatal(err)
	}
	const n, size = 32, 8 << 20
	bin := buildTpctl(b)
	job := benchJobWith(b, n+n/50+2, harborgen.Options{Trajectories: n, TrajectoryBytes: size})
	files, _ := filepath.Glob(filepath.Join(job.Root, "jobs", "*", "*", "agent", "trajectory.json"))
	if len(files) != n {
		b.Fatalf("generated %d trajectories, want %d", len(files), n)
	}
	var total int64
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			b.Fatal(err)
		}
		total += fi.Size()
	}
	// The floor must do the work: it redacts the planted token.
	one := benchcmd.Time(b, filepath.Join(b.TempDir(), "usage"), python, naive, writeList(b, files[:1]))
	if out := string(one.Output); strings.Contains(out, harborgen.FakeToken) || !strings.Contains(out, "[REDACTED:github_token]") {
		b.Fatalf("the naive Python redactor did not redact the planted token")
	}
	floor := []string{"sh", "-c", `"$1" "$2" "$3" > /dev/null`, "sh", python, naive, writeList(b, files)}
	outs := b.TempDir()
	for b.Loop() {
		r := alternateArgs(b, "python", floor, func(i int) []string {
			out := filepath.Join(outs, strconv.Itoa(i+1))
			os.RemoveAll(out)
			return []string{bin, "import", "--plan", job.PlanPath, "--root", job.Root, "--out", out,
				"--trace-limit", strconv.Itoa(n), "--redactor", "builtin:secrets"}
		})
		r.report(b, "import --trace-limit 32")
		mb := float64(total) / 1e6
		b.Logf("throughput MB/s: min %.1f median %.1f max %.1f (naive Python redactor median %.1f)", mb/r.tool.Max, mb/r.tool.Med, mb/r.tool.Min, mb/r.cat.Med)
		b.Logf("speed-up over the naive Python redactor, ratio of medians: %.1f×", r.cat.Med/r.tool.Med)
		b.ReportMetric(mb/r.tool.Med, "MB/s")
		b.ReportMetric(mb/r.cat.Med, "python-MB/s")
		b.ReportMetric(r.cat.Med/r.tool.Med, "speedup-vs-python")
		// CPU-bound, so on a shared machine this is the steadier figure.
		b.ReportMetric(mb/r.cpu.Med, "MB/cpu-s")
	}
}

// BenchmarkVerifyCmd runs tpctl snapshot verify side by side with
// sha256sum of the snapshot's files (the same bytes verify reads and
// hashes; the floor the issue measures against): on the snapshot of the
// 100,000-trial job, imported once, and with TPCTL_BENCH_1M=1 on a
// generated 1,000,000-trial snapshot (about 620 MB; the memory must not
// grow with it). MB/s is the snapshot's bytes over verify's median wall
// time, MB/cpu-s over its median CPU time, x-sha256sum the ratio of
// medians. Skipped with -short.
func BenchmarkVerifyCmd(b *testing.B) {
	if testing.Short() {
		b.Skip("generates a 100,000-trial job; run without -short")
	}
	bin := buildTpctl(b)
	b.Run("trials=100000", func(b *testing.B) {
		job := benchJobWith(b, 100_000, harborgen.Options{IndentPlan: true})
		snap := filepath.Join(b.TempDir(), "snap")
		benchcmd.Time(b, filepath.Join(b.TempDir(), "usage"), bin, "import", "--plan", job.PlanPath, "--root", job.Root, "--out", snap)
		benchVerify(b, bin, snap)
	})
	b.Run("trials=1000000", func(b *testing.B) {
		if os.Getenv("TPCTL_BENCH_1M") != "1" {
			b.Skip("set TPCTL_BENCH_1M=1 to verify a 1,000,000-trial snapshot")
		}
		snap := filepath.Join(b.TempDir(), "snap")
		if _, err := ingesttest.WriteSnapshot(snap, ingesttest.SnapshotSpec{Trials: 1_000_000}); err != nil {
			b.Fatal(err)
		}
		benchVerify(b, bin, snap)
	})
}

func benchVerify(b *testing.B, bin, snap string) {
	var files []string
	var total int64
	err := filepath.WalkDir(snap, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, p)
		total += fi.Size()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r := alternateWith(b, "sha256sum", files, func(int) []string { return []string{bin, "snapshot", "verify", snap} })
		r.report(b, "snapshot verify")
		mb := float64(total) / 1e6
		b.Logf("throughput MB/s: min %.1f median %.1f max %.1f over %.1f MB (sha256sum median %.0f)", mb/r.tool.Max, mb/r.tool.Med, mb/r.tool.Min, mb, mb/r.cat.Med)
		b.ReportMetric(mb/r.tool.Med, "MB/s")
		b.ReportMetric(mb/r.cat.Med, "floor-MB/s")
		b.ReportMetric(mb/r.cpu.Med, "MB/cpu-s")
	}
}
