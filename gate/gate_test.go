package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/compare/comparetest"
	"github.com/tuneplane/tpctl/gate"
	"github.com/tuneplane/tpctl/round"
	"github.com/tuneplane/tpctl/schemas"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestParsePolicy(t *testing.T) {
	full := "require: clean\nmin_success_rate: 0.5\nmax_infra_error_rate: 0.05\nbaseline:\n  non_inferiority_margin: 0.05\nquarantine: [harbor/flaky-task]\n"
	p, err := gate.ParsePolicy("p.yaml", []byte(full))
	if err != nil {
		t.Fatal(err)
	}
	if p.Require != "clean" || *p.MinSuccessRate != 0.5 || *p.MaxInfraErrorRate != 0.05 || *p.NonInferiorityMargin != 0.05 || len(p.Quarantine) != 1 {
		t.Errorf("policy = %+v", p)
	}
	for _, tc := range []struct{ in, want string }{
		{"min_sucess_rate: 0.5\n", `p.yaml:1: unknown key "min_sucess_rate" (did you mean "min_success_rate"?)`},
		{"require: clean\nbaseline:\n  non_inferiority: 0.1\n", `p.yaml:3: unknown key "baseline.non_inferiority" (did you mean "baseline.non_inferiority_margin"?)`},
		{"colour: red\n", `unknown key "colour" (known keys: require, min_success_rate, unscored_trials, max_infra_error_rate, max_cost_usd, baseline, quarantine)`},
		{"min_success_rate: 50\n", `p.yaml:1: min_success_rate must be a number from 0 to 1, got "50"`},
		{"min_success_rate: '0.5'\n", `min_success_rate must be a number from 0 to 1`},
		{"require: always\n", `require must be "clean" or "any"`},
		{"require: clean\nrequire: any\n", `p.yaml:2: key "require" is given twice`},
		{"quarantine: [a]\n", `sets no rule`},
		{"", `is empty`},
		{"- a\n", `must be a mapping of rules`},
		{"require: clean\nquarantine: [a, a]\n", `task "a" is quarantined twice`},
		{"require: clean\nquarantine: [1]\n", `quarantine entries must be task names`},
		{"baseline: {}\n", `baseline sets no rule`},
		{"baseline: {allow_degraded: true}\n", `baseline sets no rule`},
		{"baseline: {non_inferiority_margin: 0.1, allow_degraded: yes}\n", `baseline.allow_degraded must be true or false, got "yes"`},
		{"min_success_rate: 0.5\nunscored_trials: zero\n", `unscored_trials must be "count_as_failed"`},
		{"require: [\n", `is not valid YAML`},
	} {
		_, err := gate.ParsePolicy("p.yaml", []byte(tc.in))
		var pe *gate.PolicyError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"require: clean\n", "min_success_rate: 0.5\nbaseline: {non_inferiority_margin: 0.1}\n", "quarantine: [a, b]\nrequire: any\n", "{}", "a: [b, {c: d}]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := gate.ParsePolicy("f.yaml", b)
		if err == nil && p.Require == "" && p.MinSuccessRate == nil && p.MaxInfraErrorRate == nil && p.MaxCostUSD == nil && p.NonInferiorityMargin == nil {
			t.Errorf("policy without rules accepted: %q", b)
		}
		var pe *gate.PolicyError
		if err != nil && !errors.As(err, &pe) {
			t.Errorf("error of another type: %v", err)
		}
	})
}

// grid builds a clean round of tasks × repeats; succeed says which trials
// succeed.
func grid(t *testing.T, name string, tasks, repeats int, status func(task, rep int) string, spec comparetest.Spec) *round.Round {
	t.Helper()
	spec.Trials = map[string]string{}
	for i := range tasks {
		for r := range repeats {
			spec.Trials[fmt.Sprintf("task-%02d#%d", i, r)] = status(i, r)
		}
	}
	dir := filepath.Join(t.TempDir(), name)
	if _, err := comparetest.Build(dir, spec); err != nil {
		t.Fatal(err)
	}
	r, err := round.Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func verdict(s bool) string {
	if s {
		return "success"
	}
	return "failure"
}

func policy(t *testing.T, s string) *gate.Policy {
	t.Helper()
	p, err := gate.ParsePolicy("policy.yaml", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ruleOf(v *gate.Verdict, name string) *gate.Rule {
	for i := range v.Rules {
		if v.Rules[i].Rule == name {
			return &v.Rules[i]
		}
	}
	return nil
}

func TestJudge(t *testing.T) {
	// Base: 60% success, spread over 20 tasks × 3 repeats.
	base := grid(t, "base", 20, 3, func(i, r int) string { return verdict((i*3+r)%5 < 3) }, comparetest.Spec{})
	better := grid(t, "better", 20, 3, func(i, r int) string { return verdict((i*3+r)%5 < 4) }, comparetest.Spec{})
	worse := grid(t, "worse", 20, 3, func(i, r int) string { return verdict((i*3+r)%5 < 1) }, comparetest.Spec{})
	degraded := grid(t, "degraded", 20, 3, func(i, r int) string {
		if i < 3 && r == 0 {
			return "infra_error"
		}
		return verdict((i*3+r)%5 < 4)
	}, comparetest.Spec{})
	other := grid(t, "other", 20, 3, func(i, r int) string { return verdict(true) }, comparetest.Spec{Dataset: "9"})
	tiny := grid(t, "tiny", 1, 3, func(i, r int) string { return verdict(true) }, comparetest.Spec{})
	full := policy(t, "require: clean\nmin_success_rate: 0.5\nmax_infra_error_rate: 0.02\nbaseline:\n  non_inferiority_margin: 0.05\n")

	for _, tc := range []struct {
		name       string
		p          *gate.Policy
		cand, base *round.Round
		pass       bool
		failed     map[string]string // rule → outcome and a part of its message
	}{
		{"better passes", full, better, base, true, nil},
		{"worse fails", full, worse, base, false, map[string]string{
			gate.RuleMinSuccess:  "fail|success rate 20% (12/60)",
			gate.RuleNonInferior: "fail|paired delta −40%",
		}},
		{"degraded fails", full, degraded, base, false, map[string]string{
			gate.RuleRequire:     "fail|3 of 60 planned trials are not scored (3 infra_error, 0 unscored, 0 missing)",
			gate.RuleMaxInfra:    "fail|3 of 60 planned trials are infra_error (5% > 2%)",
			gate.RuleNonInferior: "not_comparable|as tpctl compare says: candidate round is degraded: 3 of 60 planned trials are not scored (0 unscored, 3 infra_error, 0 missing)",
		}},
		{"degraded baseline, allowed", policy(t, "baseline: {non_inferiority_margin: 0.05, allow_degraded: true}\n"), better, degraded, true, nil},
		{"degraded baseline", policy(t, "baseline: {non_inferiority_margin: 0.05}\n"), better, degraded, false, map[string]string{
			gate.RuleNonInferior: "not_comparable|base round is degraded: 3 of 60",
		}},
		{"other protocol", full, other, base, false, map[string]string{
			gate.RuleNonInferior: "not_comparable|dataset_digest differs: 1111",
		}},
		{"one task is not enough evidence", policy(t, "min_success_rate: 0.5\n"), tiny, nil, false, map[string]string{
			gate.RuleMinSuccess: "not_enough_evidence|not enough evidence",
		}},
		{"quarantine", policy(t, "require: clean\nmax_infra_error_rate: 0\nquarantine: [task-00, task-01, task-02]\n"), degraded, nil, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := gate.Judge(tc.p, "policy.yaml", tc.cand, tc.base)
			if err != nil {
				t.Fatal(err)
			}
			if v.Pass != tc.pass {
				var msgs []string
				for _, r := range v.Rules {
					msgs = append(msgs, r.Outcome+": "+r.Message)
				}
				t.Errorf("pass = %v, want %v\n%s", v.Pass, tc.pass, strings.Join(msgs, "\n"))
			}
			for name, want := range tc.failed {
				outcome, msg, _ := strings.Cut(want, "|")
				r := ruleOf(v, name)
				if r == nil || r.Outcome != outcome || !strings.Contains(r.Message, msg) {
					t.Errorf("rule %s = %+v, want %s with %q", name, r, outcome, msg)
				}
			}
			for _, r := range v.Rules {
				if _, listed := tc.failed[r.Rule]; !listed && !r.Passed() {
					t.Errorf("rule %s failed unexpectedly: %s", r.Rule, r.Message)
				}
			}
		})
	}
}

// TestGateAgreesWithCompare: on a degraded pair the baseline rule is
// not comparable with the very reason tpctl compare gives, unless the
// policy allows it; then it judges, and says what it judged.
func TestGateAgreesWithCompare(t *testing.T) {
	base := grid(t, "base", 20, 3, func(i, r int) string { return verdict((i*3+r)%5 < 3) }, comparetest.Spec{})
	degraded := grid(t, "degraded", 20, 3, func(i, r int) string {
		if i < 3 && r == 0 {
			return "infra_error"
		}
		return verdict((i*3+r)%5 < 3)
	}, comparetest.Spec{})
	cr, err := compare.Rounds(context.Background(), base.Dir, degraded.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if cr.Comparable || len(cr.Reasons) != 1 {
		t.Fatalf("compare: comparable %v, reasons %+v", cr.Comparable, cr.Reasons)
	}
	v, err := gate.Judge(policy(t, "baseline: {non_inferiority_margin: 0.05}\n"), "p.yaml", degraded, base)
	if err != nil {
		t.Fatal(err)
	}
	r := ruleOf(v, gate.RuleNonInferior)
	if v.Pass || r.Outcome != gate.OutcomeNotComparable || !strings.Contains(r.Message, cr.Reasons[0].Message) || r.Interval != nil {
		t.Errorf("rule = %+v, want not_comparable with compare's reason %q", r, cr.Reasons[0].Message)
	}
	v, err = gate.Judge(policy(t, "baseline: {non_inferiority_margin: 0.05, allow_degraded: true}\n"), "p.yaml", degraded, base)
	if err != nil {
		t.Fatal(err)
	}
	r = ruleOf(v, gate.RuleNonInferior)
	if !v.Pass || r.Interval == nil || !strings.Contains(r.Message, "judged although not comparable") || !strings.Contains(r.Message, cr.Reasons[0].Message) {
		t.Errorf("allowed: pass %v, rule = %+v", v.Pass, r)
	}
}

// TestMinSuccessWorstCase: on a degraded round min_success_rate is judged
// on the worst case (every trial not scored failed) unless the policy
// leaves them out; on a clean round both are the same.
func TestMinSuccessWorstCase(t *testing.T) {
	degraded := grid(t, "degraded", 20, 3, func(i, r int) string {
		if i < 3 && r == 0 {
			return "infra_error"
		}
		if i == 4 && r == 1 {
			return "unscored"
		}
		return verdict((i*3+r)%5 < 4)
	}, comparetest.Spec{})
	clean := grid(t, "clean", 20, 3, func(i, r int) string { return verdict((i*3+r)%5 < 4) }, comparetest.Spec{})
	judge := func(r *round.Round, p string) *gate.Rule {
		v, err := gate.Judge(policy(t, p), "p.yaml", r, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ruleOf(v, gate.RuleMinSuccess)
	}
	worst := judge(degraded, "min_success_rate: 0.5\n")
	same := judge(degraded, "min_success_rate: 0.5\nunscored_trials: count_as_failed\n")
	left := judge(degraded, "min_success_rate: 0.5\nunscored_trials: leave_out\n")
	if !strings.Contains(worst.Message, "worst case 73.3% (44/60, with 4 not scored counted as failed)") || *worst.Value != *same.Value {
		t.Errorf("worst case: %+v", worst)
	}
	if !strings.Contains(left.Message, "success rate 78.6% (44/56)") || !strings.Contains(left.Message, "worst–best case 73.3%–80%") {
		t.Errorf("leave_out: %s", left.Message)
	}
	if !(*worst.Value < *left.Value) {
		t.Errorf("the worst case's lower bound %v is not below the scored one's %v", *worst.Value, *left.Value)
	}
	a, b := judge(clean, "min_success_rate: 0.5\n"), judge(clean, "min_success_rate: 0.5\nunscored_trials: leave_out\n")
	if *a.Value != *b.Value || a.Message != b.Message || strings.Contains(a.Message, "worst") {
		t.Errorf("clean round: %q vs %q", a.Message, b.Message)
	}
}

func TestJudgeQuarantineTypo(t *testing.T) {
	r := grid(t, "r", 3, 1, func(i, r int) string { return verdict(true) }, comparetest.Spec{})
	_, err := gate.Judge(policy(t, "require: clean\nquarantine: [task-0]\n"), "policy.yaml", r, nil)
	var ie *gate.InputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Hint, `did you mean "task-00"?`) {
		t.Errorf("err = %v (%+v)", err, ie)
	}
}

func TestRunArguments(t *testing.T) {
	p := policy(t, "baseline: {non_inferiority_margin: 0.1}\n")
	_, err := gate.Run(context.Background(), p, gate.Options{Candidate: "x", PolicyFile: "p.yaml"})
	var ie *gate.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "no --baseline") {
		t.Errorf("err = %v", err)
	}
	_, err = gate.Run(context.Background(), p, gate.Options{Candidate: t.TempDir(), Baseline: t.TempDir(), PolicyFile: "p.yaml"})
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "candidate cannot be used") {
		t.Errorf("err = %v", err)
	}
}

// TestVerdictSchema: every verdict of TestJudge's shapes validates against
// schemas/gate-verdict.v1.json.
func TestVerdictSchema(t *testing.T) {
	sch, err := schemas.Compile("gate-verdict")
	if err != nil {
		t.Fatal(err)
	}
	base := grid(t, "base", 4, 2, func(i, r int) string { return verdict((i+r)%2 == 0) }, comparetest.Spec{})
	tiny := grid(t, "tiny", 1, 1, func(i, r int) string { return "infra_error" }, comparetest.Spec{})
	for _, tc := range []struct {
		p          string
		cand, base *round.Round
	}{
		{"require: clean\nmin_success_rate: 0.2\nmax_infra_error_rate: 0.1\nbaseline: {non_inferiority_margin: 0.1}\nquarantine: [task-03]\n", base, base},
		{"require: any\nmin_success_rate: 0.2\n", tiny, nil},
	} {
		v, err := gate.Judge(policy(t, tc.p), "p.yaml", tc.cand, tc.base)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(doc); err != nil {
			t.Errorf("verdict does not match its schema: %v\n%s", err, b)
		}
	}
}
