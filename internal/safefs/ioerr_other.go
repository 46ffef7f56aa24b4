//go:build !unix

package safefs

import (
	"errors"
	"syscall"
)

// IsIOError reports whether err is (or wraps) an I/O or resource error of
// the machine (see the unix version); elsewhere only EIO is told apart.
func IsIOError(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno) && errno == syscall.EIO
}
