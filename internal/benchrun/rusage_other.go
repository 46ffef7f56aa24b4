//go:build !linux

package benchrun

import "os"

// maxRSSKiB is unknown off Linux: ru_maxrss units differ.
func maxRSSKiB(*os.ProcessState) int64 { return -1 }
