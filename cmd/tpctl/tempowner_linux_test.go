//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tuneplane/tpctl/upload/ingesttest"
)

// killOnCreate starts cmd and kills it with SIGKILL as soon as a file
// whose name starts with prefix is created in dir (an inotify event, no
// wall-clock wait). It returns the names created; the kill is not needed
// to have won the race (the caller checks what is on disk).
func killOnCreate(t *testing.T, cmd *exec.Cmd, dir, prefix string) {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	buf := make([]byte, 64<<10)
	for {
		// The watch sees the create even when the process ends first;
		// a process that ends without creating one ends the wait too.
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 50)
		if err != nil && err != unix.EINTR {
			t.Fatal(err)
		}
		if n == 0 {
			select {
			case <-exited:
				t.Fatalf("%v ended without creating %s* in %s", cmd.Args, prefix, dir)
			default:
			}
			continue
		}
		m, err := unix.Read(fd, buf)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= m; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if strings.HasPrefix(name, prefix) {
				cmd.Process.Signal(syscall.SIGKILL)
				<-exited
				return
			}
		}
	}
}

// temps lists the names in dir starting with prefix.
func temps(t *testing.T, dir, prefix string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestKilledReportLeavesNoStaleTemp is issue 26 item 3 for `tpctl report`:
// kill -9 while the page is written leaves its temporary file, whose name
// records the owner (pid and start time); the next report of the same file
// removes it and says so, and never touches the temporary of a writer
// that still runs.
func TestKilledReportLeavesNoStaleTemp(t *testing.T) {
	t.Parallel() // only child processes, each with its own environment
	bin := builtBinaries(t)
	dir := t.TempDir()
	snap := filepath.Join(dir, "snap")
	// A large round, so that writing the page takes a while after its
	// temporary file is created.
	if _, err := ingesttest.WriteSnapshot(snap, ingesttest.SnapshotSpec{Trials: 4000}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "pages")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(out, "r.html")
	prefix := ".r.html.tmp-"
	var left []string
	var pid int
	for try := 0; try < 5 && len(left) == 0; try++ {
		os.Remove(page)
		cmd := exec.Command(filepath.Join(bin, "tpctl"), "report", snap, "--out", page)
		cmd.Env = append(os.Environ(), "TUNEPLANE_CONFIG=")
		killOnCreate(t, cmd, out, prefix)
		pid = cmd.Process.Pid
		left = temps(t, out, prefix)
	}
	if len(left) != 1 {
		t.Fatalf("kill -9 never caught the report mid-write: %v", left)
	}
	if !strings.HasPrefix(left[0], fmt.Sprintf("%s%d-", prefix, pid)) {
		t.Errorf("the temporary %s does not record its owner %d", left[0], pid)
	}
	// A temporary of a writer that still runs: this test's own process.
	self, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := bytes.Fields(self[bytes.LastIndexByte(self, ')')+1:])
	live := fmt.Sprintf("%s%d-%s-1", prefix, os.Getpid(), f[19])
	if err := os.WriteFile(filepath.Join(out, live), []byte("in progress"), 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(filepath.Join(bin, "tpctl"), "report", snap, "--out", page)
	cmd.Env = append(os.Environ(), "TUNEPLANE_CONFIG=")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the next report failed: %v\n%s", err, b)
	}
	want := "stale_temp: removed " + strconv.Quote(filepath.Join(out, left[0]))
	if !strings.Contains(string(b), want) || !strings.Contains(string(b), fmt.Sprintf("tpctl process %d, which is gone", pid)) {
		t.Errorf("the next report does not say it removed the leftover (%s):\n%s", want, b)
	}
	if got := temps(t, out, prefix); len(got) != 1 || got[0] != live {
		t.Errorf("after the next report the temporaries are %v, want only the live writer's %s", got, live)
	}
	if _, err := os.Stat(page); err != nil {
		t.Errorf("the next report wrote no page: %v", err)
	}
}

// TestKilledEvalWriterLeavesOwnedTemp is issue 26 item 3 for the eval
// writers (execution.json, execution-errors.json): kill -9 of `eval run`
// while one is written leaves a temporary whose name records the killed
// owner, so the next writer in that folder removes it (and one whose owner
// lives it never does; safefs tests both).
func TestKilledEvalWriterLeavesOwnedTemp(t *testing.T) {
	t.Parallel() // only child processes, each with its own environment
	bin := builtBinaries(t)
	dir := t.TempDir()
	writeTxtarFiles(t, dir, filepath.Join("testdata", "script", "eval-run-signal.txtar"))
	ready := filepath.Join(dir, "ready")
	run := filepath.Join(dir, "run1")
	cmd := exec.Command(filepath.Join(bin, "tpctl"), "eval", "run", "plan.json", "--out", "run1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TUNEPLANE_CONFIG=",
		"PATH="+filepath.Join(bin, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKE_HARBOR_SCENARIO_A=hang", "FAKE_HARBOR_READY="+ready)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	// The run waits in trial a until its Harbor is interrupted; then tpctl
	// records the trial, and is killed as its record's temporary appears.
	waitUntil(t, "the substitute harbor to start its trial", func() bool { return nonEmpty(ready) })
	if _, err := unix.InotifyAddWatch(fd, run, unix.IN_CREATE); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(ready)
	harborPID, _ := strconv.Atoi(strings.Fields(string(b))[0])
	if err := syscall.Kill(harborPID, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for killed := false; !killed; {
		m, err := unix.Read(fd, buf)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= m; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if strings.HasPrefix(name, ".execution") && !killed {
				cmd.Process.Signal(syscall.SIGKILL)
				cmd.Wait()
				killed = true
			}
		}
	}
	left := temps(t, run, ".execution")
	if len(left) == 0 {
		t.Skipf("the write finished before the kill landed; tpctl said:\n%s", out.String())
	}
	for _, name := range left {
		if !strings.Contains(name, fmt.Sprintf(".tmp-%d-", cmd.Process.Pid)) {
			t.Errorf("the temporary %s does not record its owner %d", name, cmd.Process.Pid)
		}
	}
	// The next writer of the folder: a snapshot written into it cleans its
	// parent, as every import does.
	plan := filepath.Join(dir, "plan-import.json")
	writeJSONFile(t, plan, map[string]any{"version": 1, "source": map[string]any{"format": "harbor", "revision": "4407eb5227a2ff4f0d3f16b2eb48849382fdf276"},
		"name": "after-kill", "split": "heldout", "checkpoint": map[string]any{"ref": "hf://acme/m@bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "served_as": "hosted_vllm/m"},
		"protocol": map[string]any{"dataset_digest": strings.Repeat("a", 64), "verifier_digest": strings.Repeat("b", 64), "environment_digest": strings.Repeat("c", 64), "harness_digest": strings.Repeat("d", 64)},
		"settings": map[string]any{}, "trials": []any{map[string]any{"task": "a", "repeat": 0, "attempts": []any{}}}})
	imp := exec.Command(filepath.Join(bin, "tpctl"), "import", "--plan", plan, "--root", run, "--out", filepath.Join(run, "after"))
	imp.Env = append(os.Environ(), "TUNEPLANE_CONFIG=")
	b, err = imp.CombinedOutput()
	if err != nil {
		t.Fatalf("the import into the killed run's folder failed: %v\n%s", err, b)
	}
	if got := temps(t, run, ".execution"); len(got) != 0 {
		t.Errorf("the next writer left %v\n%s", got, b)
	}
	if !strings.Contains(string(b), "stale_temp: removed") {
		t.Errorf("the next writer does not report what it removed:\n%s", b)
	}
}
