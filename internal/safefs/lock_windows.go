package safefs

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// Lock takes the exclusive lock of path for a read-modify-replace of the
// file there by cooperating processes, blocking until it is free: a
// LockFileEx lock on the file path+".lock", which stays beside path (an
// open file cannot be removed under another process's handle here). The
// system releases it if the process dies. Call unlock exactly once.
func Lock(path string) (unlock func(), err error) {
	name := path + LockSuffix
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "LockFileEx", Path: name, Err: err}
	}
	return func() {
		windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
		f.Close()
	}, nil
}
