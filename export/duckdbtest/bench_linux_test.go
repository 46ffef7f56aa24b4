package duckdbtest

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/internal/benchcmd"
	"github.com/tuneplane/tpctl/snapshot"
)

// BenchmarkExportParquet exports a generated 100,000-trial snapshot to
// Parquet with the tpctl binary (verification included) side by side with
// DuckDB's own conversion of the same observations.jsonl, unverified:
// COPY (SELECT * FROM read_json(…)) TO … (FORMAT parquet), each run as a
// child process. Runs alternate (DuckDB, tpctl, …) after one untimed
// warm-up of each; medians with min and max are printed, and peak RSS
// from /usr/bin/time (internal/benchcmd). Each tpctl export is read back with DuckDB: every
// planned trial is there. TPCTL_BENCH_ROUNDS pairs (default 5);
// TPCTL_BENCH_1M=1 adds 1,000,000 trials.
func BenchmarkExportParquet(b *testing.B) {
	sizes := []int{100_000}
	if os.Getenv("TPCTL_BENCH_1M") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	bin := benchcmd.Tpctl(b, "../..")
	for _, n := range sizes {
		b.Run(fmt.Sprintf("trials=%d", n), func(b *testing.B) {
			snap := bigSnapshot(b, n)
			obs := filepath.Join(snap, snapshot.ObservationsFile)
			st, _ := os.Stat(obs)
			b.Logf("snapshot: %d trials, observations.jsonl %.1f MB", n, float64(st.Size())/1e6)
			work := b.TempDir()
			self, err := os.Executable()
			if err != nil {
				b.Fatal(err)
			}
			duck := func(i int) []string {
				return []string{"env", "TPCTL_DUCKDB_COPY=" + obs, "TPCTL_DUCKDB_COPY_TO=" + filepath.Join(work, fmt.Sprintf("duck-%d.parquet", i+1)),
					self, "-test.run=^TestDuckDBCopyChild$", "-test.count=1"}
			}
			tp := func(i int) []string {
				return []string{bin, "export", snap, "--format", "parquet", "--out", filepath.Join(work, fmt.Sprintf("tp-%d", i+1))}
			}
			usage := filepath.Join(work, "usage")
			benchcmd.Time(b, usage, duck(-1)...)
			benchcmd.Time(b, usage, tp(-1)...)
			var dw, tw, tcpu, trss, drss []float64
			for i := range benchcmd.Rounds(b) {
				d := benchcmd.Time(b, usage, duck(i)...)
				t := benchcmd.Time(b, usage, tp(i)...)
				dw, tw = append(dw, d.Wall.Seconds()), append(tw, t.Wall.Seconds())
				tcpu = append(tcpu, t.CPU.Seconds())
				trss, drss = append(trss, t.RSSMiB()), append(drss, d.RSSMiB())
				checkExport(b, filepath.Join(work, fmt.Sprintf("tp-%d", i+1)), n)
				os.RemoveAll(filepath.Join(work, fmt.Sprintf("tp-%d", i+1)))
				os.Remove(filepath.Join(work, fmt.Sprintf("duck-%d.parquet", i+1)))
			}
			ts, ds := benchcmd.SpreadOf(tw), benchcmd.SpreadOf(dw)
			b.Logf("tpctl export wall s: %v", ts)
			b.Logf("duckdb COPY wall s: %v", ds)
			b.Logf("tpctl CPU s: %v", benchcmd.SpreadOf(tcpu))
			b.Logf("tpctl peak RSS MiB: %v; duckdb peak RSS MiB: %v", benchcmd.SpreadOf(trss), benchcmd.SpreadOf(drss))
			b.Logf("ratio of medians: %.2f× duckdb", ts.Med/ds.Med)
			b.ReportMetric(ts.Med, "s/run")
			b.ReportMetric(ds.Med, "duckdb-s")
			b.ReportMetric(ts.Med/ds.Med, "x-duckdb")
			b.ReportMetric(benchcmd.SpreadOf(tcpu).Med, "cpu-s")
			b.ReportMetric(benchcmd.SpreadOf(trss).Max, "peak-RSS-MiB")
		})
	}
}

// TestDuckDBCopyChild is the DuckDB side of the benchmark, run as a child
// process; it does nothing unless TPCTL_DUCKDB_COPY names the files.
func TestDuckDBCopyChild(t *testing.T) {
	src, dst := os.Getenv("TPCTL_DUCKDB_COPY"), os.Getenv("TPCTL_DUCKDB_COPY_TO")
	if src == "" || dst == "" {
		t.Skip("only a child of BenchmarkExportParquet")
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf("COPY (SELECT * FROM read_json('%s')) TO '%s' (FORMAT parquet)", src, dst)); err != nil {
		t.Fatal(err)
	}
}

// checkExport reads an export back: every planned trial, one round.
func checkExport(b *testing.B, out string, n int) {
	b.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var trials, rounds int
	if err := db.QueryRow("SELECT count(*), count(DISTINCT round_id) FROM read_parquet('"+filepath.Join(out, "*", "trials.parquet")+"')").Scan(&trials, &rounds); err != nil {
		b.Fatal(err)
	}
	if trials != n || rounds != 1 {
		b.Fatalf("export holds %d trials of %d rounds, want %d of 1", trials, rounds, n)
	}
}

// bigSnapshot builds a clean-ish round of n trials (n/10 tasks × 10
// repeats, a few not scored), kept for the process in a shared folder.
func bigSnapshot(b *testing.B, n int) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "snap")
	trials := make(map[string]string, n)
	statuses := []string{"success", "failure", "success", "failure", "success", "success", "failure", "infra_error", "success", "unscored", "missing"}
	for i := range n {
		trials[fmt.Sprintf("harbor/task-%06d#%d", i/10, i%10)] = statuses[(i*7+i/10)%len(statuses)]
	}
	if _, err := comparetest.Build(dir, comparetest.Spec{Trials: trials}); err != nil {
		b.Fatal(err)
	}
	return dir
}
