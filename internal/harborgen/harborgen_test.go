package harborgen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tuneplane/tpctl/internal/fixtures"
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
