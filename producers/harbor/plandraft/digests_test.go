package plandraft

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProposedDigests: from a job with a lock, plan init proposes the
// verifier, environment and harness digests, each naming the files it
// read; a task folder that cannot be found, or that is not the one the
// job ran (its Harbor task digest differs from the lock's), keeps the
// verifier and environment placeholders with a warning saying why, while
// the harness digest (the lock's commit and the agent) is still proposed.
func TestProposedDigests(t *testing.T) {
	// A copy of the v0.22.0 job and its tasks, to move and change.
	src := filepath.Join("..", "..", "..", "testdata", "harbor-v0.22.0")
	copyTree := func(t *testing.T) string {
		dst := filepath.Join(t.TempDir(), "h")
		if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
			t.Skipf("cp -r: %v %s", err, out)
		}
		return dst
	}
	job := func(root string) string { return filepath.Join(root, "jobs", "2026-09-01__10-00-00") }
	tests := []struct {
		name    string
		prepare func(t *testing.T, root string)
		// proposed are the pointers proposed; warn is a part of the
		// warning each not proposed gives.
		proposed []string
		warn     string
	}{
		{"all three", func(*testing.T, string) {}, []string{"/protocol/verifier_digest", "/protocol/environment_digest", "/protocol/harness_digest"}, ""},
		{"tasks moved away", func(t *testing.T, root string) {
			if err := os.Rename(filepath.Join(root, "tasks"), filepath.Join(root, "elsewhere")); err != nil {
				t.Fatal(err)
			}
		}, []string{"/protocol/harness_digest"}, `task "build-a-distributed-key-value-store-with-paxos"'s folder tasks/build-a-distributed-key-value-store-with-paxos (from the job lock) is not found`},
		{"a test changed after the run", func(t *testing.T, root string) {
			f := filepath.Join(root, "tasks", "hello-world", "tests", "test.sh")
			if err := os.WriteFile(f, []byte("#!/bin/sh\necho changed\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, []string{"/protocol/harness_digest"}, "is not the one the job ran (its Harbor task digest differs from the lock's)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := copyTree(t)
			tc.prepare(t, root)
			d, err := FromJob(job(root), Options{Model: "gpt-5.4"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range d.Proposed {
				got = append(got, p.Pointer)
				if len(p.From) == 0 || p.Rule != JobRule {
					t.Errorf("%s: from %v, rule %q", p.Pointer, p.From, p.Rule)
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.proposed, " ") {
				t.Errorf("proposed %v, want %v", got, tc.proposed)
			}
			notes := strings.Join(d.Notes, "\n")
			for _, ptr := range tc.proposed {
				field := strings.TrimPrefix(ptr, "/protocol/")
				if !strings.Contains(notes, field+" ") || !strings.Contains(notes, "proposed from") {
					t.Errorf("no note for %s:\n%s", field, notes)
				}
			}
			warnings := strings.Join(d.Warnings, "\n")
			if tc.warn != "" && (!strings.Contains(warnings, "verifier_digest is not proposed: ") || !strings.Contains(warnings, tc.warn)) {
				t.Errorf("warnings lack %q:\n%s", tc.warn, warnings)
			}
			if tc.warn == "" && strings.Contains(warnings, "is not proposed") {
				t.Errorf("unexpected warning:\n%s", warnings)
			}
			if d.Plan.Protocol.HarnessDigest == "" || strings.HasPrefix(d.Plan.Protocol.HarnessDigest, "REPLACE_") {
				t.Errorf("harness digest %q", d.Plan.Protocol.HarnessDigest)
			}
		})
	}
}
