package supervise

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

var state struct {
	mu      sync.Mutex
	enabled bool
	started bool
	w       *os.File // the pipe to the supervisor; never closed (its close is tpctl's death)
	err     error
}

// Enable lets this process start a supervisor: its executable is tpctl,
// which becomes the supervisor when run with Arg (Run). Test binaries
// that are not tpctl never call it, and Watch then does nothing.
func Enable() {
	state.mu.Lock()
	state.enabled = true
	state.mu.Unlock()
}

// Watch guards process group pgid: if tpctl dies before the returned
// unwatch is called, the group gets SIGINT and, grace later, SIGKILL
// (grace 0: SIGKILL at once). The supervisor is started on the first
// call. The error says it could not be started; the child then has only
// its parent-death signal.
func Watch(pgid int, grace time.Duration) (unwatch func(), err error) {
	state.mu.Lock()
	defer state.mu.Unlock()
	if !state.enabled {
		return func() {}, nil
	}
	startLocked()
	if state.err != nil {
		return func() {}, state.err
	}
	// Lines are far shorter than PIPE_BUF: each write is atomic.
	if _, err := fmt.Fprintf(state.w, "watch %d %d\n", pgid, grace.Milliseconds()); err != nil {
		return func() {}, fmt.Errorf("the supervisor of child processes stopped listening: %w", err)
	}
	return func() {
		state.mu.Lock()
		defer state.mu.Unlock()
		fmt.Fprintf(state.w, "unwatch %d\n", pgid)
	}, nil
}

// Start starts the supervisor now, if Enable was called, rather than at
// the first Watch. Call it before starting the child to be watched: the
// supervisor is a new process, slow to start on a loaded machine, and a
// tpctl killed between the child's start and its Watch would leave the
// child unguarded. With the supervisor running, Watch is one pipe write
// right after the child starts. The error is Watch's.
func Start() error {
	state.mu.Lock()
	defer state.mu.Unlock()
	if !state.enabled {
		return nil
	}
	startLocked()
	return state.err
}

func startLocked() {
	if !state.started {
		state.started = true
		state.w, state.err = start()
	}
}

// start runs the supervisor: this executable with Arg, in its own process
// group (a terminal's Ctrl-C is tpctl's to handle), reading the pipe on
// its standard input, with no output (it must not hold tpctl's output
// open after tpctl ends).
func start() (*os.File, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot start the supervisor of child processes: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("cannot start the supervisor of child processes: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(exe, Arg)
	// argv[0] names tpctl, as a test harness that dispatches on it needs.
	cmd.Args[0] = "tpctl"
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("cannot start the supervisor of child processes: %w", err)
	}
	// Not waited for: it ends when the pipe closes, at tpctl's exit
	// (init reaps it then).
	cmd.Process.Release()
	return w, nil
}

// Run is the supervisor's main: it reads commands on standard input until
// it closes, then stops every group still guarded, and returns the exit
// status. Signals that would end it with tpctl are ignored.
func Run() int {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE, syscall.SIGQUIT)
	stop(parse(os.Stdin))
	return 0
}

// stop sends each group SIGINT (SIGKILL when its grace is 0), then SIGKILL
// to those still there when their grace ends.
func stop(groups []group) {
	start := time.Now()
	var left []group
	for _, g := range groups {
		sig := syscall.SIGINT
		if g.grace == 0 {
			sig = syscall.SIGKILL
		}
		if syscall.Kill(-g.pgid, sig) == nil && g.grace > 0 {
			left = append(left, g)
		}
	}
	// The supervisor is not the groups' parent and cannot wait for them:
	// it looks whether each still has a member.
	for len(left) > 0 {
		time.Sleep(20 * time.Millisecond)
		keep := left[:0]
		for _, g := range left {
			if err := syscall.Kill(-g.pgid, 0); errors.Is(err, syscall.ESRCH) {
				continue
			}
			if time.Since(start) >= g.grace {
				syscall.Kill(-g.pgid, syscall.SIGKILL)
				continue
			}
			keep = append(keep, g)
		}
		left = keep
	}
}
