package redact

import (
	"context"
	_ "embed"
	"fmt"
	"os/exec"
	"strings"
)

// shim is the Python program that imports MODULE, looks up FUNCTION and
// serves the exec protocol with it.
//
//go:embed shim.py
var shim string

// startPython runs MODULE:FUNCTION through the embedded shim with python3.
// The module is imported from the current folder and PYTHONPATH.
func startPython(ctx context.Context, spec string, opts Options) (Redactor, error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, fmt.Errorf("redactor %q needs python3, which is not on PATH; install Python 3 or use exec:COMMAND: %w", spec, err)
	}
	mod, fn, _ := strings.Cut(spec, ":")
	// -u: unbuffered; -c: sys.path[0] is the current folder, as for
	// "python3 -m", so local modules import as the user expects.
	return startProcess(ctx, spec, []string{py, "-u", "-c", shim, mod, fn}, opts)
}
