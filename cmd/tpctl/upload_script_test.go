package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/tuneplane/tpctl/upload"
	"github.com/tuneplane/tpctl/upload/ingesttest"
)

// Programs for the upload scripts (testdata/script/upload-*.txtar):
//
//	ingest-receiver …        the conformance receiver, see ingesttest.Main
//	make-snapshot [-changed] [-redaction S] DIR TRIALS TRAJECTORIES
func init() {
	scriptCmds["ingest-receiver"] = func() {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := ingesttest.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	scriptCmds["make-snapshot"] = func() { os.Exit(makeSnapshotMain(os.Args[1:])) }

	// Retry waits are recorded as zero so fault scripts run in
	// milliseconds; the retry policy itself is tested in package upload.
	testOnlyUploadConfig = func(c *upload.Config) {
		c.Wait = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
		c.RequestTimeout = 5 * time.Second
	}
}

func makeSnapshotMain(args []string) int {
	fs := flag.NewFlagSet("make-snapshot", flag.ContinueOnError)
	changed := fs.Bool("changed", false, "flip one reward (a different round)")
	redaction := fs.String("redaction", "", "text placed in every trajectory message")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 3 {
		fmt.Fprintln(os.Stderr, "usage: make-snapshot [-changed] [-redaction S] DIR TRIALS TRAJECTORIES")
		return 2
	}
	trials, err1 := strconv.Atoi(fs.Arg(1))
	trajs, err2 := strconv.Atoi(fs.Arg(2))
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "make-snapshot: TRIALS and TRAJECTORIES are numbers")
		return 2
	}
	m, err := ingesttest.WriteSnapshot(fs.Arg(0), ingesttest.SnapshotSpec{
		Trials: trials, Trajectories: trajs, ChangedReward: *changed, Redaction: *redaction,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "make-snapshot:", err)
		return 1
	}
	fmt.Println(m.RoundID)
	return 0
}
