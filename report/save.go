package report

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// Save renders a report into a buffer and writes it to path atomically
// (a temporary sibling, fsynced, renamed into place), so a failure never
// leaves a half-written page. An existing file is refused unless force is
// set; a path inside one of the snapshots is always refused. check, when
// not nil, sees the whole page before it is written and can refuse it
// (tpctl's secret scan: a report file leaves the machine). It returns the
// number of bytes written.
func Save(path string, force bool, snapshots []string, render func(io.Writer) error, check func([]byte) error) (int, error) {
	// The one writer beside snapshots decides where a page may go
	// (internal/safefs: never inside a snapshot, never over anything but
	// a regular file, even with force).
	if err := safefs.CheckOutside(path, snapshots...); err != nil {
		return 0, err
	}
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return 0, fmt.Errorf("%q is a folder; give a file name such as report.html", path)
	}
	if err := safefs.CheckReplaceable(path, force); err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return 0, err
	}
	if check != nil {
		if err := check(buf.Bytes()); err != nil {
			return 0, err
		}
	}
	if err := safefs.WriteBeside(path, buf.Bytes(), 0o644, force, snapshots...); err != nil {
		return 0, err
	}
	return buf.Len(), nil
}
