package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sortedPlan is testPlan with its trials in canonical order, as tpctl's
// import writes every plan.
var sortedPlan = strings.Replace(testPlan, `    {"task": "b", "repeat": 0, "attempts": [{"retry": 0, "dir": "b0"}]},
    {"task": "a", "repeat": 1, "attempts": [{"retry": 0, "dir": "a1"}]},
    {"task": "a", "repeat": 0, "attempts": [{"retry": 0, "dir": "a0x"}, {"retry": 1, "dir": "a0"}]},`, `    {"task": "a", "repeat": 0, "attempts": [{"retry": 0, "dir": "a0x"}, {"retry": 1, "dir": "a0"}]},
    {"task": "a", "repeat": 1, "attempts": [{"retry": 0, "dir": "a1"}]},
    {"task": "b", "repeat": 0, "attempts": [{"retry": 0, "dir": "b0"}]},`, 1)

func writeWithPlan(t *testing.T, plan string) string {
	t.Helper()
	return writeWith(t, plan, testObservations(), false)
}

// visited is what OpenTrials handed over: the trials of the last begin,
// and how many times begin was called.
type visited struct {
	trials []PlannedTrial
	begins int
	m      *Manifest
}

func openTrials(dir string) (*visited, *Snapshot, error) {
	v := &visited{}
	s, err := OpenTrials(dir, func(m *Manifest, _ []byte) (Visit, error) {
		v.trials, v.m = nil, m
		v.begins++
		return func(t PlannedTrial) error {
			v.trials = append(v.trials, t)
			return nil
		}, nil
	})
	return v, s, err
}

func plannedTrials(t *testing.T, s *Snapshot) []PlannedTrial {
	t.Helper()
	var out []PlannedTrial
	for p, err := range s.Trials() {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func heldTrials(t *testing.T, dir string) ([]PlannedTrial, *Snapshot) {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return plannedTrials(t, s), s
}

// TestOpenTrials: a plan in tpctl's canonical form is verified in one
// read that hands every planned trial with its observation to the Visit,
// missing ones included, exactly as Open's Trials gives them, however
// the reads cut the plan's head.
func TestOpenTrials(t *testing.T) {
	if strings.Count(sortedPlan, `"task"`) != 4 || sortedPlan == testPlan {
		t.Fatal("sortedPlan did not replace the trials")
	}
	for _, block := range []int{planBlock, 7} {
		t.Run(fmt.Sprintf("block=%d", block), func(t *testing.T) {
			defer func(n int) { planBlock = n }(planBlock)
			planBlock = block
			t.Setenv("TMPDIR", t.TempDir())
			dir := writeWithPlan(t, sortedPlan)
			want, hs := heldTrials(t, dir)
			if len(want) != 4 || want[3].Task != "c" || want[3].Observation != nil || want[0].Observation == nil {
				t.Fatalf("Open's trials: %+v", want)
			}
			v, s, err := openTrials(dir)
			if err != nil {
				t.Fatal(err)
			}
			if v.begins != 1 || s.Plan().Trials != nil || s.PlanJSON() != nil {
				t.Fatalf("not read in one pass: %d begins, %d plan trials", v.begins, len(s.Plan().Trials))
			}
			if diff := cmp.Diff(want, v.trials); diff != "" {
				t.Errorf("trials (-Open +OpenTrials):\n%s", diff)
			}
			wantPlan := *hs.Plan()
			wantPlan.Trials = nil
			if diff := cmp.Diff(&wantPlan, s.Plan()); diff != "" {
				t.Errorf("plan head (-Open +OpenTrials):\n%s", diff)
			}
			if diff := cmp.Diff(hs.Manifest(), s.Manifest()); diff != "" {
				t.Errorf("manifest (-Open +OpenTrials):\n%s", diff)
			}
			if ents, _ := os.ReadDir(os.Getenv("TMPDIR")); len(ents) != 0 {
				t.Errorf("temporary files left: %v", ents)
			}
		})
	}
}

// TestOpenTrialsTrajectories: a trial with a trajectory file says so.
func TestOpenTrialsTrajectories(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snap")
	w, err := Create(dir, []byte(sortedPlan), Options{FormatVerified: true, OutcomeRules: "tpctl-outcomes/1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range testObservations() {
		if err := w.Add(&o); err != nil {
			t.Fatal(err)
		}
	}
	id, _ := w.RoundID()
	if err := w.AddTrajectory([]byte(`{"round_id":"`+id+`","trial_id":"a#1","truncated":false,"complete":false,"capture_policy":"sampled"}`), false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	want, _ := heldTrials(t, dir)
	v, _, err := openTrials(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range v.trials {
		if tr.Trajectory != (TrialID(tr.Task, tr.Repeat) == "a#1") || want[i].Trajectory != tr.Trajectory {
			t.Errorf("trial %s: trajectory %v (Open's %v)", TrialID(tr.Task, tr.Repeat), tr.Trajectory, want[i].Trajectory)
		}
	}
}

// TestOpenTrialsVisitError: an error from the Visit ends the reading and
// is what OpenTrials returns.
func TestOpenTrialsVisitError(t *testing.T) {
	dir := writeWithPlan(t, sortedPlan)
	stop := errors.New("disk full")
	n := 0
	_, err := OpenTrials(dir, func(*Manifest, []byte) (Visit, error) {
		return func(PlannedTrial) error {
			if n++; n == 2 {
				return stop
			}
			return nil
		}, nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Errorf("err %v after %d trials, want %v after 2", err, n, stop)
	}
}

// TestOpenTrialsFallsBack: a plan the single read does not take (trials
// out of canonical order, a task name the streamed tally refuses, or
// plan.json reformatted, reordered or without its newline, its SHA-256
// updated, which Verify accepts since the round ID is over the canonical
// form) is opened as Open opens it: begin is called again and the trials
// are Open's.
func TestOpenTrialsFallsBack(t *testing.T) {
	reformat := func(t *testing.T, dir string) {
		b, err := os.ReadFile(filepath.Join(dir, PlanFile))
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		b, _ = json.MarshalIndent(v, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, PlanFile), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := rehash(dir, PlanFile); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]func(t *testing.T) string{
		"unsorted trials": func(t *testing.T) string { return writeWithPlan(t, testPlan) },
		"reformatted plan": func(t *testing.T) string {
			dir := writeWithPlan(t, sortedPlan)
			reformat(t, dir)
			return dir
		},
		"plan without its newline": func(t *testing.T) string {
			dir := writeWithPlan(t, sortedPlan)
			b, err := os.ReadFile(filepath.Join(dir, PlanFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, PlanFile), b[:len(b)-1], 0o644); err != nil {
				t.Fatal(err)
			}
			if err := rehash(dir, PlanFile); err != nil {
				t.Fatal(err)
			}
			return dir
		},
		"a trial's members out of order": func(t *testing.T) string {
			dir := writeWithPlan(t, sortedPlan)
			if err := replaceIn(filepath.Join(dir, PlanFile), `{"dir":"a1","retry":0}`, `{"retry":0,"dir":"a1"}`); err != nil {
				t.Fatal(err)
			}
			if err := rehash(dir, PlanFile); err != nil {
				t.Fatal(err)
			}
			return dir
		},
		"task with a space": func(t *testing.T) string {
			return writeWithPlan(t, strings.ReplaceAll(sortedPlan, `"task": "c"`, `"task": "c d"`))
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			dir := mk(t)
			if rep, err := Verify(dir); err != nil || !rep.OK {
				t.Fatalf("Verify: %+v, %v", rep, err)
			}
			want, _ := heldTrials(t, dir)
			v, s, err := openTrials(dir)
			if err != nil {
				t.Fatal(err)
			}
			if v.begins != 2 || s.Plan().Trials != nil {
				t.Errorf("begin called %d times, want 2 (read in one pass?)", v.begins)
			}
			if diff := cmp.Diff(want, v.trials); diff != "" {
				t.Errorf("trials (-Open +OpenTrials):\n%s", diff)
			}
		})
	}
}

// TestOpenTrialsRefusesWhatVerifyRefuses: a tampered snapshot gives
// Verify's problems, in Verify's order, wherever the change is: the plan's
// last trial, the last observation, the manifest's counts.
func TestOpenTrialsRefusesWhatVerifyRefuses(t *testing.T) {
	tampers := map[string]func(d string) error{
		"last plan trial changed and rehashed": func(d string) error {
			if err := replaceIn(filepath.Join(d, PlanFile), `"task":"c"`, `"task":"d"`); err != nil {
				return err
			}
			return rehash(d, PlanFile)
		},
		"last observation changed": func(d string) error {
			b, err := os.ReadFile(filepath.Join(d, ObservationsFile))
			if err != nil {
				return err
			}
			i := strings.LastIndex(string(b), `"status":"`)
			b = append(b[:i:i], strings.Replace(string(b[i:]), `"status":"`, `"status":"x`, 1)...)
			return os.WriteFile(filepath.Join(d, ObservationsFile), b, 0o644)
		},
		"counts edited": func(d string) error {
			return replaceIn(filepath.Join(d, ManifestFile), `"success": 1`, `"success": 2`)
		},
	}
	for name, tamper := range tampers {
		t.Run(name, func(t *testing.T) {
			dir := writeWithPlan(t, sortedPlan)
			if err := tamper(dir); err != nil {
				t.Fatal(err)
			}
			rep, err := Verify(dir)
			if err != nil {
				t.Fatal(err)
			}
			_, s, err := openTrials(dir)
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("OpenTrials: %v, %v; want a *VerifyError (Verify OK: %v)", s, err, rep.OK)
			}
			if diff := cmp.Diff(rep.Problems, ve.Problems); diff != "" {
				t.Errorf("problems (-Verify +OpenTrials):\n%s", diff)
			}
		})
	}
}

// TestKeyWalkCanonical: the streamed reading takes a trials array only in
// RFC 8785 form, wherever a difference is (member order, white space,
// number form, escapes), also past the first quarter MiB it checks.
func TestKeyWalkCanonical(t *testing.T) {
	var long strings.Builder
	long.WriteByte('[')
	for i := range 20000 {
		if i > 0 {
			long.WriteByte(',')
		}
		fmt.Fprintf(&long, `{"attempts":[],"repeat":%d,"task":"t"}`, i)
	}
	long.WriteByte(']')
	cases := map[string]bool{
		`[]`: true,
		`[{"attempts":[{"dir":"d","retry":0}],"repeat":0,"task":"a"},{"attempts":[],"repeat":1,"task":"a"}]`: true,
		long.String(): true,
		`[ ]`:         false,
		`[{"attempts":[],"repeat":0,"task":"a"} ,{"attempts":[],"repeat":1,"task":"a"}]`:                      false,
		`[{"attempts":[{"retry":0,"dir":"d"}],"repeat":0,"task":"a"}]`:                                        false,
		`[{"attempts":[],"repeat":0,"task":"\u0061"}]`:                                                        false,
		`[{"attempts":[],"repeat":0,"task":"a","x":1e2}]`:                                                     false,
		strings.Replace(long.String(), `"repeat":19999,`, `"repeat":19999 ,`, 1):                              false,
		strings.Replace(long.String(), `{"attempts":[],"repeat":19000,`, `{"repeat":19000,"attempts":[],`, 1): false,
	}
	for in, want := range cases {
		w := newKeyWalk(strings.NewReader(in))
		n, err := 0, error(nil)
		for {
			var ok bool
			if _, ok, err = w.next(); err != nil || !ok {
				break
			}
			n++
		}
		if got := err == nil; got != want {
			name := in
			if len(name) > 80 {
				name = name[:80] + "…"
			}
			t.Errorf("%s: canonical %v (after %d trials, %v), want %v", name, got, n, err, want)
		}
	}
}

// TestVerifyStreamed: Verify of a snapshot whose plan is in the form
// tpctl writes takes the single streamed read, however the reads cut the
// plan's head, leaves no temporary file, and gives the report the held
// read gives; a plan in another form verifies too
// (the held read decides).
func TestVerifyStreamed(t *testing.T) {
	for _, block := range []int{planBlock, 7} {
		for name, plan := range map[string]string{"canonical": sortedPlan, "unsorted": testPlan} {
			t.Run(fmt.Sprintf("%s/block=%d", name, block), func(t *testing.T) {
				dir := writeWithPlan(t, plan)
				tmp := t.TempDir()
				t.Setenv("TMPDIR", tmp)
				defer func(n int) { planBlock = n }(planBlock)
				planBlock = block
				got, err := Verify(dir)
				if err != nil || !got.OK {
					t.Fatalf("Verify: %+v, %v", got, err)
				}
				saved, err := Load(dir)
				if err != nil {
					t.Fatal(err)
				}
				want, err := verify(dir, saved, nil)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("report (-held +Verify):\n%s", diff)
				}
				if left, _ := os.ReadDir(tmp); len(left) != 0 {
					t.Errorf("Verify left %v in the temporary folder", left)
				}
			})
		}
	}
}
