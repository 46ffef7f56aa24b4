// Package benchcmd is the harness of the command benchmarks of make bench
// (importer, trend, export/duckdbtest): the tpctl binary built once per
// process, a child process timed (wall and CPU time, and peak RSS
// measured by /usr/bin/time), the number of alternating rounds and the
// spread of a sample.
//
// The child's own rusage cannot be used for the RSS: Go starts children
// with vfork-like clone(CLONE_VM), and Linux folds the high-water RSS of
// the address space a process leaves at exec (here the benchmark's, which
// generated the input) into the child's ru_maxrss. /usr/bin/time is
// itself such a child, but reports its own child's usage, started from a
// small process. Without /usr/bin/time the rusage figure is given as an
// upper bound. Linux: ru_maxrss and /usr/bin/time -f %M are KiB there.
package benchcmd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binDir    string
	bin       string
	buildErr  error
)

// Tpctl builds ./cmd/tpctl of the module at root (a path from the test's
// folder) once per process, into a temporary folder Cleanup removes, and
// returns the binary. It is built in that module, as users build it, not
// with the calling test module's dependencies.
func Tpctl(b testing.TB, root string) string {
	b.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "tpctl-bench-bin-")
		if buildErr != nil {
			return
		}
		bin = filepath.Join(binDir, "tpctl")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/tpctl")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/tpctl in %s: %v\n%s", root, err, out)
		}
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return bin
}

// Cleanup removes the binary Tpctl built; call it from TestMain.
func Cleanup() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}

// Rounds is the number of alternating pairs of runs: TPCTL_BENCH_ROUNDS
// (make bench's BENCHROUNDS), 5 by default.
func Rounds(b testing.TB) int {
	v := os.Getenv("TPCTL_BENCH_ROUNDS")
	if v == "" {
		return 5
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("TPCTL_BENCH_ROUNDS=%q: want a positive count", v)
	}
	return n
}

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

// RSSMiB is the peak RSS in MiB.
func (r Run) RSSMiB() float64 { return float64(r.RSSKiB) / 1024 }

// Spread is the min, median and max of a sample.
type Spread struct{ Min, Med, Max float64 }

// SpreadOf summarises a non-empty sample.
func SpreadOf(xs []float64) Spread {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Spread{s[0], med, s[n-1]}
}

func (s Spread) String() string {
	return fmt.Sprintf("min %.3f median %.3f max %.3f", s.Min, s.Med, s.Max)
}
