//go:build unix

package safefs

import (
	"errors"
	"syscall"
)

// ioErrnos are the failures of the machine rather than of the data: a
// file that cannot be read for one of them says nothing about whether it
// was modified.
var ioErrnos = []syscall.Errno{syscall.EIO, syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.ENOSPC,
	syscall.EDQUOT, syscall.ENOBUFS, syscall.EAGAIN, syscall.EINTR, syscall.ENXIO, syscall.ESTALE}

// IsIOError reports whether err is (or wraps) an I/O or resource error of
// the machine — EIO, too many open files, no memory or space, a stale
// handle — as opposed to missing, refused or malformed data. tpctl
// reports these as I/O errors to fix and retry, never as tampering.
func IsIOError(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	for _, e := range ioErrnos {
		if errno == e {
			return true
		}
	}
	return false
}
