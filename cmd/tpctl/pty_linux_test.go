package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/charmbracelet/x/ansi"

	"github.com/tuneplane/tpctl/compare/comparetest"
)

// openPTY opens a pseudo-terminal pair with the standard library alone
// (/dev/ptmx, TIOCSPTLCK, TIOCGPTN), so tpctl can be run with its stdout a
// real terminal.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal on this machine: %v", err)
	}
	ioctl := func(req uintptr, arg unsafe.Pointer) error {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), req, uintptr(arg)); e != 0 {
			return e
		}
		return nil
	}
	var unlock int32
	var n uint32
	if err := ioctl(syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	if err := ioctl(syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatalf("open pty: %v", err)
	}
	return m, s
}

// runOnTTY runs the tpctl under test with stdout on a pseudo-terminal (or
// a pipe when tty is false) and returns what reached stdout and stderr.
func runOnTTY(t *testing.T, tty bool, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	bin, err := exec.LookPath("tpctl")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var errBuf, outBuf bytes.Buffer
	cmd.Stderr = &errBuf
	var master, slave *os.File
	if tty {
		master, slave = openPTY(t)
		defer master.Close()
		cmd.Stdout = slave
	} else {
		cmd.Stdout = &outBuf
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	if tty {
		slave.Close() // the child holds its own copy; EOF (EIO) when it and its pager end
		go func() {
			defer close(done)
			_, _ = io.Copy(&outBuf, master)
		}()
	} else {
		close(done)
	}
	err = cmd.Wait()
	<-done
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	// The terminal turns "\n" into "\r\n".
	return strings.ReplaceAll(outBuf.String(), "\r\n", "\n"), errBuf.String(), code
}

// TestPager: long text on a terminal goes through $TUNEPLANE_PAGER, which
// writes to the terminal itself and gets LESS=FRX when LESS is unset;
// --no-pager, a stdout that is not a terminal and --output json bypass
// it; a pager that quits without reading does not make tpctl fail.
func TestPager(t *testing.T) {
	dir := t.TempDir()
	trials := map[string]string{}
	for i := range 1500 { // over 64 KiB of table, more than a pipe holds
		trials[fmt.Sprintf("harbor/task-%04d#0", i)] = []string{"success", "failure"}[i%2]
	}
	snap := filepath.Join(dir, "snap")
	if _, err := comparetest.Build(snap, comparetest.Spec{Trials: trials}); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(dir, "paged")
	recorder := filepath.Join(dir, "pager.sh")
	script := "#!/bin/sh\ncat > " + rec + "\nout=pipe; [ -t 1 ] && out=stdout-tty\n{ echo \"args=$*\"; echo \"LESS=$LESS\"; echo $out; } > " + rec + ".env\n"
	if err := os.WriteFile(recorder, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	quitter := filepath.Join(dir, "quit.sh")
	if err := os.WriteFile(quitter, []byte("#!/bin/sh\nexec 0<&-\necho quit > "+rec+".quit\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LESS", "")
	os.Unsetenv("LESS")
	t.Setenv("NO_COLOR", "1")
	const shown = "1,500 of 1,500 planned trials shown"
	reset := func() {
		for _, f := range []string{rec, rec + ".env", rec + ".quit"} {
			os.Remove(f)
		}
	}
	paged := func() (string, bool) {
		b, err := os.ReadFile(rec)
		return string(b), err == nil
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"snapshot show --trials", []string{"snapshot", "show", snap, "--trials"}, shown},
		{"snapshot show", []string{"snapshot", "show", snap}, "coverage      100.0%"},
		{"compare", []string{"compare", snap, snap}, "comparable: same digest rules"},
		{"trend", []string{"trend", snap, snap}, "paired differences"},
		{"plan check", []string{"plan", "check", filepath.Join(repoRoot, "testdata", "example", "import-plan.json")}, "valid"},
		{"explain outcomes", []string{"explain", "outcomes"}, "infra_error"},
		{"explain statistics", []string{"explain", "statistics"}, "pass^k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reset()
			out, errOut, code := runOnTTY(t, true, []string{"TUNEPLANE_PAGER=" + recorder + " --flag"}, tc.args...)
			got, ok := paged()
			if code != 0 || !ok {
				t.Fatalf("exit %d, pager ran %v; stderr:\n%s", code, ok, errOut)
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("the pager got no %q:\n%.2000s", tc.want, got)
			}
			if strings.Contains(out, tc.want) {
				t.Errorf("the text reached the terminal besides the pager:\n%.2000s", out)
			}
			env, _ := os.ReadFile(rec + ".env")
			if want := "args=--flag\nLESS=FRX\nstdout-tty\n"; string(env) != want {
				t.Errorf("the pager ran with\n%s\nwant\n%s", env, want)
			}
		})
	}

	// The pager is one more way out: a known secret in the paged text is
	// masked before the pager gets it, as on the terminal. Table cells
	// are masked as they are laid out (ui.Columns); the prose of explain
	// outcomes is masked only by the filter on the way out, which must
	// stand in front of the pager too.
	for _, c := range []struct {
		name, secret, near string
		args               []string
	}{
		{"secret masked in a table", "task-0042#0", "harbor/task-0041#0", []string{"snapshot", "show", snap, "--trials"}},
		{"secret masked in prose", "judged first and wins", "A trial-level exception is", []string{"explain", "outcomes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			reset()
			out, errOut, code := runOnTTY(t, true, []string{"TUNEPLANE_PAGER=" + recorder, "PAGER_TEST_SECRET_KEY=" + c.secret}, c.args...)
			got, ok := paged()
			if code != 0 || !ok {
				t.Fatalf("exit %d, pager ran %v; stderr:\n%s", code, ok, errOut)
			}
			if strings.Contains(got, c.secret) || strings.Contains(out, c.secret) {
				t.Errorf("the secret %q reached the pager or the terminal", c.secret)
			}
			if !strings.Contains(got, c.near) {
				t.Errorf("the pager got no %q around the secret:\n%.500s", c.near, got)
			}
		})
	}

	t.Run("LESS kept", func(t *testing.T) {
		reset()
		if _, errOut, code := runOnTTY(t, true, []string{"TUNEPLANE_PAGER=" + recorder, "LESS=-S"}, "explain", "outcomes"); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if env, _ := os.ReadFile(rec + ".env"); !strings.Contains(string(env), "LESS=-S\n") {
			t.Errorf("LESS was not the person's own:\n%s", env)
		}
	})

	t.Run("PAGER", func(t *testing.T) {
		reset()
		if _, errOut, code := runOnTTY(t, true, []string{"PAGER=" + recorder}, "explain", "outcomes"); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if got, ok := paged(); !ok || !strings.Contains(got, "infra_error") {
			t.Errorf("$PAGER was not used (ran %v)", ok)
		}
	})

	for _, tc := range []struct {
		name string
		tty  bool
		env  []string
		args []string
		want string
	}{
		{"--no-pager", true, nil, []string{"snapshot", "show", snap, "--trials", "--no-pager"}, shown},
		{"--quiet", true, nil, []string{"explain", "outcomes", "-q"}, "infra_error"},
		{"TUNEPLANE_NO_PAGER", true, []string{"TUNEPLANE_NO_PAGER=true"}, []string{"explain", "outcomes"}, "infra_error"},
		{"TUNEPLANE_PAGER=cat", true, []string{"TUNEPLANE_PAGER=cat", "PAGER=" + recorder}, []string{"explain", "outcomes"}, "infra_error"},
		{"not a terminal", false, nil, []string{"snapshot", "show", snap, "--trials"}, shown},
		{"json", true, nil, []string{"snapshot", "show", snap, "--trials", "--output", "json"}, `"trial_id"`},
		{"json compare", true, nil, []string{"compare", snap, snap, "-o", "json"}, `"comparison"`},
		{"github", true, nil, []string{"compare", snap, snap, "-o", "github"}, "comparable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reset()
			env := tc.env
			if !strings.HasPrefix(tc.name, "TUNEPLANE_PAGER") {
				env = append(env, "TUNEPLANE_PAGER="+recorder)
			}
			out, errOut, code := runOnTTY(t, tc.tty, env, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if _, ok := paged(); ok {
				t.Error("the pager ran")
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("stdout has no %q:\n%.2000s", tc.want, out)
			}
		})
	}

	t.Run("pager quits without reading", func(t *testing.T) {
		reset()
		out, errOut, code := runOnTTY(t, true, []string{"TUNEPLANE_PAGER=" + quitter}, "snapshot", "show", snap, "--trials")
		if code != 0 || errOut != "" {
			t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, errOut)
		}
		if _, err := os.Stat(rec + ".quit"); err != nil {
			t.Fatalf("the pager did not run: %v", err)
		}
		if strings.Contains(out, shown) {
			t.Errorf("the rest of the text reached the terminal after the pager quit")
		}
	})

	t.Run("error before the text", func(t *testing.T) {
		// An error found before the result is printed on stderr; no
		// pager is started for it.
		for _, args := range [][]string{{"--status", "nope"}, {"--trial", "nope#0"}} {
			reset()
			_, errOut, code := runOnTTY(t, true, []string{"TUNEPLANE_PAGER=" + recorder}, append([]string{"snapshot", "show", snap}, args...)...)
			if code != 2 || !strings.Contains(errOut, "nope") {
				t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
			}
			if _, ran := paged(); ran {
				t.Errorf("%v: the pager was started for an error", args)
			}
		}
	})
}

// TestPreflightFitsTerminal: on a terminal of COLUMNS=80 the preflight
// table (ui.Columns, reasons wrapped) keeps every line within 80 columns
// and every reason whole; off a terminal it stays tab-separated.
func TestPreflightFitsTerminal(t *testing.T) {
	dir := t.TempDir()
	if err := pfCopyDir(filepath.Join(repoRoot, "testdata", "preflight"), dir); err != nil {
		t.Fatal(err)
	}
	args := []string{"preflight", filepath.Join(dir, "job-not-ready.yaml"), "--catalog", filepath.Join(dir, "catalog.yaml"), "--skip-source"}
	out, errOut, code := runOnTTY(t, true, []string{"COLUMNS=80", "NO_COLOR=1"}, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (not ready); stderr:\n%s", code, errOut)
	}
	for _, l := range strings.Split(out, "\n") {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("a line of %d cells: %q", w, l)
		}
	}
	if !strings.Contains(out, "\nCHECK ") || strings.Contains(out, "\t") {
		t.Errorf("not the terminal table:\n%s", out)
	}
	words := strings.Join(strings.Fields(out), " ")
	if want := "global_batch_size must be a multiple of micro_batch_size × nodes × gpus_per_node"; !strings.Contains(words, want) {
		t.Errorf("a reason was cut; no %q in\n%s", want, out)
	}
	piped, _, _ := runOnTTY(t, false, []string{"COLUMNS=80"}, args...)
	if !strings.Contains(piped, "CHECK\tSTATUS\tREASON\n") {
		t.Errorf("piped output is not tab-separated:\n%s", piped)
	}
}
