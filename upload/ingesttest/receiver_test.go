package ingesttest

import (
	"path/filepath"
	"testing"

	"github.com/tuneplane/tpctl/snapshot"
)

func TestWriteSnapshotVerifies(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	m, err := WriteSnapshot(dir, SnapshotSpec{Trials: 40, Trajectories: 3})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := snapshot.Verify(dir)
	if err != nil || !rep.OK {
		t.Fatalf("verify: %v %+v", err, rep)
	}
	if m.Counts.Expected != 40 || m.Counts.Missing != 1 || m.Trajectories.Count != 3 {
		t.Fatalf("counts %+v trajectories %+v", m.Counts, m.Trajectories)
	}
}
