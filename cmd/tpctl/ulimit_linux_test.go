//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/harborgen"
)

// TestImportUnderDescriptorLimit is issue 26 item 2 through the binary: a
// real `ulimit -n` (bash sets the soft and hard limit, so tpctl cannot
// raise it), also with descriptors the shell holds open and passes on.
// Every run either saves exactly the snapshot an unlimited run saves (same
// round ID) or fails with a non-zero exit and nothing at --out; never exit
// 0 with other outcomes (on main, "too many open files" became result_invalid).
func TestImportUnderDescriptorLimit(t *testing.T) {
	t.Parallel() // only child processes, each with its own environment
	bin := filepath.Join(builtBinaries(t), "tpctl")
	base := t.TempDir()
	job, err := harborgen.Write(filepath.Join(base, "job"), 2000)
	if err != nil {
		t.Fatal(err)
	}
	roundID := func(out string) string {
		b, err := os.ReadFile(filepath.Join(out, "snapshot.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			RoundID string `json:"round_id"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m.RoundID
	}
	run := func(name, shell string) ([]byte, string, error) {
		out := filepath.Join(base, name)
		cmd := exec.Command("bash", "-c", shell+` "$TPCTL" import --plan "$PLAN" --root "$ROOT" --out "$OUT"`)
		cmd.Env = append(os.Environ(), "TPCTL="+bin, "PLAN="+job.PlanPath, "ROOT="+job.Root, "OUT="+out, "TUNEPLANE_CONFIG=")
		b, err := cmd.CombinedOutput()
		return b, out, err
	}
	b, out, err := run("unlimited", "")
	if err != nil {
		t.Fatalf("the unlimited import failed: %v\n%s", err, b)
	}
	want := roundID(out)
	saved, failed := 0, 0
	for _, n := range []int{8, 10, 12, 16, 24} {
		for _, held := range []int{0, 3} {
			name := fmt.Sprintf("n%d-held%d", n, held)
			shell := fmt.Sprintf("ulimit -n %d;", n)
			for fd := 3; fd < 3+held; fd++ {
				shell += fmt.Sprintf(" exec %d</dev/null;", fd)
			}
			b, out, err := run(name, shell)
			if err == nil {
				saved++
				if got := roundID(out); got != want {
					t.Errorf("%s: exit 0 with round %s, want %s (the unlimited run's):\n%s", name, got, want, b)
				}
				if strings.Contains(string(b), "too many open files") {
					t.Errorf("%s: exit 0 although a read failed:\n%s", name, b)
				}
				continue
			}
			failed++
			t.Logf("%s: %v: %s", name, err, lastLine(b))
			if _, serr := os.Stat(out); !os.IsNotExist(serr) {
				t.Errorf("%s: failed (%v) but left %s", name, err, out)
			}
			if len(strings.TrimSpace(string(b))) == 0 {
				t.Errorf("%s: failed (%v) without saying why", name, err)
			}
		}
	}
	t.Logf("%d runs saved the unlimited run's snapshot, %d failed loudly", saved, failed)
	if saved == 0 {
		t.Error("no run under a limit succeeded: the workers are not sized to the limit")
	}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
