package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The real binaries some tests run as children (the tpctl a user builds,
// the substitute harbor) are built once per test process, not once per
// test: each build is a link of the whole program, which on a loaded
// 2-core machine cost seconds per test. They go into one folder that
// TestMain removes after the tests; tests only read and run them.
var binaries struct {
	mu     sync.Mutex
	dir    string
	tpctl  builtOnce
	harbor builtOnce
}

type builtOnce struct {
	once sync.Once
	err  error
}

// binariesDir is the folder the shared binaries are built into (tpctl,
// and bin/harbor so that bin/ can lead PATH), made on first use.
func binariesDir(t testing.TB) string {
	t.Helper()
	binaries.mu.Lock()
	defer binaries.mu.Unlock()
	if binaries.dir == "" {
		dir, err := os.MkdirTemp("", "tpctl-test-bin-")
		if err != nil {
			t.Fatalf("a folder for the built binaries: %v", err)
		}
		binaries.dir = dir
	}
	return binaries.dir
}

// build runs go build -o out pkg once per process; every caller gets the
// first build's error.
func (b *builtOnce) build(t testing.TB, out, pkg string) {
	t.Helper()
	b.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			b.err = err
			return
		}
		if o, err := exec.Command(goTool, "build", "-o", out, pkg).CombinedOutput(); err != nil {
			b.err = &buildError{pkg, err, o}
		}
	})
	if b.err != nil {
		t.Fatalf("building the binaries: %v", b.err)
	}
}

// buildTpctl returns the real tpctl binary, built once per test process.
func buildTpctl(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(binariesDir(t), "tpctl")
	binaries.tpctl.build(t, bin, ".")
	return bin
}

// builtBinaries returns the folder holding the built tpctl and, in its
// bin/ subfolder, the substitute harbor (built once per test process).
func builtBinaries(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds tpctl; skipped with -short")
	}
	buildTpctl(t)
	dir := binariesDir(t)
	binaries.harbor.build(t, filepath.Join(dir, "bin", "harbor"), "../../internal/fakeharbor/cmd/fakeharbor")
	return dir
}

type buildError struct {
	pkg string
	err error
	out []byte
}

func (e *buildError) Error() string {
	return "go build " + e.pkg + ": " + e.err.Error() + "\n" + string(e.out)
}

// removeBinaries removes what buildTpctl and builtBinaries built.
func removeBinaries() {
	binaries.mu.Lock()
	defer binaries.mu.Unlock()
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
}

// cleaningM is the test run with the shared binaries removed after it.
type cleaningM struct{ m *testing.M }

func (c cleaningM) Run() int {
	defer removeBinaries()
	return c.m.Run()
}
