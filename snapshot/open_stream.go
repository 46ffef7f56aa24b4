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
	"path/filepath"
	"slices"

	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/internal/jsonscan"
	"github.com/tuneplane/tpctl/internal/safefs"
)

// StreamHeld is how many bytes of plan.json and of observations.jsonl an
// OpenStreamed snapshot keeps in memory; past it they go to temporary
// files, so memory stays flat however many trials the round has. A
// variable so tests can exercise the files.
var StreamHeld = 1 << 20

// OpenStreamed is Open for a reader that takes the planned trials one at
// a time (Trials), with memory that does not grow with the number of
// trials: plan.json is not decoded whole, its trials are tallied in
// lockstep with the observations, and the verified bytes of both are kept
// in temporary files rather than in memory. Plan().Trials and PlanJSON
// are nil.
//
// The streamed reading takes the plan in the canonical form tpctl writes
// (RFC 8785, trials in canonical order, no task name holding a byte up to
// '#'). For any other plan, and whenever the streamed reading finds a
// problem, the snapshot is opened as Open opens it, which decides: the
// result, and every problem reported, are Open's.
func OpenStreamed(dir string) (*Snapshot, error) {
	raw, m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	c := &capture{streamed: true, planSpool: &spool{limit: StreamHeld}, obs: &spool{limit: StreamHeld}}
	rep, err := verify(dir, m, c)
	if err == nil && rep.OK {
		return &Snapshot{dir: dir, manifest: m, manifestJSON: raw, plan: &c.head, obs: c.obs,
			planSpool: c.planSpool, trialsAt: c.trialsAt}, nil
	}
	c.obs.close()
	c.planSpool.close()
	return Open(dir)
}

// PlannedTrial is one planned trial with its observation, nil when the
// trial has no attempt (missing).
type PlannedTrial struct {
	Task        string
	Repeat      int
	Observation *Observation
}

// Trials iterates over every planned trial in canonical order with its
// observation, from the verified bytes; consecutive trials of one task
// share one Task string. It may be ranged over more than once. The
// error, if any, comes last and is the only thing yielded with it.
func (s *Snapshot) Trials() iter.Seq2[PlannedTrial, error] {
	return func(yield func(PlannedTrial, error) bool) {
		next := s.plannedKeys()
		// The observations are decoded ahead, on a goroutine of their
		// own, while the caller takes each trial.
		obs := readAhead(func(fn func(Observation) error) error { return readObservations(s.obs.reader(), fn) })
		defer obs.stop()
		var pending *trialKey
		var k trialKey
		stopped := errors.New("stopped")
		// upTo yields the planned trials before o (missing) and the one
		// of o with it; with o nil, every one left.
		upTo := func(o *Observation) error {
			for {
				if pending == nil {
					var ok bool
					var err error
					if k, ok, err = next(); err != nil {
						return fmt.Errorf("%s: %s: %w", s.dir, PlanFile, err)
					}
					if !ok {
						if o != nil {
							// Verification placed every observation in the
							// plan; this is a tpctl bug, not a changed file.
							return fmt.Errorf("%s: observation %q is not in the plan", s.dir, o.TrialID)
						}
						return nil
					}
					pending = &k
				}
				t := PlannedTrial{Task: pending.Task, Repeat: pending.Repeat}
				if o != nil {
					switch CompareTrials(t.Task, t.Repeat, o.Task, o.Repeat) {
					case 0:
						t.Observation = o
					case 1:
						return fmt.Errorf("%s: observation %q is not in the plan", s.dir, o.TrialID)
					}
				}
				pending = nil
				if !yield(t, nil) {
					return stopped
				}
				if t.Observation != nil {
					return nil
				}
			}
		}
		err := obs.each(func(o Observation) error { return upTo(&o) })
		if err == nil {
			err = upTo(nil)
		}
		if err != nil && !errors.Is(err, stopped) {
			yield(PlannedTrial{}, err)
		}
	}
}

// plannedKeys returns a pull function over the planned trials in
// canonical order: from the kept plan.json of an OpenStreamed snapshot,
// from the decoded plan of an Open one.
func (s *Snapshot) plannedKeys() func() (trialKey, bool, error) {
	if s.planSpool != nil {
		w := newKeyWalk(s.planSpool.section(s.trialsAt[0], s.trialsAt[1]-s.trialsAt[0]), false)
		return w.next
	}
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
	i := 0
	return func() (trialKey, bool, error) {
		if i == len(keys) {
			return trialKey{}, false, nil
		}
		i++
		return keys[i-1], true, nil
	}
}

// foldStreamed is the streamed half of rederive: plan.json is read into
// c.planSpool and hashed, its head (everything but the trials) decoded,
// and its trials tallied in lockstep with the observations. It returns
// nil after adding a problem; OpenStreamed then lets Open decide, so a
// problem here need only be true, not worded as Verify words it.
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
	keys := newKeyWalk(c.planSpool.section(c.trialsAt[0], c.trialsAt[1]-c.trialsAt[0]), true)
	var pending *trialKey
	var k trialKey
	// planned hands the tally every planned trial up to (task, repeat);
	// with last, every one left.
	planned := func(task string, repeat int, last bool) error {
		for {
			if pending == nil {
				var ok bool
				var err error
				if k, ok, err = keys.next(); err != nil || !ok {
					return err
				}
				pending = &k
			}
			cmp := CompareTrials(pending.Task, pending.Repeat, task, repeat)
			if cmp > 0 && !last {
				return nil
			}
			if err := t.planKey(pending.Task, pending.Repeat); err != nil {
				return err
			}
			pending = nil
			if cmp == 0 && !last {
				return nil
			}
		}
	}
	var planErr error
	if err := obs.each(func(o Observation) error {
		if planErr = planned(o.Task, o.Repeat, false); planErr != nil {
			return planErr
		}
		return check(t, &o)
	}); err != nil {
		if planErr != nil {
			return fail(ProblemPlanInvalid, PlanFile, planErr)
		}
		return fail(ProblemObservation, ObservationsFile, err)
	}
	if err := planned("", 0, true); err != nil {
		return fail(ProblemPlanInvalid, PlanFile, err)
	}
	return t
}

// readPlan copies plan.json into c.planSpool, hashing it as it passes,
// finds the span of its trials array (c.trialsAt) and keeps the rest of
// the plan as c.headJSON with the array left empty. The plan must be
// canonical JSON and a newline; its canonical digest is returned.
func (c *capture) readPlan(dir string) (string, error) {
	f, err := safefs.OpenRegular(filepath.Join(dir, PlanFile))
	if err != nil {
		return "", fmt.Errorf("cannot be read: %w", err)
	}
	defer f.Close()
	canon := &holdBack{h: sha256.New()}
	d := jsonscan.NewDecoder(io.TeeReader(io.LimitReader(f, MaxPlanSize+1), io.MultiWriter(canon, c.planSpool)), jsonscan.Options{MaxDepth: jcs.MaxDepth})
	notStreamable := errors.New("not in the canonical form a streamed read takes")
	if k, err := d.Next(); err != nil || k != jsonscan.BeginObject {
		return "", notStreamable
	}
	found := false
	for {
		k, err := d.Next()
		if err != nil {
			return "", err
		}
		if k == jsonscan.EndObject {
			break
		}
		isTrials := string(d.Text()) == "trials"
		if k, err = d.Next(); err != nil {
			return "", err
		}
		if isTrials {
			if found {
				return "", notStreamable
			}
			found, c.trialsAt[0] = true, d.Start()
		}
		if err := d.Skip(k); err != nil {
			return "", err
		}
		if isTrials {
			c.trialsAt[1] = d.InputOffset()
		}
	}
	if _, err := d.Next(); err != io.EOF {
		return "", notStreamable
	}
	size := c.planSpool.size()
	if !found || size > MaxPlanSize || !canon.has || canon.last != '\n' {
		return "", notStreamable
	}
	head, err := c.planSpool.bytes(0, c.trialsAt[0])
	if err != nil {
		return "", err
	}
	tail, err := c.planSpool.bytes(c.trialsAt[1], size-1-c.trialsAt[1])
	if err != nil {
		return "", err
	}
	head = append(append(head, "[]"...), tail...)
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

// keyWalk reads the planned trials, one at a time, from the bytes of a
// plan's trials array. With canonical, the trials must be in RFC 8785
// form and the array hold nothing between them but commas: together with
// a canonical head, the plan is then canonical as a whole. The check runs
// over many trials at once; a trial handed out may be found not canonical
// later, which is then the error that ends the walk.
type keyWalk struct {
	d         *jsonscan.Decoder
	canonical bool
	seen      *window
	prev      int64 // offset just past the '[' or the last trial
	lastTask  string
	n         int   // trials read
	from, to  int64 // span of the trials not yet checked; from -1 when none
	started   bool
	done      bool
}

func newKeyWalk(r io.Reader, canonical bool) *keyWalk {
	w := &keyWalk{canonical: canonical, from: -1}
	if canonical {
		w.seen = &window{}
		r = io.TeeReader(r, w.seen)
	}
	w.d = jsonscan.NewDecoder(r, jsonscan.Options{MaxDepth: jcs.MaxDepth})
	return w
}

var errNotCanonical = errors.New("the trials array is not in the canonical form a streamed read takes")

// next returns the next trial; ok is false after the last one.
func (w *keyWalk) next() (t trialKey, ok bool, err error) {
	if w.done {
		return t, false, nil
	}
	if !w.started {
		w.started = true
		if k, err := w.d.Next(); err != nil || k != jsonscan.BeginArray {
			return t, false, errNotCanonical
		}
		w.prev = w.d.InputOffset()
	}
	k, err := w.d.Next()
	if err != nil {
		return t, false, err
	}
	start := w.d.Start()
	if k == jsonscan.EndArray {
		w.done = true
		if w.canonical && (start != w.prev || !w.checkHeld()) {
			return t, false, errNotCanonical
		}
		if _, err := w.d.Next(); err != io.EOF {
			return t, false, errNotCanonical
		}
		return t, false, nil
	}
	if t, ok = walkTrial(w.d, k); !ok {
		return t, false, errNotCanonical
	}
	end := w.d.InputOffset()
	if w.canonical {
		// One byte between trials is the comma itself; the first starts
		// right after the bracket.
		gap := int64(1)
		if w.n == 0 {
			gap = 0
		}
		if start != w.prev+gap {
			return t, false, errNotCanonical
		}
		if w.from < 0 {
			w.from = start
		}
		w.to = end
		if w.to-w.from >= 256<<10 && !w.checkHeld() {
			return t, false, errNotCanonical
		}
	}
	w.prev = end
	w.n++
	if t.Task == w.lastTask {
		t.Task = w.lastTask
	}
	w.lastTask = t.Task
	return t, true, nil
}

// checkHeld reports whether the trials read since the last check are in
// RFC 8785 form, checked together as one array (one canonicalizer run
// per quarter MiB rather than one per trial): the byte before the first
// and the one after the last are made brackets for the check, then put
// back. Then it drops them from the window.
func (w *keyWalk) checkHeld() bool {
	if w.from < 0 {
		return true
	}
	b := w.seen.b
	lo, hi := int(w.from-w.seen.base)-1, int(w.to-w.seen.base)
	before := b[lo]
	extended := hi == len(b)
	if extended {
		b = append(b, 0)
		w.seen.b = b
	}
	after := b[hi]
	b[lo], b[hi] = '[', ']'
	span := b[lo : hi+1]
	got, err := jcs.Canonical(span)
	ok := err == nil && bytes.Equal(got, span)
	b[lo], b[hi] = before, after
	if extended {
		w.seen.b = b[:hi]
	}
	w.seen.drop(w.to) // the byte before the next trial is kept
	w.from = -1
	return ok
}

// window keeps the bytes read through it from the first not dropped:
// the trial being checked and the decoder's read-ahead.
type window struct {
	b    []byte
	base int64 // offset of b[0]
}

func (w *window) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func (w *window) span(start, end int64) []byte { return w.b[start-w.base : end-w.base] }

// drop forgets the bytes before off; they are moved out only once they
// are most of the buffer, so each byte is moved about once.
func (w *window) drop(off int64) {
	n := int(off - w.base)
	if n < 64<<10 || n < len(w.b)/2 {
		return
	}
	w.b = w.b[:copy(w.b, w.b[n:])]
	w.base = off
}
