package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/internal/jcs"
)

// tally folds observations, in canonical order, into everything the
// manifest derives from them: counts, exception types, the round ID. The
// writer and Verify share it so a saved snapshot is checked by the very
// code that produced it. It keeps only what it needs from the plan (the
// sorted trial keys and the digests), so memory does not hold the plan
// text twice.
type tally struct {
	plan         PlanSummary // Trials is dropped after newTally
	keys         []trialKey  // the plan's trials, canonical order
	planDigest   string
	cohort       string
	settings     string
	outcomeRules string

	attempts hash.Hash // over the attempts stream
	buf      []byte
	// prehashed: the caller writes each observation's
	// appendRoundAttempts to attempts itself, ahead of add.
	prehashed bool
	seen      int
	next      int // index into keys of the next candidate trial
	lastTask  string
	lastRep   int

	counts     Counts
	exceptions map[string]int
	shared     int

	tasks    []taskTally // one per planned task, canonical order
	nextTask int         // index into tasks of the current observation's task

	// stream is set when the plan's trials are fed one at a time
	// (planKey) instead of being read from the plan up front.
	stream *keyStream
}

// keyStream is the tally's state when keys arrive in canonical order in
// lockstep with the observations: only the current task is held, and the
// cohort digest and statistics are folded in as each task ends.
type keyStream struct {
	n      int
	last   trialKey
	cur    taskTally
	reps   []int // the current task's repeats
	acc    statsAcc
	cohort hash.Hash
	buf    []byte // canonical cohort array not yet hashed
	ids    int    // trial IDs written to it so far
	id     []byte
}

// finish ends the last task and returns the cohort digest.
func (t *tally) finishStream() string {
	ks := t.stream
	if ks.n > 0 && ks.reps != nil {
		t.endTask()
		ks.reps = nil
	}
	ks.cohort.Write(append(ks.buf, ']'))
	ks.buf = ks.buf[:0]
	return hex.EncodeToString(ks.cohort.Sum(nil))
}

// newStreamTally is newTally for a plan whose summary, canonical digest
// and settings digest the caller computed while writing plan.json; the
// trials follow through planKey.
func newStreamTally(p PlanSummary, planDigest, settingsDigest, outcomeRules string) *tally {
	p.Trials, p.Settings = nil, nil
	return &tally{
		plan:         p,
		planDigest:   planDigest,
		settings:     settingsDigest,
		outcomeRules: outcomeRules,
		attempts:     sha256.New(),
		exceptions:   map[string]int{},
		stream:       &keyStream{cohort: sha256.New(), buf: []byte{'['}},
	}
}

// planKey adds the next planned trial of a streamed tally. Keys must come
// in strictly increasing canonical order, each before its observation.
// The cohort digest sorts trial IDs by their bytes; it is folded per task,
// which is that order only when no task holds a byte at or below '#'
// (then "a#…" and "a#b#…" cannot interleave): such a task is refused, and
// the caller imports the plan the held way.
func (t *tally) planKey(task string, repeat int) error {
	ks := t.stream
	if ks.n > 0 && CompareTrials(ks.last.Task, ks.last.Repeat, task, repeat) >= 0 {
		return fmt.Errorf("plan trial %q is out of canonical (task, repeat) order or repeated", TrialID(task, repeat))
	}
	if ks.n == 0 || ks.cur.task != task {
		if strings.IndexFunc(task, func(r rune) bool { return r <= '#' }) >= 0 || !utf8.ValidString(task) {
			return fmt.Errorf("plan trial %q: a task name holding a byte up to '#' or bytes that are not UTF-8 cannot be tallied as a stream", TrialID(task, repeat))
		}
		if ks.n > 0 {
			t.endTask()
		}
		ks.cur = taskTally{task: task}
	}
	ks.n++
	ks.last = trialKey{task, repeat}
	ks.cur.planned++
	ks.reps = append(ks.reps, repeat)
	t.counts.Expected++
	return nil
}

// endTask folds the current task into the statistics and its trial IDs,
// sorted by their bytes, into the cohort digest.
func (t *tally) endTask() {
	ks := t.stream
	ks.acc.task(ks.cur)
	slices.SortFunc(ks.reps, func(a, b int) int {
		// Decimal strings of non-negative numbers: shorter is not always
		// smaller ("10" < "2"), so compare the text.
		var x, y [20]byte
		return bytes.Compare(strconv.AppendInt(x[:0], int64(a), 10), strconv.AppendInt(y[:0], int64(b), 10))
	})
	for _, r := range ks.reps {
		if ks.ids > 0 {
			ks.buf = append(ks.buf, ',')
		}
		ks.ids++
		ks.id = strconv.AppendInt(append(append(ks.id[:0], ks.cur.task...), '#'), int64(r), 10)
		ks.buf = jcs.AppendStringBytes(ks.buf, ks.id)
		if len(ks.buf) > 32<<10 {
			ks.cohort.Write(ks.buf)
			ks.buf = ks.buf[:0]
		}
	}
	ks.reps = ks.reps[:0]
}

// trialKey is one planned trial; the JSON tags let the plan's trials be
// decoded straight into the keys.
type trialKey struct {
	Task   string `json:"task"`
	Repeat int    `json:"repeat"`
}

// planHead is PlanSummary with the trials decoded as keys (the shallower
// Trials field wins in encoding/json), so the plan's trials are held once.
type planHead struct {
	PlanSummary
	Trials []trialKey `json:"trials"`
}

// newTally reads the normalized plan and returns it canonicalized (the
// bytes plan.json holds, without its trailing newline).
func newTally(planJSON []byte, outcomeRules string) (*tally, []byte, error) {
	// A plan from planfile.NormalizedJSON is already canonical: use its
	// bytes rather than a second copy of them.
	canon, err := jcs.Canonical(planJSON)
	if err != nil {
		return nil, nil, fmt.Errorf("plan is not canonicalizable JSON: %w", err)
	}
	var p planHead
	if err := decodePlanHead(canon, &p); err != nil {
		return nil, nil, fmt.Errorf("plan does not have the import-plan shape: %w", err)
	}
	t := &tally{
		planDigest:   digest.Bytes(canon).String(),
		outcomeRules: outcomeRules,
		attempts:     sha256.New(),
		exceptions:   map[string]int{},
	}
	t.keys = p.Trials
	slices.SortFunc(t.keys, func(a, b trialKey) int { return CompareTrials(a.Task, a.Repeat, b.Task, b.Repeat) })
	for i, k := range t.keys {
		if i > 0 && k == t.keys[i-1] {
			return nil, nil, fmt.Errorf("plan lists trial %q twice", TrialID(k.Task, k.Repeat))
		}
	}
	for _, k := range t.keys {
		if n := len(t.tasks); n == 0 || t.tasks[n-1].task != k.Task {
			t.tasks = append(t.tasks, taskTally{task: k.Task})
		}
		t.tasks[len(t.tasks)-1].planned++
	}
	if t.cohort, err = cohortDigestOf(t.keys); err != nil {
		return nil, nil, err
	}
	if t.settings, err = SettingsDigest(p.Protocol.EnvironmentDigest, p.Protocol.HarnessDigest, p.Settings); err != nil {
		return nil, nil, err
	}
	t.counts.Expected = len(t.keys)
	t.plan = p.PlanSummary
	t.plan.Trials, t.plan.Settings = nil, nil
	return t, canon, nil
}

// cohortDigestOf is CohortDigest of the keys' trial IDs, computed without
// a string per ID or an encoded copy of the list: the IDs are written into
// one buffer, sorted by their bytes and hashed as the canonical array is
// written. IDs that are not valid UTF-8 (which a decoded plan cannot
// hold) take CohortDigest itself; TestCohortDigestOf checks both agree.
func cohortDigestOf(keys []trialKey) (string, error) {
	size := 0
	for _, k := range keys {
		if !utf8.ValidString(k.Task) {
			ids := make([]string, len(keys))
			for i, k := range keys {
				ids[i] = TrialID(k.Task, k.Repeat)
			}
			return CohortDigest(ids)
		}
		size += len(k.Task) + 12
	}
	arena := make([]byte, 0, size)
	ends := make([]int, len(keys))
	for i, k := range keys {
		arena = append(arena, k.Task...)
		arena = append(arena, '#')
		arena = strconv.AppendInt(arena, int64(k.Repeat), 10)
		ends[i] = len(arena)
	}
	id := func(i int) []byte {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		return arena[start:ends[i]]
	}
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return bytes.Compare(id(int(a)), id(int(b))) })
	h := sha256.New()
	buf := []byte{'['}
	for n, i := range order {
		if n > 0 {
			buf = append(buf, ',')
		}
		buf = jcs.AppendStringBytes(buf, id(int(i)))
		if len(buf) > 32<<10 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(append(buf, ']'))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// inPlan reports whether (task, repeat) is a planned trial. Observations
// arrive in canonical order, so this is a merge against the sorted keys.
func (t *tally) inPlan(task string, repeat int) bool {
	if ks := t.stream; ks != nil {
		return ks.n > 0 && ks.last == trialKey{task, repeat}
	}
	for t.next < len(t.keys) && CompareTrials(t.keys[t.next].Task, t.keys[t.next].Repeat, task, repeat) < 0 {
		t.next++
	}
	return t.next < len(t.keys) && t.keys[t.next] == trialKey{task, repeat}
}

// appendRoundAttempt appends one element of the round preimage's
// "attempts" list in RFC 8785 form, members in sorted order:
// exception_type, reason, result_sha256, retry, reward, status, trial_id.
// Built by hand because it runs once per attempt of every import.
func appendRoundAttempt(b []byte, trialID string, a AttemptOutcome) []byte {
	optString := func(b []byte, s *string) []byte {
		if s == nil {
			return append(b, "null"...)
		}
		return jcs.AppendString(b, *s)
	}
	b = append(b, `{"exception_type":`...)
	b = optString(b, a.ExceptionType)
	b = append(b, `,"reason":`...)
	b = jcs.AppendString(b, a.Reason)
	b = append(b, `,"result_sha256":`...)
	b = optString(b, a.ResultSHA256)
	b = append(b, `,"retry":`...)
	b = strconv.AppendInt(b, int64(a.Retry), 10)
	b = append(b, `,"reward":`...)
	if a.Reward == nil {
		b = append(b, "null"...)
	} else {
		s, _ := jcs.FormatNumber(*a.Reward) // finite: checked in add
		b = append(b, s...)
	}
	b = append(b, `,"status":`...)
	b = jcs.AppendString(b, a.Status)
	b = append(b, `,"trial_id":`...)
	b = jcs.AppendString(b, trialID)
	return append(b, '}')
}

// appendRoundAttempts appends the lines of the round preimage's attempts
// stream for one observation: each attempt by appendRoundAttempt and a
// newline. (A reward that is not finite, which add refuses, has no
// form; its line is left without one.)
func appendRoundAttempts(b []byte, o *Observation) []byte {
	for _, a := range o.AttemptOutcomes {
		b = appendRoundAttempt(b, o.TrialID, a)
		b = append(b, '\n')
	}
	return b
}

// isTrialID reports whether id is TrialID(task, repeat), without building
// it: add runs once per observation.
func isTrialID(id, task string, repeat int) bool {
	var num [20]byte
	n := strconv.AppendInt(num[:0], int64(repeat), 10)
	return len(id) == len(task)+1+len(n) && id[:len(task)] == task && id[len(task)] == '#' && id[len(task)+1:] == string(n)
}

// add checks one observation against the plan and the rules of the format,
// fills in Trainable, and folds it in. Observations must come in canonical
// order, each trial at most once.
func (t *tally) add(o *Observation) error {
	if !isTrialID(o.TrialID, o.Task, o.Repeat) {
		return fmt.Errorf("trial_id %q does not match task %q and repeat %d", o.TrialID, o.Task, o.Repeat)
	}
	if t.seen > 0 && CompareTrials(t.lastTask, t.lastRep, o.Task, o.Repeat) >= 0 {
		return fmt.Errorf("trial %q is out of canonical (task, repeat) order or repeated", o.TrialID)
	}
	if !t.inPlan(o.Task, o.Repeat) {
		return fmt.Errorf("trial %q is not in the plan", o.TrialID)
	}
	if len(o.AttemptOutcomes) == 0 {
		return fmt.Errorf("trial %q: an observation needs at least one attempt", o.TrialID)
	}
	if !slices.IsSortedFunc(o.AttemptOutcomes, func(a, b AttemptOutcome) int { return a.Retry - b.Retry }) {
		return fmt.Errorf("trial %q: attempts are not in ascending retry order", o.TrialID)
	}
	for i, a := range o.AttemptOutcomes {
		if a.Retry < 0 || (i > 0 && a.Retry == o.AttemptOutcomes[i-1].Retry) {
			return fmt.Errorf("trial %q: retry %d is negative or repeated", o.TrialID, a.Retry)
		}
		if !ValidStatus(a.Status) || a.Reason == "" {
			return fmt.Errorf("trial %q retry %d: status %q or reason %q is not valid", o.TrialID, a.Retry, a.Status, a.Reason)
		}
		if a.Reward != nil && (math.IsNaN(*a.Reward) || math.IsInf(*a.Reward, 0)) {
			return fmt.Errorf("trial %q retry %d: reward must be finite or null", o.TrialID, a.Retry)
		}
	}
	cur := o.AttemptOutcomes[len(o.AttemptOutcomes)-1]
	if o.TrialAttempt != cur.Retry || o.Attempts != len(o.AttemptOutcomes) ||
		o.Status != cur.Status || o.Reason != cur.Reason ||
		!eqPtr(o.Reward, cur.Reward) || !eqPtr(o.ExceptionType, cur.ExceptionType) ||
		!eqPtr(o.Evidence.ResultSHA256, cur.ResultSHA256) {
		return fmt.Errorf("trial %q: observation does not match its highest-retry attempt", o.TrialID)
	}
	o.Trainable = IsTrainable(t.plan.Trainable, t.plan.Split, o.Status)

	if !t.prehashed {
		t.buf = appendRoundAttempts(t.buf[:0], o)
		t.attempts.Write(t.buf)
	}
	var task *taskTally
	if t.stream != nil {
		task = &t.stream.cur
	} else {
		// The observation is planned, so its task is at or after nextTask.
		for t.tasks[t.nextTask].task != o.Task {
			t.nextTask++
		}
		task = &t.tasks[t.nextTask]
	}
	task.seen++
	switch o.Status {
	case StatusSuccess:
		t.counts.Success++
		task.success++
	case StatusFailure:
		t.counts.Failure++
		task.failure++
	case StatusInfraError:
		t.counts.InfraError++
		task.infraErr++
	case StatusUnscored:
		t.counts.Unscored++
	}
	if o.ExceptionType != nil {
		t.exceptions[*o.ExceptionType]++
	}
	if m := o.Evidence.VerifierEnvironmentMode; m != nil && *m == "shared" {
		t.shared++
	}
	t.seen++
	t.lastTask, t.lastRep = o.Task, o.Repeat
	return nil
}

// manifest completes the round ID and builds the manifest; files and
// trajectories are filled by the caller.
//
// The round ID is SHA-256 over the RFC 8785 form of
// {"attempts_sha256", "outcome_rules", "plan_sha256", "round_format"}:
// a two-level hash, so the plan and the attempts can be hashed as they
// stream by (docs/snapshot-format.md).
func (t *tally) manifest(formatVerified bool) (*Manifest, error) {
	pre, err := jcs.Marshal(map[string]string{
		"attempts_sha256": hex.EncodeToString(t.attempts.Sum(nil)),
		"outcome_rules":   t.outcomeRules,
		"plan_sha256":     t.planDigest,
		"round_format":    RoundFormat,
	})
	if err != nil {
		return nil, err
	}
	round := digest.Bytes(pre)
	if t.stream != nil && t.cohort == "" {
		t.cohort = t.finishStream()
	}
	c := t.counts
	c.Missing = c.Expected - t.seen
	m := &Manifest{
		Format:  Format,
		RoundID: "native:" + round.String(),
		Name:    t.plan.Name,
		Source:  Source{Format: t.plan.Source.Format, Revision: t.plan.Source.Revision, FormatVerified: formatVerified},
		Protocol: Protocol{
			DigestRules:    DigestRules,
			DatasetDigest:  t.plan.Protocol.DatasetDigest,
			CohortDigest:   t.cohort,
			VerifierDigest: t.plan.Protocol.VerifierDigest,
			SettingsDigest: t.settings,
			Split:          t.plan.Split,
		},
		Checkpoint:     t.plan.Checkpoint,
		OutcomeRules:   t.outcomeRules,
		Counts:         c,
		ExceptionTypes: t.exceptions,
		SharedVerifier: t.shared,
		Label:          LabelDegraded,
		Trajectories:   TrajectoryInfo{Redactors: []string{}},
		Files:          map[string]string{},
	}
	m.SuccessRate, m.SuccessRateCI95 = Rate(c.Success, c.Scored())
	m.Coverage, m.CoverageCI95 = Rate(c.Scored(), c.Expected)
	m.Statistics = t.statistics(Format)
	if c.Expected > 0 && c.Scored() == c.Expected {
		m.Label = LabelClean
	}
	return m, nil
}

// statistics computes the statistics as format defines them.
func (t *tally) statistics(format string) *Statistics {
	if t.stream != nil {
		return t.stream.acc.result(format)
	}
	return statisticsOf(t.tasks, format)
}

// CohortDigest is the SHA-256 of the RFC 8785 form of the plan's trial IDs
// sorted by their UTF-8 bytes.
func CohortDigest(ids []string) (string, error) {
	s := slices.Clone(ids)
	slices.Sort(s)
	if s == nil {
		s = []string{}
	}
	b, err := jcs.Marshal(s)
	if err != nil {
		return "", err
	}
	return digest.Bytes(b).String(), nil
}

// SettingsDigest is the SHA-256 of the RFC 8785 form of
// {"environment_digest", "harness_digest", "settings"}.
func SettingsDigest(environment, harness string, settings json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(settings)) == 0 {
		settings = json.RawMessage("{}")
	}
	b, err := json.Marshal(struct {
		Environment string          `json:"environment_digest"`
		Harness     string          `json:"harness_digest"`
		Settings    json.RawMessage `json:"settings"`
	}{environment, harness, settings})
	if err != nil {
		return "", err
	}
	canon, err := jcs.Transform(b)
	if err != nil {
		return "", errors.New("settings are not canonicalizable JSON: " + err.Error())
	}
	return digest.Bytes(canon).String(), nil
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
