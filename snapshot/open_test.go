package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeOpenable writes a snapshot with a trajectory that verifies, and
// returns its folder.
func writeOpenable(t *testing.T, obs []Observation) string {
	t.Helper()
	return writeWith(t, testPlan, obs, true)
}

// writeWith writes a snapshot of plan and obs, with a trajectory that
// verifies when trajectory is set.
func writeWith(t *testing.T, plan string, obs []Observation, trajectory bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "snap")
	w, err := Create(dir, []byte(plan), Options{FormatVerified: true, OutcomeRules: "tpctl-outcomes/1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range obs {
		if err := w.Add(&o); err != nil {
			t.Fatal(err)
		}
	}
	if !trajectory {
		if _, err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	id, err := w.RoundID()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddTrajectory([]byte(`{"round_id":"`+id+`","truncated":false,"complete":false,"capture_policy":"sampled"}`), false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func collect(t *testing.T, s *Snapshot) []Observation {
	t.Helper()
	var got []Observation
	for o, err := range s.Observations() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o)
	}
	return got
}

// TestOpen: an intact snapshot opens, and what it hands out is what
// Load, ReadObservations and ReadFile read, whether the observations are
// held in memory or in a temporary file; they can be read twice.
func TestOpen(t *testing.T) {
	for _, held := range []int{MaxHeldObservations, 10} {
		t.Run(map[bool]string{true: "memory", false: "file"}[held > 10], func(t *testing.T) {
			defer func(n int) { MaxHeldObservations = n }(MaxHeldObservations)
			MaxHeldObservations = held
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			dir := writeOpenable(t, testObservations())
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if (s.obs.f != nil) != (held == 10) {
				t.Fatalf("observations kept in a file: %v, want %v", s.obs.f != nil, held == 10)
			}
			m, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(m, s.Manifest()); diff != "" {
				t.Errorf("manifest (-Load +Open):\n%s", diff)
			}
			if s.Plan().Name != "unit" || len(s.Plan().Trials) != 4 || s.Dir() != dir {
				t.Errorf("plan %+v, dir %q", s.Plan(), s.Dir())
			}
			var want []Observation
			if err := ReadObservations(dir, func(o Observation) error { want = append(want, o); return nil }); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if diff := cmp.Diff(want, collect(t, s)); diff != "" {
					t.Errorf("observations (-ReadObservations +Open):\n%s", diff)
				}
			}
			n := 0
			for tr, err := range s.Trajectories() {
				if err != nil {
					t.Fatal(err)
				}
				b, err := ReadFile(dir, m, tr.Name)
				if err != nil || string(b) != string(tr.Data) {
					t.Errorf("trajectory %s: %q, ReadFile %q, %v", tr.Name, tr.Data, b, err)
				}
				n++
			}
			if n != 1 {
				t.Errorf("%d trajectories, want 1", n)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("Close left %v in the temporary folder", left)
			}
		})
	}
}

// TestOpenRefusesWhatVerifyRefuses: Open of a tampered snapshot gives a
// *VerifyError with exactly Verify's problems, in Verify's order.
func TestOpenRefusesWhatVerifyRefuses(t *testing.T) {
	tampers := map[string]func(d string) error{
		"observation changed": func(d string) error {
			return replaceIn(filepath.Join(d, ObservationsFile), `"reward":0`, `"reward":1`)
		},
		"observation changed and rehashed": func(d string) error {
			if err := replaceIn(filepath.Join(d, ObservationsFile), `"reward":0`, `"reward":1`); err != nil {
				return err
			}
			return rehash(d, ObservationsFile)
		},
		"plan changed": func(d string) error {
			return replaceIn(filepath.Join(d, PlanFile), `"name":"unit"`, `"name":"other"`)
		},
		"observation line broken": func(d string) error {
			return replaceIn(filepath.Join(d, ObservationsFile), `"trial_id"`, `"trial_id`)
		},
		"observations deleted": func(d string) error { return os.Remove(filepath.Join(d, ObservationsFile)) },
		"trajectory deleted":   func(d string) error { return os.Remove(filepath.Join(d, "trajectories/0001.json")) },
		"file added":           func(d string) error { return os.WriteFile(filepath.Join(d, "extra.txt"), []byte("x"), 0o644) },
		"counts edited": func(d string) error {
			return replaceIn(filepath.Join(d, ManifestFile), `"success": 1`, `"success": 2`)
		},
	}
	for name, tamper := range tampers {
		t.Run(name, func(t *testing.T) {
			dir := writeOpenable(t, testObservations())
			if err := tamper(dir); err != nil {
				t.Fatal(err)
			}
			rep, err := Verify(dir)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK {
				t.Fatal("tampered snapshot verified")
			}
			s, err := Open(dir)
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("Open: %v, %v; want a *VerifyError", s, err)
			}
			if diff := cmp.Diff(rep.Problems, ve.Problems); diff != "" {
				t.Errorf("problems (-Verify +Open):\n%s", diff)
			}
			if ve.Dir != dir || !strings.Contains(err.Error(), "failed verification with") {
				t.Errorf("error %q", err)
			}
		})
	}
	if _, err := Open(t.TempDir()); !IsNotSnapshot(err) {
		t.Errorf("Open of an empty folder: %v; want NotSnapshotError", err)
	}
}

// TestOpenHandsOutWhatWasVerified: files changed after Open do not reach
// the reader. Observations come from the bytes that were hashed (in memory
// or in the temporary file), and a changed trajectory is an error.
func TestOpenHandsOutWhatWasVerified(t *testing.T) {
	for _, held := range []int{MaxHeldObservations, 10} {
		t.Run(map[bool]string{true: "memory", false: "file"}[held > 10], func(t *testing.T) {
			defer func(n int) { MaxHeldObservations = n }(MaxHeldObservations)
			MaxHeldObservations = held
			dir := writeOpenable(t, testObservations())
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			want := collect(t, s)
			if err := replaceIn(filepath.Join(dir, ObservationsFile), `"reward":0`, `"reward":1`); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ObservationsFile), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, collect(t, s)); diff != "" {
				t.Errorf("observations after the file changed (-before +after):\n%s", diff)
			}
			if err := replaceIn(filepath.Join(dir, "trajectories/0001.json"), `"truncated":false`, `"truncated":true `); err != nil {
				t.Fatal(err)
			}
			for tr, err := range s.Trajectories() {
				if err == nil || !strings.Contains(err.Error(), "does not match its SHA-256") {
					t.Errorf("changed trajectory handed out: %s %q, %v", tr.Name, tr.Data, err)
				}
			}
		})
	}
}

// TestOpenStopsEarly: a consumer may stop ranging at any point.
func TestOpenStopsEarly(t *testing.T) {
	s, err := Open(writeOpenable(t, testObservations()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	for _, err := range s.Observations() {
		if err != nil {
			t.Fatal(err)
		}
		n++
		break
	}
	for range s.Trajectories() {
		break
	}
	if n != 1 {
		t.Errorf("%d observations before break", n)
	}
}
