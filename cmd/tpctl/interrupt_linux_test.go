//go:build linux

package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// These tests interrupt a real tpctl binary with SIGINT while it is
// mid-run (issue 27 item 2). "Mid-run" is an event, never a sleep: the
// import's exec redactor writes a ready file when the first real request
// reaches it and then hangs; the upload's receiver holds the first request
// open until the test has sent the signal and tpctl has exited.

// waitExit waits for cmd and returns its exit status (-1: not known).
func waitExit(cmd *exec.Cmd) int {
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// TestInterruptedImportSavesNothing: SIGINT during `tpctl import` exits
// 130, says nothing was saved, and leaves neither --out nor the hidden
// temporary folder it was writing; the exec redactor is stopped too.
func TestInterruptedImportSavesNothing(t *testing.T) {
	t.Parallel() // only child processes, each with its own environment
	bin, dir, example, red := hangingImport(t, false)
	parent := filepath.Join(dir, "rounds")
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(parent, "snap")
	ready := filepath.Join(dir, "ready")
	cmd, output := startTPCTL(t, bin, dir, []string{"REDACTOR_READY=" + ready},
		"import", "--plan", filepath.Join(example, "import-plan.json"), "--root", example, "--out", out,
		"--trace-limit", "1", "--redactor", "exec:"+red)
	waitUntil(t, "the redactor to get its first request", func() bool { return nonEmpty(ready) })
	b, _ := os.ReadFile(ready)
	redPID, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("ready file %q: %v", b, err)
	}
	if m, _ := filepath.Glob(filepath.Join(parent, ".snap.tmp-*")); len(m) != 1 {
		t.Fatalf("the import is not mid-run: temporary folders %v", m)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(cmd); code != 130 {
		t.Errorf("exit %d after SIGINT, want 130\n%s", code, output)
	}
	if !strings.Contains(output.String(), "tpctl: error: import interrupted: nothing was saved") {
		t.Errorf("tpctl did not say nothing was saved:\n%s", output)
	}
	if strings.Contains(output.String(), "context canceled") {
		t.Errorf("the message blames the context:\n%s", output)
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind in --out's folder: %s", e.Name())
	}
	waitUntil(t, "the exec redactor to be stopped", func() bool { return processGone(redPID) })
}

// TestInterruptedUploadKeepsSnapshot: SIGINT while a request is in flight
// exits 130, says the saved snapshot is intact and names `tpctl upload
// DIR` to resume; the snapshot still verifies.
func TestInterruptedUploadKeepsSnapshot(t *testing.T) {
	t.Parallel() // only child processes, each with its own environment
	bin := builtBinaries(t)
	dir := t.TempDir()
	example, err := filepath.Abs(filepath.Join("..", "..", "testdata", "example"))
	if err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(dir, "snap")
	if out, err := exec.Command(filepath.Join(bin, "tpctl"), "import", "--plan", filepath.Join(example, "import-plan.json"), "--root", example, "--out", snap).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	arrived := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(arrived) })
		// Held open until tpctl has gone: the upload is mid-request
		// when the signal arrives, whatever the machine's load.
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, "test receiver closed", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	defer close(release)

	cmd, output := startTPCTL(t, bin, dir, []string{
		"TUNEPLANE_JOB_ENDPOINT=" + srv.URL, "TUNEPLANE_JOB_RUN_ID=run-1", "TUNEPLANE_JOB_TOKEN=tok-interrupt",
	}, "upload", "snap")
	done := make(chan int, 1)
	go func() { done <- waitExit(cmd) }()
	select {
	case <-arrived:
	case code := <-done:
		t.Fatalf("tpctl ended (exit %d) before its first request arrived:\n%s", code, output)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 130 {
		t.Errorf("exit %d after SIGINT, want 130\n%s", code, output)
	}
	for _, want := range []string{
		"tpctl: error: upload interrupted: the saved snapshot is intact",
		"run tpctl upload snap to finish the upload",
		"Upload incomplete for round",
	} {
		if !strings.Contains(output.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, output)
		}
	}
	if strings.Contains(output.String(), "context canceled") {
		t.Errorf("the message blames the context:\n%s", output)
	}
	if out, err := exec.Command(filepath.Join(bin, "tpctl"), "snapshot", "verify", snap).CombinedOutput(); err != nil {
		t.Errorf("the snapshot no longer verifies after the interrupted upload: %v\n%s", err, out)
	}
	if bytes.Contains(output.Bytes(), []byte("tok-interrupt")) {
		t.Errorf("the token was printed:\n%s", output)
	}
}

// TestInterruptedWhileOpeningFIFOPlan is issue 35 finding 8: a plan that
// is a named pipe blocks tpctl in open(2) until a writer comes; one
// SIGINT must still end it promptly with 130 (it survived two). The
// event waited for is the kernel's: a thread of tpctl waiting in the
// FIFO's open for its partner.
func TestInterruptedWhileOpeningFIFOPlan(t *testing.T) {
	bin := builtBinaries(t)
	for _, args := range [][]string{
		{"plan", "check", "plan.fifo", "--root", "."},
		{"import", "--plan", "plan.fifo", "--root", ".", "--out", "snap"},
	} {
		t.Run(args[0], func(t *testing.T) {
			dir := t.TempDir()
			if err := syscall.Mkfifo(filepath.Join(dir, "plan.fifo"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd, output := startTPCTL(t, bin, dir, []string{"TUNEPLANE_CONFIG="}, args...)
			waitUntil(t, "tpctl to block opening the FIFO", func() bool { return blockedInFIFOOpen(cmd.Process.Pid) })
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(cmd); code != 130 {
				t.Fatalf("exit %d after one SIGINT, want 130:\n%s", code, output)
			}
			if !strings.Contains(output.String(), "interrupted by SIGINT") {
				t.Errorf("the message does not say it was interrupted:\n%s", output)
			}
			if _, err := os.Stat(filepath.Join(dir, "snap")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("left --out behind: %v", err)
			}
		})
	}
}

// blockedInFIFOOpen reports whether a thread of pid waits in the open of a
// FIFO for its writer (Linux: wchan wait_for_partner).
func blockedInFIFOOpen(pid int) bool {
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
	for _, w := range tasks {
		if b, err := os.ReadFile(w); err == nil && strings.TrimSpace(string(b)) == "wait_for_partner" {
			return true
		}
	}
	return false
}
