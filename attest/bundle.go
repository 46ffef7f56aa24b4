package attest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// BundleSuffix ends the name of an in-toto bundle file (JSON Lines, one
// DSSE envelope a line).
const BundleSuffix = ".intoto.jsonl"

// MaxBundleSize caps a bundle file read for verification or appending.
const MaxBundleSize = 64 << 20

// BundleError means a bundle file cannot be read as one DSSE envelope a
// line; Line is 1-based, 0 when the whole file is at fault.
type BundleError struct {
	Path string
	Line int
	Err  error
}

func (e *BundleError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("attestation bundle %q: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("attestation bundle %s:%d: %v", e.Path, e.Line, e.Err)
}

func (e *BundleError) Unwrap() error { return e.Err }

// InsideSnapshotError means a bundle path lies inside a snapshot folder,
// where `snapshot verify` would report it as an unlisted file: the one
// error of every writer beside snapshots.
type InsideSnapshotError = safefs.InsideSnapshotError

// DefaultBundlePath is the bundle beside a snapshot folder: DIR.intoto.jsonl.
func DefaultBundlePath(dir string) string {
	return filepath.Clean(dir) + BundleSuffix
}

// BundleLine is one envelope of a bundle with its 1-based line number.
type BundleLine struct {
	Line     int
	Envelope *Envelope
}

// ReadBundle reads every envelope of a bundle file. Blank lines are
// skipped; any other line that is not a DSSE envelope is a *BundleError.
func ReadBundle(path string) ([]BundleLine, error) {
	data, err := safefs.ReadFileCapped(path, MaxBundleSize)
	if err != nil {
		return nil, &BundleError{Path: path, Err: err}
	}
	return parseBundle(path, data)
}

func parseBundle(path string, data []byte) ([]BundleLine, error) {
	var out []BundleLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), MaxEnvelopeSize+1)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		e, err := ParseEnvelope(line)
		if err != nil {
			return nil, &BundleError{Path: path, Line: n, Err: err}
		}
		out = append(out, BundleLine{Line: n, Envelope: e})
	}
	if err := sc.Err(); err != nil {
		return nil, &BundleError{Path: path, Err: err}
	}
	if len(out) == 0 {
		return nil, &BundleError{Path: path, Err: errors.New("holds no envelope")}
	}
	return out, nil
}

// AddToBundle makes line (an encoded envelope, no newline) a line of the
// bundle at path: a new file, or the existing one with the line appended
// unless it already holds exactly that line (attesting twice changes
// nothing). The file is replaced atomically, under safefs.Lock, so that
// concurrent attests into one bundle each add their line. It refuses a
// path inside any of the snapshot folders dirs. It reports whether the
// file changed.
func AddToBundle(path string, line []byte, dirs ...string) (changed bool, err error) {
	for _, d := range dirs {
		if err := checkOutside(path, d); err != nil {
			return false, err
		}
	}
	if err := safefs.CheckReplaceable(path, true); err != nil {
		return false, err
	}
	unlock, err := safefs.Lock(path)
	if err != nil {
		return false, &BundleError{Path: path, Err: fmt.Errorf("cannot take the lock for appending: %w", err)}
	}
	defer unlock()
	var old []byte
	switch b, err := safefs.ReadFileCapped(path, MaxBundleSize); {
	case err == nil:
		if _, perr := parseBundle(path, b); perr != nil {
			return false, fmt.Errorf("%w; give a new --out or fix the file", perr)
		}
		old = b
	case errors.Is(err, fs.ErrNotExist):
	default:
		return false, &BundleError{Path: path, Err: err}
	}
	for l := range bytes.Lines(old) {
		if bytes.Equal(bytes.TrimRight(l, "\r\n"), line) {
			return false, nil
		}
	}
	buf := make([]byte, 0, len(old)+len(line)+2)
	buf = append(buf, old...)
	if len(buf) > 0 && buf[len(buf)-1] != '\n' {
		buf = append(buf, '\n')
	}
	buf = append(buf, line...)
	buf = append(buf, '\n')
	if err := safefs.WriteFile(path, buf, 0o644); err != nil {
		return false, err
	}
	return true, nil
}

// checkOutside refuses a bundle path inside snapshot folder dir (or any
// snapshot folder), also through symbolic links of either, and a bundle
// that is not a regular file (safefs: the one writer beside snapshots).
func checkOutside(path, dir string) error {
	if err := safefs.CheckOutside(path, dir); err != nil {
		return err
	}
	if err := safefs.CheckReplaceable(path, true); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return fmt.Errorf("cannot write the attestation %q: %w", path, err)
	}
	return nil
}
