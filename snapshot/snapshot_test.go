package snapshot

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/internal/golden"
	"github.com/tuneplane/tpctl/internal/jcs"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

const testPlan = `{
  "version": 1,
  "source": {"format": "harbor", "revision": "5f5618b8f5419dde63f2df6d86706782e597e8a3"},
  "name": "unit",
  "split": "train",
  "trainable": true,
  "checkpoint": {"ref": "hf://acme/m@0123456789abcdef0123456789abcdef01234567", "served_as": "hosted_vllm/m"},
  "protocol": {
    "dataset_digest": "1111111111111111111111111111111111111111111111111111111111111111",
    "verifier_digest": "2222222222222222222222222222222222222222222222222222222222222222",
    "environment_digest": "3333333333333333333333333333333333333333333333333333333333333333",
    "harness_digest": "4444444444444444444444444444444444444444444444444444444444444444"
  },
  "settings": {"temperature": 0, "repeats": 2},
  "trials": [
    {"task": "b", "repeat": 0, "attempts": [{"retry": 0, "dir": "b0"}]},
    {"task": "a", "repeat": 1, "attempts": [{"retry": 0, "dir": "a1"}]},
    {"task": "a", "repeat": 0, "attempts": [{"retry": 0, "dir": "a0x"}, {"retry": 1, "dir": "a0"}]},
    {"task": "c", "repeat": 0, "attempts": []}
  ]
}`

func ptr[T any](v T) *T { return &v }

func testObservations() []Observation {
	sha := func(c string) *string { return ptr(strings.Repeat(c, 64)) }
	mk := func(task string, rep int, outs ...AttemptOutcome) Observation {
		cur := outs[len(outs)-1]
		return Observation{
			TrialID: TrialID(task, rep), Task: task, Repeat: rep,
			TrialAttempt: cur.Retry, Attempts: len(outs),
			Status: cur.Status, Reason: cur.Reason, Reward: cur.Reward, ExceptionType: cur.ExceptionType,
			Evidence:        Evidence{ResultSHA256: cur.ResultSHA256, TaskChecksum: ptr("ck"), VerifierEnvironmentMode: nil},
			AttemptOutcomes: outs,
		}
	}
	return []Observation{
		mk("a", 0,
			AttemptOutcome{Retry: 0, Status: StatusInfraError, Reason: "infra_exception", ExceptionType: ptr("EnvironmentStartTimeoutError"), ResultSHA256: sha("a")},
			AttemptOutcome{Retry: 1, Status: StatusSuccess, Reason: "reward_success", Reward: ptr(1.0), ResultSHA256: sha("b")}),
		mk("a", 1, AttemptOutcome{Retry: 0, Status: StatusFailure, Reason: "reward_failure", Reward: ptr(0.0), ResultSHA256: sha("c")}),
		mk("b", 0, AttemptOutcome{Retry: 0, Status: StatusUnscored, Reason: "unknown_exception", ExceptionType: ptr("WeirdError"), ResultSHA256: sha("d")}),
	}
}

func writeSnapshot(t *testing.T, dir string, obs []Observation, trajectories ...string) *Manifest {
	t.Helper()
	w, err := Create(dir, []byte(testPlan), Options{FormatVerified: true, OutcomeRules: "tpctl-outcomes/1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range obs {
		if err := w.Add(&o); err != nil {
			t.Fatal(err)
		}
	}
	for _, tr := range trajectories {
		if err := w.AddTrajectory([]byte(tr), false); err != nil {
			t.Fatal(err)
		}
	}
	m, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestWriteGoldenAndVerify(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snap")
	m := writeSnapshot(t, dir, testObservations())

	wantCounts := Counts{Expected: 4, Success: 1, Failure: 1, InfraError: 0, Unscored: 1, Missing: 1}
	if diff := cmp.Diff(wantCounts, m.Counts); diff != "" {
		t.Errorf("counts mismatch (-want +got):\n%s", diff)
	}
	if m.Label != LabelDegraded || *m.SuccessRate != 0.5 || *m.Coverage != 0.5 {
		t.Errorf("label %s rate %v coverage %v", m.Label, *m.SuccessRate, *m.Coverage)
	}
	if !strings.HasPrefix(m.RoundID, "native:") || len(m.RoundID) != len("native:")+64 {
		t.Errorf("round id %q", m.RoundID)
	}
	for _, name := range []string{ManifestFile, PlanFile, ObservationsFile} {
		goldenFile(t, filepath.Join(dir, name), filepath.Join("testdata", "golden", name))
	}
	rep, err := Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Fatalf("fresh snapshot does not verify: %+v", rep.Problems)
	}
}

func goldenFile(t *testing.T, gotPath, goldenPath string) {
	t.Helper()
	got, err := os.ReadFile(gotPath)
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckFile(t, *update, got, goldenPath)
}

func TestDeterministic(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	writeSnapshot(t, a, testObservations(), `{"x":1}`)
	writeSnapshot(t, b, testObservations(), `{"x":1}`)
	for _, name := range []string{ManifestFile, PlanFile, ObservationsFile, "trajectories/0001.json"} {
		x, _ := os.ReadFile(filepath.Join(a, name))
		y, _ := os.ReadFile(filepath.Join(b, name))
		if !bytes.Equal(x, y) || len(x) == 0 {
			t.Errorf("%s differs between two identical imports", name)
		}
	}
}

func TestRoundID(t *testing.T) {
	base := t.TempDir()
	ref := writeSnapshot(t, filepath.Join(base, "ref"), testObservations())

	// Trajectories do not change the round.
	withTraj := writeSnapshot(t, filepath.Join(base, "traj"), testObservations(), `{"m":[]}`)
	if withTraj.RoundID != ref.RoundID {
		t.Error("adding a trajectory changed the round ID")
	}
	// One reward changes it.
	obs := testObservations()
	obs[1].Reward = ptr(1.0)
	obs[1].Status, obs[1].Reason = StatusSuccess, "reward_success"
	obs[1].AttemptOutcomes[0].Reward, obs[1].AttemptOutcomes[0].Status, obs[1].AttemptOutcomes[0].Reason = ptr(1.0), StatusSuccess, "reward_success"
	changed := writeSnapshot(t, filepath.Join(base, "changed"), obs)
	if changed.RoundID == ref.RoundID {
		t.Error("changing one reward kept the round ID")
	}
	// So does a lower retry's outcome, even though it is not the current result.
	obs = testObservations()
	obs[0].AttemptOutcomes[0].Reason = "verifier_timeout"
	lower := writeSnapshot(t, filepath.Join(base, "lower"), obs)
	if lower.RoundID == ref.RoundID {
		t.Error("changing a lower retry's outcome kept the round ID")
	}
}

func TestAddRejects(t *testing.T) {
	tests := map[string]func(o []Observation) []Observation{
		"not in plan":  func(o []Observation) []Observation { o[0].Task, o[0].TrialID = "zz", "zz#0"; return o[:1] },
		"out of order": func(o []Observation) []Observation { return []Observation{o[1], o[0]} },
		"repeated":     func(o []Observation) []Observation { return []Observation{o[1], o[1]} },
		"bad id":       func(o []Observation) []Observation { o[0].TrialID = "a#9"; return o },
		"status mismatch": func(o []Observation) []Observation {
			o[0].Status = StatusFailure
			return o
		},
		"no attempts": func(o []Observation) []Observation { o[1].AttemptOutcomes = nil; return o },
		"bad status": func(o []Observation) []Observation {
			o[1].Status, o[1].AttemptOutcomes[0].Status = "great", "great"
			return o
		},
		"nan reward":   func(o []Observation) []Observation { return nanReward(o) },
		"retry repeat": func(o []Observation) []Observation { o[0].AttemptOutcomes[0].Retry = 1; return o },
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "s")
			w, err := Create(dir, []byte(testPlan), Options{OutcomeRules: "r"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			var failed bool
			for _, o := range mutate(testObservations()) {
				if err := w.Add(&o); err != nil {
					failed = true
					break
				}
			}
			if !failed {
				t.Error("Add accepted an invalid observation")
			}
		})
	}
}

func nanReward(o []Observation) []Observation {
	var nan float64
	json.Unmarshal([]byte("0"), &nan)
	nan = nan / nan
	o[1].Reward, o[1].AttemptOutcomes[0].Reward = &nan, &nan
	return o
}

func TestCreateRefusesExisting(t *testing.T) {
	base := t.TempDir()
	empty := filepath.Join(base, "empty")
	os.Mkdir(empty, 0o755)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o644)
	for _, dir := range []string{empty, file} {
		if _, err := Create(dir, []byte(testPlan), Options{}); err == nil {
			t.Errorf("Create(%q) succeeded on an existing path", dir)
		}
	}
	if _, err := Create(filepath.Join(base, "no", "parent", "x"), []byte(testPlan), Options{}); err == nil {
		t.Error("Create succeeded without a parent folder")
	}
	// Abort leaves nothing behind.
	w, err := Create(filepath.Join(base, "aborted"), []byte(testPlan), Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Abort()
	entries, _ := os.ReadDir(base)
	if len(entries) != 2 {
		t.Errorf("aborted snapshot left files: %v", entries)
	}
}

func TestVerifyTamper(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(dir string) error
		code   string
	}{
		{"byte changed", func(d string) error {
			return replaceIn(filepath.Join(d, ObservationsFile), `"reward":0`, `"reward":1`)
		}, ProblemFileModified},
		{"file deleted", func(d string) error { return os.Remove(filepath.Join(d, "trajectories/0001.json")) }, ProblemFileMissing},
		{"file added", func(d string) error { return os.WriteFile(filepath.Join(d, "extra.txt"), []byte("x"), 0o644) }, ProblemFileUnlisted},
		{"round edited", func(d string) error {
			return replaceIn(filepath.Join(d, ManifestFile), `"round_id": "native:`, `"round_id": "native:0`)
		}, ProblemRoundMismatch},
		{"counts edited", func(d string) error {
			return replaceIn(filepath.Join(d, ManifestFile), `"success": 1`, `"success": 2`)
		}, ProblemFieldMismatch},
		{"plan edited and rehashed", func(d string) error {
			if err := replaceIn(filepath.Join(d, PlanFile), `"name":"unit"`, `"name":"other"`); err != nil {
				return err
			}
			return rehash(d, PlanFile)
		}, ProblemRoundMismatch},
		{"split made held-out and rehashed", func(d string) error {
			if err := replaceIn(filepath.Join(d, PlanFile), `"split":"train"`, `"split":"heldout"`); err != nil {
				return err
			}
			return rehash(d, PlanFile)
		}, ProblemObservation},
		{"symlink added", func(d string) error { return os.Symlink("/etc/passwd", filepath.Join(d, "link")) }, ProblemFileUnlisted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "snap")
			writeSnapshot(t, dir, testObservations(), `{"t":1}`)
			if err := tt.tamper(dir); err != nil {
				t.Fatal(err)
			}
			rep, err := Verify(dir)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK {
				t.Fatal("tampered snapshot verified")
			}
			var codes []string
			for _, p := range rep.Problems {
				codes = append(codes, p.Code)
			}
			if !strings.Contains(strings.Join(codes, " "), tt.code) {
				t.Errorf("problems %v do not include %s", rep.Problems, tt.code)
			}
		})
	}
	if _, err := Verify(t.TempDir()); err == nil || !IsNotSnapshot(err) {
		t.Errorf("Verify of an empty folder: %v; want NotSnapshotError", err)
	}
}

func replaceIn(path, old, new string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Contains(b, []byte(old)) {
		return fmt.Errorf("%q not found in %s", old, path)
	}
	return os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
}

// rehash updates the manifest's hash of name, as a careful forger would.
func rehash(dir, name string) error {
	m, err := Load(dir)
	if err != nil {
		return err
	}
	h, err := hashFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	m.Files[name] = h
	b, _ := EncodeManifest(m)
	return os.WriteFile(filepath.Join(dir, ManifestFile), b, 0o644)
}

func TestRateOfNothing(t *testing.T) {
	if r, ci := Rate(0, 0); r != nil || ci != nil {
		t.Error("a rate over 0 must be null")
	}
}

func TestIsTrainable(t *testing.T) {
	tests := []struct {
		trainable bool
		split     string
		status    string
		want      bool
	}{
		{true, "train", StatusSuccess, true},
		{true, "train", StatusFailure, true},
		{true, "train", StatusInfraError, false},
		{true, "train", StatusUnscored, false},
		{true, "heldout", StatusSuccess, false},
		{false, "train", StatusSuccess, false},
	}
	for _, tt := range tests {
		if got := IsTrainable(tt.trainable, tt.split, tt.status); got != tt.want {
			t.Errorf("IsTrainable(%v, %q, %q) = %v", tt.trainable, tt.split, tt.status, got)
		}
	}
}

// TestCrashLeavesNoSnapshot kills a child process (SIGKILL) in the middle
// of writing a snapshot and checks that no snapshot is visible afterwards.
func TestCrashLeavesNoSnapshot(t *testing.T) {
	if os.Getenv("TPCTL_SNAPSHOT_CRASH_CHILD") != "" {
		return
	}
	base := t.TempDir()
	out := filepath.Join(base, "snap")
	ready := filepath.Join(base, "ready")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(os.Environ(), "TPCTL_SNAPSHOT_CRASH_CHILD="+out, "TPCTL_SNAPSHOT_CRASH_READY="+ready)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("child never became ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a snapshot is visible after a crash mid-write: %v", err)
	}
	if _, err := Load(out); err == nil {
		t.Fatal("half snapshot loads")
	}
}

// TestCrashChild is the child half of TestCrashLeavesNoSnapshot: it writes
// part of a snapshot, signals readiness and waits to be killed.
func TestCrashChild(t *testing.T) {
	out := os.Getenv("TPCTL_SNAPSHOT_CRASH_CHILD")
	if out == "" {
		t.Skip("child process of TestCrashLeavesNoSnapshot")
	}
	w, err := Create(out, []byte(testPlan), Options{OutcomeRules: "r"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range testObservations()[:2] {
		if err := w.Add(&o); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(os.Getenv("TPCTL_SNAPSHOT_CRASH_READY"), nil, 0o644)
	time.Sleep(time.Minute)
}

func TestRoundIDSeals(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	w, err := Create(dir, []byte(testPlan), Options{FormatVerified: true, OutcomeRules: "tpctl-outcomes/1"})
	if err != nil {
		t.Fatal(err)
	}
	obs := testObservations()
	for _, o := range obs[:2] {
		if err := w.Add(&o); err != nil {
			t.Fatal(err)
		}
	}
	id, err := w.RoundID()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(&obs[2]); err == nil {
		t.Error("Add after RoundID succeeded")
	}
	if err := w.AddTrajectory([]byte(`{"round_id":"`+id+`","truncated":true,"complete":false,"capture_policy":"sampled"}`), true); err != nil {
		t.Fatal(err)
	}
	m, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if m.RoundID != id || m.Trajectories.Count != 1 || m.Trajectories.Truncated != 1 {
		t.Errorf("manifest %s %+v; want round %s and one truncated trajectory", m.RoundID, m.Trajectories, id)
	}
	if rep, err := Verify(dir); err != nil || !rep.OK {
		t.Errorf("verify: %v %+v", err, rep)
	}
	// A trajectory of another round, re-hashed by a forger, is caught.
	p := filepath.Join(dir, "trajectories", "0001.json")
	if err := os.WriteFile(p, []byte(`{"round_id":"native:00","truncated":true,"complete":false,"capture_policy":"sampled"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rehash(dir, "trajectories/0001.json"); err != nil {
		t.Fatal(err)
	}
	if rep, _ := Verify(dir); rep.OK || rep.Problems[0].Code != ProblemTrajectory {
		t.Errorf("foreign trajectory not caught: %+v", rep)
	}
}

// TestRoundAttemptIsCanonical checks the hand-built preimage element
// against the general canonicalizer.
func TestRoundAttemptIsCanonical(t *testing.T) {
	for _, a := range []AttemptOutcome{
		{Retry: 3, Status: "success", Reason: "reward_success", Reward: ptr(1.0), ResultSHA256: ptr("ab")},
		{Retry: 0, Status: "unscored", Reason: "unknown_exception", ExceptionType: ptr("Weird\"Error\n"), Reward: ptr(0.1)},
		{Retry: 12, Status: "failure", Reason: "r", Reward: ptr(1e21)},
	} {
		got := appendRoundAttempt(nil, "task/é#1", a)
		want, err := jcs.Marshal(struct {
			TrialID       string   `json:"trial_id"`
			Retry         int      `json:"retry"`
			Status        string   `json:"status"`
			Reason        string   `json:"reason"`
			Reward        *float64 `json:"reward"`
			ExceptionType *string  `json:"exception_type"`
			ResultSHA256  *string  `json:"result_sha256"`
		}{"task/é#1", a.Retry, a.Status, a.Reason, a.Reward, a.ExceptionType, a.ResultSHA256})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}

// TestCohortDigestOf checks the buffer-and-stream cohort digest against
// CohortDigest over ID strings: byte order of IDs (not (task, repeat)
// order), escapes, non-ASCII, '#' in task names and invalid UTF-8.
func TestCohortDigestOf(t *testing.T) {
	keys := []trialKey{
		{"b", 10}, {"b", 9}, {"b", 1}, {"a-b", 0}, {"a", 100}, {"a#1", 0}, {"é", 3},
		{"q\"uote\\", 2}, {"ctl\x01\n", 0}, {"<&>", 1}, {"\u2028", 0}, {"😀", 7},
	}
	for _, ks := range [][]trialKey{nil, keys[:1], keys, append(slices.Clone(keys), trialKey{"bad\xff\xfe", 1})} {
		ids := make([]string, len(ks))
		for i, k := range ks {
			ids[i] = TrialID(k.Task, k.Repeat)
		}
		want, err := CohortDigest(ids)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cohortDigestOf(ks)
		if err != nil || got != want {
			t.Errorf("%d keys: got %s, %v; want %s", len(ks), got, err, want)
		}
	}
}

// TestVerifyThroughSymlink: DIR given as a symlink to a snapshot (a
// "latest" link) verifies like the folder itself; a link inside the
// snapshot is still a problem.
func TestVerifyThroughSymlink(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "snap")
	writeSnapshot(t, dir, testObservations())
	link := filepath.Join(base, "latest")
	if err := os.Symlink("snap", link); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(link)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Errorf("snapshot reached through a symlink does not verify: %+v", rep.Problems)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "inner")); err != nil {
		t.Fatal(err)
	}
	if rep, err := Verify(link); err != nil || rep.OK {
		t.Errorf("a symlink inside the snapshot verified (err %v)", err)
	}
}

// TestSnapshotFolderMode: the published folder is as readable as its
// files (MkdirTemp makes it 0700, which locked teammates out).
func TestSnapshotFolderMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snap")
	writeSnapshot(t, dir, testObservations())
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	pi, err := os.Stat(filepath.Join(dir, PlanFile))
	if err != nil {
		t.Fatal(err)
	}
	// Each class that may read plan.json may also list the folder.
	for _, class := range []fs.FileMode{0o040, 0o004} {
		if pi.Mode().Perm()&class != 0 && fi.Mode().Perm()&class == 0 {
			t.Errorf("folder mode %v hides files of mode %v", fi.Mode().Perm(), pi.Mode().Perm())
		}
	}
}

// TestVerifyFormatVerifiedIsDerived: a snapshot of an unvalidated Harbor
// revision cannot be promoted to format_verified: true by editing it.
func TestVerifyFormatVerifiedIsDerived(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	plan := strings.Replace(testPlan, "5f5618b8f5419dde63f2df6d86706782e597e8a3", "ea644fec00000000000000000000000000000000", 1)
	w, err := Create(dir, []byte(plan), Options{FormatVerified: false, OutcomeRules: "tpctl-outcomes/1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if rep, err := Verify(dir); err != nil || !rep.OK {
		t.Fatalf("honest unverified snapshot does not verify: %v %+v", err, rep)
	}
	if err := replaceIn(filepath.Join(dir, ManifestFile), `"format_verified": false`, `"format_verified": true`); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK {
		t.Fatal("format_verified forged to true still verifies")
	}
}
