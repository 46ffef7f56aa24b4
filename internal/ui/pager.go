package ui

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// PagerEnv overrides $PAGER for tpctl alone; "cat" or "" with it set
// turns paging off.
const PagerEnv = "TUNEPLANE_PAGER"

// StartPager sends standard output through a pager while the command
// prints long text, when stdout is a terminal and paging is not turned off
// (--no-pager, TUNEPLANE_PAGER=cat, PAGER=cat). The pager is
// $TUNEPLANE_PAGER, else $PAGER, else less with LESS=FRX (quit when the
// text fits one screen, keep colour, leave it on screen) unless LESS is
// set; like git's, a pager named in the environment is a shell command
// line ("less -S", "LESS=-R less"). The returned stop waits for the pager
// to end; call it before exiting. A pager that cannot start is skipped:
// output goes to the terminal as before; one the person quits early only
// drops the rest of the text.
func (s *Streams) StartPager(disabled bool) (stop func()) {
	nop := func() {}
	// The pager writes to the terminal itself: a stdout that is not a
	// file (test streams, even with SetTTY) is never paged.
	if _, file := s.rawOut.(*os.File); disabled || !s.stdoutTTY || !file {
		return nop
	}
	cmdline, set := os.LookupEnv(PagerEnv)
	if !set {
		cmdline = os.Getenv("PAGER")
	}
	cmdline = strings.TrimSpace(cmdline)
	if cmdline == "cat" || (set && cmdline == "") {
		return nop
	}
	var cmd *exec.Cmd
	switch sh, err := exec.LookPath("sh"); {
	case cmdline == "":
		less, err := exec.LookPath("less")
		if err != nil {
			return nop // no pager at all: the terminal it is
		}
		cmd = exec.Command(less)
	case err == nil:
		cmd = exec.Command(sh, "-c", cmdline)
	default:
		args := strings.Fields(cmdline)
		cmd = exec.Command(args[0], args[1:]...)
	}
	cmd.Env = os.Environ()
	if _, ok := os.LookupEnv("LESS"); !ok {
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	if _, ok := os.LookupEnv("LV"); !ok {
		cmd.Env = append(cmd.Env, "LV=-c")
	}
	cmd.Stdout, cmd.Stderr = s.rawOut, s.rawErr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nop
	}
	if err := cmd.Start(); err != nil {
		return nop
	}
	prev := s.Out
	var pw io.Writer = pagerWriter{in}
	if s.wrap != nil {
		pw = s.wrap(pw)
	}
	s.Out = pw
	return func() {
		s.Out = prev
		_ = in.Close()
		_ = cmd.Wait()
	}
}

// pagerWriter drops the broken pipe of a pager the user quit early: the
// rest of the text is not wanted, which is not an error.
type pagerWriter struct{ w io.WriteCloser }

func (p pagerWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		return len(b), nil
	}
	return n, err
}
