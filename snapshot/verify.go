package snapshot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/internal/formats"
	"github.com/tuneplane/tpctl/internal/safefs"
)

// Size caps for reading a snapshot that may have been tampered with.
const (
	MaxManifestSize    = 8 << 20
	MaxPlanSize        = 256 << 20
	MaxObservationLine = 1 << 20
	MaxTrajectorySize  = 2 << 20
)

// NotSnapshotError means the folder is not a readable tpctl snapshot at all.
type NotSnapshotError struct {
	Dir string
	Err error
}

func (e *NotSnapshotError) Error() string {
	if safefs.IsIOError(e.Err) {
		return fmt.Sprintf("%q could not be read (an I/O error, not a sign it is not a snapshot): %v", e.Dir, e.Err)
	}
	return fmt.Sprintf("%q is not a readable tpctl snapshot: %v", e.Dir, e.Err)
}

func (e *NotSnapshotError) Unwrap() error { return e.Err }

// Load reads and strictly decodes snapshot.json.
func Load(dir string) (*Manifest, error) {
	b, err := safefs.ReadFileCapped(filepath.Join(dir, ManifestFile), MaxManifestSize)
	if err != nil {
		return nil, &NotSnapshotError{Dir: dir, Err: err}
	}
	m, err := DecodeManifest(b)
	if err != nil {
		return nil, &NotSnapshotError{Dir: dir, Err: err}
	}
	return m, nil
}

// DecodeManifest strictly decodes snapshot.json bytes.
func DecodeManifest(b []byte) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestFile, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: data after the manifest object", ManifestFile)
	}
	if m.Format != Format && m.Format != FormatV2 && m.Format != FormatV1 {
		return nil, fmt.Errorf("%s: format %q is not %q, %q or %q", ManifestFile, m.Format, Format, FormatV2, FormatV1)
	}
	return &m, nil
}

// ReadObservations streams observations.jsonl, calling fn for each line in
// file order. Lines are decoded strictly.
func ReadObservations(dir string, fn func(Observation) error) error {
	f, err := safefs.OpenRegular(filepath.Join(dir, ObservationsFile))
	if err != nil {
		return err
	}
	defer f.Close()
	return readObservations(f, fn)
}

func readObservations(r io.Reader, fn func(Observation) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxObservationLine)
	d := newObsDecoder()
	// One Observation for the file (decode's argument escapes): fn takes
	// a copy, and what decode points it to is never reused.
	var o Observation
	for line := 1; sc.Scan(); line++ {
		o = Observation{}
		if err := d.decode(sc.Bytes(), &o); err != nil {
			return fmt.Errorf("%s:%d: %w", ObservationsFile, line, err)
		}
		if err := fn(o); err != nil {
			return fmt.Errorf("%s:%d: %w", ObservationsFile, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", ObservationsFile, err)
	}
	return nil
}

// ReadFile reads one file of the snapshot listed in the manifest, checking
// its SHA-256 against the manifest.
func ReadFile(dir string, m *Manifest, name string) ([]byte, error) {
	want, ok := m.Files[name]
	if !ok {
		return nil, fmt.Errorf("%s is not listed in %s", name, ManifestFile)
	}
	if err := safefs.CheckRel(name); err != nil {
		return nil, err
	}
	b, err := safefs.ReadFileCapped(filepath.Join(dir, filepath.FromSlash(name)), MaxTrajectorySize)
	if err != nil {
		return nil, err
	}
	if digest.Bytes(b).String() != want {
		return nil, fmt.Errorf("%s does not match its SHA-256 in %s", name, ManifestFile)
	}
	return b, nil
}

// Problem is one thing wrong with a saved snapshot.
type Problem struct {
	Code    string `json:"code"`
	File    string `json:"file"`
	Message string `json:"message"`
}

// Problem codes reported by Verify.
const (
	ProblemFileMissing   = "file_missing"
	ProblemFileModified  = "file_modified"
	ProblemFileUnlisted  = "file_unlisted"
	ProblemPlanInvalid   = "plan_invalid"
	ProblemObservation   = "observation_invalid"
	ProblemRoundMismatch = "round_id_mismatch"
	ProblemFieldMismatch = "manifest_mismatch"
	ProblemTrajectory    = "trajectory_invalid"
	// ProblemReadError is a file that could not be read for an I/O or
	// resource error of the machine (EIO, too many open files, no
	// memory): the snapshot may be intact; fix the fault and run again.
	ProblemReadError = "read_error"
)

// VerifyReport is the result of Verify; OK is true when Problems is empty.
type VerifyReport struct {
	Dir      string    `json:"dir"`
	RoundID  string    `json:"round_id"`
	OK       bool      `json:"ok"`
	Problems []Problem `json:"problems"`
}

// Verify re-hashes every file of a saved snapshot, re-derives counts,
// rates, digests and the round ID from plan.json and observations.jsonl,
// and reports every difference from snapshot.json. It returns an error
// only when dir is not a readable snapshot at all.
func Verify(dir string) (*VerifyReport, error) {
	saved, err := Load(dir)
	if err != nil {
		return nil, err
	}
	// First the single streamed read of OpenTrials, whose memory does not
	// grow with the round (a plan in the canonical form tpctl writes is
	// tallied in lockstep with the observations; nothing is kept). It
	// settles a snapshot that verifies; when it finds a problem, or the
	// plan is in another form, the read that holds the plan decides and
	// words every problem, as it always has.
	c := &capture{streamed: true, manifest: saved}
	rep, err := verify(dir, saved, c)
	if err == nil && rep.OK {
		return rep, nil
	}
	return verify(dir, saved, nil)
}

// verify is Verify of the loaded manifest saved. With a capture, the plan
// and the observations are hashed in the same read that re-derives the
// manifest from them, and their bytes are kept in c: what Open hands out
// is then exactly what was hashed and checked.
func verify(dir string, saved *Manifest, c *capture) (*VerifyReport, error) {
	rep := &VerifyReport{Dir: dir, RoundID: saved.RoundID, Problems: []Problem{}}
	add := func(code, file, format string, args ...any) {
		rep.Problems = append(rep.Problems, Problem{code, file, fmt.Sprintf(format, args...)})
	}

	// Every file on disk must be listed, and every listed file must match.
	onDisk := map[string]bool{}
	// DIR itself may be a symlink the user chose (a "latest" link, /tmp on
	// macOS); WalkDir does not descend into a symlinked root, which made
	// every file look missing. A trailing separator resolves DIR itself
	// only: links inside the snapshot are still reported, never followed.
	walkRoot := dir
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		walkRoot = dir + string(filepath.Separator)
	}
	walkErr := filepath.WalkDir(walkRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == "." || rel == ManifestFile:
		case d.IsDir() && rel == TrajectoriesDir:
		case d.Type().IsRegular():
			onDisk[rel] = true
		default:
			add(ProblemFileUnlisted, rel, "unexpected %s in the snapshot", describe(d))
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if walkErr != nil {
		return nil, &NotSnapshotError{Dir: dir, Err: walkErr}
	}
	names := slices.Sorted(maps.Keys(saved.Files))
	if c != nil {
		// The re-derivation hashes what it reads; the other files are
		// hashed alongside it. Problems come in the same order as below.
		others := make(chan map[string]fileSum, 1)
		go func() {
			others <- hashFiles(dir, slices.DeleteFunc(slices.Clone(names), func(n string) bool {
				return n == PlanFile || n == ObservationsFile || !onDisk[n]
			}))
		}()
		derived := rederive(dir, saved, names, onDisk, c)
		known := <-others
		for name, sum := range c.sums() {
			known[name] = fileSum{sum: sum}
		}
		rep.Problems = append(rep.Problems, checkFiles(dir, saved, names, onDisk, known)...)
		rep.Problems = append(rep.Problems, derived...)
		return finish(rep), nil
	}
	// Hashing the files and re-deriving the manifest are independent: the
	// hashing runs alongside, and its problems come first, as they did
	// when the two ran one after the other.
	hashed := make(chan []Problem, 1)
	go func() {
		present := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !onDisk[n] })
		hashed <- checkFiles(dir, saved, names, onDisk, hashFiles(dir, present))
	}()
	derived := rederive(dir, saved, names, onDisk, nil)
	rep.Problems = append(rep.Problems, <-hashed...)
	rep.Problems = append(rep.Problems, derived...)
	return finish(rep), nil
}

// problems collects Problems; add is Verify's way of reporting one.
type problems []Problem

// add records a problem; one caused by an I/O or resource error of the
// machine (safefs.IsIOError) is a ProblemReadError whatever code the
// caller meant, since it says nothing about the snapshot's content.
func (ps *problems) add(code, file, format string, args ...any) {
	for _, a := range args {
		if err, ok := a.(error); ok && safefs.IsIOError(err) {
			code = ProblemReadError
		}
	}
	*ps = append(*ps, Problem{code, file, fmt.Sprintf(format, args...)})
}

// fileSum is a file's SHA-256, or why it could not be read.
type fileSum struct {
	sum string
	err error
}

// hashFiles hashes the named files of dir side by side, one file per
// core at a time (a snapshot may hold thousands of small trajectory
// files as well as two large ones).
func hashFiles(dir string, names []string) map[string]fileSum {
	sums := make([]fileSum, len(names))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				sums[i].sum, sums[i].err = hashFile(filepath.Join(dir, filepath.FromSlash(names[i])))
			}
		}()
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	m := make(map[string]fileSum, len(names))
	for i, name := range names {
		m[name] = sums[i]
	}
	return m
}

// OnlyReadErrors reports whether every problem is a ProblemReadError: the
// snapshot could not be read, which is no sign it was modified.
func OnlyReadErrors(ps []Problem) bool {
	for _, p := range ps {
		if p.Code != ProblemReadError {
			return false
		}
	}
	return len(ps) > 0
}

// checkFiles reports each listed file that is missing or does not match
// its SHA-256, then each regular file on disk the manifest does not list.
// known holds the SHA-256 of files already hashed; the rest are hashed
// here.
func checkFiles(dir string, saved *Manifest, names []string, onDisk map[string]bool, known map[string]fileSum) []Problem {
	var ps problems
	add := ps.add
	for _, name := range names {
		if !onDisk[name] {
			add(ProblemFileMissing, name, "listed in %s but missing", ManifestFile)
			continue
		}
		k, ok := known[name]
		got, err := k.sum, k.err
		if !ok {
			got, err = hashFile(filepath.Join(dir, filepath.FromSlash(name)))
		}
		if err != nil {
			add(ProblemFileModified, name, "cannot be read: %v", err)
		} else if got != saved.Files[name] {
			add(ProblemFileModified, name, "SHA-256 is %s, manifest says %s", got, saved.Files[name])
		}
	}
	for _, name := range slices.Sorted(maps.Keys(onDisk)) {
		if _, ok := saved.Files[name]; !ok {
			add(ProblemFileUnlisted, name, "present but not listed in %s", ManifestFile)
		}
	}
	return ps
}

// rederive re-derives the manifest from the plan and the observations and
// reports every difference from the saved one.
func rederive(dir string, saved *Manifest, names []string, onDisk map[string]bool, c *capture) []Problem {
	var ps problems
	add := ps.add
	// The observations are decoded ahead while the plan is read.
	obs := readObservationsAhead(dir, c)
	defer obs.stop()
	check := func(t *tally, o *Observation) error {
		saidTrainable := o.Trainable
		if err := t.add(o); err != nil {
			return err
		}
		if o.Trainable != saidTrainable {
			return fmt.Errorf("trial %q: trainable is %v, the plan and status say %v", o.TrialID, saidTrainable, o.Trainable)
		}
		if saved.Format != Format {
			for _, a := range o.AttemptOutcomes {
				if a.HasExplanation() {
					return fmt.Errorf("trial %q retry %d: detail, timing, usage and agent are %s members; a %s snapshot has none", o.TrialID, a.Retry, Format, saved.Format)
				}
			}
		}
		return nil
	}
	var t *tally
	if c != nil && c.streamed {
		if t = c.foldStreamed(dir, saved.OutcomeRules, obs, check, &ps); t == nil {
			return ps
		}
	} else {
		planJSON, err := safefs.ReadFileCapped(filepath.Join(dir, PlanFile), MaxPlanSize)
		if err != nil {
			add(ProblemPlanInvalid, PlanFile, "cannot be read: %v", err)
			return ps
		}
		if c != nil {
			c.plan, c.planSum = planJSON, digest.Bytes(planJSON).String()
		}
		if t, _, err = newTally(planJSON, saved.OutcomeRules); err != nil {
			add(ProblemPlanInvalid, PlanFile, "%v", err)
			return ps
		}
		prehash(t, obs)
		if err := obs.each(func(o Observation) error { return check(t, &o) }); err != nil {
			add(ProblemObservation, ObservationsFile, "%v", err)
			return ps
		}
	}
	// format_verified is derived, not trusted: a revision of a format tpctl
	// knows is verified only when it is one tpctl was validated against.
	verified := saved.Source.FormatVerified
	if formats.Known(t.plan.Source.Format) {
		verified = formats.Validated(t.plan.Source.Format, t.plan.Source.Revision)
	}
	want, err := t.manifest(verified)
	if err != nil {
		add(ProblemPlanInvalid, PlanFile, "%v", err)
		return ps
	}
	want.Files = saved.Files
	want.Trajectories = saved.Trajectories
	switch saved.Format {
	case FormatV1:
		// A tpctl-snapshot/1 manifest has no statistics member; everything
		// else recomputes as for the current format.
		want.Format, want.Statistics = FormatV1, nil
	case FormatV2:
		// tpctl-snapshot/2 statistics recompute by their own rules; its
		// observations carry no explanation members (checked above).
		want.Format, want.Statistics = FormatV2, t.statistics(FormatV2)
	}
	nTraj := len(saved.TrajectoryFiles())
	truncated := 0
	for _, name := range names {
		if !strings.HasPrefix(name, TrajectoriesDir+"/") || !onDisk[name] {
			continue
		}
		var tr trajFields
		if r, ok := c.trajRead(name); ok {
			tr, err = r.f, r.err
		} else {
			b, rerr := ReadFile(dir, saved, name)
			if rerr != nil {
				continue // already reported as missing or modified
			}
			tr, err = readTrajFields(b)
		}
		if err != nil {
			add(ProblemTrajectory, name, "is not a trajectory: %v", err)
			continue
		}
		if tr.RoundID != want.RoundID {
			add(ProblemTrajectory, name, "belongs to round %s, not %s", tr.RoundID, want.RoundID)
		}
		if tr.Complete || tr.CapturePolicy != "sampled" {
			add(ProblemTrajectory, name, "must say complete: false and capture_policy: sampled")
		}
		if tr.Truncated {
			truncated++
		}
	}
	if truncated != saved.Trajectories.Truncated {
		add(ProblemFieldMismatch, ManifestFile, "trajectories.truncated is %d but %d trajectory files say truncated", saved.Trajectories.Truncated, truncated)
	}
	if nTraj != saved.Trajectories.Count {
		add(ProblemFieldMismatch, ManifestFile, "trajectories.count is %d but %d trajectory files are listed", saved.Trajectories.Count, nTraj)
	}
	if want.RoundID != saved.RoundID {
		add(ProblemRoundMismatch, ManifestFile, "round_id is %s but the plan and observations give %s", saved.RoundID, want.RoundID)
	}
	compareFields(saved, want, func(field, got, exp string) {
		if field == "round_id" {
			return
		}
		add(ProblemFieldMismatch, ManifestFile, "%s is %s but recomputes to %s", field, got, exp)
	})
	return ps
}

// prehash has t take the round preimage of the observations from the
// decoders of obs, which build it side by side, rather than build it
// itself in add, one observation at a time.
func prehash(t *tally, obs *observationsAhead) {
	t.prehashed = true
	obs.preimage = func(b []byte) { t.attempts.Write(b) }
}

func finish(r *VerifyReport) *VerifyReport {
	r.OK = len(r.Problems) == 0
	return r
}

// compareFields reports each top-level manifest field whose JSON differs,
// including one that only one side has (a statistics member in a
// tpctl-snapshot/1 manifest, or none in a tpctl-snapshot/2 one). Nested
// objects are reported member by member (statistics.pass_at_k), so a
// tampered number is named exactly.
func compareFields(saved, want *Manifest, report func(field, got, exp string)) {
	sb, _ := json.Marshal(saved)
	wb, _ := json.Marshal(want)
	compareJSON("", sb, wb, report)
}

// compareJSON reports the members of two JSON values that differ,
// descending into objects that both sides have.
func compareJSON(prefix string, got, exp []byte, report func(field, got, exp string)) {
	var a, b map[string]json.RawMessage
	if json.Unmarshal(got, &a) != nil || json.Unmarshal(exp, &b) != nil || a == nil || b == nil {
		if !bytes.Equal(got, exp) {
			report(strings.TrimSuffix(prefix, "."), orAbsent(got), orAbsent(exp))
		}
		return
	}
	keys := slices.Sorted(maps.Keys(b))
	for k := range a {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if bytes.Equal(a[k], b[k]) {
			continue
		}
		if prefix == "" && (k == "statistics") && a[k] != nil && b[k] != nil {
			compareJSON(k+".", a[k], b[k], report)
			continue
		}
		report(prefix+k, orAbsent(a[k]), orAbsent(b[k]))
	}
}

func orAbsent(b []byte) string {
	if b == nil {
		return "absent"
	}
	return string(b)
}

func hashFile(path string) (string, error) {
	f, err := safefs.OpenRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	d, err := digest.Reader(f)
	if err != nil {
		return "", err
	}
	return d.String(), nil
}

func describe(d fs.DirEntry) string {
	switch {
	case d.IsDir():
		return "folder"
	case d.Type()&fs.ModeSymlink != 0:
		return "symlink"
	default:
		return "special file"
	}
}

// IsNotSnapshot reports whether err means the folder is not a snapshot.
func IsNotSnapshot(err error) bool {
	var ns *NotSnapshotError
	return errors.As(err, &ns) || errors.Is(err, os.ErrNotExist)
}
