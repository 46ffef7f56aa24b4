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
	"reflect"
	"slices"

	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/internal/safefs"
)

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
	plan, err := openPlan(dir)
	if err != nil {
		return fail(ProblemPlanInvalid, PlanFile, err)
	}
	defer plan.close()
	var p planHead
	if err := decodePlanHead(plan.provisionalHead(), &p); err != nil {
		return fail(ProblemPlanInvalid, PlanFile, fmt.Errorf("plan does not have the import-plan shape: %w", err))
	}
	sd, err := SettingsDigest(p.Protocol.EnvironmentDigest, p.Protocol.HarnessDigest, p.Settings)
	if err != nil {
		return fail(ProblemPlanInvalid, PlanFile, err)
	}
	c.head = p.PlanSummary
	c.head.Trials = nil
	t := newStreamTally(p.PlanSummary, "", sd, outcomeRules)
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
	keys := newKeyWalk(plan)
	keys.tail = true
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
	// The plan as a whole: what follows the trials array, and the head
	// the tally took, which must be the plan's.
	tail, err := keys.rest(maxPlanHead)
	if err != nil {
		return fail(ProblemPlanInvalid, PlanFile, err)
	}
	if t.planDigest, c.planSum, err = plan.finish(tail, &p); err != nil {
		return fail(ProblemPlanInvalid, PlanFile, err)
	}
	return t
}

// planStream is the one read of a plan.json in the canonical form a
// streamed read takes, hashing every byte as it passes: openPlan reads
// the plan's head up to its trials array (planSpan finds it), the
// keyWalk reads the array from the planStream and the rest after it
// (keyWalk.rest), and finish checks the whole. Memory holds the head,
// never the trials, however many the round has.
type planStream struct {
	f      *os.File
	r      io.Reader // the file, capped at MaxPlanSize+1 bytes
	canon  *holdBack // every byte but the last, and the last held
	size   int64
	prefix []byte // the bytes before the trials array
	body   []byte // bytes read after prefix, not yet handed on
}

var errNotStreamable = errors.New("not in the canonical form a streamed read takes")

// planBlock is how much openPlan reads at a time; a variable so tests
// can cut a plan's head across many reads.
var planBlock = 64 << 10

// openPlan opens dir's plan.json and reads it up to its trials array.
func openPlan(dir string) (*planStream, error) {
	f, err := safefs.OpenRegular(filepath.Join(dir, PlanFile))
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %w", err)
	}
	p := &planStream{f: f, r: io.LimitReader(f, MaxPlanSize+1), canon: &holdBack{h: sha256.New()}}
	span := newPlanSpan()
	span.head = true
	buf := make([]byte, planBlock)
	for {
		n, err := p.read(buf)
		from := span.off
		span.feed(buf[:n])
		if span.bad {
			p.close()
			return nil, errNotStreamable
		}
		if span.start >= 0 {
			at := int(span.start - from)
			p.prefix = append(p.prefix, buf[:at]...)
			p.body = buf[at:n]
			return p, nil
		}
		p.prefix = append(p.prefix, buf[:n]...)
		if len(p.prefix) > maxPlanHead || err == io.EOF {
			p.close()
			return nil, errNotStreamable
		}
		if err != nil {
			p.close()
			return nil, fmt.Errorf("cannot be read: %w", err)
		}
	}
}

// read reads the file on, hashing what it reads.
func (p *planStream) read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.canon.Write(b[:n])
		p.size += int64(n)
	}
	return n, err
}

// Read hands on the plan from its trials array.
func (p *planStream) Read(b []byte) (int, error) {
	if len(p.body) > 0 {
		n := copy(b, p.body)
		p.body = p.body[n:]
		return n, nil
	}
	return p.read(b)
}

func (p *planStream) close() { p.f.Close() }

// provisionalHead is the plan's head as far as it is known before the
// trials are read: the members before them, the array left empty, and
// the object closed. finish checks that the members after the trials
// change nothing decoded from it.
func (p *planStream) provisionalHead() []byte {
	return append(slices.Clip(p.prefix), "[]}"...)
}

// finish takes tail, the bytes after the trials array to the end of the
// file, all read. The plan must then be canonical JSON and a newline: its
// head (the plan with the array emptied) canonical, as keyWalk found every
// trial, and the head decoding as provisional did (a member after the
// trials that encoding/json takes for a field of the head would change
// it). It returns the plan's canonical digest and its file's SHA-256.
func (p *planStream) finish(tail []byte, provisional *planHead) (canonDigest, fileSum string, err error) {
	if p.size > MaxPlanSize || len(p.body) > 0 || !p.canon.has || p.canon.last != '\n' || len(tail) == 0 || tail[len(tail)-1] != '\n' {
		return "", "", errNotStreamable
	}
	head := append(append(slices.Clip(p.prefix), "[]"...), tail[:len(tail)-1]...)
	if got, err := jcs.Canonical(head); err != nil || !bytes.Equal(got, head) {
		return "", "", errNotStreamable
	}
	var h planHead
	if err := decodePlanHead(head, &h); err != nil {
		return "", "", errNotStreamable
	}
	h.Trials, provisional.Trials = nil, nil
	if !reflect.DeepEqual(h, *provisional) {
		return "", "", errNotStreamable
	}
	// The canonical digest is over every byte but the newline, the file's
	// over all of them: the state is cloned rather than hashing twice.
	state, err := p.canon.h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return "", "", err
	}
	file := sha256.New()
	if err := file.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
		return "", "", err
	}
	file.Write([]byte{'\n'})
	return hex.EncodeToString(p.canon.h.Sum(nil)), hex.EncodeToString(file.Sum(nil)), nil
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
