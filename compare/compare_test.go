package compare

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/internal/golden"
	"github.com/tuneplane/tpctl/snapshot"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// build writes a synthetic snapshot under t's temp folder.
func build(t testing.TB, name string, s comparetest.Spec) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if _, err := comparetest.Build(dir, s); err != nil {
		t.Fatal(err)
	}
	return dir
}

func trials(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// Base and candidate of a comparable pair with known transitions:
// a#1 and b#0 go failure → success, b#1 success → failure, a#0 and c#0
// stay successes, c#1 stays a failure.
var (
	knownBase = trials("a#0", "success", "a#1", "failure", "b#0", "failure", "b#1", "success", "c#0", "success", "c#1", "failure")
	knownCand = trials("a#0", "success", "a#1", "success", "b#0", "success", "b#1", "failure", "c#0", "success", "c#1", "failure")
)

func TestRoundsComparable(t *testing.T) {
	base := build(t, "base", comparetest.Spec{Trials: knownBase})
	cand := build(t, "cand", comparetest.Spec{Trials: knownCand, Checkpoint: "hf://acme/coder-7b@89abcdef0123456789abcdef0123456789abcdef"})
	r, err := Rounds(context.Background(), base, cand)
	if err != nil {
		t.Fatal(err)
	}
	want := Transitions{
		FailureToSuccess:    []string{"a#1", "b#0"},
		SuccessToFailure:    []string{"b#1"},
		UnchangedSuccess:    2,
		UnchangedFailure:    1,
		NotComparable:       []string{},
		NotComparableDetail: []NotComparableTrial{},
	}
	if diff := cmp.Diff(want, r.Transitions); diff != "" {
		t.Errorf("transitions mismatch (-want +got):\n%s", diff)
	}
	if !r.Comparable || len(r.Reasons) != 0 {
		t.Fatalf("comparable = %v, reasons %v; want comparable", r.Comparable, r.Reasons)
	}
	// 4/6 − 3/6, rounded to 12 significant digits.
	if r.Delta == nil || *r.Delta != 0.166666666667 {
		t.Errorf("delta = %v; want 0.166666666667", r.Delta)
	}
	// b=1, c=2: 2·P(X ≤ 1 | n=3) = 2·4/8 = 1.
	if r.McNemarP == nil || *r.McNemarP != 1 {
		t.Errorf("mcnemar_p = %v; want 1", r.McNemarP)
	}
	if diff := cmp.Diff(Discordant{FailureToSuccess: 2, SuccessToFailure: 1}, r.Discordant); diff != "" {
		t.Errorf("discordant mismatch (-want +got):\n%s", diff)
	}
	r.Base.Dir, r.Candidate.Dir = "base", "cand"
	var js bytes.Buffer
	if err := writeJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, *update, js.Bytes(), "comparable.json")
}

func TestRoundsReasons(t *testing.T) {
	all := trials("a#0", "success", "a#1", "failure", "b#0", "success")
	with := func(kv ...string) map[string]string {
		m := trials(kv...)
		for k, v := range all {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
		return m
	}
	tests := []struct {
		name      string
		base      comparetest.Spec
		cand      comparetest.Spec
		codes     []string
		fragments []string // the numbers behind each reason
	}{
		{"dataset", comparetest.Spec{Trials: all}, comparetest.Spec{Trials: all, Dataset: "5"},
			[]string{ReasonDatasetDiffers},
			[]string{"base " + strings.Repeat("1", 64) + ", candidate " + strings.Repeat("5", 64)}},
		{"verifier", comparetest.Spec{Trials: all}, comparetest.Spec{Trials: all, Verifier: "6"},
			[]string{ReasonVerifierDiffers},
			[]string{"candidate " + strings.Repeat("6", 64)}},
		{"settings", comparetest.Spec{Trials: all}, comparetest.Spec{Trials: all, Settings: `{"temperature":0.7}`},
			[]string{ReasonSettingsDiffers},
			[]string{"environment digest same, harness digest same, settings differs"}},
		{"environment", comparetest.Spec{Trials: all}, comparetest.Spec{Trials: all, Environment: "7"},
			[]string{ReasonSettingsDiffers},
			[]string{"environment digest differs, harness digest same, settings same"}},
		{"settings key order is not a difference", comparetest.Spec{Trials: all, Settings: `{"a":1,"b":2}`}, comparetest.Spec{Trials: all, Settings: `{"b":2,"a":1}`},
			nil, nil},
		{"outcome rules", comparetest.Spec{Trials: all}, comparetest.Spec{Trials: all, OutcomeRules: "tpctl-outcomes/1"},
			[]string{ReasonOutcomeRulesDiffer},
			[]string{`base "tpctl-outcomes/2", candidate "tpctl-outcomes/1"`}},
		{"cohort", comparetest.Spec{Trials: all}, comparetest.Spec{Trials: with("c#0", "success", "c#1", "failure")},
			[]string{ReasonCohortDiffers},
			[]string{"(3 planned trials)", "(5 planned trials)", "trials planned only in base: 0, only in candidate: 2"}},
		{"base unscored", comparetest.Spec{Trials: with("a#1", "unscored")}, comparetest.Spec{Trials: all},
			[]string{ReasonBaseIncomplete},
			[]string{"base round is degraded: 1 of 3 planned trials are not scored (1 unscored, 0 infra_error, 0 missing)"}},
		{"candidate missing and infra", comparetest.Spec{Trials: all}, comparetest.Spec{Trials: with("a#0", "missing", "b#0", "infra_error")},
			[]string{ReasonCandidateIncomplete},
			[]string{"candidate round is degraded: 2 of 3 planned trials are not scored (0 unscored, 1 infra_error, 1 missing)"}},
		{"task checksum differs on every trial", comparetest.Spec{Trials: all, TaskChecksum: "a"}, comparetest.Spec{Trials: all, TaskChecksum: "b"},
			[]string{ReasonTaskChecksumDiffers},
			[]string{"3 matched trial(s) ran different Harbor task content", "a#0 (base aaaaaaaaaaaa…, candidate bbbbbbbbbbbb…)"}},
		{"task checksum recorded on one side only", comparetest.Spec{Trials: all, TaskChecksum: "a"}, comparetest.Spec{Trials: with("a#1", "failure@-"), TaskChecksum: "a"},
			[]string{ReasonTaskChecksumDiffers},
			[]string{"1 matched trial(s) ran different", "a#1 (base aaaaaaaaaaaa…, candidate none recorded)"}},
		{"same task checksums are comparable", comparetest.Spec{Trials: all, TaskChecksum: "a"}, comparetest.Spec{Trials: all, TaskChecksum: "a"},
			nil, nil},
		{"several at once", comparetest.Spec{Trials: with("a#0", "missing")}, comparetest.Spec{Trials: with("b#0", "unscored"), Dataset: "8", Verifier: "9"},
			[]string{ReasonDatasetDiffers, ReasonVerifierDiffers, ReasonBaseIncomplete, ReasonCandidateIncomplete},
			[]string{"1 missing", "1 unscored"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Rounds(context.Background(), build(t, "base", tt.base), build(t, "cand", tt.cand))
			if err != nil {
				t.Fatal(err)
			}
			var codes, messages []string
			for _, reason := range r.Reasons {
				codes = append(codes, reason.Code)
				messages = append(messages, reason.Message)
			}
			if diff := cmp.Diff(tt.codes, codes); diff != "" {
				t.Errorf("reason codes mismatch (-want +got):\n%s", diff)
			}
			all := strings.Join(messages, "\n")
			for _, f := range tt.fragments {
				if !strings.Contains(all, f) {
					t.Errorf("reasons do not say %q:\n%s", f, all)
				}
			}
			if r.Comparable != (len(tt.codes) == 0) {
				t.Errorf("comparable = %v with reasons %v", r.Comparable, codes)
			}
			if !r.Comparable && (r.Delta != nil || r.McNemarP != nil) {
				t.Errorf("not comparable but delta %v, mcnemar_p %v", r.Delta, r.McNemarP)
			}
			if r.Comparable && (r.Delta == nil || r.McNemarP == nil) {
				t.Error("comparable but no delta or p-value")
			}
		})
	}
}

// TestReasonsRulesDiffer builds the rounds directly: a snapshot written by
// this tpctl always records its own digest rules, so two verifying
// snapshots with different rules cannot be produced here yet.
func TestReasonsRulesDiffer(t *testing.T) {
	mk := func(rules string) *round {
		m := &snapshot.Manifest{
			Protocol:     snapshot.Protocol{DigestRules: rules},
			OutcomeRules: "tpctl-outcomes/1",
			Label:        snapshot.LabelClean,
			Counts:       snapshot.Counts{Expected: 1, Success: 1},
		}
		return &round{manifest: m}
	}
	b, c := mk("tpctl-digest/1"), mk("tpctl-digest/2")
	b.which, c.which = SideBase, SideCandidate
	got := reasons(b, c, 0, 0, nil)
	want := []Reason{{Code: ReasonRulesDiffer, Message: `digest rules differ: base "tpctl-digest/1", candidate "tpctl-digest/2"; both rounds must compute digests with the same rules`}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reasons mismatch (-want +got):\n%s", diff)
	}
	// A round that plans nothing is never clean.
	b.manifest.Counts, c.manifest.Counts = snapshot.Counts{}, snapshot.Counts{}
	c.manifest.Protocol.DigestRules = b.manifest.Protocol.DigestRules
	got = reasons(b, c, 0, 0, nil)
	want = []Reason{{Code: ReasonBaseIncomplete, Message: "base round plans no trials"}, {Code: ReasonCandidateIncomplete, Message: "candidate round plans no trials"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("empty plan: reasons mismatch (-want +got):\n%s", diff)
	}
}

func TestRoundsDifferentTrialSets(t *testing.T) {
	base := build(t, "base", comparetest.Spec{Trials: trials("a#0", "success", "a#1", "failure", "b#0", "unscored", "d#0", "missing")})
	cand := build(t, "cand", comparetest.Spec{Trials: trials("a#1", "success", "b#0", "success", "c#0", "failure", "d#0", "success")})
	r, err := Rounds(context.Background(), base, cand)
	if err != nil {
		t.Fatal(err)
	}
	want := Transitions{
		FailureToSuccess: []string{"a#1"},
		SuccessToFailure: []string{},
		NotComparable:    []string{"a#0", "b#0", "c#0", "d#0"},
		NotComparableDetail: []NotComparableTrial{
			{"a#0", "success", StateNotPlanned},
			{"b#0", "unscored", "success"},
			{"c#0", StateNotPlanned, "failure"},
			{"d#0", StateMissing, "success"},
		},
	}
	if diff := cmp.Diff(want, r.Transitions); diff != "" {
		t.Errorf("transitions mismatch (-want +got):\n%s", diff)
	}
	var codes []string
	for _, reason := range r.Reasons {
		codes = append(codes, reason.Code)
	}
	if diff := cmp.Diff([]string{ReasonCohortDiffers, ReasonBaseIncomplete}, codes); diff != "" {
		t.Errorf("reasons mismatch (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.Reasons[0].Message, "trials planned only in base: 1, only in candidate: 1") {
		t.Errorf("cohort reason lacks the counts: %s", r.Reasons[0].Message)
	}
	if r.Delta != nil || r.McNemarP != nil {
		t.Error("a delta for rounds that are not comparable")
	}
	r.Base.Dir, r.Candidate.Dir = "base", "cand"
	var js bytes.Buffer
	if err := writeJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, *update, js.Bytes(), "not-comparable.json")
}

// TestRoundsAgainstReference compares the merge-join with a plain map
// join on random rounds, including different trial sets and every status.
func TestRoundsAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 10))
	statuses := []string{"success", "failure", "success", "failure", "unscored", "infra_error", "missing"}
	for round := range 5 {
		bt, ct := map[string]string{}, map[string]string{}
		for i := range 60 {
			id := fmt.Sprintf("task-%02d#%d", i/3, i%3)
			if rng.IntN(8) != 0 {
				bt[id] = statuses[rng.IntN(len(statuses))]
			}
			if rng.IntN(8) != 0 {
				ct[id] = statuses[rng.IntN(len(statuses))]
			}
		}
		r, err := Rounds(context.Background(), build(t, "b", comparetest.Spec{Trials: bt}), build(t, "c", comparetest.Spec{Trials: ct}))
		if err != nil {
			t.Fatal(err)
		}
		want := referenceTransitions(bt, ct)
		if diff := cmp.Diff(want, r.Transitions); diff != "" {
			t.Errorf("round %d: transitions mismatch (-want +got):\n%s", round, diff)
		}
	}
}

// TestRoundsDeltaIdentity: when comparable, the delta equals
// (failure→success − success→failure) / planned, and every trial lands in
// exactly one bucket.
func TestRoundsDeltaIdentity(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	bt, ct := map[string]string{}, map[string]string{}
	for i := range 200 {
		id := fmt.Sprintf("t%03d#0", i)
		bt[id] = []string{"success", "failure"}[rng.IntN(2)]
		ct[id] = []string{"success", "failure"}[rng.IntN(2)]
	}
	r, err := Rounds(context.Background(), build(t, "b", comparetest.Spec{Trials: bt}), build(t, "c", comparetest.Spec{Trials: ct}))
	if err != nil {
		t.Fatal(err)
	}
	tr := r.Transitions
	if n := len(tr.FailureToSuccess) + len(tr.SuccessToFailure) + tr.UnchangedSuccess + tr.UnchangedFailure; n != 200 || len(tr.NotComparable) != 0 {
		t.Fatalf("buckets hold %d trials (+%d not comparable); want 200", n, len(tr.NotComparable))
	}
	want := round12(float64(len(tr.FailureToSuccess)-len(tr.SuccessToFailure)) / 200)
	if !r.Comparable || r.Delta == nil || !closeRel(*r.Delta, want, 1e-11) {
		t.Errorf("delta = %v; want %v", r.Delta, want)
	}
	if p := McNemar(len(tr.SuccessToFailure), len(tr.FailureToSuccess)); r.McNemarP == nil || *r.McNemarP != p {
		t.Errorf("mcnemar_p = %v; want %v", r.McNemarP, p)
	}
}

func referenceTransitions(bt, ct map[string]string) Transitions {
	state := func(m map[string]string, id string) string {
		s, ok := m[id]
		if !ok {
			return StateNotPlanned
		}
		return s
	}
	ids := map[string]bool{}
	for id := range bt {
		ids[id] = true
	}
	for id := range ct {
		ids[id] = true
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	// IDs are "task-NN#R" with one-digit repeats, so string order is
	// canonical (task, repeat) order here.
	slices.Sort(sorted)
	t := Transitions{FailureToSuccess: []string{}, SuccessToFailure: []string{}, NotComparable: []string{}, NotComparableDetail: []NotComparableTrial{}}
	for _, id := range sorted {
		b, c := state(bt, id), state(ct, id)
		switch {
		case b == "success" && c == "success":
			t.UnchangedSuccess++
		case b == "failure" && c == "failure":
			t.UnchangedFailure++
		case b == "failure" && c == "success":
			t.FailureToSuccess = append(t.FailureToSuccess, id)
		case b == "success" && c == "failure":
			t.SuccessToFailure = append(t.SuccessToFailure, id)
		default:
			t.NotComparable = append(t.NotComparable, id)
			t.NotComparableDetail = append(t.NotComparableDetail, NotComparableTrial{id, b, c})
		}
	}
	return t
}

func TestRoundsRefusesTampered(t *testing.T) {
	good := build(t, "good", comparetest.Spec{Trials: knownBase})
	bad := build(t, "bad", comparetest.Spec{Trials: knownCand})
	obs := filepath.Join(bad, snapshot.ObservationsFile)
	b, err := os.ReadFile(obs)
	if err != nil {
		t.Fatal(err)
	}
	// Turn b#1's failure into a success without updating the manifest.
	b = bytes.Replace(b, []byte(`"status":"failure","reason":"reward_failure"`), []byte(`"status":"success","reason":"reward_success"`), 1)
	if err := os.WriteFile(obs, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Rounds(context.Background(), good, bad)
	var se *SnapshotError
	var ve *snapshot.VerifyError
	if !errors.As(err, &se) || !errors.As(err, &ve) {
		t.Fatalf("err = %v; want a *SnapshotError wrapping a *snapshot.VerifyError", err)
	}
	if se.Side != SideCandidate || se.Dir != bad || len(ve.Problems) == 0 {
		t.Errorf("error names side %q dir %q with %d problems", se.Side, se.Dir, len(ve.Problems))
	}
	if msg := err.Error(); !strings.Contains(msg, "observations.jsonl: file_modified") || !strings.Contains(msg, "candidate snapshot") {
		t.Errorf("message does not list the problem: %s", msg)
	}

	// Not a snapshot at all.
	_, err = Rounds(context.Background(), t.TempDir(), good)
	if !errors.As(err, &se) || se.Side != SideBase || errors.As(err, &ve) || !snapshot.IsNotSnapshot(err) {
		t.Errorf("empty folder: %v; want a base *SnapshotError that is not a snapshot", err)
	}
	_, err = Rounds(context.Background(), good, filepath.Join(t.TempDir(), "nope"))
	if !errors.As(err, &se) || se.Side != SideCandidate {
		t.Errorf("missing folder: %v; want a candidate *SnapshotError", err)
	}
}

func TestRoundsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := build(t, "s", comparetest.Spec{Trials: knownBase})
	if _, err := Rounds(ctx, dir, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v; want context.Canceled", err)
	}
}

func TestSnapshotErrorTruncates(t *testing.T) {
	ve := &snapshot.VerifyError{Dir: "d"}
	for i := range 15 {
		ve.Problems = append(ve.Problems, snapshot.Problem{Code: "file_missing", File: fmt.Sprintf("f%d", i), Message: "m"})
	}
	msg := (&SnapshotError{Side: SideBase, Dir: "d", Err: ve}).Error()
	if !strings.HasPrefix(msg, `the base snapshot "d" failed verification with 15 problem(s)`) || !strings.Contains(msg, "… and 5 more") || strings.Contains(msg, "f10") {
		t.Errorf("message:\n%s", msg)
	}
}

// writeJSON is the Result as indented JSON, for golden files a person
// reads (the command prints it by ui.JSON's rule).
func writeJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func BenchmarkRounds(b *testing.B) {
	const n = 10000
	bt, ct := make(map[string]string, n), make(map[string]string, n)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range n {
		id := fmt.Sprintf("task-%05d#%d", i/4, i%4)
		bt[id] = []string{"success", "failure"}[rng.IntN(2)]
		ct[id] = []string{"success", "failure"}[rng.IntN(2)]
	}
	base := build(b, "b", comparetest.Spec{Trials: bt})
	cand := build(b, "c", comparetest.Spec{Trials: ct})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Rounds(context.Background(), base, cand); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTaskChecksumReasonLists names at most ten trials in the message and
// every one in the reason's trials list.
func TestTaskChecksumReasonLists(t *testing.T) {
	tr := map[string]string{}
	for i := range 12 {
		tr[fmt.Sprintf("t%02d#0", i)] = "success"
	}
	r, err := Rounds(context.Background(),
		build(t, "base", comparetest.Spec{Trials: tr, TaskChecksum: "a"}),
		build(t, "cand", comparetest.Spec{Trials: tr, TaskChecksum: "b"}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Comparable || len(r.Reasons) != 1 || r.Reasons[0].Code != ReasonTaskChecksumDiffers {
		t.Fatalf("reasons = %+v", r.Reasons)
	}
	got := r.Reasons[0]
	if len(got.Trials) != 12 || got.Trials[0] != "t00#0" || got.Trials[11] != "t11#0" {
		t.Errorf("trials = %v", got.Trials)
	}
	if !strings.Contains(got.Message, "t09#0 (base") || strings.Contains(got.Message, "t10#0") || !strings.Contains(got.Message, "… and 2 more") {
		t.Errorf("message = %s", got.Message)
	}
	if r.Delta != nil {
		t.Error("delta shown")
	}
}

// TestTaskChecksumReasonShowsNoPartOfALongValue: a task_checksum too long
// to be a digest comes from an untrusted result file; the message names
// it by its length and fingerprint, never by a cut of it, so a secret in
// it straddling any cut point shows no part of itself (issue 35: cut
// before masked, a partial secret passes every gate).
func TestTaskChecksumReasonShowsNoPartOfALongValue(t *testing.T) {
	tr := map[string]string{}
	for i := range 6 {
		tr[fmt.Sprintf("t%02d#0", i)] = "success"
	}
	cand := map[string]string{}
	for k, v := range tr {
		// "xxxxxxxxxxxxtok-9f8e7d6c5b4a" repeated: a token across rune 16.
		cand[k] = v + "@=" + strings.Repeat("xxxxxxxxxxxxtok-9f8e7d6c5b4a", 64)
	}
	r, err := Rounds(context.Background(),
		build(t, "base", comparetest.Spec{Trials: tr, TaskChecksum: "a"}),
		build(t, "cand", comparetest.Spec{Trials: cand}))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Reasons) != 1 || r.Reasons[0].Code != ReasonTaskChecksumDiffers {
		t.Fatalf("reasons = %+v", r.Reasons)
	}
	msg := r.Reasons[0].Message
	for _, part := range []string{"tok-", "xxxx", "9f8e"} {
		if strings.Contains(msg, part) {
			t.Errorf("message shows part of the value (%q): %s", part, msg)
		}
	}
	sum := sha256.Sum256([]byte(strings.Repeat("xxxxxxxxxxxxtok-9f8e7d6c5b4a", 64)))
	if want := fmt.Sprintf("candidate a 1792-character value, sha256 %x…", sum[:6]); !strings.Contains(msg, want) {
		t.Errorf("message = %s, want it to name the value by %q", msg, want)
	}
}
