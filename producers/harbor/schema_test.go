package harbor_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tuneplane/tpctl/internal/fixtures"
)

// outOfShape lists the hand-written cases that are deliberately NOT what
// Harbor's models can write (hostile or hand-edited files); every other
// case must validate against Harbor's generated schema, which proves the
// test data has Harbor's real shape.
var outOfShape = map[string]bool{
	"nan-outside-reward":  true, // NaN token: not JSON
	"reward-nan":          true,
	"reward-infinity":     true,
	"reward-neg-infinity": true,
	"reward-null":         true, // rewards values must be numbers
	"reward-object":       true,
	"reward-string-one":   true,
	"reward-true":         true,
}

func compileSchema(t *testing.T, path string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// Formats stay annotations (the draft 2020-12 default): Harbor's
	// 5f5618b8 writes occurred_at as naive local time, which pydantic
	// accepts but RFC 3339 date-time does not.
	c := jsonschema.NewCompiler()
	if err := c.AddResource(path, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

func validate(s *jsonschema.Schema, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// TestCasesHaveHarborShape validates the test result files against the
// TrialResult JSON Schemas generated from Harbor's own pydantic models.
func TestCasesHaveHarborShape(t *testing.T) {
	dir := fixtures.Harbor(t)
	v22 := compileSchema(t, filepath.Join(dir, "schemas", "v0.22.0", "trial-result.schema.json"))
	v5f := compileSchema(t, filepath.Join(dir, "schemas", "5f5618b8", "trial-result.schema.json"))

	cases, err := filepath.Glob("testdata/cases/*.json")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, f := range cases {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		err := validate(v22, f)
		switch {
		case outOfShape[name] && err == nil:
			t.Errorf("%s is listed as out of Harbor's shape but validates", name)
		case !outOfShape[name] && err != nil:
			t.Errorf("%s does not have Harbor v0.22.0's TrialResult shape: %v", name, err)
		}
		if strings.HasPrefix(name, "legacy-") && !outOfShape[name] {
			if err := validate(v5f, f); err != nil {
				t.Errorf("%s does not have Harbor 5f5618b8's TrialResult shape: %v", name, err)
			}
		}
	}
	for rev, s := range map[string]*jsonschema.Schema{"5f5618b8": v5f, "v0.22.0": v22} {
		files, _ := filepath.Glob(filepath.Join("testdata/synthetic", rev, "*.json"))
		for _, f := range files {
			err := validate(s, f)
			if job := filepath.Base(f) == "job-result.json"; job != (err != nil) {
				t.Errorf("%s against the %s schema: %v", f, rev, err)
			}
		}
	}
}
