package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tuneplane/tpctl/internal/fakeharbor"
)

// The eval scripts run tpctl against a substitute `harbor` (the test
// binary, see internal/fakeharbor) and two small helpers for the signal
// tests: evaltest-waitfile waits for a file to appear, evaltest-kill sends
// a signal to the parent process recorded in the substitute's ready file
// (that parent is the tpctl under test).
func init() {
	scriptCmds["harbor"] = fakeharbor.Main
	scriptCmds["evaltest-waitfile"] = func() { os.Exit(evalTestWaitFile(os.Args[1:])) }
	scriptCmds["evaltest-kill"] = func() { os.Exit(evalTestKill(os.Args[1:])) }
	// EVAL_EXAMPLE is the repository's example eval plan folder (read only).
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		abs, err := filepath.Abs(filepath.Join("..", "..", "testdata", "eval"))
		if err != nil {
			return err
		}
		env.Setenv("EVAL_EXAMPLE", abs)
		return nil
	})
}

// evalTestWaitFile waits up to 20 s for a file to exist and be non-empty.
func evalTestWaitFile(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: evaltest-waitfile PATH")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if fi, err := os.Stat(args[0]); err == nil && fi.Size() > 0 {
			return 0
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "evaltest-waitfile: %s did not appear\n", args[0])
	return 1
}

// evalTestKill sends SIGNAL (INT or TERM) to the parent pid in READYFILE.
func evalTestKill(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: evaltest-kill INT|TERM READYFILE")
		return 2
	}
	sig := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM}[args[0]]
	b, err := os.ReadFile(args[1])
	f := strings.Fields(string(b))
	if err != nil || sig == 0 || len(f) != 2 {
		fmt.Fprintf(os.Stderr, "evaltest-kill: bad arguments or ready file: %v %q\n", err, b)
		return 2
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil || ppid <= 1 {
		fmt.Fprintf(os.Stderr, "evaltest-kill: bad parent pid %q\n", f[1])
		return 2
	}
	if err := syscall.Kill(ppid, sig); err != nil {
		fmt.Fprintf(os.Stderr, "evaltest-kill: %v\n", err)
		return 1
	}
	return 0
}
