package benchrun

import (
	"os"
	"syscall"
)

// maxRSSKiB is the child's ru_maxrss (KiB on Linux): an upper bound, see
// the package comment.
func maxRSSKiB(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return -1
}
