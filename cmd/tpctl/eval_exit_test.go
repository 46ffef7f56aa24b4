package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestEvalRunExitCodes runs the real tpctl process (the test binary under
// the name tpctl) against the substitute harbor and checks the exact exit
// status, which testscript cannot: 0 complete, 1 incomplete, 2 existing
// --out, 143 SIGTERM and 130 SIGINT mid-trial.
func TestEvalRunExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, n := range []string{"tpctl", "harbor"} {
		if err := os.Symlink(self, filepath.Join(bin, n)); err != nil {
			t.Fatal(err)
		}
	}
	work := t.TempDir()
	writeTxtarFiles(t, work, filepath.Join("testdata", "script", "eval-run-signal.txtar"))
	cases := []struct {
		name     string
		scenario string
		out      string
		signal   syscall.Signal
		want     int
	}{
		{"complete", "success", "ok", 0, 0},
		{"incomplete", "exit1", "bad", 0, 1},
		{"existing out", "success", "ok", 0, 2},
		{"SIGTERM", "hang", "term", syscall.SIGTERM, 143},
		{"SIGINT", "hang", "int", syscall.SIGINT, 130},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ready := filepath.Join(work, c.out+".ready")
			// No deadline of its own: the test waits on events (the ready
			// file, the process's end); go test's -timeout catches a hang.
			cmd := exec.Command(filepath.Join(bin, "tpctl"), "eval", "run", "plan.json", "--out", c.out)
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
				"FAKE_HARBOR_SCENARIO_B="+c.scenario, "FAKE_HARBOR_READY="+ready, "NO_COLOR=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			if c.signal != 0 {
				tick := time.NewTicker(20 * time.Millisecond)
				defer tick.Stop()
			wait:
				for {
					select {
					case <-done:
						t.Fatalf("tpctl ended before the hanging trial started; stderr:\n%s", stderr.String())
					case <-tick.C:
						if fi, err := os.Stat(ready); err == nil && fi.Size() > 0 {
							break wait
						}
					}
				}
				if err := cmd.Process.Signal(c.signal); err != nil {
					t.Fatal(err)
				}
			}
			<-done
			if got := cmd.ProcessState.ExitCode(); got != c.want {
				t.Errorf("exit status = %d, want %d; stderr:\n%s", got, c.want, stderr.String())
			}
			if c.signal != 0 {
				if _, err := os.Stat(filepath.Join(work, c.out, "snapshot", "snapshot.json")); err != nil {
					t.Errorf("no partial snapshot after %v: %v", c.signal, err)
				}
			}
		})
	}
}
