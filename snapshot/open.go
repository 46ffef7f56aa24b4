package snapshot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// VerifyError means a saved snapshot failed verification: its files do
// not match snapshot.json, or snapshot.json does not recompute from them.
// Nothing read from it can be trusted, so Open hands nothing out.
type VerifyError struct {
	Dir      string
	Problems []Problem
}

// maxProblemsShown keeps the error readable; snapshot verify lists all.
const maxProblemsShown = 10

func (e *VerifyError) Error() string {
	var b strings.Builder
	if OnlyReadErrors(e.Problems) {
		fmt.Fprintf(&b, "snapshot %q could not be read: an I/O error, not a sign the snapshot was modified (%d problem(s)):", e.Dir, len(e.Problems))
	} else {
		fmt.Fprintf(&b, "snapshot %q failed verification with %d problem(s); it may have been modified after it was written:", e.Dir, len(e.Problems))
	}
	for i, p := range e.Problems {
		if i == maxProblemsShown {
			fmt.Fprintf(&b, "\n  … and %d more", len(e.Problems)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s: %s: %s", p.File, p.Code, p.Message)
	}
	return b.String()
}

// Snapshot is a saved snapshot that passed verification, read once: the
// manifest, the plan and the observations it hands out are the bytes that
// were hashed and re-derived, not a second read of files that may have
// changed since. Trajectories are read on demand and each is checked
// against its SHA-256 before it is handed out. Close it when done.
type Snapshot struct {
	dir          string
	manifest     *Manifest
	manifestJSON []byte
	plan         *PlanSummary
	planJSON     []byte
	obs          *spool
}

// MaxHeldObservations bounds the verified observations.jsonl bytes a
// Snapshot keeps in memory (about 300,000 trials); past it they are kept
// in a temporary file, which Close removes. A variable so tests can
// exercise the file.
var MaxHeldObservations = 64 << 20

// Open verifies the snapshot in dir as Verify does and keeps what it read.
// A folder that is not a snapshot gives an error for which IsNotSnapshot
// is true; one that fails verification, a *VerifyError.
func Open(dir string) (*Snapshot, error) {
	raw, m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	c := &capture{obs: &spool{limit: MaxHeldObservations}}
	rep, err := verify(dir, m, c)
	if err != nil {
		c.obs.close()
		return nil, err
	}
	if !rep.OK {
		c.obs.close()
		return nil, &VerifyError{Dir: dir, Problems: rep.Problems}
	}
	var plan PlanSummary
	if err := json.Unmarshal(c.plan, &plan); err != nil {
		// Verification decoded the same bytes; this cannot fail but is
		// not worth a panic.
		c.obs.close()
		return nil, fmt.Errorf("%s: %s: %w", dir, PlanFile, err)
	}
	return &Snapshot{dir: dir, manifest: m, manifestJSON: raw, plan: &plan, planJSON: c.plan, obs: c.obs}, nil
}

// readManifest reads and decodes snapshot.json; an error is a
// *NotSnapshotError.
func readManifest(dir string) ([]byte, *Manifest, error) {
	raw, err := safefs.ReadFileCapped(filepath.Join(dir, ManifestFile), MaxManifestSize)
	if err != nil {
		return nil, nil, &NotSnapshotError{Dir: dir, Err: err}
	}
	m, err := DecodeManifest(raw)
	if err != nil {
		return nil, nil, &NotSnapshotError{Dir: dir, Err: err}
	}
	return raw, m, nil
}

// Dir is the folder the snapshot was opened from.
func (s *Snapshot) Dir() string { return s.dir }

// Manifest is the verified snapshot.json. Callers must not modify it.
func (s *Snapshot) Manifest() *Manifest { return s.manifest }

// ManifestJSON is the bytes of snapshot.json as read, for members this
// version of Manifest does not decode.
func (s *Snapshot) ManifestJSON() []byte { return s.manifestJSON }

// Plan is the verified plan.json, decoded. Callers must not modify it.
// For a snapshot from OpenTrials its Trials are nil.
func (s *Snapshot) Plan() *PlanSummary { return s.plan }

// PlanJSON is the bytes of the verified plan.json; nil for a snapshot
// from OpenTrials, which does not hold them.
func (s *Snapshot) PlanJSON() []byte { return s.planJSON }

// Observations iterates over the verified observations in file order
// (canonical trial order). It may be ranged over more than once. The
// error, if any, comes last and is the only thing yielded with it.
func (s *Snapshot) Observations() iter.Seq2[Observation, error] {
	return func(yield func(Observation, error) bool) {
		stopped := false
		err := readObservations(s.obs.reader(), func(o Observation) error {
			if !yield(o, nil) {
				stopped = true
				return errStopped
			}
			return nil
		})
		if err != nil && !stopped {
			yield(Observation{}, err)
		}
	}
}

// Trajectory is one saved trajectory file: its name in the manifest
// (trajectories/NNNN.json) and its bytes, which match the manifest's
// SHA-256 for it.
type Trajectory struct {
	Name string
	Data []byte
}

// Trajectories reads the trajectory files in manifest order, checking each
// one's SHA-256 before yielding it. A file that changed since Open gives
// an error (and ends the sequence).
func (s *Snapshot) Trajectories() iter.Seq2[Trajectory, error] {
	return func(yield func(Trajectory, error) bool) {
		for _, name := range s.manifest.TrajectoryFiles() {
			b, err := ReadFile(s.dir, s.manifest, name)
			if err != nil {
				yield(Trajectory{}, fmt.Errorf("%s: %w", s.dir, err))
				return
			}
			if !yield(Trajectory{Name: name, Data: b}, nil) {
				return
			}
		}
	}
}

// Close releases what Open kept: the observations' temporary file, if any.
func (s *Snapshot) Close() error { return s.obs.close() }

// capture is what verify keeps of a snapshot for Open: plan.json and
// observations.jsonl as read, and the SHA-256 of each over exactly those
// bytes.
type capture struct {
	plan    []byte
	planSum string
	obs     *spool
	obsSum  string // set only when observations.jsonl was read to its end

	// streamed (OpenTrials): plan.json is not kept in plan (it is read
	// once, planStream), and its trials tallied as a stream and handed to
	// visit with their observations (obs is nil: nothing is kept); head is
	// the plan without its trials, visitErr the error visit returned,
	// which ends the reading.
	streamed bool
	manifest *Manifest
	head     PlanSummary
	visit    Visit
	visitErr error
	// traj are the trajectory files foldStreamed read and verified
	// against their digests, by name, so rederive reads each once.
	traj map[string]trajRead
}

// trajRead is one trajectory file's fields and decoding error.
type trajRead struct {
	f   trajFields
	err error
}

// sums are the captured files' SHA-256 digests, for checkFiles.
func (c *capture) sums() map[string]string {
	m := map[string]string{}
	if c.planSum != "" {
		m[PlanFile] = c.planSum
	}
	if c.obsSum != "" {
		m[ObservationsFile] = c.obsSum
	}
	return m
}

// teeTo writes to a hash and the spool; the spool's error (a full disk)
// ends the read.
type teeTo struct {
	h hash.Hash
	s *spool
}

func (t *teeTo) Write(p []byte) (int, error) {
	t.h.Write(p)
	return t.s.Write(p)
}

// spool keeps bytes in memory up to limit and in a temporary file past it.
type spool struct {
	limit int
	mem   []byte
	f     *os.File
	n     int64  // bytes in f
	path  string // f's name when it could not be removed while open
}

func (s *spool) Write(p []byte) (int, error) {
	if s.f == nil && len(s.mem)+len(p) <= s.limit {
		s.mem = append(s.mem, p...)
		return len(p), nil
	}
	if s.f == nil {
		f, err := os.CreateTemp("", "tpctl-observations-*")
		if err != nil {
			return 0, fmt.Errorf("failed to keep the verified observations: %w", err)
		}
		// Removed at once where an open file can be (nothing to clean up
		// after a crash); elsewhere by close.
		if runtime.GOOS == "windows" || os.Remove(f.Name()) != nil {
			s.path = f.Name()
		}
		s.f = f
		if _, err := s.write(s.mem); err != nil {
			return 0, err
		}
		s.mem = nil
	}
	return s.write(p)
}

func (s *spool) write(p []byte) (int, error) {
	n, err := s.f.Write(p)
	s.n += int64(n)
	if err != nil {
		return n, fmt.Errorf("failed to keep the verified observations: %w", err)
	}
	return n, nil
}

// reader reads the spooled bytes from the start; readers are independent.
func (s *spool) reader() io.Reader {
	if s.f == nil {
		return bytes.NewReader(s.mem)
	}
	return bufio.NewReaderSize(io.NewSectionReader(s.f, 0, s.n), 256<<10)
}

func (s *spool) close() error {
	s.mem = nil
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	if s.path != "" {
		err = errors.Join(err, os.Remove(s.path))
	}
	s.f, s.path = nil, ""
	return err
}
