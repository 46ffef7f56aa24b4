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

// TestEveryCommandUnderDescriptorLimit is issue 35 finding 4 through the
// binary: under a real `ulimit -n` from 8 up (below, the Go runtime itself
// cannot start), no command that reads a snapshot or writes beside one
// panics (export dereferenced nil when a table file could not be opened);
// each either does its work (exit 0) or fails loudly with a non-zero exit,
// says it was an I/O error, and leaves no output behind.
func TestEveryCommandUnderDescriptorLimit(t *testing.T) {
	bin := filepath.Join(builtBinaries(t), "tpctl")
	base := t.TempDir()
	_, snap, _ := importedRound(t, bin, base, 200)
	commands := []struct {
		name string
		args func(out string) []string
	}{
		{"export", func(out string) []string { return []string{"export", snap, "--out", out} }},
		{"export-csv", func(out string) []string { return []string{"export", snap, "--format", "csv", "--out", out} }},
		{"report", func(out string) []string { return []string{"report", snap, "--out", out + ".html"} }},
		{"trend", func(out string) []string { return []string{"trend", snap, snap, "--out", out + ".html"} }},
		{"attest", func(out string) []string {
			return []string{"attest", snap, "--key", filepath.Join(base, "k.key"), "--out", out + ".intoto.jsonl"}
		}},
		{"compare", func(string) []string { return []string{"compare", snap, snap} }},
		{"snapshot-show", func(string) []string { return []string{"snapshot", "show", snap, "--trials"} }},
		{"snapshot-verify", func(string) []string { return []string{"snapshot", "verify", snap} }},
		{"upload-dry-run", func(string) []string { return []string{"upload", snap, "--dry-run"} }},
	}
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			ok, failed := 0, 0
			for _, n := range []int{8, 9, 10, 11, 12, 14, 16} {
				out := filepath.Join(base, fmt.Sprintf("%s-%d", c.name, n))
				args := c.args(out)
				cmd := exec.Command("bash", "-c", fmt.Sprintf(`ulimit -n %d; exec "$@"`, n), "tpctl", bin)
				cmd.Args = append(cmd.Args, args...)
				cmd.Env = append(os.Environ(), "TUNEPLANE_CONFIG=", "NO_COLOR=1")
				b, err := cmd.CombinedOutput()
				text := string(b)
				if strings.Contains(text, "panic:") || strings.Contains(text, "goroutine ") || strings.Contains(text, "SIGSEGV") {
					t.Fatalf("ulimit -n %d: tpctl %s panicked:\n%s", n, strings.Join(args, " "), text)
				}
				// compare's verdict on a round with infra errors is exit 1
				// with the comparison printed: its work, done.
				if err == nil || c.name == "compare" && strings.Contains(text, "unchanged:") {
					ok++
					continue
				}
				failed++
				if !strings.Contains(text, "tpctl: error:") {
					t.Errorf("ulimit -n %d: failed (%v) without an error line:\n%s", n, err, text)
				}
				if strings.Contains(text, "too many open files") && !strings.Contains(text, "an I/O error") {
					t.Errorf("ulimit -n %d: too many open files not reported as an I/O error:\n%s", n, text)
				}
				if strings.Contains(text, "may have been modified") {
					t.Errorf("ulimit -n %d: an I/O error reported as tampering:\n%s", n, text)
				}
				for _, p := range []string{out, out + ".html", out + ".intoto.jsonl"} {
					if fi, err := os.Stat(p); err == nil && !(c.name[:6] == "export" && fi.IsDir() && emptyDir(p)) {
						t.Errorf("ulimit -n %d: failed but left %s", n, p)
					}
				}
			}
			t.Logf("%s: %d ok, %d failed loudly", c.name, ok, failed)
		})
	}
}

// emptyDir reports whether dir has no entries (export makes its --out
// folder before it reads; a failed export leaves no partition in it).
func emptyDir(dir string) bool {
	es, err := os.ReadDir(dir)
	return err == nil && len(es) == 0
}
