package duckdbtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/export"
	"github.com/tuneplane/tpctl/internal/benchcmd"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/stats"
)

// rounds are three rounds of one protocol at three checkpoints, with
// every status and planned trials that never ran.
var rounds = []struct {
	checkpoint string
	trials     map[string]string
}{
	{"hf://acme/coder@1000", map[string]string{
		"task-a#0": "failure", "task-a#1": "failure", "task-b#0": "success", "task-b#1": "missing",
		"task-c#0": "infra_error", "task-c#1": "unscored", "task-d#0": "failure", "task-d#1": "success",
		"task-e#0": "failure", "task-e#1": "failure"}},
	{"hf://acme/coder@2000", map[string]string{
		"task-a#0": "success", "task-a#1": "failure", "task-b#0": "success", "task-b#1": "success",
		"task-c#0": "success", "task-c#1": "missing", "task-d#0": "failure", "task-d#1": "success",
		"task-e#0": "failure", "task-e#1": "success"}},
	{"hf://acme/coder@3000", map[string]string{
		"task-a#0": "success", "task-a#1": "success", "task-b#0": "success", "task-b#1": "success",
		"task-c#0": "success", "task-c#1": "failure", "task-d#0": "success", "task-d#1": "success",
		"task-e#0": "failure", "task-e#1": "success"}},
}

type built struct {
	dir string
	m   *snapshot.Manifest
}

// explain gives the first round's trials of tasks a and b the
// tpctl-snapshot/3 explanation members, some of them null; the other
// trials have none.
func explain(task string, repeat int, a *snapshot.AttemptOutcome) {
	f := func(v float64) *float64 { return &v }
	n := func(v int64) *int64 { return &v }
	switch task {
	case "task-a":
		a.Detail = fmt.Sprintf("AssertionError: expected 4, got %d", repeat)
		a.Timing = &snapshot.Timing{EnvironmentSetup: f(1.5), AgentExecution: f(30.25), Verifier: f(2)}
		a.Usage = &snapshot.Usage{InputTokens: n(1200), CacheTokens: n(200), OutputTokens: n(350), CostUSD: f(0.0125)}
		model := "acme/coder-7b"
		a.Agent = &snapshot.Agent{Name: "terminus-2", Model: &model}
	case "task-b":
		a.Agent = &snapshot.Agent{Name: "terminus-2"}
	}
}

func buildRounds(t *testing.T) []built {
	t.Helper()
	var out []built
	for i, r := range rounds {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("round-%d", i+1))
		spec := comparetest.Spec{Checkpoint: r.checkpoint, Trials: r.trials}
		if i == 0 {
			spec.Explain = explain
		}
		m, err := comparetest.Build(dir, spec)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, built{dir, m})
	}
	return out
}

func exportAll(t *testing.T, f export.Format, out string, bs []built) {
	t.Helper()
	var dirs []string
	for _, b := range bs {
		dirs = append(dirs, b.dir)
	}
	if _, err := export.Run(context.Background(), dirs, export.Options{Format: f, Out: out, Version: "duckdbtest"}); err != nil {
		t.Fatal(err)
	}
}

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // one connection: SET applies to every query
	t.Cleanup(func() { db.Close() })
	return db
}

// reader is the DuckDB table function reading one table of every round
// exported under out, in format f.
func reader(f export.Format, out, table string) string {
	glob := "'" + filepath.Join(out, "*", table+"."+string(f)) + "'"
	switch f {
	case export.Parquet:
		return "read_parquet(" + glob + ")"
	case export.CSV:
		return "read_csv(" + glob + ", header = true, quote = '\"', escape = '\"', columns = " + export.DuckDBColumns(table) + ")"
	}
	return "read_json(" + glob + ", format = 'newline_delimited', columns = " + export.DuckDBColumns(table) + ")"
}

// TestDuckDBReadsEveryFormat: DuckDB reads the three formats back with
// every planned trial, the snapshots' counts per status, the documented
// column names and types, and the same rows in each format.
func TestDuckDBReadsEveryFormat(t *testing.T) {
	bs := buildRounds(t)
	db := openDB(t)
	outs := map[export.Format]string{}
	for _, f := range export.Formats {
		outs[f] = t.TempDir()
		exportAll(t, f, outs[f], bs)
		// A second export, elsewhere, gives the same bytes.
		again := t.TempDir()
		exportAll(t, f, again, bs)
		files, _ := filepath.Glob(filepath.Join(outs[f], "*", "*"))
		if len(files) != 4*len(bs) {
			t.Fatalf("%s: %d files exported, want %d", f, len(files), 4*len(bs))
		}
		for _, file := range files {
			rel, _ := filepath.Rel(outs[f], file)
			a, _ := os.ReadFile(file)
			b, err := os.ReadFile(filepath.Join(again, rel))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s: the second export's %s differs (%v)", f, rel, err)
			}
		}
	}
	for _, f := range export.Formats {
		t.Run(string(f), func(t *testing.T) {
			out := outs[f]
			for _, b := range bs {
				rid := strings.TrimPrefix(b.m.RoundID, "native:")
				rows, err := db.Query("SELECT status, count(*) FROM "+reader(f, out, export.TableTrials)+" WHERE round_id = ? GROUP BY status", rid)
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]int{}
				for rows.Next() {
					var s string
					var n int
					if err := rows.Scan(&s, &n); err != nil {
						t.Fatal(err)
					}
					got[s] = n
				}
				rows.Close()
				c := b.m.Counts
				want := map[string]int{"success": c.Success, "failure": c.Failure, "infra_error": c.InfraError, "unscored": c.Unscored, "missing": c.Missing}
				total := 0
				for k, v := range want {
					if got[k] != v {
						t.Errorf("round %s: %d %s trials, snapshot says %d", rid[:8], got[k], k, v)
					}
					total += got[k]
				}
				if total != c.Expected {
					t.Errorf("round %s: %d trials, %d planned", rid[:8], total, c.Expected)
				}
				var expected int
				var nEff sql.NullFloat64
				var nullCode, nullMsg sql.NullString
				var nullTasks sql.NullInt64
				if err := db.QueryRow("SELECT expected, success_rate_n_eff, success_rate_ci95_clustered_null, success_rate_ci95_clustered_null_message, success_rate_ci95_clustered_null_tasks FROM "+reader(f, out, export.TableRounds)+" WHERE round_id = ?", rid).Scan(&expected, &nEff, &nullCode, &nullMsg, &nullTasks); err != nil || expected != c.Expected {
					t.Errorf("rounds.expected = %d (%v), want %d", expected, err, c.Expected)
				}
				st := b.m.Statistics
				if nEff.Valid != (st.SuccessRateNEff != nil) || nEff.Valid && nEff.Float64 != *st.SuccessRateNEff {
					t.Errorf("rounds.success_rate_n_eff = %v, snapshot %v", nEff, st.SuccessRateNEff)
				}
				if why := st.SuccessRateCI95ClusteredNull; nullCode.Valid != (why != nil) || why != nil && (nullCode.String != why.Code || nullMsg.String != why.Message || nullTasks.Int64 != int64(why.Tasks)) {
					t.Errorf("rounds null reason = %v %v %v, snapshot %+v", nullCode, nullMsg, nullTasks, why)
				}
			}
			checkExplanations(t, db, f, out, bs)
			// Column names and types as documented, for each table: Parquet
			// carries them; CSV and JSONL are read with the documented
			// columns literal and must parse under it.
			for _, table := range export.Tables {
				rows, err := db.Query("DESCRIBE SELECT * FROM " + reader(f, out, table))
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for rows.Next() {
					var name, typ string
					var null, key, def, extra sql.NullString
					if err := rows.Scan(&name, &typ, &null, &key, &def, &extra); err != nil {
						t.Fatal(err)
					}
					got = append(got, name+" "+typ)
				}
				rows.Close()
				var want []string
				for _, c := range export.Columns(table) {
					want = append(want, c.Name+" "+c.Type)
				}
				if strings.Join(got, ", ") != strings.Join(want, ", ") {
					t.Errorf("%s columns:\n got %s\nwant %s", table, strings.Join(got, ", "), strings.Join(want, ", "))
				}
			}
			if f == export.Parquet {
				return
			}
			// The same rows as the Parquet files, both ways.
			for _, table := range export.Tables {
				q := fmt.Sprintf("SELECT count(*) FROM ((SELECT * FROM %[1]s EXCEPT ALL SELECT * FROM %[2]s) UNION ALL (SELECT * FROM %[2]s EXCEPT ALL SELECT * FROM %[1]s))",
					reader(export.Parquet, outs[export.Parquet], table), reader(f, out, table))
				var n int
				if err := db.QueryRow(q).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != 0 {
					t.Errorf("%s: %d rows differ from the Parquet export", table, n)
				}
			}
		})
	}
}

// checkExplanations: the judge's detail, timings, tokens and agent of
// tpctl-snapshot/3 attempts are in trials (the current attempt's) and in
// attempts, typed, and null where the snapshot has none.
func checkExplanations(t *testing.T, db *sql.DB, f export.Format, out string, bs []built) {
	t.Helper()
	rid := strings.TrimPrefix(bs[0].m.RoundID, "native:")
	type expl struct {
		Detail, Model, Agent              sql.NullString
		Setup, AgentSetup, Exec, Verifier sql.NullFloat64
		In, Cache, Outp                   sql.NullInt64
		Cost                              sql.NullFloat64
	}
	cols := "detail, agent_model, agent_name, environment_setup_sec, agent_setup_sec, agent_execution_sec, verifier_sec, input_tokens, cache_tokens, output_tokens, cost_usd"
	for _, table := range []string{export.TableTrials, export.TableAttempts} {
		got := map[string]expl{}
		rows, err := db.Query("SELECT trial_id, "+cols+" FROM "+reader(f, out, table)+" WHERE round_id = ?", rid)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id string
			var e expl
			if err := rows.Scan(&id, &e.Detail, &e.Model, &e.Agent, &e.Setup, &e.AgentSetup, &e.Exec, &e.Verifier, &e.In, &e.Cache, &e.Outp, &e.Cost); err != nil {
				t.Fatal(err)
			}
			got[id] = e
		}
		rows.Close()
		a1 := got["task-a#1"]
		if a1.Detail.String != "AssertionError: expected 4, got 1" || a1.Model.String != "acme/coder-7b" || a1.Agent.String != "terminus-2" ||
			a1.Setup.Float64 != 1.5 || a1.AgentSetup.Valid || a1.Exec.Float64 != 30.25 || a1.Verifier.Float64 != 2 ||
			a1.In.Int64 != 1200 || a1.Cache.Int64 != 200 || a1.Outp.Int64 != 350 || a1.Cost.Float64 != 0.0125 {
			t.Errorf("%s %s task-a#1: %+v", f, table, a1)
		}
		if b0 := got["task-b#0"]; b0.Agent.String != "terminus-2" || b0.Model.Valid || b0.Detail.Valid || b0.Exec.Valid || b0.In.Valid {
			t.Errorf("%s %s task-b#0 (agent only): %+v", f, table, b0)
		}
		if c0 := got["task-c#0"]; c0.Agent.Valid || c0.Detail.Valid || c0.Setup.Valid || c0.Cost.Valid {
			t.Errorf("%s %s task-c#0 (no explanation): %+v", f, table, c0)
		}
		if _, ok := got["task-b#1"]; ok != (table == export.TableTrials) {
			t.Errorf("%s %s: a row for the missing trial task-b#1 is %v", f, table, ok)
		}
	}
}

// TestDuckDBParquetFooterAndNulls checks what a Parquet reader sees beyond
// the values: the footer's metadata and which columns are optional.
func TestDuckDBParquetFooterAndNulls(t *testing.T) {
	bs := buildRounds(t)
	out := t.TempDir()
	exportAll(t, export.Parquet, out, bs[:1])
	db := openDB(t)
	m := bs[0].m
	file := filepath.Join(out, "round_id="+strings.TrimPrefix(m.RoundID, "native:"), "trials.parquet")
	kv := map[string]string{}
	rows, err := db.Query("SELECT decode(key), decode(value) FROM parquet_kv_metadata(?)", file)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		kv[k] = v
	}
	rows.Close()
	sum, _ := os.ReadFile(filepath.Join(bs[0].dir, snapshot.ManifestFile))
	for k, want := range map[string]string{
		export.MetaExportFormat: export.FormatVersion, export.MetaRoundID: m.RoundID, export.MetaTable: "trials",
		export.MetaDataset: m.Protocol.DatasetDigest, export.MetaCohort: m.Protocol.CohortDigest,
		export.MetaVerifier: m.Protocol.VerifierDigest, export.MetaSettings: m.Protocol.SettingsDigest,
		export.MetaSnapshotSHA256: sha256Hex(sum),
	} {
		if kv[k] != want {
			t.Errorf("footer %s = %q, want %q", k, kv[k], want)
		}
	}
	rows, err = db.Query("SELECT name, repetition_type FROM parquet_schema(?) WHERE name <> 'schema'", file)
	if err != nil {
		t.Fatal(err)
	}
	nullable := map[string]bool{}
	for rows.Next() {
		var name string
		var rep sql.NullString
		if err := rows.Scan(&name, &rep); err != nil {
			t.Fatal(err)
		}
		nullable[name] = rep.String == "OPTIONAL"
	}
	rows.Close()
	for _, c := range export.Columns(export.TableTrials) {
		if nullable[c.Name] != c.Nullable {
			t.Errorf("column %s: OPTIONAL is %v, documented nullable %v", c.Name, nullable[c.Name], c.Nullable)
		}
	}
	var reason, attempt sql.NullString
	if err := db.QueryRow("SELECT reason, trial_attempt FROM read_parquet(?) WHERE trial_id = 'task-b#1'", file).Scan(&reason, &attempt); err != nil {
		t.Fatal(err)
	}
	if reason.Valid || attempt.Valid {
		t.Errorf("missing trial: reason %v, trial_attempt %v; want NULL", reason, attempt)
	}
}

// TestDocsQueries runs every SQL block of docs/export.md marked
// "-- tested" against three exported rounds; the success-rate-per-
// checkpoint query must give the rates and Wilson intervals tpctl
// computes.
func TestDocsQueries(t *testing.T) {
	doc, err := os.ReadFile("../../docs/export.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sql\n(-- tested[^\n]*\n.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) < 2 {
		t.Fatalf("docs/export.md has %d tested SQL blocks, want at least 2", len(blocks))
	}
	bs := buildRounds(t)
	work := t.TempDir()
	exportAll(t, export.Parquet, filepath.Join(work, "exports"), bs)
	db := openDB(t)
	if _, err := db.Exec("SET file_search_path = '" + work + "'"); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		q := string(b[1])
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
		cols, _ := rows.Columns()
		var n int
		for rows.Next() {
			n++
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(q, "per checkpoint") {
				continue
			}
			row := map[string]any{}
			for i, c := range cols {
				row[c] = vals[i]
			}
			checkCheckpointRow(t, bs, row)
		}
		rows.Close()
		if n == 0 {
			t.Errorf("query gave no rows:\n%s", q)
		}
	}
}

func checkCheckpointRow(t *testing.T, bs []built, row map[string]any) {
	t.Helper()
	for _, b := range bs {
		if b.m.Checkpoint.Ref != row["checkpoint_ref"] {
			continue
		}
		c := b.m.Counts
		lo, hi := stats.Wilson(c.Success, c.Scored())
		for name, want := range map[string]float64{"success_rate": float64(c.Success) / float64(c.Scored()), "ci95_low": lo, "ci95_high": hi} {
			got, ok := row[name].(float64)
			if !ok || math.Abs(got-want) > 1e-9 {
				t.Errorf("%s %s = %v, tpctl says %v", b.m.Checkpoint.Ref, name, row[name], want)
			}
		}
		if got := row["planned"]; fmt.Sprint(got) != fmt.Sprint(c.Expected) {
			t.Errorf("%s planned = %v, want %d", b.m.Checkpoint.Ref, got, c.Expected)
		}
		return
	}
	t.Errorf("row for unknown checkpoint %v", row["checkpoint_ref"])
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestMain removes the tpctl the benchmark built.
func TestMain(m *testing.M) {
	code := m.Run()
	benchcmd.Cleanup()
	os.Exit(code)
}
