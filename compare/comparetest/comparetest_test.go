package comparetest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/snapshot"
)

func TestParseArgs(t *testing.T) {
	got, err := ParseArgs([]string{"dataset=5", `settings={"t":1}`, "a#0=success", "b#2=missing"})
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{Dataset: "5", Settings: `{"t":1}`, Trials: map[string]string{"a#0": "success", "b#2": "missing"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spec mismatch (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"nokey", "colour=red"} {
		if _, err := ParseArgs([]string{bad}); err == nil {
			t.Errorf("ParseArgs(%q) succeeded", bad)
		}
	}
}

func TestBuild(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	m, err := Build(dir, Spec{Trials: map[string]string{"a#0": "success", "a#1": "infra_error", "b#0": "missing", "c#0": "unscored", "d#0": "failure"}})
	if err != nil {
		t.Fatal(err)
	}
	want := snapshot.Counts{Expected: 5, Success: 1, Failure: 1, InfraError: 1, Unscored: 1, Missing: 1}
	if diff := cmp.Diff(want, m.Counts); diff != "" {
		t.Errorf("counts mismatch (-want +got):\n%s", diff)
	}
	rep, err := snapshot.Verify(dir)
	if err != nil || !rep.OK {
		t.Fatalf("built snapshot does not verify: %v %+v", err, rep)
	}
	for _, bad := range []map[string]string{{"a#0": "great"}, {"nohash": "success"}, {"a#x": "success"}} {
		if _, err := Build(filepath.Join(t.TempDir(), "b"), Spec{Trials: bad}); err == nil || !strings.Contains(err.Error(), "trial") {
			t.Errorf("Build(%v) = %v; want an error naming the trial", bad, err)
		}
	}
}
