//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests kill a real tpctl binary with SIGKILL (issue 11 items 7 and
// 8), so they run it and the substitute harbor as built binaries
// (builtBinaries, built once per test process).

// waitUntil polls cond until it holds. The deadline is derived from the
// test's own (what is left of it, less a margin for cleanup), so a loaded
// machine gets all the time the test run allows, never a fixed slack.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	if d, ok := t.Deadline(); ok {
		deadline = d.Add(-time.Until(d) / 10)
	}
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processGone reports whether pid no longer runs: no /proc entry, or a
// zombie (ended; only its reaping is pending, which init does).
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	f := bytes.Fields(b[i+1:])
	return len(f) > 0 && (string(f[0]) == "Z" || string(f[0]) == "X")
}

func nonEmpty(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() > 0
}

// startTPCTL starts the built binary in dir with extra environment.
func startTPCTL(t *testing.T, bin, dir string, env []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "tpctl"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &out
}

func killHard(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// TestKilledEvalRunStopsHarbor: kill -9 of `tpctl eval run` no longer
// leaves `harbor trial start` running: Harbor gets SIGINT (its
// parent-death signal) and cleans up as it does for a cancelled trial.
func TestKilledEvalRunStopsHarbor(t *testing.T) {
	t.Parallel() // only child processes, each with its own environment
	bin := builtBinaries(t)
	dir := t.TempDir()
	writeTxtarFiles(t, dir, filepath.Join("testdata", "script", "eval-run-signal.txtar"))
	ready := filepath.Join(dir, "ready")
	cmd, out := startTPCTL(t, bin, dir, []string{
		"PATH=" + filepath.Join(bin, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
		"FAKE_HARBOR_SCENARIO_A=hang", "FAKE_HARBOR_READY=" + ready,
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
	killHard(t, cmd)
	waitUntil(t, "harbor to end after tpctl was killed", func() bool { return processGone(harborPID) })
	log := filepath.Join(dir, "run1", "logs", "a__0.log")
	waitUntil(t, "harbor's cleanup to be logged", func() bool {
		b, _ := os.ReadFile(log)
		return bytes.Contains(b, []byte("cleanup done"))
	})
	if b, _ := os.ReadFile(log); !bytes.Contains(b, []byte("SIGINT received")) {
		t.Errorf("harbor did not get SIGINT:\n%s\ntpctl said:\n%s", b, out)
	}
}

// hangingRedactor is an exec redactor that answers the probe, then on the
// first real request writes its pid to $REDACTOR_READY and hangs: the
// import is then in progress, with its temporary folder on disk. With
// child, it first starts a child (a sleep) and writes "REDACTOR CHILD".
func hangingRedactor(child bool) string {
	start, pids := "", "$$"
	if child {
		start, pids = "sleep 3600 &\nchild=$!\n", `"$$ $child"`
	}
	return "#!/bin/sh\n" + start + `while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  case "$line" in
  *'"text":""'*) printf '{"id":%s,"text":""}\n' "$id" ;;
  *) echo ` + pids + ` > "$REDACTOR_READY.tmp" && mv "$REDACTOR_READY.tmp" "$REDACTOR_READY"; exec sleep 3600 ;;
  esac
done
`
}

// hangingImport builds the binaries and writes hangingRedactor(child) in
// a fresh folder: the binaries' folder, that folder, the example job and
// the redactor.
func hangingImport(t *testing.T, child bool) (bin, dir, example, red string) {
	bin = builtBinaries(t)
	dir = t.TempDir()
	example, err := filepath.Abs(filepath.Join("..", "..", "testdata", "example"))
	if err != nil {
		t.Fatal(err)
	}
	red = filepath.Join(dir, "redactor.sh")
	if err := os.WriteFile(red, []byte(hangingRedactor(child)), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, dir, example, red
}

// TestKilledImportLeavesNoStaleTemp: kill -9 during `tpctl import`
// leaves its hidden temporary folder (nothing can run after SIGKILL) and
// kills its exec redactor (parent-death signal); the next import into the
// same parent removes the leftover and says so, and never touches the
// temporary folder of an import that is still running.
func TestKilledImportLeavesNoStaleTemp(t *testing.T) {
	t.Parallel() // only child processes, each with its own environment
	bin, dir, example, red := hangingImport(t, false)
	parent := filepath.Join(dir, "rounds")
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	importArgs := func(out string, traces bool) []string {
		a := []string{"import", "--plan", filepath.Join(example, "import-plan.json"), "--root", example, "--out", filepath.Join(parent, out)}
		if traces {
			a = append(a, "--trace-limit", "1", "--redactor", "exec:"+red)
		}
		return a
	}
	temps := func(out string) []string {
		m, _ := filepath.Glob(filepath.Join(parent, "."+out+".tmp-*"))
		return m
	}
	startHanging := func(out string) (*exec.Cmd, int) {
		ready := filepath.Join(dir, out+".ready")
		cmd, _ := startTPCTL(t, bin, dir, []string{"REDACTOR_READY=" + ready}, importArgs(out, true)...)
		waitUntil(t, "the redactor of "+out+" to get its first request", func() bool { return nonEmpty(ready) })
		b, _ := os.ReadFile(ready)
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("ready file %q: %v", b, err)
		}
		return cmd, pid
	}

	// Two imports run into one parent; then one is killed: its temporary
	// folder stays, its redactor dies.
	killed, redPID := startHanging("snap")
	if len(temps("snap")) != 1 {
		t.Fatalf("no temporary folder while the import runs: %v", temps("snap"))
	}
	live, livePID := startHanging("live")
	liveTemp := temps("live")
	killHard(t, killed)
	waitUntil(t, "the exec redactor to end after tpctl was killed", func() bool { return processGone(redPID) })
	leftover := temps("snap")
	if len(leftover) != 1 {
		t.Fatalf("want the killed import's temporary folder, found %v", leftover)
	}

	next := exec.Command(filepath.Join(bin, "tpctl"), importArgs("snap2", false)...)
	out, err := next.CombinedOutput()
	if err != nil {
		t.Fatalf("the next import failed: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("warning stale_temp: removed")) || !bytes.Contains(out, []byte(filepath.Base(leftover[0]))) {
		t.Errorf("the next import did not report the leftover it removed:\n%s", out)
	}
	if _, err := os.Stat(leftover[0]); !os.IsNotExist(err) {
		t.Errorf("the leftover %s is still there (%v)", leftover[0], err)
	}
	if got := temps("live"); len(got) != 1 || got[0] != liveTemp[0] {
		t.Errorf("the running import's temporary folder was touched: before %v, after %v", liveTemp, got)
	}
	if bytes.Contains(out, []byte(".live.tmp-")) {
		t.Errorf("the running import's temporary folder was reported:\n%s", out)
	}
	killHard(t, live)
	waitUntil(t, "the second redactor to end", func() bool { return processGone(livePID) })
}
