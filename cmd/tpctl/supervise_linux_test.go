//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestKilledEvalRunStopsHarborThatIgnoresSIGINT is issue 26 item 4: the
// parent-death SIGINT alone leaves a Harbor that ignores it running
// forever after kill -9 of `eval run`; the supervisor tpctl leaves behind
// sends its process group SIGINT, waits the plan's cleanup_grace_sec (5 s)
// and sends SIGKILL.
func TestKilledEvalRunStopsHarborThatIgnoresSIGINT(t *testing.T) {
	t.Parallel() // only child processes, each with its own environment
	bin := builtBinaries(t)
	dir := t.TempDir()
	writeTxtarFiles(t, dir, filepath.Join("testdata", "script", "eval-run-signal.txtar"))
	ready := filepath.Join(dir, "ready")
	cmd, out := startTPCTL(t, bin, dir, []string{"TUNEPLANE_CONFIG=",
		"PATH=" + filepath.Join(bin, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
		"FAKE_HARBOR_SCENARIO_A=ignore-sigint", "FAKE_HARBOR_READY=" + ready,
	}, "eval", "run", "plan.json", "--out", "run1")
	waitUntil(t, "the substitute harbor to start its trial", func() bool { return nonEmpty(ready) })
	b, err := os.ReadFile(ready)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	harborPID, _ := strconv.Atoi(f[0])
	if len(f) != 2 || f[1] != strconv.Itoa(cmd.Process.Pid) || harborPID <= 1 {
		t.Fatalf("ready file %q does not name a harbor child of tpctl %d", b, cmd.Process.Pid)
	}
	t.Cleanup(func() { syscall.Kill(-harborPID, syscall.SIGKILL) })
	killHard(t, cmd)
	waitUntil(t, "a harbor that ignores SIGINT to be killed after the grace period", func() bool { return processGone(harborPID) })
	_ = out
}

// TestKilledImportStopsRedactorGroup: the parent-death SIGKILL reaches an
// exec redactor but not what it started; the supervisor kills its whole
// process group after kill -9 of tpctl.
func TestKilledImportStopsRedactorGroup(t *testing.T) {
	t.Parallel() // only child processes, each with its own environment
	bin, dir, example, red := hangingImport(t, true)
	ready := filepath.Join(dir, "ready")
	cmd, _ := startTPCTL(t, bin, dir, []string{"REDACTOR_READY=" + ready, "TUNEPLANE_CONFIG="},
		"import", "--plan", filepath.Join(example, "import-plan.json"), "--root", example, "--out", filepath.Join(dir, "snap"),
		"--trace-limit", "1", "--redactor", "exec:"+red)
	waitUntil(t, "the redactor to get its first request", func() bool { return nonEmpty(ready) })
	b, _ := os.ReadFile(ready)
	f := strings.Fields(string(b))
	if len(f) != 2 {
		t.Fatalf("ready file %q", b)
	}
	redPID, _ := strconv.Atoi(f[0])
	childPID, _ := strconv.Atoi(f[1])
	t.Cleanup(func() { syscall.Kill(-redPID, syscall.SIGKILL) })
	killHard(t, cmd)
	waitUntil(t, "the redactor to end", func() bool { return processGone(redPID) })
	waitUntil(t, "the redactor's own child to end", func() bool { return processGone(childPID) })
}
