//go:build unix

package safefs

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Lock takes the exclusive lock of path for a read-modify-replace of the
// file there by cooperating processes, blocking until it is free. The
// lock is flock(2) on the file path+".lock", which the holder removes on
// unlock, so nothing is left beside path; the kernel releases it if the
// process dies. Call unlock exactly once.
func Lock(path string) (unlock func(), err error) {
	name := path + LockSuffix
	for {
		// Never through a link: the lock file is made beside the path,
		// and a link planted there must not make tpctl create its target.
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0o600)
		if err != nil {
			return nil, err
		}
		for {
			err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		if err != nil {
			f.Close()
			return nil, &fs.PathError{Op: "flock", Path: name, Err: err}
		}
		// The holder before us removes the file as it unlocks: if it did
		// after we opened it, our lock is on a file no one else will
		// open, and a newcomer may be locking a new one. Lock the file
		// the name now names instead.
		got, err1 := f.Stat()
		now, err2 := os.Stat(name)
		if err1 == nil && err2 == nil && os.SameFile(got, now) {
			return func() {
				os.Remove(name)
				f.Close()
			}, nil
		}
		f.Close()
		if err1 != nil {
			return nil, err1
		}
		if err2 != nil && !errors.Is(err2, fs.ErrNotExist) {
			return nil, err2
		}
	}
}
