package export_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/export"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/snapshot"
)

// build writes a small round with every status and a missing trial.
func build(t *testing.T, trials map[string]string) (string, *snapshot.Manifest) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "snap")
	m, err := comparetest.Build(dir, comparetest.Spec{Trials: trials})
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

var mixed = map[string]string{
	"a#0": "success", "a#1": "failure", "a#2": "missing",
	"b#0": "success", "b#1": "success", "b#2": "success",
	"c,\"quoted-task-name\"#0": "infra_error", "c,\"quoted-task-name\"#1": "unscored", "c,\"quoted-task-name\"#2": "failure",
}

func run(t *testing.T, format export.Format, out string, dirs ...string) []export.Partition {
	t.Helper()
	ps, err := export.Run(context.Background(), dirs, export.Options{Format: format, Out: out, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// statusCounts reads the status column of a trials file in any format.
func statusCounts(t *testing.T, format export.Format, path string) map[string]int {
	t.Helper()
	got := map[string]int{}
	switch format {
	case export.Parquet:
		rows, err := parquet.ReadFile[export.TrialRow](path)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			got[r.Status]++
		}
	case export.CSV:
		recs, err := csv.NewReader(strings.NewReader(string(readAll(t, path)))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := -1
		for i, h := range recs[0] {
			if h == "status" {
				col = i
			}
		}
		for _, r := range recs[1:] {
			got[r[col]]++
		}
	default:
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var r struct{ Status string }
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			got[r.Status]++
		}
	}
	return got
}

func TestExportFormats(t *testing.T) {
	dir, m := build(t, mixed)
	rid := strings.TrimPrefix(m.RoundID, "native:")
	for _, f := range export.Formats {
		t.Run(string(f), func(t *testing.T) {
			out := t.TempDir()
			ps := run(t, f, out, dir)
			if len(ps) != 1 || ps[0].Trials != 9 || ps[0].Tasks != 3 || ps[0].Attempts != 8 || ps[0].Unchanged {
				t.Fatalf("partitions = %+v", ps)
			}
			part := filepath.Join(out, "round_id="+rid)
			for _, tb := range export.Tables {
				if _, err := os.Stat(filepath.Join(part, tb+"."+string(f))); err != nil {
					t.Fatal(err)
				}
			}
			got := statusCounts(t, f, filepath.Join(part, "trials."+string(f)))
			c := m.Counts
			want := map[string]int{"success": c.Success, "failure": c.Failure, "infra_error": c.InfraError, "unscored": c.Unscored, "missing": c.Missing}
			if len(got) != len(want) {
				t.Errorf("statuses %v, want %v", got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("status %s: %d rows, snapshot says %d", k, got[k], v)
				}
			}
			// A second export of the same snapshot, elsewhere, gives the
			// same bytes; into the same folder it changes nothing.
			out2 := t.TempDir()
			run(t, f, out2, dir)
			for _, tb := range export.Tables {
				name := tb + "." + string(f)
				if string(readAll(t, filepath.Join(part, name))) != string(readAll(t, filepath.Join(out2, "round_id="+rid, name))) {
					t.Errorf("%s differs between two exports", name)
				}
			}
			if ps := run(t, f, out, dir); !ps[0].Unchanged {
				t.Errorf("re-export into the same folder: %+v, want unchanged", ps[0])
			}
		})
	}
}

// TestExportStartsOver: a snapshot whose plan.json is not in the form the
// single read takes (here re-indented, its SHA-256 updated, which
// verification accepts) is read again as snapshot.Open reads it; what the
// first reading wrote is forgotten, and the tables are those of the
// original snapshot.
func TestExportStartsOver(t *testing.T) {
	dir, m := build(t, mixed)
	re := filepath.Join(t.TempDir(), "reindented")
	if err := os.CopyFS(re, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	pp := filepath.Join(re, snapshot.PlanFile)
	var plan any
	if err := json.Unmarshal(readAll(t, pp), &plan); err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(plan, "", "  ")
	if err := os.WriteFile(pp, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(b, '\n'))
	mp := filepath.Join(re, snapshot.ManifestFile)
	if err := os.WriteFile(mp, []byte(strings.Replace(string(readAll(t, mp)), m.Files[snapshot.PlanFile], hex.EncodeToString(sum[:]), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep, err := snapshot.Verify(re); err != nil || !rep.OK {
		t.Fatalf("the re-indented snapshot does not verify: %+v, %v", rep, err)
	}
	a, b2 := t.TempDir(), t.TempDir()
	pa, pb := run(t, export.JSONL, a, dir), run(t, export.JSONL, b2, re)
	if pa[0].Trials != pb[0].Trials || pb[0].Trials != 9 || pa[0].Attempts != pb[0].Attempts || pa[0].Tasks != pb[0].Tasks {
		t.Errorf("partitions %+v and %+v", pa[0], pb[0])
	}
	for _, tb := range []string{export.TableTrials, export.TableAttempts, export.TableTasks} {
		name := "round_id=" + strings.TrimPrefix(m.RoundID, "native:") + "/" + tb + ".jsonl"
		if string(readAll(t, filepath.Join(a, name))) != string(readAll(t, filepath.Join(b2, name))) {
			t.Errorf("%s differs from the original snapshot's", name)
		}
	}
	if ents, _ := os.ReadDir(b2); len(ents) != 1 {
		t.Errorf("output folder has %v, want the one partition", ents)
	}
}

func TestParquetFooterAndTypes(t *testing.T) {
	dir, m := build(t, mixed)
	out := t.TempDir()
	run(t, export.Parquet, out, dir)
	part := filepath.Join(out, "round_id="+strings.TrimPrefix(m.RoundID, "native:"))
	f, err := os.Open(filepath.Join(part, "trials.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		export.MetaExportFormat: export.FormatVersion, export.MetaRoundID: m.RoundID,
		export.MetaDataset: m.Protocol.DatasetDigest, export.MetaCohort: m.Protocol.CohortDigest,
		export.MetaTable: export.TableTrials,
	} {
		if got, _ := pf.Lookup(k); got != want {
			t.Errorf("footer %s = %q, want %q", k, got, want)
		}
	}
	if got, _ := pf.Lookup(export.MetaSnapshotSHA256); len(got) != 64 {
		t.Errorf("footer snapshot sha256 = %q", got)
	}
	rows, err := parquet.ReadFile[export.TrialRow](filepath.Join(part, "trials.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var missing *export.TrialRow
	for i := range rows {
		if rows[i].TrialID == "a#2" {
			missing = &rows[i]
		}
	}
	if missing == nil || missing.Status != "missing" || missing.Reason != nil || missing.TrialAttempt != nil || missing.Attempts != 0 {
		t.Fatalf("missing trial row = %+v", missing)
	}
	rounds, err := parquet.ReadFile[export.RoundRow](filepath.Join(part, "rounds.parquet"))
	if err != nil || len(rounds) != 1 {
		t.Fatal(rounds, err)
	}
	r := rounds[0]
	if r.Expected != 9 || r.Missing != 1 || r.Label != "degraded" || *r.SuccessRate != *m.SuccessRate || r.ProtocolKey != export.ProtocolKey(m) {
		t.Errorf("rounds row = %+v", r)
	}
	// Three tasks: no clustered interval, and the snapshot's reason why.
	why := m.Statistics.SuccessRateCI95ClusteredNull
	if why == nil || r.CI95ClusteredLow != nil || r.NEff != nil || r.CI95ClusteredNull == nil || *r.CI95ClusteredNull != why.Code ||
		*r.CI95ClusteredNullMsg != why.Message || *r.NullTasks != 3 || *r.NullMinTasks != int64(why.MinTasks) {
		t.Errorf("rounds null interval: %v %v %v, snapshot %+v", r.CI95ClusteredNull, r.NullTasks, r.NullMinTasks, why)
	}
}

func TestExportRefuses(t *testing.T) {
	dir, _ := build(t, mixed)
	t.Run("tampered", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad")
		if err := os.CopyFS(bad, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(bad, snapshot.ObservationsFile)
		b := readAll(t, p)
		os.WriteFile(p, []byte(strings.Replace(string(b), `"failure"`, `"success"`, 1)), 0o644)
		out := t.TempDir()
		_, err := export.Run(context.Background(), []string{bad}, export.Options{Format: export.CSV, Out: out})
		var se *export.SnapshotError
		if !errors.As(err, &se) || !errors.Is(err, export.ErrUnverified) {
			t.Fatalf("err = %v", err)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Errorf("output folder has %v after a refused export", ents)
		}
	})
	// A change to the last observation, its SHA-256 updated in the
	// manifest, is found only when the whole round has been re-derived:
	// still no partition of it, and the good round before it is exported.
	t.Run("corrupted near its end", func(t *testing.T) {
		trials := map[string]string{}
		for i := range 3000 {
			trials[fmt.Sprintf("t%04d#%d", i/3, i%3)] = []string{"success", "failure", "infra_error"}[i%3]
		}
		good, _ := build(t, mixed)
		bad, m := build(t, trials)
		p := filepath.Join(bad, snapshot.ObservationsFile)
		b := readAll(t, p)
		i := strings.LastIndex(string(b), `"infra_error"`)
		if i < len(b)-400 {
			t.Fatalf("last infra_error at %d of %d bytes", i, len(b))
		}
		b = []byte(string(b[:i]) + strings.Replace(string(b[i:]), `"infra_error"`, `"failure"`, 2))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		mp := filepath.Join(bad, snapshot.ManifestFile)
		if err := os.WriteFile(mp, []byte(strings.Replace(string(readAll(t, mp)), m.Files[snapshot.ObservationsFile], hex.EncodeToString(sum[:]), 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		ps, err := export.Run(context.Background(), []string{good, bad}, export.Options{Format: export.Parquet, Out: out})
		var se *export.SnapshotError
		if !errors.As(err, &se) || !errors.Is(err, export.ErrUnverified) || se.Dir != bad {
			t.Fatalf("err = %v", err)
		}
		if !strings.Contains(err.Error(), "observations.jsonl") {
			t.Errorf("the problem does not name the observations: %v", err)
		}
		ents, _ := os.ReadDir(out)
		if len(ps) != 1 || len(ents) != 1 || ents[0].Name() != filepath.Base(ps[0].Dir) {
			t.Errorf("output folder has %v after the second round was refused, want only %v", ents, ps)
		}
	})
	t.Run("secret", func(t *testing.T) {
		out := t.TempDir()
		// The task name "b" is a "secret" here: an exported string.
		sc := redact.NewScanner([]string{"TPCTL_TEST_TOKEN=c,\"quoted-task-name\""})
		_, err := export.Run(context.Background(), []string{dir}, export.Options{Format: export.JSONL, Out: out, Scanner: sc})
		var ie *redact.IdentityError
		if !errors.As(err, &ie) {
			t.Fatalf("err = %v, want an identity error", err)
		}
		if strings.Contains(err.Error(), `c,"quoted-task-name"`) {
			t.Errorf("error quotes the secret: %v", err)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Errorf("output folder has %v after a refused export", ents)
		}
	})
	// The judge's detail of a tpctl-snapshot/3 attempt is an exported
	// string like any other.
	t.Run("secret in a detail", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "snap")
		if _, err := comparetest.Build(dir, comparetest.Spec{Trials: map[string]string{"a#0": "failure", "b#0": "success"},
			Explain: func(task string, _ int, a *snapshot.AttemptOutcome) {
				if task == "b" {
					a.Detail = "login failed for hunter2-s3cret-value"
				}
			}}); err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		sc := redact.NewScanner([]string{"TPCTL_TEST_TOKEN=hunter2-s3cret-value"})
		_, err := export.Run(context.Background(), []string{dir}, export.Options{Format: export.Parquet, Out: out, Scanner: sc})
		var ie *redact.IdentityError
		if !errors.As(err, &ie) || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "detail") {
			t.Fatalf("err = %v, want an identity error naming the detail column", err)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Errorf("output folder has %v after a refused export", ents)
		}
	})
	// The rows are written on a goroutine of their own, behind the read:
	// a secret in the last trial and a problem found only once every
	// trial was read give the secret's error, as a writer in step with
	// the read would, however far behind the writer was.
	t.Run("secret before a problem at the end", func(t *testing.T) {
		trials := map[string]string{"zz-secret-task-name#0": "success"}
		for i := range 3000 {
			trials[fmt.Sprintf("t%04d#%d", i/3, i%3)] = []string{"success", "failure", "infra_error"}[i%3]
		}
		bad, m := build(t, trials)
		// The manifest's counts are checked against the trials once all
		// are read.
		mp := filepath.Join(bad, snapshot.ManifestFile)
		was := fmt.Sprintf(`"success": %d,`, m.Counts.Success)
		b := strings.Replace(string(readAll(t, mp)), was, fmt.Sprintf(`"success": %d,`, m.Counts.Success+1), 1)
		if !strings.Contains(string(readAll(t, mp)), was) {
			t.Fatalf("no %s in the manifest", was)
		}
		if err := os.WriteFile(mp, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
		sc := redact.NewScanner([]string{"TPCTL_TEST_TOKEN=zz-secret-task-name"})
		for range 5 {
			out := t.TempDir()
			_, err := export.Run(context.Background(), []string{bad}, export.Options{Format: export.Parquet, Out: out, Scanner: sc})
			var ie *redact.IdentityError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want the identity error of the last trial", err)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Errorf("output folder has %v after a refused export", ents)
			}
		}
	})
	// The gate skips a value it passed recently in the same column; a
	// secret among many short values that change from row to row is still
	// found.
	t.Run("secret among changing details", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "snap")
		trials := map[string]string{}
		for i := range 40 {
			trials[fmt.Sprintf("t%02d#0", i)] = "failure"
		}
		if _, err := comparetest.Build(dir, comparetest.Spec{Trials: trials,
			Explain: func(task string, _ int, a *snapshot.AttemptOutcome) {
				a.Detail = fmt.Sprintf("detail %d", (int(task[1]-'0')*10+int(task[2]-'0'))%12)
				if task == "t31" {
					a.Detail = "login failed for hunter2-s3cret-value"
				}
			}}); err != nil {
			t.Fatal(err)
		}
		sc := redact.NewScanner([]string{"TPCTL_TEST_TOKEN=hunter2-s3cret-value"})
		_, err := export.Run(context.Background(), []string{dir}, export.Options{Format: export.CSV, Out: t.TempDir(), Scanner: sc})
		var ie *redact.IdentityError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "t31#0") {
			t.Fatalf("err = %v, want an identity error naming trial t31#0", err)
		}
	})
	// The gate scans the rows' strings in batches: of two secrets in
	// one batch the first in row order is the one reported, named by its
	// own trial, in every format.
	t.Run("first of two secrets in a batch", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "snap")
		trials := map[string]string{}
		for i := range 300 {
			trials[fmt.Sprintf("t%03d#0", i)] = "failure"
		}
		if _, err := comparetest.Build(dir, comparetest.Spec{Trials: trials,
			Explain: func(task string, _ int, a *snapshot.AttemptOutcome) {
				a.Detail = "assertion failed in " + task
				if task == "t123" || task == "t125" || task == "t290" {
					a.Detail = "login failed for hunter2-s3cret-value in " + task
				}
			}}); err != nil {
			t.Fatal(err)
		}
		sc := redact.NewScanner([]string{"TPCTL_TEST_TOKEN=hunter2-s3cret-value"})
		for _, f := range export.Formats {
			out := t.TempDir()
			_, err := export.Run(context.Background(), []string{dir}, export.Options{Format: f, Out: out, Scanner: sc})
			var ie *redact.IdentityError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), "attempts trial t123#0") || !strings.Contains(err.Error(), "detail") {
				t.Errorf("%s: err = %v, want an identity error naming the detail of trial t123#0", f, err)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Errorf("%s: output folder has %v after a refused export", f, ents)
			}
		}
	})
	t.Run("conflict", func(t *testing.T) {
		out := t.TempDir()
		ps := run(t, export.CSV, out, dir)
		os.WriteFile(filepath.Join(ps[0].Dir, "tasks.csv"), []byte("edited\n"), 0o644)
		_, err := export.Run(context.Background(), []string{dir}, export.Options{Format: export.CSV, Out: out})
		var ce *export.ConflictError
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v", err)
		}
	})
}
