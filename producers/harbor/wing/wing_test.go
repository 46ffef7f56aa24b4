package wing_test

import (
	"context"
	"os"
	"path/filepath"
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
	if len(d.Proposed) != 1 || d.Proposed[0].Pointer != "/protocol/dataset_digest" || d.Proposed[0].Value != d.Plan.Protocol.DatasetDigest {
		t.Errorf("Proposed = %+v, want the dataset digest of the plan", d.Proposed)
	}
}
