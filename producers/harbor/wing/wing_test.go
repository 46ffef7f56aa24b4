package wing_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/fixtures"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/producers/harbor/wing"
)

// TestDetect: a Harbor job, a job's trial folders and a folder with a
// broken lock.json (which the draft then reports) are Harbor's; an empty
// folder, a missing one and a folder of Inspect logs are not.
func TestDetect(t *testing.T) {
	p := wing.New()
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "lock.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		root string
		want bool
	}{
		{"../../../testdata/harbor-v0.22.0/jobs/2026-09-01__10-00-00", true},
		{"../../../testdata/example", true},
		{"../../../testdata/example/jobs/2026-04-08__12-00-00/hello-alpine__2hvTLoF/..", true},
		{broken, true},
		{t.TempDir(), false},
		{filepath.Join(t.TempDir(), "absent"), false},
	} {
		if got := p.Detect(tt.root); got != tt.want {
			t.Errorf("Detect(%s) = %v, want %v", tt.root, got, tt.want)
		}
	}
	if dir, ok := fixtures.HarborDir(); ok {
		inspect := filepath.Join(filepath.Dir(dir), "inspect")
		if _, err := os.Stat(inspect); err == nil && p.Detect(inspect) {
			t.Errorf("Detect(%s) = true: Inspect logs are not a Harbor job", inspect)
		}
	}
}

// TestDraftThroughSeam: the draft the seam hands plan init is
// plandraft's, with its summary and the dataset digest it proposed.
func TestDraftThroughSeam(t *testing.T) {
	d, err := wing.New().Draft(context.Background(), "../../../testdata/harbor-v0.22.0/jobs/2026-09-01__10-00-00", producers.DraftOptions{Model: "gpt-5.4"})
	if err != nil {
		t.Fatal(err)
	}
	const want = "drafted 6 planned trials for terminus-2 with gpt-5.4 from the job's declaration: 4 finished, 1 interrupted (counted unscored), 1 never started (counted missing)"
	if d.Summary != want {
		t.Errorf("Summary = %q, want %q", d.Summary, want)
	}
	// The dataset digest from the lock, then the verifier, environment and
	// harness digests from the job's files (issue 33), each the plan's.
	plan := map[string]string{"/protocol/dataset_digest": d.Plan.Protocol.DatasetDigest, "/protocol/verifier_digest": d.Plan.Protocol.VerifierDigest,
		"/protocol/environment_digest": d.Plan.Protocol.EnvironmentDigest, "/protocol/harness_digest": d.Plan.Protocol.HarnessDigest}
	if len(d.Proposed) != 4 || d.Proposed[0].Pointer != "/protocol/dataset_digest" {
		t.Errorf("Proposed = %+v, want the four digests", d.Proposed)
	}
	for _, p := range d.Proposed {
		if plan[p.Pointer] != p.Value || strings.HasPrefix(p.Value, "REPLACE_") {
			t.Errorf("proposed %s = %s, the plan has %s", p.Pointer, p.Value, plan[p.Pointer])
		}
	}
	if len(d.Unknown) != 2 || d.Unknown[0].Category != "context" || d.Unknown[1].Category != "tool/network policy" {
		t.Errorf("Unknown = %+v, want context and tool/network policy", d.Unknown)
	}
}
