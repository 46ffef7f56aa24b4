package safefs

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// rootSys holds an O_PATH handle of the root folder. Files are opened
// relative to it with openat2(RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH): the
// kernel refuses a symlink in any component and any escape in the same
// call that opens the file, so there is no window between a check and
// the open, and one system call replaces an lstat per component.
type rootSys struct {
	fd   int
	path string
	// noOpenat2 is set when the kernel (before 5.6) or a seccomp filter
	// refuses openat2; every read then takes the portable path.
	noOpenat2 atomic.Bool
}

func (s *rootSys) open(path string) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	s.fd, s.path = fd, path
	return nil
}

func (s *rootSys) close() error { return unix.Close(s.fd) }

// readFast opens and reads rel in one resolution. ok is false when the
// file could not be opened or is not a regular file: the caller then
// takes the portable path, which finds the same state and names the exact
// problem (which component is a symlink, missing or not a folder), so
// both paths report identically.
func (s *rootSys) readFast(rel string, buf []byte, limit int64) (data []byte, ok bool, err error) {
	if s.noOpenat2.Load() {
		return nil, false, nil
	}
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	var fd int
	for {
		fd, err = unix.Openat2(s.fd, rel, &how)
		if !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
			break
		}
	}
	if err != nil {
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
			s.noOpenat2.Store(true)
		}
		if errors.Is(err, unix.ENOENT) {
			if err := s.missing(rel); err != nil {
				return nil, true, err
			}
		}
		return nil, false, nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false, nil
	}
	if st.Size > limit {
		return nil, true, &TooLargeError{Path: rel, Limit: limit}
	}
	// A read of a regular file that returns less than asked for has
	// reached its end: the read that would return 0 is skipped, so a file
	// costs one read (readInto asks for one byte more than fstat's size,
	// so a file that grew is still noticed).
	atEnd := false
	data, err = readInto(buf, st.Size, limit, rel, func(b []byte) (int, error) {
		if atEnd {
			return 0, nil
		}
		for {
			n, err := unix.Read(fd, b)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			atEnd = err == nil && n > 0 && n < len(b)
			return max(n, 0), err
		}
	})
	return data, true, err
}

// missing is the error the portable path gives for rel, which openat2
// did not find, without its lstat per component: a file an attempt may
// lack (a verifier's output, or its whole folder) is the common failure
// of a read. When rel's folder resolves, the open fails with ENOENT; else
// the first of its components that does not exist below one that
// resolves is Resolve's missing component. nil: another cause (a symlink,
// a file where a folder should be), left to the portable path to name.
func (s *rootSys) missing(rel string) error {
	dir := path.Dir(rel)
	err := s.dirErr(dir)
	if err == nil {
		return &fs.PathError{Op: "open", Path: filepath.Join(s.path, filepath.FromSlash(rel)), Err: unix.ENOENT}
	}
	for at := dir; errors.Is(err, unix.ENOENT); {
		up := path.Dir(at)
		upErr := s.dirErr(up)
		if upErr == nil {
			return &PathError{Rel: dir, Code: CodeMissing, At: at, Err: fs.ErrNotExist}
		}
		at, err = up, upErr
	}
	return nil
}

// dirErr is nil when rel resolves beneath the root, through folders only
// and no symlink, to a folder, else why not.
func (s *rootSys) dirErr(rel string) error {
	if rel == "." {
		return nil
	}
	how := unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, err := unix.Openat2(s.fd, rel, &how)
		if err == nil {
			unix.Close(fd)
			return nil
		}
		if !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
			return err
		}
	}
}
