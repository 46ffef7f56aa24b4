package harborgen

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tuneplane/tpctl/internal/fixtures"
	"github.com/tuneplane/tpctl/producers/harbor/atif"
)

// TestResultsHaveHarborShape validates every generated kind against the
// JSON Schema generated from Harbor's own TrialResult model.
func TestResultsHaveHarborShape(t *testing.T) {
	dir := fixtures.Harbor(t)
	schemaPath := filepath.Join(dir, "schemas", "5f5618b8", "trial-result.schema.json")
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []Kind{Success, Failure, AgentTimeout, VerifierTime} {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(Result("bench/task-00001", "task-00001__0000010", k)))
		if err != nil {
			t.Fatalf("kind %d: not JSON: %v", k, err)
		}
		if err := sch.Validate(doc); err != nil {
			t.Errorf("kind %d does not match Harbor's TrialResult schema: %v", k, err)
		}
	}
}

func TestWrite(t *testing.T) {
	job, err := Write(t.TempDir(), 200)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(job.PlanPath)
	if err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Trials []struct {
			Attempts []struct{ Dir string }
		}
	}
	if err := json.Unmarshal(b, &plan); err != nil {
		t.Fatal(err)
	}
	missing := 0
	for _, tr := range plan.Trials {
		if _, err := os.Stat(filepath.Join(job.Root, tr.Attempts[0].Dir, "result.json")); err != nil {
			missing++
		}
	}
	if len(plan.Trials) != 200 || missing != 4 {
		t.Errorf("%d trials, %d without result; want 200 and 4", len(plan.Trials), missing)
	}
}

// TestWriteWith checks the benchmark options: an indented plan that says
// the same as the compact one, and ATIF trajectories of about the size
// asked for, with the planted token, that the ATIF decoder accepts.
func TestWriteWith(t *testing.T) {
	compact, err := Write(t.TempDir(), 120)
	if err != nil {
		t.Fatal(err)
	}
	job, err := WriteWith(t.TempDir(), 120, Options{IndentPlan: true, Trajectories: 3, TrajectoryBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(compact.PlanPath)
	b, _ := os.ReadFile(job.PlanPath)
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil || !reflect.DeepEqual(va, vb) || !strings.Contains(string(b), "\n  \"trials\": [") {
		t.Errorf("the indented plan differs from the compact one or is not indented:\n%.300s", b)
	}
	files, _ := filepath.Glob(filepath.Join(job.Root, "jobs", "*", "*", "agent", "trajectory.json"))
	if len(files) != 3 {
		t.Fatalf("%d trajectories, want 3", len(files))
	}
	for _, p := range files {
		data, _ := os.ReadFile(p)
		if len(data) < 256<<10 || len(data) > 272<<10 || !strings.Contains(string(data), FakeToken) {
			t.Errorf("%s: %d bytes, token planted: %v", p, len(data), strings.Contains(string(data), FakeToken))
		}
		f, err := atif.OpenFile(p, atif.Options{})
		if err != nil {
			t.Fatal(err)
		}
		steps := 0
		_, err = atif.Decode(f, atif.Options{}, func(*atif.Step) error { steps++; return nil })
		f.Close()
		if err != nil || steps < 10 {
			t.Errorf("%s: ATIF decode: %v after %d steps", p, err, steps)
		}
	}
}

// TestShufflePlan: a shuffled plan lists the same trials as the sorted
// one, not in sorted order, and the same order every time.
func TestShufflePlan(t *testing.T) {
	type trial struct {
		Task     string
		Repeat   int
		Attempts []struct {
			Retry int
			Dir   string
		}
	}
	read := func(o Options) []trial {
		job, err := WriteWith(t.TempDir(), 300, o)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(job.PlanPath)
		if err != nil {
			t.Fatal(err)
		}
		var plan struct{ Trials []trial }
		if err := json.Unmarshal(b, &plan); err != nil {
			t.Fatal(err)
		}
		return plan.Trials
	}
	sorted, shuffled := read(Options{}), read(Options{ShufflePlan: true})
	if reflect.DeepEqual(sorted, shuffled) {
		t.Fatal("the shuffled plan is in sorted order")
	}
	if again := read(Options{ShufflePlan: true}); !reflect.DeepEqual(shuffled, again) {
		t.Error("two shuffled plans of the same size differ")
	}
	slices.SortFunc(shuffled, func(a, b trial) int {
		return cmp.Or(strings.Compare(a.Task, b.Task), cmp.Compare(a.Repeat, b.Repeat))
	})
	if !reflect.DeepEqual(sorted, shuffled) {
		t.Error("the shuffled plan's trials, sorted, are not the sorted plan's")
	}
}
