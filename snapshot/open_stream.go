package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"

	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/internal/safefs"
)

// planHeld is how many bytes of plan.json OpenTrials keeps in memory
// for its second walk of the plan's trials; a larger plan is read from
// its file a second time, and must hash the same again (it is the plan
// the first read checked), so memory stays flat however many trials the
// round has. A variable so tests can exercise the second read.
var planHeld = 1 << 20

// PlannedTrial is one planned trial with its observation, nil when the
// trial has no attempt (missing).
type PlannedTrial struct {
	Task        string
	Repeat      int
	Observation *Observation
	// Trajectory: a trajectory file of this trial is in the snapshot.
	Trajectory bool
}

// Visit takes the planned trials of a snapshot one at a time, in
// canonical order; an error from it ends the reading and is OpenTrials'.
type Visit func(PlannedTrial) error

// OpenTrials verifies the snapshot in dir as Open does and, in the same
// single read, hands every planned trial with its observation to a Visit,
// with memory that does not grow with the number of trials: the plan's
// trials are tallied in lockstep with the observations, and nothing is
// held but the trial at hand. begin is called with the manifest (as read,
// and its bytes) before the first trial and returns the Visit.
//
// Nothing a Visit sees is verified until OpenTrials returns without an
// error: a problem may be found at the very end. The caller must keep
// what it makes of the trials provisional (a temporary folder) and
// discard it on an error. The returned Snapshot holds the verified
// manifest and plan (its Trials nil); nothing needs closing.
//
// The single read takes the plan in the canonical form tpctl writes (RFC
// 8785, trials in canonical order, no task name holding a byte up to
// '#'). For any other plan, and whenever it finds a problem, the
// snapshot is opened as Open opens it, which decides: then begin is
// called again, and what the first Visit saw must be forgotten; on
// success the trials are handed over again from Open's verified bytes.
// The result, and every problem reported, are Open's.
func OpenTrials(dir string, begin func(m *Manifest, manifestJSON []byte) (Visit, error)) (*Snapshot, error) {
	raw, m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	visit, err := begin(m, raw)
	if err != nil {
		return nil, err
	}
	c := &capture{streamed: true, manifest: m, visit: visit}
	rep, err := verify(dir, m, c)
	switch {
	case c.visitErr != nil:
		return nil, c.visitErr
	case err == nil && rep.OK:
		return &Snapshot{dir: dir, manifest: m, manifestJSON: raw, plan: &c.head, obs: &spool{}}, nil
	}
	s, err := Open(dir)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if visit, err = begin(s.Manifest(), s.ManifestJSON()); err != nil {
		return nil, err
	}
	for t, err := range s.Trials() {
		if err == nil {
			err = visit(t)
		}
		if err != nil {
			return nil, err
		}
	}
	plan := *s.Plan()
	plan.Trials = nil
	return &Snapshot{dir: dir, manifest: s.Manifest(), manifestJSON: s.ManifestJSON(), plan: &plan, obs: &spool{}}, nil
}

// Trials iterates over every planned trial in canonical order with its
// observation, from the verified bytes; consecutive trials of one task
// share one Task string. It may be ranged over more than once. The
// error, if any, comes last and is the only thing yielded with it. A
// Snapshot from OpenTrials has none.
func (s *Snapshot) Trials() iter.Seq2[PlannedTrial, error] {
	return func(yield func(PlannedTrial, error) bool) {
		keys := make([]trialKey, len(s.plan.Trials))
		for i, t := range s.plan.Trials {
			keys[i] = trialKey{t.Task, t.Repeat}
		}
		slices.SortFunc(keys, func(a, b trialKey) int { return CompareTrials(a.Task, a.Repeat, b.Task, b.Repeat) })
		for i := 1; i < len(keys); i++ {
			if keys[i].Task == keys[i-1].Task {
				keys[i].Task = keys[i-1].Task
			}
		}
		traj := map[string]bool{}
		for tr, err := range s.Trajectories() {
			if err != nil {
				yield(PlannedTrial{}, err)
				return
			}
			f, _ := readTrajFields(tr.Data) // a file that does not decode is verify's problem
			traj[f.TrialID] = true
		}
		i := 0
		emit := func(o *Observation) bool {
			t := PlannedTrial{Task: keys[i].Task, Repeat: keys[i].Repeat, Observation: o}
			t.Trajectory = len(traj) > 0 && traj[TrialID(t.Task, t.Repeat)]
			i++
			return yield(t, nil)
		}
		for o, err := range s.Observations() {
			if err != nil {
				yield(PlannedTrial{}, err)
				return
			}
			// Verification placed every observation in the plan, in order.
			for i < len(keys) && CompareTrials(keys[i].Task, keys[i].Repeat, o.Task, o.Repeat) < 0 {
				if !emit(nil) {
					return
				}
			}
			if i == len(keys) || keys[i].Task != o.Task || keys[i].Repeat != o.Repeat {
				yield(PlannedTrial{}, fmt.Errorf("%s: observation %q is not in the plan", s.dir, o.TrialID))
				return
			}
			if !emit(&o) {
				return
			}
		}
		for i < len(keys) {
			if !emit(nil) {
				return
			}
		}
	}
}

// foldStreamed is the streamed half of rederive: plan.json is read and
// hashed, its head (everything but the trials) decoded,
// and its trials tallied in lockstep with the observations and handed to
// c.visit. It returns nil after adding a problem (OpenTrials then lets
// Open decide, so a problem here need only be true, not worded as Verify
// words it) or when c.visit failed (c.visitErr).
func (c *capture) foldStreamed(dir, outcomeRules string, obs *observationsAhead, check func(*tally, *Observation) error, ps *problems) *tally {
	fail := func(code, file string, err error) *tally {
		ps.add(code, file, "%v", err)
		return nil
	}
	planDigest, err := c.readPlan(dir)
	if err != nil {
		return fail(ProblemPlanInvalid, PlanFile, err)
	}
	var p planHead
	if err := decodePlanHead(c.headJSON, &p); err != nil {
		return fail(ProblemPlanInvalid, PlanFile, fmt.Errorf("plan does not have the import-plan shape: %w", err))
	}
	c.headJSON = nil
	sd, err := SettingsDigest(p.Protocol.EnvironmentDigest, p.Protocol.HarnessDigest, p.Settings)
	if err != nil {
		return fail(ProblemPlanInvalid, PlanFile, err)
	}
	c.head = p.PlanSummary
	c.head.Trials = nil
	t := newStreamTally(p.PlanSummary, planDigest, sd, outcomeRules)
	// The trials with a trajectory, from the listed files (each checked
	// against its SHA-256; verification checks the rest).
	traj := map[string]bool{}
	for _, name := range c.manifest.TrajectoryFiles() {
		if c.visit == nil {
			break // Verify: nothing is handed over
		}
		if b, err := ReadFile(dir, c.manifest, name); err == nil {
			// Read once: rederive checks the same fields from c.traj.
			f, err := readTrajFields(b)
			if c.traj == nil {
				c.traj = map[string]trajRead{}
			}
			c.traj[name] = trajRead{f, err}
			traj[f.TrialID] = true
		}
	}
	trials, reread, err := c.planTrials(dir)
	if err != nil {
		return fail(ProblemPlanInvalid, PlanFile, err)
	}
	defer reread.close()
	keys := newKeyWalk(trials)
	var pending *trialKey
	var k trialKey
	visit := func(key *trialKey, o *Observation) error {
		if c.visit == nil {
			return nil
		}
		pt := PlannedTrial{Task: key.Task, Repeat: key.Repeat, Observation: o}
		pt.Trajectory = len(traj) > 0 && traj[TrialID(key.Task, key.Repeat)]
		if c.visitErr = c.visit(pt); c.visitErr != nil {
			return c.visitErr
		}
		return nil
	}
	// planned hands the tally, and the Visit as missing, every planned
	// trial before (task, repeat), and the tally that one; it reports
	// whether it is planned. With last, every one left.
	planned := func(task string, repeat int, last bool) (bool, error) {
		for {
			if pending == nil {
				var ok bool
				var err error
				if k, ok, err = keys.next(); err != nil || !ok {
					return false, err
				}
				pending = &k
			}
			cmp := CompareTrials(pending.Task, pending.Repeat, task, repeat)
			if cmp > 0 && !last {
				return false, nil
			}
			if err := t.planKey(pending.Task, pending.Repeat); err != nil {
				return false, err
			}
			if cmp == 0 && !last {
				return true, nil
			}
			if err := visit(pending, nil); err != nil {
				return false, err
			}
			pending = nil
		}
	}
	var planErr error
	// The observations handed to the Visit are cut from blocks, one
	// allocation for many: a Visit may keep them. Without a Visit
	// (Verify) nothing is kept.
	var block []Observation
	var cur Observation
	prehash(t, obs)
	if err := obs.each(func(v Observation) error {
		cur = v
		o := &cur
		if c.visit != nil {
			if len(block) == 0 {
				block = make([]Observation, 128)
			}
			o = &block[0]
			*o, block = v, block[1:]
		}
		var ok bool
		if ok, planErr = planned(o.Task, o.Repeat, false); planErr != nil {
			return planErr
		}
		if err := check(t, o); err != nil {
			return err
		}
		if !ok { // check refuses an observation that is not planned
			return fmt.Errorf("trial %q is not in the plan", o.TrialID)
		}
		err := visit(pending, o)
		pending = nil
		return err
	}); err != nil {
		if c.visitErr != nil {
			return nil
		}
		if planErr != nil {
			return fail(ProblemPlanInvalid, PlanFile, planErr)
		}
		return fail(ProblemObservation, ObservationsFile, err)
	}
	if _, err := planned("", 0, true); err != nil {
		if c.visitErr != nil {
			return nil
		}
		return fail(ProblemPlanInvalid, PlanFile, err)
	}
	if err := reread.check(c.planSum); err != nil {
		return fail(ProblemPlanInvalid, PlanFile, err)
	}
	return t
}

// planTrials is a reader of the plan's trials array for the second walk:
// from memory when readPlan kept the plan, else from the file again,
// whose every byte the returned planReread hashes.
func (c *capture) planTrials(dir string) (io.Reader, *planReread, error) {
	if c.planMem != nil {
		return bytes.NewReader(c.planMem[c.trialsAt[0]:c.trialsAt[1]]), nil, nil
	}
	f, err := safefs.OpenRegular(filepath.Join(dir, PlanFile))
	if err != nil {
		return nil, nil, fmt.Errorf("cannot be read: %w", err)
	}
	r := &planReread{f: f, h: sha256.New()}
	if _, err := io.CopyN(r.h, f, c.trialsAt[0]); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("cannot be read: %w", err)
	}
	return io.TeeReader(io.LimitReader(f, c.trialsAt[1]-c.trialsAt[0]), r.h), r, nil
}

// planReread is the second read of a plan.json too large to keep: what
// the walk read of it, and then the rest, must hash as the first read
// did, else the plan changed in between (and the walk's trials are not
// the checked plan's).
type planReread struct {
	f *os.File
	h hash.Hash
}

// check reads the rest of the file after a whole walk and compares its
// SHA-256 with sum, the first read's; nil for a plan kept in memory.
func (r *planReread) check(sum string) error {
	if r == nil {
		return nil
	}
	if _, err := io.Copy(r.h, io.LimitReader(r.f, MaxPlanSize+1)); err != nil {
		return fmt.Errorf("cannot be read: %w", err)
	}
	if hex.EncodeToString(r.h.Sum(nil)) != sum {
		return errors.New("changed while it was read")
	}
	return nil
}

func (r *planReread) close() {
	if r != nil {
		r.f.Close()
	}
}

// readPlan reads plan.json once, hashing it as it passes, finds the span
// of its trials array (c.trialsAt, by planSpan) and keeps the rest of the
// plan as c.headJSON with the array left empty; a plan of at most
// planHeld bytes is kept whole (c.planMem) for the walk of its trials,
// a larger one is read again (planTrials). The plan must be canonical
// JSON and a newline (the head is checked here, the trials by keyWalk as
// they are read); its canonical digest is returned.
func (c *capture) readPlan(dir string) (string, error) {
	f, err := safefs.OpenRegular(filepath.Join(dir, PlanFile))
	if err != nil {
		return "", fmt.Errorf("cannot be read: %w", err)
	}
	defer f.Close()
	canon := &holdBack{h: sha256.New()}
	span := newPlanSpan()
	r := io.LimitReader(f, MaxPlanSize+1)
	buf := make([]byte, 256<<10)
	// head and tail are the bytes before and after the trials array; mem
	// every byte, while there are at most planHeld.
	var head, tail, mem []byte
	var size int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			p := buf[:n]
			canon.Write(p)
			span.feed(p)
			lo, hi := size, size+int64(n)
			if hs := hi; span.start < 0 || span.start > lo {
				if span.start >= 0 {
					hs = span.start
				}
				head = append(head, p[:hs-lo]...)
			}
			if span.end >= 0 && hi > max(lo, span.end) {
				tail = append(tail, p[max(lo, span.end)-lo:]...)
			}
			if hi <= int64(planHeld) {
				mem = append(mem, p...)
			} else {
				mem = nil
			}
			size = hi
			if len(head)+len(tail) > maxPlanHead || span.bad {
				return "", errors.New("not in the canonical form a streamed read takes")
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	notStreamable := errors.New("not in the canonical form a streamed read takes")
	if span.bad || span.start < 0 || span.end < 0 || size > MaxPlanSize || !canon.has || canon.last != '\n' || span.closed != size-1 {
		return "", notStreamable
	}
	c.trialsAt = [2]int64{span.start, span.end}
	c.planMem = mem
	head = append(append(head, "[]"...), tail[:len(tail)-1]...)
	if got, err := jcs.Canonical(head); err != nil || !bytes.Equal(got, head) {
		return "", notStreamable
	}
	c.headJSON = head
	// The canonical digest is over every byte but the newline, the file's
	// over all of them: the state is cloned rather than hashing twice.
	state, err := canon.h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return "", err
	}
	file := sha256.New()
	if err := file.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
		return "", err
	}
	file.Write([]byte{'\n'})
	c.planSum = hex.EncodeToString(file.Sum(nil))
	return hex.EncodeToString(canon.h.Sum(nil)), nil
}

// maxPlanHead bounds the bytes of a plan outside its trials array that a
// streamed read keeps; a plan with more is read the held way.
const maxPlanHead = 4 << 20

// holdBack hashes every byte written to it but the last, which it holds.
type holdBack struct {
	h    hash.Hash
	last byte
	has  bool
}

func (b *holdBack) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.has {
		b.h.Write([]byte{b.last})
	}
	b.h.Write(p[:len(p)-1])
	b.last, b.has = p[len(p)-1], true
	return len(p), nil
}
