package report_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/tuneplane/tpctl/internal/safefs"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/report"
	"github.com/tuneplane/tpctl/report/reporttest"
	"github.com/tuneplane/tpctl/snapshot"
)

func TestWriteRoundDeterministicAndEscaped(t *testing.T) {
	dir := t.TempDir()
	r := reporttest.SmallRound(t, dir)
	var a, b bytes.Buffer
	if err := report.WriteRound(&a, r); err != nil {
		t.Fatal(err)
	}
	// The same snapshot in another folder gives the same page: no path
	// is written into it.
	moved := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.CopyFS(moved, os.DirFS(filepath.Join(dir, "round"))); err != nil {
		t.Fatal(err)
	}
	again, err := report.LoadRound(moved)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.WriteRound(&b, again); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("TPCTL_REPORT_DUMP"); out != "" {
		os.WriteFile(out, a.Bytes(), 0o644)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two reports of the same snapshot differ")
	}
	page := a.String()
	for _, bad := range []string{"<img", "<b>bold", "window.__xss=2</script>", "\u2028", "\u2029"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q unescaped", bad)
		}
	}
	// The main data, a round's four data blocks (details, search text,
	// bodies, their text) and the code.
	if n := strings.Count(page, "</script>"); n != 6 {
		t.Errorf("the page has %d </script> tags, want 6 (5 data blocks and the code)", n)
	}
	// The streamed read writes the same page as the loaded round.
	var c bytes.Buffer
	w, err := report.WriteRoundSnapshot(&c, moved, "")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Error("WriteRoundSnapshot's page differs from WriteRound's")
	}
	if w.Trials != len(r.Trials) || w.RoundID != r.Manifest.RoundID {
		t.Errorf("WriteRoundSnapshot says %+v, want %d trials of %s", w, len(r.Trials), r.Manifest.RoundID)
	}
	for _, want := range []string{"Content-Security-Policy", "missing", "routing name proves nothing"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// BenchmarkWriteRound10k measures writing the HTML of a 10,000-trial round.
func BenchmarkWriteRound10k(b *testing.B) {
	r := bigRound(b, b.TempDir())
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := report.WriteRound(&buf, r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len())/(1<<20), "page-MiB")
}

func page(t *testing.T, write func(*bytes.Buffer) error) string {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestWriteComparisonNotComparable(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	base := reporttest.SmallRound(t, filepath.Join(dir, "a"))
	cand := reporttest.SmallRound(t, filepath.Join(dir, "b"))
	res, err := compare.Rounds(context.Background(), filepath.Join(dir, "a", "round"), filepath.Join(dir, "b", "round"))
	if err != nil {
		t.Fatal(err)
	}
	got := page(t, func(w *bytes.Buffer) error { return report.WriteComparison(w, base, cand, res) })
	for _, want := range []string{"✗ not comparable", "No delta: the rounds are not comparable",
		`<th scope="row">base fully scored</th>`, "<code>base_incomplete</code>", "<code>candidate_incomplete</code>"} {
		if !strings.Contains(got, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(got, `class="delta"`) {
		t.Error("a delta is shown for rounds that are not comparable")
	}
	// The gate marks exactly the two incomplete rounds as failed.
	if n := strings.Count(got, `<tr class="fail">`); n != 2 {
		t.Errorf("%d failed gate rows, want 2", n)
	}
}

func TestWriteComparisonGate(t *testing.T) {
	dir := t.TempDir()
	clean := []reporttest.Trial{{Task: "t", Repeat: 0, Statuses: []string{"success"}}, {Task: "t", Repeat: 1, Statuses: []string{"failure"}}}
	flipped := []reporttest.Trial{{Task: "t", Repeat: 0, Statuses: []string{"success"}}, {Task: "t", Repeat: 1, Statuses: []string{"success"}}}
	base := reporttest.Write(t, filepath.Join(dir, "a"), clean, nil)
	cand := reporttest.Write(t, filepath.Join(dir, "b"), flipped, nil)
	res, err := compare.Rounds(context.Background(), filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	got := page(t, func(w *bytes.Buffer) error { return report.WriteComparison(w, base, cand, res) })
	for _, want := range []string{"✓ comparable", "<strong>&#43;50.0</strong> percentage points (candidate − base success rate; not a significance claim)",
		`href="#base/t%231"`, `href="#candidate/t%231"`} {
		if !strings.Contains(got, want) {
			t.Errorf("comparable page lacks %q", want)
		}
	}

	// A condition the page has no row for (a newer compare) still fails
	// the gate, under its own code, and takes the delta away.
	res.Reasons = append(res.Reasons, compare.Reason{Code: "trials_differ_somehow", Message: "trial t#1 differs in a new way"})
	res.Comparable, res.Delta, res.McNemarP = false, nil, nil
	got = page(t, func(w *bytes.Buffer) error { return report.WriteComparison(w, base, cand, res) })
	for _, want := range []string{`<tr class="fail"><th scope="row">trials_differ_somehow</th>`, "trial t#1 differs in a new way", "No delta"} {
		if !strings.Contains(got, want) {
			t.Errorf("page with an unknown reason lacks %q", want)
		}
	}

	// The result must be of the two rounds given.
	if err := report.WriteComparison(&bytes.Buffer{}, cand, base, res); err == nil {
		t.Error("a comparison of other rounds was rendered")
	}
}

func TestWriteRoundStatistics(t *testing.T) {
	r := reporttest.SmallRound(t, t.TempDir())
	// A snapshot carries its statistics (tpctl-snapshot/2): they are read
	// from snapshot.json and shown.
	if r.Statistics == nil {
		t.Fatal("the statistics of a tpctl-snapshot/2 manifest were not read")
	}
	if got := page(t, func(w *bytes.Buffer) error { return report.WriteRound(w, r) }); !strings.Contains(got, "<th scope=\"row\">task clusters</th><td>12</td>") {
		t.Error("the snapshot's own statistics are not shown")
	}
	// An older snapshot has none, and the page shows none.
	r.Statistics = nil
	if got := page(t, func(w *bytes.Buffer) error { return report.WriteRound(w, r) }); strings.Contains(got, "Repeated-trial statistics") {
		t.Error("statistics shown for a snapshot without them")
	}
	r.Statistics = report.DecodeStatistics([]byte(`{"statistics": {"clusters": 11, "success_rate_se_clustered": 0.0712,
		"success_rate_ci95_clustered": [0.51, 0.79], "pass_at_k": {"1": 0.65, "10": null, "2": 0.8},
		"pass_hat_k": {"1": 0.65, "2": 0.5}, "pass_k_tasks": {"counted": 7, "left_out": 4, "left_out_reasons": {"not_all_scored": 4}}}}`))
	got := page(t, func(w *bytes.Buffer) error { return report.WriteRound(w, r) })
	for _, want := range []string{
		"<td>11</td>", "<td>7.12 percentage points</td>", "<td>51.0% – 79.0% (normal)</td>",
		"pass@1 / pass^1</th><td>65.0% / 65.0%", "pass@2 / pass^2</th><td>80.0% / 50.0%", "pass@10 / pass^10</th><td>not defined / not defined",
		"7 counted; 4 left out (not every repeat scored); not_all_scored: 4",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("statistics lack %q", want)
		}
	}
	if strings.Index(got, "pass@2 ") > strings.Index(got, "pass@10 ") {
		t.Error("pass@k rows are not in numeric order")
	}
	// tpctl-snapshot/3: the effective-n interval, the tasks of each k, and
	// a null interval with its reason.
	r.Statistics = report.DecodeStatistics([]byte(`{"statistics": {"clusters": 11, "success_rate_se_clustered": 0.0712,
		"success_rate_ci95_clustered": [0.51, 0.79], "success_rate_n_eff": 42.25, "pass_at_k": {"1": 0.65, "2": 0.8},
		"pass_hat_k": {"1": 0.65, "2": 0.5}, "pass_k_tasks_by_k": {"1": {"counted": 11, "left_out": 0, "left_out_reasons": {}},
		"2": {"counted": 9, "left_out": 2, "left_out_reasons": {"repeat_infra_error": 2}}}}}`))
	got = page(t, func(w *bytes.Buffer) error { return report.WriteRound(w, r) })
	for _, want := range []string{
		"<td>51.0% – 79.0% (Wilson on 42.2 effective trials, t(G−1))</td>",
		"pass@1 / pass^1</th><td>65.0% / 65.0% <span class=\"note\">(11 counted; 0 left out (fewer than 1 scored repeats))</span>",
		"pass@2 / pass^2</th><td>80.0% / 50.0% <span class=\"note\">(9 counted; 2 left out (fewer than 2 scored repeats); repeat_infra_error: 2)</span>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("tpctl-snapshot/3 statistics lack %q", want)
		}
	}
	r.Statistics = report.DecodeStatistics([]byte(`{"statistics": {"clusters": 3, "success_rate_se_clustered": 0.1,
		"success_rate_ci95_clustered": null, "success_rate_ci95_clustered_null": {"code": "too_few_tasks", "tasks": 3, "min_tasks": 5,
		"message": "3 tasks; a task-clustered interval needs at least 5"}, "pass_at_k": {}, "pass_hat_k": {}, "pass_k_tasks_by_k": {}}}`))
	got = page(t, func(w *bytes.Buffer) error { return report.WriteRound(w, r) })
	if want := "<td>not given: 3 tasks; a task-clustered interval needs at least 5</td>"; !strings.Contains(got, want) {
		t.Errorf("null interval: page lacks %q", want)
	}
}

func TestDecodeStatistics(t *testing.T) {
	for _, tc := range []struct {
		name, manifest string
		want           bool
	}{
		{"absent", `{"format": "tpctl-snapshot/1"}`, false},
		{"null", `{"statistics": null}`, false},
		{"wrong shape", `{"statistics": 5}`, false},
		{"wrong member", `{"statistics": {"clusters": "many"}}`, false},
		{"partial", `{"statistics": {"clusters": 3}}`, true},
		{"not JSON", `{`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := report.DecodeStatistics([]byte(tc.manifest)); (got != nil) != tc.want {
				t.Errorf("DecodeStatistics(%s) = %+v, want present %v", tc.manifest, got, tc.want)
			}
		})
	}
}

func TestRatesNotDefined(t *testing.T) {
	r := reporttest.Write(t, filepath.Join(t.TempDir(), "r"), []reporttest.Trial{
		{Task: "t", Repeat: 0, Statuses: []string{"unscored"}}, {Task: "t", Repeat: 1},
	}, nil)
	got := page(t, func(w *bytes.Buffer) error { return report.WriteRound(w, r) })
	if !strings.Contains(got, "<strong>not defined</strong> (no trial was scored: success &#43; failure = 0)") {
		t.Error("a success rate with no scored trial is not shown as not defined")
	}
	if strings.Contains(got, "success / (success + failure)</code>: <strong>0.0%") {
		t.Error("an undefined success rate is shown as 0%")
	}
}

func TestLoadRoundRefuses(t *testing.T) {
	dir := t.TempDir()
	reporttest.SmallRound(t, dir)
	snap := filepath.Join(dir, "round")
	if err := os.WriteFile(filepath.Join(snap, "extra.html"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := report.LoadRound(snap)
	var ve *snapshot.VerifyError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "file_unlisted") {
		t.Errorf("LoadRound of a modified snapshot: %v, want a VerifyError naming file_unlisted", err)
	}
	if _, err := report.LoadRound(filepath.Join(dir, "nothing")); !snapshot.IsNotSnapshot(err) {
		t.Errorf("LoadRound of a missing folder: %v, want a not-a-snapshot error", err)
	}
}

func TestSave(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "snap")
	if err := os.Mkdir(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.html")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if n, err := report.Save(out, false, []string{snap}, write("one"), nil); err != nil || n != 3 {
		t.Fatalf("Save = %d, %v", n, err)
	}
	if _, err := report.Save(out, false, nil, write("two"), nil); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Save over an existing file without force: %v, want fs.ErrExist", err)
	}
	if _, err := report.Save(out, true, nil, write("three"), nil); err != nil {
		t.Errorf("Save with force: %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "three" {
		t.Errorf("file holds %q after --force", b)
	}
	if _, err := report.Save(filepath.Join(snap, "sub", "r.html"), true, []string{snap}, write("x"), nil); !errors.As(err, new(*safefs.InsideSnapshotError)) {
		t.Errorf("Save inside a snapshot: %v, want a *safefs.InsideSnapshotError", err)
	}
	if _, err := report.Save(snap, true, nil, write("x"), nil); err == nil {
		t.Error("Save onto a folder succeeded")
	}
	failed := filepath.Join(dir, "failed.html")
	if _, err := report.Save(failed, false, nil, func(io.Writer) error { return errors.New("boom") }, nil); err == nil {
		t.Error("a failed render was reported as saved")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("after the failed render the folder holds %d entries, want 2 (snap, r.html)", len(entries))
	}
}

func TestWriteRoundRefusesTooManyTrials(t *testing.T) {
	r := reporttest.SmallRound(t, t.TempDir())
	big := *r
	big.Trials = make([]report.Trial, report.MaxTrials+1)
	if err := report.WriteRound(&bytes.Buffer{}, &big); err == nil || !strings.Contains(err.Error(), "--trials --output json") {
		t.Errorf("WriteRound of %d trials: %v, want a refusal naming the terminal view", len(big.Trials), err)
	}
}

func TestWriteRoundSignature(t *testing.T) {
	r := reporttest.SmallRound(t, t.TempDir())
	if got := page(t, func(w *bytes.Buffer) error { return report.WriteRound(w, r) }); strings.Contains(got, `<p class="note attestation">`) {
		t.Error("an attestation row without a verified attestation")
	}
	r.Signature = "signed by keyid <b>1234</b>, verified"
	got := page(t, func(w *bytes.Buffer) error { return report.WriteRound(w, r) })
	if !strings.Contains(got, `<p class="note attestation">attestation: signed by keyid &lt;b&gt;1234&lt;/b&gt;, verified</p>`) {
		t.Error("the verified attestation is not shown (escaped)")
	}
}

// TestSaveChecksEverything: the check sees every byte of the page, also
// across its windows and inside the packed (compressed) blocks: a value
// only a trial's packed evidence holds (its task_checksum) is found, a
// value cut by a window's edge is found, and a refused page leaves no
// file (Save) and writes nothing (Stream).
func TestSaveChecksEverything(t *testing.T) {
	r := reporttest.SmallRound(t, t.TempDir())
	sum := *r.Trials[0].Observation.Evidence.TaskChecksum
	render := func(w io.Writer) error { return report.WriteRound(w, r) }
	var page bytes.Buffer
	if err := render(&page); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.String(), sum) {
		t.Fatal("fixture: the task_checksum is in the page as written; the test needs a value only the packed blocks hold")
	}
	refuse := func(secret string) func([]byte) error {
		return func(b []byte) error {
			if bytes.Contains(b, []byte(secret)) {
				return errors.New("refused: " + secret)
			}
			return nil
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	if _, err := report.Save(out, false, nil, render, refuse(sum)); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("a page carrying the value packed was saved: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused page left %d files", len(entries))
	}
	var stdout bytes.Buffer
	if _, err := report.Stream(&stdout, render, refuse(sum)); err == nil || stdout.Len() != 0 {
		t.Errorf("Stream of a refused page: %v, %d bytes written", err, stdout.Len())
	}
	// A value across the edge of the first window, in a page of many
	// windows: the windows overlap.
	big := strings.Repeat(strings.Repeat("x", 1000)+"\n", 3*report.CheckWindow/1000)
	at := report.CheckWindow - 10
	planted := big[:at] + "SECRET-VALUE" + big[at:]
	text := func(w io.Writer) error { _, err := io.WriteString(w, planted); return err }
	if _, err := report.Stream(io.Discard, text, refuse("SECRET-VALUE")); err == nil {
		t.Error("a value across a window's edge was not found")
	}
	// A page the check accepts is written whole.
	if n, err := report.Stream(&stdout, render, refuse("no such value")); err != nil || n != int64(page.Len()) || !bytes.Equal(stdout.Bytes(), page.Bytes()) {
		t.Errorf("Stream = %d, %v; want the page's %d bytes", n, err, page.Len())
	}
}

// TestWriteComparisonCapsLists: a comparison of many tasks draws at most
// 200 task rows and says how many more there are, while its counts stay
// whole.
func TestWriteComparisonCapsLists(t *testing.T) {
	dir := t.TempDir()
	var bt, ct []reporttest.Trial
	for i := range 250 {
		task := fmt.Sprintf("harbor/task-%03d", i)
		bt = append(bt, reporttest.Trial{Task: task, Statuses: []string{snapshot.StatusFailure}})
		ct = append(ct, reporttest.Trial{Task: task, Statuses: []string{snapshot.StatusSuccess}})
	}
	base := reporttest.Write(t, filepath.Join(dir, "base"), bt, nil)
	cand := reporttest.Write(t, filepath.Join(dir, "cand"), ct, nil)
	res, err := compare.Rounds(context.Background(), filepath.Join(dir, "base"), filepath.Join(dir, "cand"))
	if err != nil {
		t.Fatal(err)
	}
	p := page(t, func(w *bytes.Buffer) error { return report.WriteComparison(w, base, cand, res) })
	for _, want := range []string{"250 failure → success", "failure → success (250)", "… and 50 more: n / p in the side-by-side view go through every one",
		"(250 tasks, worst change first; the first 200)", "… and 50 more tasks: each round's task table below lists every one."} {
		if !strings.Contains(p, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(p, `side by side · <a href="#base/`); n != 200 {
		t.Errorf("%d failure → success rows drawn, want 200", n)
	}
}
