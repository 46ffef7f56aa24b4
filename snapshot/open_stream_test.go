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

// openBoth opens dir with Open and OpenStreamed, closed when the test ends.
func openBoth(t *testing.T, dir string) (held, streamed *Snapshot) {
	t.Helper()
	held, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	streamed, err = OpenStreamed(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { streamed.Close() })
	return held, streamed
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

// TestOpenStreamed: a plan in tpctl's canonical form is read as a stream
// (no trials held, the bytes kept in memory or in temporary files), and
// Trials gives every planned trial with its observation, missing ones
// included, exactly as from Open; after the files change, the verified
// bytes are still what it hands out.
func TestOpenStreamed(t *testing.T) {
	if strings.Count(sortedPlan, `"task"`) != 4 || sortedPlan == testPlan {
		t.Fatal("sortedPlan did not replace the trials")
	}
	for _, held := range []int{StreamHeld, 10} {
		t.Run(map[bool]string{true: "memory", false: "file"}[held > 10], func(t *testing.T) {
			defer func(n int) { StreamHeld = n }(StreamHeld)
			StreamHeld = held
			t.Setenv("TMPDIR", t.TempDir())
			dir := writeWithPlan(t, sortedPlan)
			held, s := openBoth(t, dir)
			if s.planSpool == nil || s.Plan().Trials != nil || s.PlanJSON() != nil {
				t.Fatalf("not read as a stream: spool %v, %d plan trials", s.planSpool != nil, len(s.Plan().Trials))
			}
			if (s.planSpool.f != nil) != (StreamHeld == 10) || (s.obs.f != nil) != (StreamHeld == 10) {
				t.Errorf("kept in files: plan %v, observations %v", s.planSpool.f != nil, s.obs.f != nil)
			}
			want := plannedTrials(t, held)
			if len(want) != 4 || want[3].Task != "c" || want[3].Observation != nil || want[0].Observation == nil {
				t.Fatalf("Open's trials: %+v", want)
			}
			if diff := cmp.Diff(want, plannedTrials(t, s)); diff != "" {
				t.Errorf("trials (-Open +OpenStreamed):\n%s", diff)
			}
			wantPlan := *held.Plan()
			wantPlan.Trials = nil
			if diff := cmp.Diff(&wantPlan, s.Plan()); diff != "" {
				t.Errorf("plan head (-Open +OpenStreamed):\n%s", diff)
			}
			for _, f := range []string{PlanFile, ObservationsFile} {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(want, plannedTrials(t, s)); diff != "" {
				t.Errorf("trials after the files changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestOpenStreamedFallsBack: a plan the streamed reading does not take
// (trials out of canonical order, a task name the streamed tally refuses,
// or plan.json reformatted or without its newline, its SHA-256 updated,
// which Verify accepts since the round ID is over the canonical form) is opened as Open opens it, with the same trials.
func TestOpenStreamedFallsBack(t *testing.T) {
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
			held, s := openBoth(t, dir)
			if s.planSpool != nil || len(s.Plan().Trials) != 4 {
				t.Errorf("read as a stream, or without the plan's trials")
			}
			if diff := cmp.Diff(plannedTrials(t, held), plannedTrials(t, s)); diff != "" {
				t.Errorf("trials (-Open +OpenStreamed):\n%s", diff)
			}
		})
	}
}

// TestOpenStreamedRefusesWhatVerifyRefuses: a tampered snapshot gives
// Verify's problems, in Verify's order, wherever the change is: the plan's
// last trial, the last observation, the manifest's counts.
func TestOpenStreamedRefusesWhatVerifyRefuses(t *testing.T) {
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
			s, err := OpenStreamed(dir)
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("OpenStreamed: %v, %v; want a *VerifyError (Verify OK: %v)", s, err, rep.OK)
			}
			if diff := cmp.Diff(rep.Problems, ve.Problems); diff != "" {
				t.Errorf("problems (-Verify +OpenStreamed):\n%s", diff)
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
		w := newKeyWalk(strings.NewReader(in), true)
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
