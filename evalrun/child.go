package evalrun

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/tuneplane/tpctl/internal/supervise"
)

// childSpec is one Harbor process to run.
type childSpec struct {
	Path   string
	Args   []string
	Dir    string
	Env    []string
	Output io.Writer
	// Limit is the wall-clock limit; 0 means none.
	Limit time.Duration
	// Grace is how long the process group may clean up after SIGINT.
	Grace time.Duration
}

// childResult says how a Harbor process ended.
type childResult struct {
	Started  time.Time
	Ended    time.Time
	ExitCode int    // -1 when killed by a signal or never started
	Signal   string // the signal that killed it, if any
	// TimedOut and Cancelled say why tpctl sent SIGINT (at most one).
	TimedOut  bool
	Cancelled bool
	// Killed means the group did not end within the grace period after
	// SIGINT and was killed: Harbor's cleanup may not have run.
	Killed bool
	// StragglersKilled means the leader ended (on its own or after
	// SIGINT) but other members of its process group were still running
	// and were killed.
	StragglersKilled bool
	// NotStarted means the process could not be started (StartErr says
	// why); nothing ran.
	NotStarted bool
	StartErr   error
}

// runChild starts the process in its own process group (so a terminal's
// Ctrl-C reaches only tpctl, which forwards it deliberately) and waits for
// it. At the limit, or when ctx is cancelled, it sends SIGINT to the group
// — `harbor trial start` cleans up its sandbox only on SIGINT; SIGTERM
// kills it at once — waits up to Grace, then sends SIGKILL to the group.
// Wait is called exactly once.
//
// On Linux the child also gets SIGINT when tpctl dies, even by SIGKILL
// (a parent-death signal), so Harbor still cleans up its sandbox. The
// kernel sends it when the OS thread that forked the child ends, not the
// process, and the Go runtime ends a thread when a goroutine locked to it
// exits: so this goroutine stays locked to its thread until the child has
// been waited for, and no other goroutine can end that thread early.
func runChild(ctx context.Context, spec childSpec) childResult {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	cmd.Stdout = spec.Output
	cmd.Stderr = spec.Output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr, syscall.SIGINT)
	res := childResult{ExitCode: -1, Started: time.Now()}
	// The supervisor runs before the child exists, so that the child is
	// guarded from its first instant (see supervise.Start).
	_ = supervise.Start()
	if err := cmd.Start(); err != nil {
		res.NotStarted = true
		res.StartErr = err
		res.Ended = time.Now()
		return res
	}
	pid := cmd.Process.Pid
	// The parent-death signal reaches Harbor only, and only once: a
	// supervisor that outlives tpctl sends its process group SIGINT, waits
	// the grace period and sends SIGKILL (Linux; internal/supervise).
	// Unwatched once the group is gone, below.
	unwatch, _ := supervise.Watch(pid, spec.Grace)
	defer unwatch()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var limit <-chan time.Time
	if spec.Limit > 0 {
		t := time.NewTimer(spec.Limit)
		defer t.Stop()
		limit = t.C
	}
	var err error
	select {
	case err = <-done:
	case <-limit:
		res.TimedOut = true
	case <-ctx.Done():
		res.Cancelled = true
	}
	if res.TimedOut || res.Cancelled {
		_ = syscall.Kill(-pid, syscall.SIGINT)
		grace := time.NewTimer(spec.Grace)
		select {
		case err = <-done:
			grace.Stop()
		case <-grace.C:
			res.Killed = true
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			err = <-done
		}
	}
	// Anything still in the group (a compose call Harbor started and did
	// not wait for) would outlive tpctl unnoticed and overlap the next
	// trial, whether Harbor ended on its own, failed or was stopped: kill
	// it too.
	if syscall.Kill(-pid, 0) == nil {
		res.StragglersKilled = true
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	res.Ended = time.Now()
	res.ExitCode = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = signalName(ws.Signal())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		// An I/O error copying output; the exit status above still holds.
		res.StartErr = err
	}
	return res
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	}
	return strings.ToUpper(s.String())
}

// childEnv is the environment Harbor runs with: tpctl's own, without the
// platform's TUNEPLANE_* variables (the ingest token is for tpctl alone),
// with HARBOR_TELEMETRY=off so no usage report leaves the machine.
func childEnv(base []string) []string {
	out := make([]string, 0, len(base)+1)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "TUNEPLANE_") || k == "HARBOR_TELEMETRY" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HARBOR_TELEMETRY=off")
}

// lookupEnv finds a variable in a KEY=value list (the last one wins, as
// in exec.Cmd).
func lookupEnv(env []string, name string) (string, bool) {
	val, found := "", false
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			val, found = v, true
		}
	}
	return val, found
}

// osEnviron is a seam for tests.
var osEnviron = os.Environ
