package report

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// Save streams a report into a temporary sibling of path and renames it
// into place (fsynced) only once it is whole and checked, so a failure
// never leaves a half-written page and memory does not grow with the
// page. An existing file is refused unless force is set; a path inside
// one of the snapshots is always refused. check, when not nil, sees the
// whole page as it is written, in windows (CheckWindow) and can refuse it
// (tpctl's secret scan: a report file leaves the machine). It returns the
// number of bytes written.
func Save(path string, force bool, snapshots []string, render func(io.Writer) error, check func([]byte) error) (int, error) {
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return 0, fmt.Errorf("%q is a folder; give a file name such as report.html", path)
	}
	// The one writer beside snapshots decides where a page may go
	// (internal/safefs: never inside a snapshot, never over anything but
	// a regular file, even with force).
	n, err := safefs.WriteBesideFrom(path, 0o644, force, snapshots, func(w io.Writer) error { return renderChecked(w, render, check) })
	return int(n), err
}

// Stream renders a report to w only once it is whole and checked: it is
// streamed into a temporary file first (memory stays flat, as for Save),
// then copied to w, so a refused or failed page writes nothing to w. It
// returns the number of bytes written.
func Stream(w io.Writer, render func(io.Writer) error, check func([]byte) error) (int64, error) {
	f, err := os.CreateTemp("", "tpctl-report-*.html")
	if err != nil {
		return 0, fmt.Errorf("failed to create a temporary file for the report: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := renderChecked(f, render, check); err != nil {
		return 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	// In blocks: an output filter in front of w (tpctl masks its stdout)
	// then works on a block at a time, never on the whole page.
	return io.CopyBuffer(onlyWriter{w}, onlyReader{f}, make([]byte, 256<<10))
}

// onlyWriter and onlyReader hide ReadFrom and WriteTo, so that
// io.CopyBuffer uses its buffer.
type onlyWriter struct{ io.Writer }
type onlyReader struct{ io.Reader }

func renderChecked(w io.Writer, render func(io.Writer) error, check func([]byte) error) error {
	if check == nil {
		return render(w)
	}
	cw := &checkWriter{w: w, check: check, plain: &checkWriter{w: io.Discard, check: check}}
	if err := render(cw); err != nil {
		return err
	}
	if err := cw.flush(); err != nil {
		return err
	}
	return cw.plain.flush()
}

// Check windows: the page is checked in windows of at least CheckWindow
// bytes cut after a line break, each starting with at least CheckOverlap
// bytes (whole lines) of the one before, so that a match up to
// CheckOverlap bytes long is seen whole whatever the cut. The page's
// lines are short (its data is written a trial or a column piece to a
// line), so a window is not much larger than CheckWindow.
const (
	CheckWindow  = 4 << 20
	CheckOverlap = 64 << 10
)

// checkWriter passes writes through and calls check on overlapping
// windows of everything written.
type checkWriter struct {
	w     io.Writer
	check func([]byte) error
	buf   []byte
	// seen is how many bytes at the start of buf were checked already
	// (the overlap kept from the window before).
	seen int
	// plain checks the text the page carries compressed (CheckPlain).
	plain *checkWriter
}

// CheckPlain checks text the page carries in a form the check cannot read
// (compressed): the page's writer hands it over as it will read once
// unpacked, and it is checked in windows of its own.
func (c *checkWriter) CheckPlain(p []byte) error {
	_, err := c.plain.Write(p)
	return err
}

func (c *checkWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil {
		return n, err
	}
	c.buf = append(c.buf, p...)
	if len(c.buf)-c.seen >= CheckWindow {
		if end := bytes.LastIndexByte(c.buf, '\n') + 1; end > c.seen {
			if err := c.window(end); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// window checks buf[:end] and keeps the overlap for the next window.
func (c *checkWriter) window(end int) error {
	if err := c.check(c.buf[:end]); err != nil {
		return err
	}
	keep := 0
	if end > CheckOverlap {
		keep = bytes.LastIndexByte(c.buf[:end-CheckOverlap], '\n') + 1
	}
	c.buf = c.buf[:copy(c.buf, c.buf[keep:])]
	c.seen = end - keep
	return nil
}

func (c *checkWriter) flush() error {
	if len(c.buf) > c.seen || (len(c.buf) > 0 && c.seen == 0) {
		return c.window(len(c.buf))
	}
	return nil
}
