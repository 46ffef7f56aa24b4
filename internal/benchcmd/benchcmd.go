// Package benchcmd times a child process for the command benchmarks of
// make bench (importer, trend): wall and CPU time, and peak RSS measured
// by /usr/bin/time. The child's own rusage cannot be used for the RSS: Go
// starts children with vfork-like clone(CLONE_VM), and Linux folds the
// high-water RSS of the address space a process leaves at exec (here the
// benchmark's, which generated the input) into the child's ru_maxrss.
// /usr/bin/time is itself such a child, but reports its own child's
// usage, started from a small process. Without /usr/bin/time the rusage
// figure is given as an upper bound. Linux: ru_maxrss and
// /usr/bin/time -f %M are KiB there.
package benchcmd

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Run is one timed child process.
type Run struct {
	Wall, CPU time.Duration
	// RSSKiB is the peak RSS, -1 when unknown.
	RSSKiB int64
	// Output is the child's stdout and stderr.
	Output []byte
}

// Time runs args (under /usr/bin/time when present, which writes the peak
// RSS to the file usage) and times it; a failing child fails b.
func Time(b testing.TB, usage string, args ...string) Run {
	b.Helper()
	timeBin, timeErr := exec.LookPath("/usr/bin/time")
	if timeErr == nil {
		args = append([]string{timeBin, "-o", usage, "-f", "%M"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\n%.2000s", strings.Join(args[:min(8, len(args))], " "), err, out)
	}
	r := Run{Wall: wall, CPU: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), RSSKiB: -1, Output: out}
	if timeErr == nil {
		u, err := os.ReadFile(usage)
		if err == nil {
			r.RSSKiB, err = strconv.ParseInt(strings.TrimSpace(string(u)), 10, 64)
		}
		if err != nil {
			b.Fatalf("reading the peak RSS /usr/bin/time wrote: %v (%q)", err, u)
		}
	} else if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.RSSKiB = int64(ru.Maxrss) // an upper bound, see the package doc
	}
	return r
}
