package importer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"time"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// A result.json that cannot be read for a reason not about the file — too
// many open files, an I/O error, an interrupted call, a permission changed
// mid-run, no memory — says nothing about the trial (issue 26). Such a read
// is retried with back-off; if it keeps failing the import fails, naming
// the file and the errno, and nothing is saved. Only a missing file and
// one refused or unparseable for its own sake are judged.

// ReadError is a result.json that could not be read after every try, for a
// reason not about its content. No snapshot is written.
type ReadError struct {
	Path  string // the attempt's result.json, relative to the root
	Errno string // e.g. "EMFILE", "" when the error carries none
	Tries int
	Err   error
}

func (e *ReadError) Error() string {
	errno := ""
	if e.Errno != "" {
		errno = " (" + e.Errno + ")"
	}
	return fmt.Sprintf("failed to read %s%s after %d tries: %v; a read that fails for a reason not about the file says nothing about the trial, "+
		"so the import stopped and nothing was saved", e.Path, errno, e.Tries, e.Err)
}

func (e *ReadError) Unwrap() error { return e.Err }

// readBackoff is the wait before each retry of a faulted read: about 2.5 s
// in all, long enough for descriptors held elsewhere to be released.
var readBackoff = []time.Duration{
	2 * time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond,
	250 * time.Millisecond, 500 * time.Millisecond, time.Second, time.Second,
}

// readFault reports whether err, from reading a result.json, is a fault of
// the machine rather than a fact about the file, and its errno's name.
func readFault(err error) (bool, string) {
	var en syscall.Errno
	hasErrno := errors.As(err, &en)
	switch {
	case hasErrno && (en == syscall.ENOENT || en == syscall.ENOTDIR || en == syscall.ELOOP):
		return false, ""
	case errors.Is(err, fs.ErrNotExist), isTooLarge(err):
		return false, ""
	case isRefused(err):
		// Refused for what the path is: a symlink, a special file.
		return false, ""
	case hasErrno:
		return true, errnoName(en)
	}
	// An error without an errno that is none of the above is not known to
	// be about the file: failing loudly is the safe side.
	return true, ""
}

// isTooLarge and isRefused are errors.As for safefs's errors, each
// target moved to the heap only when its question is asked: a job's
// missing files (a verifier that never ran) are read by the thousand.
func isTooLarge(err error) bool {
	var tl *safefs.TooLargeError
	return errors.As(err, &tl)
}

func isRefused(err error) bool {
	var pe *safefs.PathError
	return errors.As(err, &pe) && pe.Code != safefs.CodeMissing
}

// readWithRetry calls read until it succeeds, fails for a reason about the
// file, or faults on every try of readBackoff; a persistent fault is a
// *ReadError.
func readWithRetry(ctx context.Context, rel string, read func() ([]byte, error)) ([]byte, error) {
	data, err := read()
	for i := 0; err != nil; i++ {
		fault, errno := readFault(err)
		if !fault {
			return data, err
		}
		if i == len(readBackoff) {
			return nil, &ReadError{Path: rel, Errno: errno, Tries: i + 1, Err: err}
		}
		t := time.NewTimer(readBackoff[i])
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		data, err = read()
	}
	return data, nil
}

// errnoName is the C name of the errnos a read can fault with.
func errnoName(e syscall.Errno) string {
	for _, n := range []struct {
		e    syscall.Errno
		name string
	}{
		{syscall.EMFILE, "EMFILE"}, {syscall.ENFILE, "ENFILE"}, {syscall.EIO, "EIO"}, {syscall.EINTR, "EINTR"},
		{syscall.EACCES, "EACCES"}, {syscall.EPERM, "EPERM"}, {syscall.ENOMEM, "ENOMEM"}, {syscall.EAGAIN, "EAGAIN"},
		{syscall.ENOBUFS, "ENOBUFS"}, {syscall.ESTALE, "ESTALE"}, {syscall.ETIMEDOUT, "ETIMEDOUT"}, {syscall.EBUSY, "EBUSY"},
	} {
		if e == n.e {
			return n.name
		}
	}
	return fmt.Sprintf("errno %d", int(e))
}
