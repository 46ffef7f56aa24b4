package importer

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/tuneplane/tpctl/internal/benchcmd"
	"github.com/tuneplane/tpctl/internal/harborgen"
)

var benchJobs sync.Map

// benchJob generates (once per process) a synthetic Harbor job of n trials.
func benchJob(b *testing.B, n int) *harborgen.Job { return benchJobWith(b, n, harborgen.Options{}) }

// benchJobWith generates (once per process) a job of n trials with o.
func benchJobWith(b *testing.B, n int, o harborgen.Options) *harborgen.Job {
	b.Helper()
	type key struct {
		n int
		o harborgen.Options
	}
	if j, ok := benchJobs.Load(key{n, o}); ok {
		return j.(*harborgen.Job)
	}
	if cache := os.Getenv("TPCTL_BENCH_JOBS"); cache != "" {
		job := cachedJob(b, cache, n, o)
		benchJobs.Store(key{n, o}, job)
		return job
	}
	dir, err := os.MkdirTemp("", "tpctl-bench-")
	if err != nil {
		b.Fatal(err)
	}
	job, err := harborgen.WriteWith(dir, n, o)
	if err != nil {
		b.Fatal(err)
	}
	benchJobs.Store(key{n, o}, job)
	return job
}

// cachedJob is the job of n trials with o kept under cache between runs
// (TPCTL_BENCH_JOBS, Makefile): a million-trial job takes minutes to write
// and to delete, and nothing a benchmark measures changes it. A job whose
// writing did not finish is written again.
func cachedJob(b *testing.B, cache string, n int, o harborgen.Options) *harborgen.Job {
	b.Helper()
	dir := filepath.Join(cache, fmt.Sprintf("n%d-indent%t-shuffle%t-traj%dx%d", n, o.IndentPlan, o.ShufflePlan, o.Trajectories, o.TrajectoryBytes))
	done := filepath.Join(dir, ".written")
	if _, err := os.Stat(done); err != nil {
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		if _, err := harborgen.WriteWith(dir, n, o); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(done, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return &harborgen.Job{Root: dir, PlanPath: filepath.Join(dir, "import-plan.json"), Trials: n}
}

// TestMain removes the generated benchmark jobs and the built tpctl after
// all tests ran.
func TestMain(m *testing.M) {
	code := m.Run()
	benchcmd.Cleanup()
	if os.Getenv("TPCTL_BENCH_JOBS") == "" {
		benchJobs.Range(func(_, v any) bool {
			os.RemoveAll(v.(*harborgen.Job).Root)
			return true
		})
	}
	os.Exit(code)
}

// BenchmarkImport10k imports a 10,000-trial job. Compare with
// BenchmarkReadResults10k, which only reads the same result.json files
// (what `cat` would do): the ratio is the cost of judging and writing.
func BenchmarkImport10k(b *testing.B) { benchImport(b, 10_000) }

// BenchmarkImport100k imports a 100,000-trial job in this process, for
// profiles (-cpuprofile, -memprofile). Peak RSS of the command itself is
// measured by BenchmarkImportCmd. Skipped with -short: the job takes
// about 1 GB of temporary disk.
func BenchmarkImport100k(b *testing.B) {
	if testing.Short() {
		b.Skip("generates a 100,000-trial job; run without -short")
	}
	benchImport(b, 100_000)
}

func benchImport(b *testing.B, n int) {
	job := benchJob(b, n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), "snap")
		if _, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: job.PlanPath, Root: job.Root, Out: out}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-sys-MiB")
}

// BenchmarkReadResults10k reads every result.json of the job sequentially,
// as `cat */result.json > /dev/null` does: the baseline for import time.
func BenchmarkReadResults10k(b *testing.B) {
	job := benchJob(b, 10_000)
	files, _ := filepath.Glob(filepath.Join(job.Root, "jobs", "*", "*", "result.json"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, f := range files {
			fh, err := os.Open(f)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, fh)
			fh.Close()
		}
	}
}

// BenchmarkTranscripts32 imports a job whose 32 trials each carry an
// 8 MiB ATIF trajectory and exports all of them with builtin:secrets, in
// this process, for profiles (-cpuprofile); BenchmarkTranscriptsCmd times
// the command. Skipped with -short (256 MiB of temporary disk).
func BenchmarkTranscripts32(b *testing.B) {
	if testing.Short() {
		b.Skip("generates 256 MiB of trajectories; run without -short")
	}
	const n, size = 32, 8 << 20
	job := benchJobWith(b, n+n/50+2, harborgen.Options{Trajectories: n, TrajectoryBytes: size})
	b.SetBytes(n * size)
	b.ReportAllocs()
	for b.Loop() {
		out := filepath.Join(b.TempDir(), "snap")
		if _, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: job.PlanPath, Root: job.Root, Out: out,
			Transcripts: &TranscriptOptions{Limit: n, Redactors: []string{"builtin:secrets"}}}); err != nil {
			b.Fatal(err)
		}
	}
}
