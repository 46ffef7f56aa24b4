// Package compare answers "did the candidate round do better than the
// base round?" only when the answer is sound. Both rounds are saved
// snapshots; each is verified first. They are comparable when the digest
// rules, outcome rules, dataset, cohort, verifier and settings digests are
// equal, every trial observed in both ran the same Harbor task content
// (evidence task_checksum), and both rounds are clean (every planned trial
// scored). Otherwise
// the Result lists every failed condition with a stable reason code and
// the numbers behind it, and carries no delta.
//
// Trials are matched by trial_id by merge-joining the two plans and the
// two observation files in canonical (task, repeat) order, so neither
// observation file is held in memory.
//
// The JSON form of Result is the SPEC §10 contract, documented in
// docs/compare.md.
package compare

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/stats"
)

// Reason codes: stable, part of the JSON contract.
const (
	ReasonRulesDiffer         = "rules_differ"
	ReasonOutcomeRulesDiffer  = "outcome_rules_differ"
	ReasonDatasetDiffers      = "dataset_differs"
	ReasonCohortDiffers       = "cohort_differs"
	ReasonVerifierDiffers     = "verifier_differs"
	ReasonSettingsDiffers     = "settings_differs"
	ReasonTaskChecksumDiffers = "task_checksum_differs"
	ReasonBaseIncomplete      = "base_incomplete"
	ReasonCandidateIncomplete = "candidate_incomplete"
)

// Sides of a comparison, as named in errors and messages.
const (
	SideBase      = "base"
	SideCandidate = "candidate"
)

// Trial states in NotComparableTrial besides the four observation
// statuses.
const (
	// StateMissing is a planned trial with no attempt.
	StateMissing = "missing"
	// StateNotPlanned is a trial that the other round's plan has and this
	// round's plan does not (the cohorts differ).
	StateNotPlanned = "not_planned"
)

// Note is printed beside every delta, in text and JSON.
const Note = "delta is the candidate success rate minus the base success rate; it is not a statistical significance claim. " +
	"mcnemar_p is the exact two-sided McNemar test (binomial, p = 0.5) on the discordant pairs. " +
	"paired (the mean paired difference, its task-clustered standard error, t(G−1) 95% interval and 80%-power minimum detectable effect, null below 5 tasks) " +
	"states the uncertainty of the delta; it is not a significance claim either"

// Result is the comparison of two rounds; its JSON is the SPEC §10
// contract. Lists are never nil so they encode as [].
type Result struct {
	// Comparable is true when Reasons is empty.
	Comparable bool     `json:"comparable"`
	Reasons    []Reason `json:"reasons"`
	Base       Side     `json:"base"`
	Candidate  Side     `json:"candidate"`
	// Delta is the candidate minus the base success rate, only when
	// Comparable; nil (JSON null) otherwise.
	Delta       *float64    `json:"delta"`
	Transitions Transitions `json:"transitions"`
	// Discordant counts the pairs McNemar's test looks at. They are given
	// even when the rounds are not comparable (they are the lengths of the
	// two transition lists), but the p-value is not.
	Discordant Discordant `json:"discordant"`
	// McNemarP is the exact two-sided McNemar p-value, only when
	// Comparable; nil otherwise.
	McNemarP *float64 `json:"mcnemar_p"`
	// Paired is the mean paired difference with its task-clustered
	// uncertainty, only when Comparable; nil otherwise.
	Paired *Paired `json:"paired"`
	Note   string  `json:"note"`
}

// Paired is the paired comparison of trials matched by trial_id and
// scored on both sides (docs/statistics.md). Each trial contributes
// candidate success − base success (−1, 0 or +1).
type Paired struct {
	// Trials and Tasks count the matched scored trials and their tasks.
	Trials int `json:"trials"`
	Tasks  int `json:"tasks"`
	// Delta is the mean paired difference.
	Delta float64 `json:"delta"`
	// SEClustered is the CR1 standard error clustered by task; nil when
	// fewer than two tasks are matched.
	SEClustered *float64 `json:"se_clustered"`
	// CI95 is Delta ± t₀.₉₇₅(G−1)·se clipped to [−1, 1] and MDE80 is
	// (t₀.₉₇₅ + t₀.₈₀)·se, the smallest true difference a two-sided 5% test
	// would detect with 80% power, with se = max(SEClustered, 1/(Trials+2))
	// (stats.PairedSE) and DF = G−1 = Tasks−1. All three are nil, and
	// NullReason says why, when fewer than stats.MinTasks tasks are
	// matched.
	CI95       *[2]float64       `json:"ci95"`
	MDE80      *float64          `json:"mde80"`
	DF         *int              `json:"df"`
	NullReason *stats.NullReason `json:"null_reason"`
}

// Reason is one failed comparability condition.
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Trials names every trial the condition is about, in canonical order,
	// when it is about trials (task_checksum_differs); the message names at
	// most maxTrialsInMessage of them.
	Trials []string `json:"trials,omitempty"`
}

// maxTrialsInMessage keeps a reason message readable; Trials has them all.
const maxTrialsInMessage = 10

// checksumDiff is a matched trial whose Harbor task_checksum differs
// between the rounds or is recorded on one side only.
type checksumDiff struct {
	id         string
	base, cand *string
}

// Side is what the comparison shows of one round: identity, checkpoint,
// protocol, counts and rates (copied from its verified manifest).
type Side struct {
	Dir             string              `json:"dir"`
	RoundID         string              `json:"round_id"`
	Name            string              `json:"name"`
	Label           string              `json:"label"`
	Checkpoint      snapshot.Checkpoint `json:"checkpoint"`
	Protocol        snapshot.Protocol   `json:"protocol"`
	OutcomeRules    string              `json:"outcome_rules"`
	Counts          snapshot.Counts     `json:"counts"`
	SuccessRate     *float64            `json:"success_rate"`
	SuccessRateCI95 *[2]float64         `json:"success_rate_ci95"`
	Coverage        *float64            `json:"coverage"`
	CoverageCI95    *[2]float64         `json:"coverage_ci95"`
	// Dataset is the planned samples beside the dataset's size, when the
	// plan records both (settings.dataset; Inspect and lm-eval rounds): a
	// limited run is never read as the full dataset.
	Dataset *DatasetScope `json:"dataset,omitempty"`
}

// DatasetScope is which part of the dataset a round's rates stand on
// (snapshot.DatasetScope, the one reader and wording of every producer's).
type DatasetScope = snapshot.DatasetScope

// Transitions classify every trial of either plan, matched by trial_id.
// ID lists are in canonical (task, repeat) order.
type Transitions struct {
	FailureToSuccess []string `json:"failure_to_success"`
	SuccessToFailure []string `json:"success_to_failure"`
	UnchangedSuccess int      `json:"unchanged_success"`
	UnchangedFailure int      `json:"unchanged_failure"`
	// NotComparable lists trials that are not success/failure on both
	// sides: missing, unscored, infra_error or not planned on either.
	NotComparable []string `json:"not_comparable"`
	// NotComparableDetail gives both states of each NotComparable trial,
	// in the same order.
	NotComparableDetail []NotComparableTrial `json:"not_comparable_detail"`
}

// NotComparableTrial says why one trial has no transition: its state in
// each round (an observation status, "missing" or "not_planned").
type NotComparableTrial struct {
	TrialID   string `json:"trial_id"`
	Base      string `json:"base"`
	Candidate string `json:"candidate"`
}

// Discordant are the trials whose verdict changed.
type Discordant struct {
	FailureToSuccess int `json:"failure_to_success"`
	SuccessToFailure int `json:"success_to_failure"`
}

// SnapshotError means one of the two folders cannot be used: it is not a
// readable snapshot or it fails verification (Err is then a
// *snapshot.VerifyError). The CLI treats it as unusable input.
type SnapshotError struct {
	Side string // SideBase or SideCandidate
	Dir  string
	Err  error
}

func (e *SnapshotError) Error() string {
	var ve *snapshot.VerifyError
	if errors.As(e.Err, &ve) {
		return "the " + e.Side + " " + ve.Error()
	}
	return fmt.Sprintf("cannot use the %s snapshot %q: %v", e.Side, e.Dir, e.Err)
}

func (e *SnapshotError) Unwrap() error { return e.Err }

// Rounds verifies both snapshots and compares them. Errors are
// *SnapshotError for an unusable folder, or ctx's error.
func Rounds(ctx context.Context, baseDir, candDir string) (*Result, error) {
	base, cand, err := Open(ctx, baseDir, candDir)
	if err != nil {
		return nil, err
	}
	defer base.Close()
	defer cand.Close()
	return Snapshots(ctx, base, cand)
}

// Open verifies and opens both snapshots with snapshot.Open, as Rounds
// does, for a caller that needs them beside the comparison (Snapshots);
// the caller closes them. Errors are as for Rounds.
func Open(ctx context.Context, baseDir, candDir string) (base, cand *snapshot.Snapshot, err error) {
	var snaps [2]*snapshot.Snapshot
	for i, d := range []string{baseDir, candDir} {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		s, err := snapshot.Open(d)
		if err != nil {
			if i == 1 {
				snaps[0].Close()
			}
			return nil, nil, &SnapshotError{Side: []string{SideBase, SideCandidate}[i], Dir: d, Err: err}
		}
		snaps[i] = s
	}
	return snaps[0], snaps[1], nil
}

// Snapshots compares two snapshots already opened (and so verified) with
// snapshot.Open, for a caller that holds them for more than the
// comparison; it does not close them. Errors are as for Rounds.
func Snapshots(ctx context.Context, baseSnap, candSnap *snapshot.Snapshot) (*Result, error) {
	base, err := open(ctx, SideBase, baseSnap)
	if err != nil {
		return nil, err
	}
	cand, err := open(ctx, SideCandidate, candSnap)
	if err != nil {
		return nil, err
	}
	r := &Result{
		Reasons:   []Reason{},
		Base:      base.info,
		Candidate: cand.info,
		Transitions: Transitions{
			FailureToSuccess:    []string{},
			SuccessToFailure:    []string{},
			NotComparable:       []string{},
			NotComparableDetail: []NotComparableTrial{},
		},
		Note: Note,
	}
	onlyBase, onlyCand, pairs, diffs, err := r.match(ctx, base, cand)
	if err != nil {
		return nil, err
	}
	r.Reasons = reasons(base, cand, onlyBase, onlyCand, diffs)
	r.Comparable = len(r.Reasons) == 0
	r.Discordant = Discordant{
		FailureToSuccess: len(r.Transitions.FailureToSuccess),
		SuccessToFailure: len(r.Transitions.SuccessToFailure),
	}
	if r.Comparable && base.info.SuccessRate != nil && cand.info.SuccessRate != nil {
		d := round12(*cand.info.SuccessRate - *base.info.SuccessRate)
		if d == 0 {
			d = 0 // no "-0" in the JSON
		}
		p := McNemar(r.Discordant.SuccessToFailure, r.Discordant.FailureToSuccess)
		r.Delta, r.McNemarP = &d, &p
	}
	if r.Comparable {
		r.Paired = pairedOf(pairs)
	}
	return r, nil
}

// trialKey is a plan trial in canonical order.
type trialKey struct {
	task   string
	repeat int
}

func (k trialKey) compare(o trialKey) int {
	return snapshot.CompareTrials(k.task, k.repeat, o.task, o.repeat)
}

// round is one verified snapshot, ready to be read.
type round struct {
	which    string // SideBase or SideCandidate
	dir      string
	snap     *snapshot.Snapshot
	manifest *snapshot.Manifest
	plan     snapshot.PlanSummary
	keys     []trialKey
	// settings is the canonical form of the plan's settings, to say which
	// part of a settings digest differs.
	settings []byte
	info     Side
}

// open readies a verified snapshot for the comparison.
func open(ctx context.Context, which string, s *snapshot.Snapshot) (*round, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir := s.Dir()
	m := s.Manifest()
	r := &round{which: which, dir: dir, snap: s, manifest: m, plan: *s.Plan()}
	if len(bytes.TrimSpace(r.plan.Settings)) > 0 {
		var err error
		if r.settings, err = jcs.Transform(r.plan.Settings); err != nil {
			return nil, &SnapshotError{Side: which, Dir: dir, Err: fmt.Errorf("%s: settings are not canonicalizable JSON: %w", snapshot.PlanFile, err)}
		}
	}
	r.keys = make([]trialKey, len(r.plan.Trials))
	for i, t := range r.plan.Trials {
		r.keys[i] = trialKey{t.Task, t.Repeat}
	}
	slices.SortFunc(r.keys, trialKey.compare)
	r.info = Side{
		Dir:             dir,
		RoundID:         m.RoundID,
		Name:            m.Name,
		Label:           m.Label,
		Checkpoint:      m.Checkpoint,
		Protocol:        m.Protocol,
		OutcomeRules:    m.OutcomeRules,
		Counts:          m.Counts,
		SuccessRate:     m.SuccessRate,
		SuccessRateCI95: m.SuccessRateCI95,
		Coverage:        m.Coverage,
		CoverageCI95:    m.CoverageCI95,
	}
	r.info.Dataset = r.plan.DatasetScope()
	return r, nil
}

// cursor walks one round's observations alongside its plan.
type cursor struct {
	r    *round
	next func() (snapshot.Observation, error, bool)
	cur  *snapshot.Observation
}

func (c *cursor) advance() error {
	o, err, ok := c.next()
	switch {
	case !ok:
		c.cur = nil
	case err != nil:
		return &SnapshotError{Side: c.r.which, Dir: c.r.dir, Err: err}
	default:
		c.cur = &o
	}
	return nil
}

// stateOf returns the state of planned trial k and its evidence
// task_checksum (nil without an observation or a recorded checksum), and
// consumes its observation if it has one. snapshot.Open hands out only
// verified observations, which are planned, unique and in canonical
// order; the checks here cost nothing and keep a broken guarantee from
// giving a wrong answer.
func (c *cursor) stateOf(k trialKey) (string, *string, error) {
	if c.cur == nil {
		return StateMissing, nil, nil
	}
	switch (trialKey{c.cur.Task, c.cur.Repeat}).compare(k) {
	case 1:
		return StateMissing, nil, nil
	case -1:
		return "", nil, c.changed(fmt.Errorf("trial %q is out of canonical order or not in the plan", c.cur.TrialID))
	}
	st := c.cur.Status
	if !snapshot.ValidStatus(st) {
		return "", nil, c.changed(fmt.Errorf("trial %q has status %q", c.cur.TrialID, st))
	}
	sum := c.cur.Evidence.TaskChecksum
	return st, sum, c.advance()
}

func (c *cursor) changed(err error) error {
	return &SnapshotError{Side: c.r.which, Dir: c.r.dir,
		Err: fmt.Errorf("%s changed after verification: %w; run the comparison again", snapshot.ObservationsFile, err)}
}

// checkEvery is how many trials pass between cancellation checks.
const checkEvery = 1024

// match fills r.Transitions by walking the union of both plans in
// canonical order, and returns how many trials only one plan has and the
// per-task sums of the paired differences of trials scored on both
// sides, in canonical task order, and the trials observed in both whose
// task_checksum is not the same recorded value on both sides.
func (r *Result) match(ctx context.Context, base, cand *round) (onlyBase, onlyCand int, pairs []stats.Cluster, diffs []checksumDiff, err error) {
	nextB, stopB := iter.Pull2(base.snap.Observations())
	defer stopB()
	nextC, stopC := iter.Pull2(cand.snap.Observations())
	defer stopC()
	cb, cc := &cursor{r: base, next: nextB}, &cursor{r: cand, next: nextC}
	if err := cb.advance(); err != nil {
		return 0, 0, nil, nil, err
	}
	if err := cc.advance(); err != nil {
		return 0, 0, nil, nil, err
	}
	t := &r.Transitions
	lastTask := ""
	pair := func(task string, d int) {
		if len(pairs) == 0 || task != lastTask {
			pairs = append(pairs, stats.Cluster{})
			lastTask = task
		}
		pairs[len(pairs)-1].Trials++
		pairs[len(pairs)-1].Sum += d
	}
	for i, j, n := 0, 0, 0; i < len(base.keys) || j < len(cand.keys); n++ {
		if n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, 0, nil, nil, err
			}
		}
		var k trialKey
		inB, inC := false, false
		switch {
		case j >= len(cand.keys):
			k, inB = base.keys[i], true
		case i >= len(base.keys):
			k, inC = cand.keys[j], true
		default:
			c := base.keys[i].compare(cand.keys[j])
			inB, inC = c <= 0, c >= 0
			k = base.keys[i]
			if !inB {
				k = cand.keys[j]
			}
		}
		bs, cs := StateNotPlanned, StateNotPlanned
		var bsum, csum *string
		if inB {
			i++
			if bs, bsum, err = cb.stateOf(k); err != nil {
				return 0, 0, nil, nil, err
			}
		} else {
			onlyCand++
		}
		if inC {
			j++
			if cs, csum, err = cc.stateOf(k); err != nil {
				return 0, 0, nil, nil, err
			}
		} else {
			onlyBase++
		}
		id := snapshot.TrialID(k.task, k.repeat)
		// Both rounds judged this trial from a result.json: the task
		// content Harbor hashed must be the same, or the verdicts are about
		// different tasks. A checksum on one side only is no evidence that
		// they are the same; on neither side (no result.json) the trial is
		// unscored and the incomplete reasons already say so.
		if observed(bs) && observed(cs) && (bsum != nil || csum != nil) && (bsum == nil || csum == nil || *bsum != *csum) {
			diffs = append(diffs, checksumDiff{id, bsum, csum})
		}
		switch {
		case bs == snapshot.StatusSuccess && cs == snapshot.StatusSuccess:
			t.UnchangedSuccess++
			pair(k.task, 0)
		case bs == snapshot.StatusFailure && cs == snapshot.StatusFailure:
			t.UnchangedFailure++
			pair(k.task, 0)
		case bs == snapshot.StatusFailure && cs == snapshot.StatusSuccess:
			t.FailureToSuccess = append(t.FailureToSuccess, id)
			pair(k.task, 1)
		case bs == snapshot.StatusSuccess && cs == snapshot.StatusFailure:
			t.SuccessToFailure = append(t.SuccessToFailure, id)
			pair(k.task, -1)
		default:
			t.NotComparable = append(t.NotComparable, id)
			t.NotComparableDetail = append(t.NotComparableDetail, NotComparableTrial{id, bs, cs})
		}
	}
	for _, c := range []*cursor{cb, cc} {
		if c.cur != nil {
			return 0, 0, nil, nil, c.changed(fmt.Errorf("trial %q is out of canonical order or not in the plan", c.cur.TrialID))
		}
	}
	return onlyBase, onlyCand, pairs, diffs, nil
}

// observed reports whether a trial state comes from an observation.
func observed(state string) bool { return state != StateMissing && state != StateNotPlanned }

// reasons checks every comparability condition, in a fixed order.
func reasons(b, c *round, onlyBase, onlyCand int, diffs []checksumDiff) []Reason {
	out := []Reason{}
	add := func(code, format string, args ...any) {
		out = append(out, Reason{Code: code, Message: fmt.Sprintf(format, args...)})
	}
	bp, cp := b.manifest.Protocol, c.manifest.Protocol
	if bp.DigestRules != cp.DigestRules {
		add(ReasonRulesDiffer, "digest rules differ: base %q, candidate %q; both rounds must compute digests with the same rules", bp.DigestRules, cp.DigestRules)
	}
	if b.manifest.OutcomeRules != c.manifest.OutcomeRules {
		add(ReasonOutcomeRulesDiffer, "outcome rules differ: base %q, candidate %q; trials were judged by different tables", b.manifest.OutcomeRules, c.manifest.OutcomeRules)
	}
	if bp.DatasetDigest != cp.DatasetDigest {
		add(ReasonDatasetDiffers, "dataset digest differs: base %s, candidate %s", bp.DatasetDigest, cp.DatasetDigest)
	}
	if bp.CohortDigest != cp.CohortDigest {
		add(ReasonCohortDiffers, "cohort digest differs: base %s (%d planned trials), candidate %s (%d planned trials); trials planned only in base: %d, only in candidate: %d",
			bp.CohortDigest, b.manifest.Counts.Expected, cp.CohortDigest, c.manifest.Counts.Expected, onlyBase, onlyCand)
	}
	if bp.VerifierDigest != cp.VerifierDigest {
		add(ReasonVerifierDiffers, "verifier digest differs: base %s, candidate %s", bp.VerifierDigest, cp.VerifierDigest)
	}
	if bp.SettingsDigest != cp.SettingsDigest {
		add(ReasonSettingsDiffers, "settings digest differs: base %s, candidate %s (%s)", bp.SettingsDigest, cp.SettingsDigest, settingsDiff(b, c))
	}
	if len(diffs) > 0 {
		out = append(out, checksumReason(diffs))
	}
	for _, side := range []struct{ r *round }{{b}, {c}} {
		if r := Incomplete(side.r.which, side.r.manifest.Label, side.r.manifest.Counts); r != nil {
			out = append(out, *r)
		}
	}
	return out
}

// Incomplete is the comparability reason for one side (SideBase or
// SideCandidate) that plans no trials or is not clean — some planned
// trial is not scored — and nil for a clean side. gate's baseline rule
// uses it too, so both say the same words.
func Incomplete(which, label string, cnt snapshot.Counts) *Reason {
	code := ReasonBaseIncomplete
	if which == SideCandidate {
		code = ReasonCandidateIncomplete
	}
	switch {
	case cnt.Expected == 0:
		return &Reason{Code: code, Message: fmt.Sprintf("%s round plans no trials", which)}
	case cnt.Scored() != cnt.Expected || label != snapshot.LabelClean:
		return &Reason{Code: code, Message: fmt.Sprintf("%s round is %s: %d of %d planned trials are not scored (%d unscored, %d infra_error, %d missing)",
			which, label, cnt.Expected-cnt.Scored(), cnt.Expected, cnt.Unscored, cnt.InfraError, cnt.Missing)}
	}
	return nil
}

// checksumReason says how many and which matched trials ran different
// Harbor task content.
func checksumReason(diffs []checksumDiff) Reason {
	show := func(v *string) string {
		switch {
		case v == nil:
			return "none recorded"
		case len(*v) > 64:
			// Too long to be a digest and from an untrusted result
			// file: named by its length and fingerprint, never by a cut
			// of it — a cut could halve a secret so no mask knows it
			// (issue 35), and the view masks whole values only.
			sum := sha256.Sum256([]byte(*v))
			return fmt.Sprintf("a %d-character value, sha256 %x…", utf8.RuneCountInString(*v), sum[:digestShown/2])
		}
		return ShortDigest(*v)
	}
	ids := make([]string, len(diffs))
	var b strings.Builder
	fmt.Fprintf(&b, "%d matched trial(s) ran different Harbor task content (task_checksum differs or is recorded on one side only): ", len(diffs))
	for i, d := range diffs {
		ids[i] = d.id
		if i == maxTrialsInMessage {
			fmt.Fprintf(&b, ", … and %d more (all in the reason's trials list with --output json)", len(diffs)-i)
			continue
		}
		if i > maxTrialsInMessage {
			continue
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (base %s, candidate %s)", d.id, show(d.base), show(d.cand))
	}
	return Reason{Code: ReasonTaskChecksumDiffers, Message: b.String(), Trials: ids}
}

// settingsDiff names the parts of the settings digest that differ.
func settingsDiff(b, c *round) string {
	same := func(ok bool) string {
		if ok {
			return "same"
		}
		return "differs"
	}
	return fmt.Sprintf("environment digest %s, harness digest %s, settings %s",
		same(b.plan.Protocol.EnvironmentDigest == c.plan.Protocol.EnvironmentDigest),
		same(b.plan.Protocol.HarnessDigest == c.plan.Protocol.HarnessDigest),
		same(bytes.Equal(b.settings, c.settings)))
}

// pairedOf computes the paired comparison from per-task sums of the
// differences; nil when no trial is matched.
func pairedOf(pairs []stats.Cluster) *Paired {
	delta, se, ok, seOK := stats.ClusteredMean(pairs)
	if !ok {
		return nil
	}
	p := &Paired{Tasks: len(pairs), Delta: stats.Round12(delta)}
	for _, c := range pairs {
		p.Trials += c.Trials
	}
	if seOK {
		r := stats.Round12(se)
		p.SEClustered = &r
	}
	p.CI95, p.MDE80, p.NullReason = stats.PairedCI95(delta, stats.PairedSE(se, p.Trials), p.Tasks)
	if p.NullReason == nil {
		df := p.Tasks - 1
		p.DF = &df
	}
	return p
}

// digestShown is how many hex digits of a digest a message shows; the
// JSON carries full values.
const digestShown = 12

// ShortDigest abbreviates a digest, or a prefixed one such as a round ID
// ("native:<64 hex>"), to its first 12 hex digits and "…"; any other
// value is returned escaped for a terminal (it comes from a snapshot).
func ShortDigest(v string) string {
	prefix, hex := "", v
	if i := strings.IndexByte(v, ':'); i >= 0 {
		prefix, hex = v[:i+1], v[i+1:]
	}
	if len(hex) == 64 && isHex(hex) {
		return prefix + hex[:digestShown] + "…"
	}
	return termsafe.Escape(v)
}

func isHex(v string) bool {
	for _, r := range v {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}
