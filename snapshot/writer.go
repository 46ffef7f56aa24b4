package snapshot

import (
	"bufio"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/redact"
)

// Options describe how a round was produced.
type Options struct {
	// FormatVerified is false when the source revision was not one of the
	// validated Harbor revisions (--allow-unverified-format).
	FormatVerified bool
	// OutcomeRules is the version of the outcome table that judged the
	// attempts, e.g. "tpctl-outcomes/1".
	OutcomeRules string
	// Scanner, when set, is the outgoing-text gate: every file is checked
	// for known secrets before it is written, and a hit aborts the
	// snapshot (a *redact.PayloadError; nothing becomes visible).
	Scanner *redact.Scanner
}

// Writer builds a snapshot in a hidden temporary sibling of its final
// folder; nothing is visible at the final path until Commit renames the
// complete, fsynced folder into place.
type Writer struct {
	final, tmp string
	opts       Options
	t          *tally

	obsFile *os.File
	obsBuf  *bufio.Writer
	line    []byte // the encoded observation, reused
	obsHash hash.Hash

	files  map[string]string
	sealed *Manifest
	// planOpen: BeginPlan's plan.json is not finished (PlanWriter.Close).
	planOpen  bool
	nTraj     int
	truncated int
	redactors []string
	done      bool
	leftovers []safefs.Leftover

	// longestException is the longest exception type seen and the trial
	// it came from, to name in a *LimitError.
	longestException, longestExceptionTrial string
}

// LimitError means the snapshot would hold a file over the cap every
// reader reads it under (MaxManifestSize, MaxObservationLine): a
// snapshot no command could open is never written. Long or numerous
// untrusted values (exception types from result.json files) get there.
type LimitError struct {
	File    string // ManifestFile or ObservationsFile
	Size    int64  // the bytes it would have
	Limit   int64
	TrialID string // the trial with the value to look at (the longest exception type, or the line's)
	Reason  string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s would be %d bytes, over the %d-byte cap every reader of a snapshot reads it under: %s (trial %q); nothing was written",
		e.File, e.Size, e.Limit, e.Reason, e.TrialID)
}

// SaveError is a fault of the machine (no space left, EIO, too many open
// files: safefs.IsIOError) met while saving the snapshot at Dir. The
// writer's temporary folder is removed when it is aborted, so nothing is
// left at Dir or beside it.
type SaveError struct {
	Dir string
	Err error
}

func (e *SaveError) Error() string {
	return fmt.Sprintf("cannot save the snapshot %q: %v; nothing was saved there", e.Dir, e.Err)
}

func (e *SaveError) Unwrap() error { return e.Err }

// saving makes *err, when it is a fault of the machine, a *SaveError
// naming the snapshot being saved (the file in it is in *err already).
func (w *Writer) saving(err *error) {
	if *err == nil || !safefs.IsIOError(*err) || errors.As(*err, new(*SaveError)) {
		return
	}
	*err = &SaveError{Dir: w.final, Err: *err}
}

// Leftovers lists the temporary folders of earlier, killed runs that
// Create found beside the snapshot: removed when their owner is gone,
// reported when their owner is unknown.
func (w *Writer) Leftovers() []safefs.Leftover { return w.leftovers }

// Create starts a snapshot at dir, which must not exist. planJSON is the
// normalized import plan; it is written canonically as plan.json.
func Create(dir string, planJSON []byte, opts Options) (w *Writer, err error) {
	if err := safefs.MustNotExist(dir); err != nil {
		return nil, err
	}
	t, canon, err := newTally(planJSON, opts.OutcomeRules)
	if err != nil {
		return nil, err
	}
	w, err = create(dir, opts)
	if err != nil {
		return nil, err
	}
	w.t = t
	defer w.saving(&err)
	// plan.json is the canonical form itself plus a newline, written
	// from canon without an indented copy or an appended copy (canon has
	// no spare capacity), so a 100,000-trial plan is not held twice.
	if err := w.writeFile(PlanFile, canon, []byte{'\n'}); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

// CreateStreamed starts a snapshot at dir, which must not exist, whose
// plan.json the caller writes with WritePlan and whose planned trials it
// then names one at a time with PlanTrial, so that no copy of the plan is
// held (a million-trial import). The snapshot is the one Create gives for
// the same plan.
func CreateStreamed(dir string, opts Options) (*Writer, error) {
	if err := safefs.MustNotExist(dir); err != nil {
		return nil, err
	}
	return create(dir, opts)
}

// create makes the temporary folder and the observations file.
func create(dir string, opts Options) (w *Writer, err error) {
	parent, base := filepath.Split(filepath.Clean(dir))
	if parent == "" {
		parent = "."
	}
	// Leftovers of runs killed before they could remove their temporary
	// folder are cleared first (never one whose owner still runs).
	leftovers := safefs.CleanLeftovers(parent)
	tmp, err := safefs.MkdirOwnedTemp(parent, base)
	if err != nil {
		return nil, fmt.Errorf("failed to create a temporary folder beside %q: %w", dir, err)
	}
	w = &Writer{final: dir, tmp: tmp, opts: opts, files: map[string]string{}, obsHash: sha256.New(), leftovers: leftovers}
	w.obsFile, err = os.OpenFile(filepath.Join(tmp, ObservationsFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		w.Abort()
		return nil, err
	}
	w.obsBuf = bufio.NewWriterSize(io.MultiWriter(w.obsFile, w.obsHash), 64<<10)
	return w, nil
}

// WritePlan writes plan.json of a CreateStreamed snapshot: write must
// produce the canonical (RFC 8785) form of the normalized plan, which
// WritePlan ends with the newline and hashes as it passes; each Write is
// checked by the outgoing-text gate (so a writer should hand over whole
// trials). head is the plan without its trials and settings its canonical
// settings object.
func (w *Writer) WritePlan(head PlanSummary, settings json.RawMessage, write func(io.Writer) error) (err error) {
	defer w.saving(&err)
	pw, err := w.BeginPlan(head, settings)
	if err != nil {
		return err
	}
	if err := write(pw); err != nil {
		pw.Abort()
		return err
	}
	return pw.Close()
}

// BeginPlan is WritePlan in two halves, so a streamed import judges the
// trials while plan.json is written: from BeginPlan on, PlanTrial and Add
// may be called (from another goroutine than the PlanWriter's), and the
// returned PlanWriter takes the canonical bytes as WritePlan's write
// does. Its Close must have returned before RoundID or Commit, which
// refuse a plan not finished.
func (w *Writer) BeginPlan(head PlanSummary, settings json.RawMessage) (pw *PlanWriter, err error) {
	defer w.saving(&err)
	if w.t != nil || w.done {
		return nil, fmt.Errorf("snapshot writer already has a plan")
	}
	sd, err := SettingsDigest(head.Protocol.EnvironmentDigest, head.Protocol.HarnessDigest, settings)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(w.tmp, PlanFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	// The plan's digest is filled in by Close.
	w.t = newStreamTally(head, "", sd, w.opts.OutcomeRules)
	w.planOpen = true
	return &PlanWriter{w: w, f: f, sink: &planSink{w: bufio.NewWriterSize(f, 64<<10), h: sha256.New(), scanner: w.opts.Scanner}}, nil
}

// PlanWriter takes the canonical plan of a snapshot begun with BeginPlan.
type PlanWriter struct {
	w    *Writer
	f    *os.File
	sink *planSink
	err  error
}

// Write gates, hashes and buffers canonical plan bytes (whole trials).
func (pw *PlanWriter) Write(p []byte) (n int, err error) {
	if pw.err != nil {
		return 0, pw.err
	}
	defer pw.w.saving(&err)
	n, err = pw.sink.Write(p)
	if err != nil {
		pw.err = err
	}
	return n, err
}

// Abort closes the file of a plan that will not be finished (the
// snapshot cannot be committed; its owner aborts it).
func (pw *PlanWriter) Abort() {
	if pw.err == nil {
		pw.err = errors.New("plan.json was not finished")
	}
	pw.f.Close()
}

// Close ends plan.json with its newline, syncs it and records its
// digests; after an error the plan stays unfinished and the snapshot
// cannot be committed.
func (pw *PlanWriter) Close() (err error) {
	w := pw.w
	defer w.saving(&err)
	if pw.err != nil {
		pw.f.Close()
		return pw.err
	}
	pw.err = errors.New("plan.json is closed")
	fileDigest, planDigest, err := pw.finish()
	if cerr := pw.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("failed to write %s: %w", PlanFile, cerr)
	}
	if err != nil {
		return err
	}
	w.files[PlanFile] = fileDigest
	w.t.planDigest = planDigest
	w.planOpen = false
	return nil
}

// finish ends plan.json with its newline and syncs it: the file's digest
// is over the canonical bytes and the newline, the plan's over the bytes
// alone (the hash state is cloned rather than hashing twice).
func (pw *PlanWriter) finish() (fileDigest, planDigest string, err error) {
	sink := pw.sink
	state, err := sink.h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return "", "", err
	}
	planDigest = hex.EncodeToString(sink.h.Sum(nil))
	fileHash := sha256.New()
	if err := fileHash.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
		return "", "", err
	}
	fileHash.Write([]byte{'\n'})
	if err := sink.w.WriteByte('\n'); err != nil {
		return "", "", fmt.Errorf("failed to write %s: %w", PlanFile, err)
	}
	if err := sink.w.Flush(); err != nil {
		return "", "", fmt.Errorf("failed to write %s: %w", PlanFile, err)
	}
	if err := pw.f.Sync(); err != nil {
		return "", "", fmt.Errorf("failed to sync %s: %w", PlanFile, err)
	}
	return hex.EncodeToString(fileHash.Sum(nil)), planDigest, nil
}

// planSink hashes, gates and buffers the canonical plan.
type planSink struct {
	w       *bufio.Writer
	h       hash.Hash
	scanner *redact.Scanner
}

func (s *planSink) Write(p []byte) (int, error) {
	if err := s.scanner.CheckPayload(PlanFile, p); err != nil {
		return 0, err
	}
	s.h.Write(p)
	n, err := s.w.Write(p)
	if err != nil {
		err = fmt.Errorf("failed to write %s: %w", PlanFile, err)
	}
	return n, err
}

// OpenPlan opens the plan.json written so far, for reading back the
// trials of a streamed import.
func (w *Writer) OpenPlan() (*os.File, error) {
	return os.Open(filepath.Join(w.tmp, PlanFile))
}

// PlanTrial names the next planned trial of a CreateStreamed snapshot, in
// canonical order, before its observation (if any) is added. For a
// snapshot from Create it does nothing: the plan named them all.
func (w *Writer) PlanTrial(task string, repeat int) error {
	if w.t == nil {
		return fmt.Errorf("snapshot writer has no plan yet")
	}
	if w.t.stream == nil {
		return nil
	}
	if w.sealed != nil || w.done {
		return fmt.Errorf("snapshot writer is closed to observations")
	}
	return w.t.planKey(task, repeat)
}

// writeFile writes the concatenation of parts as name and records its
// SHA-256.
func (w *Writer) writeFile(name string, parts ...[]byte) error {
	for _, b := range parts {
		if err := w.opts.Scanner.CheckPayload(name, b); err != nil {
			return err
		}
	}
	p := filepath.Join(w.tmp, filepath.FromSlash(name))
	if err := safefs.WriteNewParts(p, parts, 0o644); err != nil {
		return fmt.Errorf("failed to write %s: %w", name, err)
	}
	h := sha256.New()
	for _, b := range parts {
		h.Write(b)
	}
	w.files[name] = hex.EncodeToString(h.Sum(nil))
	return nil
}

// Add appends one observation. Observations must come in canonical
// (task, repeat) order. Add sets o.Trainable from the plan, so o is then
// the observation as saved.
func (w *Writer) Add(o *Observation) (err error) {
	defer w.saving(&err)
	if w.done || w.sealed != nil {
		return fmt.Errorf("snapshot writer is closed to observations")
	}
	if w.t == nil {
		return fmt.Errorf("snapshot writer has no plan yet")
	}
	if err := w.t.add(o); err != nil {
		return err
	}
	b, err := appendObservation(w.line[:0], o)
	if err != nil {
		return err
	}
	if len(b)+1 > MaxObservationLine {
		return &LimitError{File: ObservationsFile, Size: int64(len(b) + 1), Limit: MaxObservationLine, TrialID: o.TrialID,
			Reason: "the trial's observation line is that long (its exception type or another value from result.json)"}
	}
	if o.ExceptionType != nil && len(*o.ExceptionType) > len(w.longestException) {
		w.longestException, w.longestExceptionTrial = *o.ExceptionType, o.TrialID
	}
	if err := w.opts.Scanner.CheckPayload(ObservationsFile, b); err != nil {
		// Located only on a hit: building the name for every one of
		// 100,000 observations would cost more than the scan.
		var pe *redact.PayloadError
		if errors.As(err, &pe) {
			pe.Where = ObservationsFile + " trial " + strconv.Quote(o.TrialID)
		}
		return err
	}
	w.line = append(b, '\n')
	if _, err = w.obsBuf.Write(w.line); err != nil {
		return fmt.Errorf("failed to write %s: %w", ObservationsFile, err)
	}
	return nil
}

// RoundID seals the observations (no more may be added) and returns the
// round ID, which trajectories carry. Trajectories may still be added.
func (w *Writer) RoundID() (string, error) {
	if w.done {
		return "", fmt.Errorf("snapshot writer is closed")
	}
	if w.t == nil {
		return "", fmt.Errorf("snapshot writer has no plan yet")
	}
	if w.planOpen {
		return "", fmt.Errorf("snapshot writer's plan.json is not finished")
	}
	if w.sealed == nil {
		m, err := w.t.manifest(w.opts.FormatVerified)
		if err != nil {
			return "", err
		}
		w.sealed = m
	}
	return w.sealed.RoundID, nil
}

// AddTrajectory stores one encoded transcript as trajectories/NNNN.json.
func (w *Writer) AddTrajectory(data []byte, truncated bool) (err error) {
	defer w.saving(&err)
	if w.nTraj == 0 {
		if err := os.Mkdir(filepath.Join(w.tmp, TrajectoriesDir), 0o755); err != nil {
			return err
		}
	}
	w.nTraj++
	if truncated {
		w.truncated++
	}
	return w.writeFile(fmt.Sprintf("%s/%04d.json", TrajectoriesDir, w.nTraj), data)
}

// SetRedactors records which redactors processed the transcripts.
func (w *Writer) SetRedactors(names []string) { w.redactors = slices.Clone(names) }

// Commit finishes every file, writes the manifest, fsyncs and renames the
// folder into place. The returned manifest is what snapshot.json holds.
func (w *Writer) Commit() (m *Manifest, err error) {
	if w.done {
		return nil, fmt.Errorf("snapshot writer is closed")
	}
	defer func() {
		if err != nil {
			w.Abort()
		}
	}()
	defer w.saving(&err)
	if err := w.obsBuf.Flush(); err != nil {
		return nil, fmt.Errorf("failed to write %s: %w", ObservationsFile, err)
	}
	if err := w.obsFile.Sync(); err != nil {
		return nil, fmt.Errorf("failed to sync %s: %w", ObservationsFile, err)
	}
	if err := w.obsFile.Close(); err != nil {
		return nil, err
	}
	w.files[ObservationsFile] = hex.EncodeToString(w.obsHash.Sum(nil))
	if _, err := w.RoundID(); err != nil {
		return nil, err
	}
	m = w.sealed
	m.Files = w.files
	m.Trajectories = TrajectoryInfo{Count: w.nTraj, Truncated: w.truncated, Redactors: w.redactors}
	if m.Trajectories.Redactors == nil {
		m.Trajectories.Redactors = []string{}
	}
	b, err := EncodeManifest(m)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxManifestSize {
		return nil, &LimitError{File: ManifestFile, Size: int64(len(b)), Limit: MaxManifestSize, TrialID: w.longestExceptionTrial,
			Reason: fmt.Sprintf("exception_types holds %d distinct exception types from result.json files, the longest %d bytes", len(m.ExceptionTypes), len(w.longestException))}
	}
	if err := w.opts.Scanner.CheckPayload(ManifestFile, b); err != nil {
		return nil, err
	}
	if err := safefs.WriteNew(filepath.Join(w.tmp, ManifestFile), b, 0o644); err != nil {
		return nil, fmt.Errorf("failed to write %s: %w", ManifestFile, err)
	}
	if w.nTraj > 0 {
		if err := safefs.SyncDir(filepath.Join(w.tmp, TrajectoriesDir)); err != nil {
			return nil, err
		}
	}
	if err := w.openUp(); err != nil {
		return nil, err
	}
	if err := safefs.SyncDir(w.tmp); err != nil {
		return nil, err
	}
	if err := safefs.PublishDir(w.tmp, w.final); err != nil {
		return nil, err
	}
	w.done = true
	return m, nil
}

// openUp gives the folder the permissions a plain mkdir would have had.
// os.MkdirTemp creates it 0700, which kept a snapshot written to a shared
// place unreadable to the teammate who uploads it, although its files are
// 0644. The umask is honoured by following plan.json's read bits (created
// 0644 through the umask): group and others may list the folder exactly
// when they may read its files.
func (w *Writer) openUp() error {
	fi, err := os.Stat(filepath.Join(w.tmp, PlanFile))
	if err != nil {
		return err
	}
	mode := fs.FileMode(0o700)
	if fi.Mode().Perm()&0o040 != 0 {
		mode |= 0o050
	}
	if fi.Mode().Perm()&0o004 != 0 {
		mode |= 0o005
	}
	if err := os.Chmod(w.tmp, mode); err != nil {
		return fmt.Errorf("failed to set the permissions of %q: %w", w.tmp, err)
	}
	return nil
}

// Abort removes the temporary folder. It is safe to call more than once
// and after Commit (then it does nothing).
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	if w.obsFile != nil {
		w.obsFile.Close()
	}
	os.RemoveAll(w.tmp)
}

// EncodeManifest gives the exact bytes of snapshot.json: indented JSON
// with a trailing newline (encoding/json sorts map keys).
func EncodeManifest(m *Manifest) ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
