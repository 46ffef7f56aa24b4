package digest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/internal/safefs"
)

// Size is the length of a digest in bytes.
const Size = sha256.Size

// DefaultJSONLimit caps the size of a JSON file read by JSONFile when the
// caller has no better figure: canonical JSON needs the whole document in
// memory, so an untrusted file must not be allowed to be arbitrarily large.
const DefaultJSONLimit int64 = 64 << 20

// Digest is a SHA-256 value. The zero value means "not computed".
type Digest [Size]byte

// String returns the digest as 64 lowercase hex characters.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// IsZero reports whether d is the zero value (no digest).
func (d Digest) IsZero() bool { return d == Digest{} }

// MarshalJSON encodes the digest as a JSON string of lowercase hex.
func (d Digest) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2*Size+2)
	b = append(b, '"')
	b = hex.AppendEncode(b, d[:])
	return append(b, '"'), nil
}

// UnmarshalJSON decodes a JSON string with the same strictness as Parse.
func (d *Digest) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("digest must be a JSON string of 64 lowercase hex characters: %w", err)
	}
	p, err := Parse(s)
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// ParseError says why a string is not a digest.
type ParseError struct {
	Input  string
	Reason string
}

func (e *ParseError) Error() string {
	in := e.Input
	if len(in) > 80 {
		in = in[:80] + "…"
	}
	return fmt.Sprintf("invalid digest %q: %s; expected 64 lowercase hex characters (compute one with 'tpctl digest')", in, e.Reason)
}

// Parse reads exactly 64 lowercase hex characters. Uppercase, prefixes such
// as "sha256:" and any other length are refused: a digest has one spelling,
// so plans and snapshots compare as plain strings.
func Parse(s string) (Digest, error) {
	var d Digest
	// Length first: a megabyte of garbage is rejected without decoding it.
	if len(s) != 2*Size {
		return d, &ParseError{Input: s, Reason: fmt.Sprintf("length %d", len(s))}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			reason := fmt.Sprintf("character %q at offset %d", c, i)
			if 'A' <= c && c <= 'F' {
				reason = "uppercase hex"
			}
			return d, &ParseError{Input: s, Reason: reason}
		}
	}
	if _, err := hex.Decode(d[:], []byte(s)); err != nil {
		return Digest{}, &ParseError{Input: s, Reason: err.Error()}
	}
	return d, nil
}

// Bytes returns the SHA-256 of b.
func Bytes(b []byte) Digest { return sha256.Sum256(b) }

// Reader returns the SHA-256 of everything read from r, streaming.
func Reader(r io.Reader) (Digest, error) {
	return readerContext(context.Background(), r)
}

func readerContext(ctx context.Context, r io.Reader) (Digest, error) {
	h := sha256.New()
	// A pooled buffer: io.Copy would allocate 32 KiB per file, which
	// dominates the cost of hashing a folder of small files.
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	if _, err := io.CopyBuffer(h, ctxReader{ctx, r}, *bp); err != nil {
		return Digest{}, err
	}
	var d Digest
	h.Sum(d[:0])
	return d, nil
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// ctxReader stops a long copy when the context is cancelled (Ctrl-C on a
// many-gigabyte file).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// UnsupportedFileError is a symlink, socket, device, named pipe or other
// non-regular entry where a regular file (or, inside a folder, a regular
// file or folder) was needed.
type UnsupportedFileError struct {
	Path string
	Mode fs.FileMode
}

func (e *UnsupportedFileError) Error() string {
	return fmt.Sprintf("%q is %s; digests cover only regular files and folders, and symlinks and special files are refused so that every machine hashes the same bytes", e.Path, modeName(e.Mode))
}

// KindError is a path of the wrong kind for the digest asked for: a folder
// given to File or JSONFile, or a file given to Dir or HarborTask.
type KindError struct {
	Path string
	Mode fs.FileMode
	Want string // "regular file" or "folder"
}

func (e *KindError) Error() string {
	return fmt.Sprintf("%q is %s, not a %s", e.Path, modeName(e.Mode), e.Want)
}

// InvalidJSONError is a file that is not one RFC 8785-canonicalizable JSON
// value (syntax error, duplicate member, trailing data, invalid UTF-8, …).
type InvalidJSONError struct {
	Path string
	Err  error
}

func (e *InvalidJSONError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("invalid JSON: %v", e.Err)
	}
	return fmt.Sprintf("%q is not valid JSON for canonicalization: %v", e.Path, e.Err)
}

func (e *InvalidJSONError) Unwrap() error { return e.Err }

func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsRegular():
		return "a regular file"
	}
	return fmt.Sprintf("an unsupported file type (%v)", m.Type())
}

// File returns the SHA-256 of a regular file's bytes. A symlink (even to a
// regular file) or special file is refused with *UnsupportedFileError and a
// folder with *KindError.
func File(path string) (Digest, error) {
	return FileContext(context.Background(), path)
}

// FileContext is File that stops when ctx is cancelled.
func FileContext(ctx context.Context, path string) (Digest, error) {
	f, err := openRegular(path)
	if err != nil {
		return Digest{}, err
	}
	defer f.Close()
	d, err := readerContext(ctx, f)
	if err != nil {
		return Digest{}, fmt.Errorf("failed to read %q: %w", path, err)
	}
	return d, nil
}

// openRegular opens path without following a symlink and maps refusals to
// this package's typed errors.
func openRegular(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("failed to open %q: %w", path, err)
	}
	if err := checkRegular(path, fi.Mode()); err != nil {
		return nil, err
	}
	// OpenRegular re-checks on the open descriptor, closing the window
	// between Lstat and open.
	f, err := safefs.OpenRegular(path)
	if err != nil {
		var pe *safefs.PathError
		if errors.As(err, &pe) {
			if fi, lerr := os.Lstat(path); lerr == nil {
				if cerr := checkRegular(path, fi.Mode()); cerr != nil {
					return nil, cerr
				}
			}
		}
		return nil, fmt.Errorf("failed to open %q: %w", path, err)
	}
	return f, nil
}

func checkRegular(path string, m fs.FileMode) error {
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return &KindError{Path: path, Mode: m, Want: "regular file"}
	}
	return &UnsupportedFileError{Path: path, Mode: m}
}

// JSON returns the SHA-256 of the RFC 8785 canonical form of one JSON
// text. Two documents that differ only in member order, white space or
// number spelling get the same digest.
func JSON(data []byte) (Digest, error) {
	c, err := jcs.Transform(data)
	if err != nil {
		return Digest{}, &InvalidJSONError{Err: err}
	}
	return Bytes(c), nil
}

// JSONFile is JSON over a regular file of at most limit bytes (limit <= 0
// means DefaultJSONLimit); a larger file fails with *safefs.TooLargeError
// before it is read.
func JSONFile(path string, limit int64) (Digest, error) {
	if limit <= 0 {
		limit = DefaultJSONLimit
	}
	f, err := openRegular(path)
	if err != nil {
		return Digest{}, err
	}
	defer f.Close()
	// ReadCapped refuses a file already over the limit before reading it.
	data, err := safefs.ReadCapped(f, path, limit)
	var tl *safefs.TooLargeError
	if errors.As(err, &tl) {
		return Digest{}, err
	}
	if err != nil {
		return Digest{}, fmt.Errorf("failed to read %q: %w", path, err)
	}
	c, err := jcs.Transform(data)
	if err != nil {
		return Digest{}, &InvalidJSONError{Path: path, Err: err}
	}
	return Bytes(c), nil
}
