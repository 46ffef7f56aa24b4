package snapshot

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/jcs"
)

// strictDecode is the reference: what every line decoded with before the
// walker, and what it falls back to.
func strictDecode(line []byte) (Observation, error) {
	var o Observation
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	err := dec.Decode(&o)
	return o, err
}

// written are observations as the writer encodes them.
func written(t testing.TB) [][]byte {
	obs := []Observation{
		{},
		{TrialID: "task-00001#0", Task: "task-00001", Repeat: 0, TrialAttempt: 1, Attempts: 2, Status: "success",
			Reward: ptr(1.0), Trainable: true,
			Evidence: Evidence{ResultSHA256: ptr(strings.Repeat("ab", 32)), TaskChecksum: ptr("c0ffee"), VerifierEnvironmentMode: ptr("docker")},
			AttemptOutcomes: []AttemptOutcome{
				{Retry: 0, Status: "unscored", Reason: "result_invalid", ExceptionType: ptr("AgentTimeoutError")},
				{Retry: 1, Status: "success", Reward: ptr(1.0), ResultSHA256: ptr(strings.Repeat("ab", 32))},
			}},
		{TrialID: "bench/task-ünï#7", Task: "bench/task-ünï", Repeat: 7, Status: "failure", Reward: ptr(-0.25e-7),
			AttemptOutcomes: []AttemptOutcome{}},
		{TrialID: "x", Reward: ptr(123456789.125), Repeat: 999999, Reason: "reward 1.5 is outside [0, 1]"},
		{TrialID: "t#0", Task: "t", Status: "infra_error", AttemptOutcomes: []AttemptOutcome{
			{Retry: 0, Status: "infra_error", Reason: "environment_start_failed", Detail: "exception RuntimeError: Docker compose command failed for environment hello-world",
				Timing: &Timing{EnvironmentSetup: ptr(2.519)},
				Usage:  &Usage{InputTokens: ptr(int64(3954)), CacheTokens: ptr(int64(0)), CostUSD: ptr(0.00602)},
				Agent:  &Agent{Name: "terminus-2", Model: ptr("gpt-5.4")}},
			{Retry: 1, Status: "success", Detail: "reward \"reward\" is 1.0 <é>", Agent: &Agent{Name: "oracle"},
				Timing: &Timing{EnvironmentSetup: ptr(1.0), AgentSetup: ptr(0.25), AgentExecution: ptr(13.734), Verifier: ptr(2.138)}},
		}},
		{TrialID: "v#0", Task: "v", Status: "failure", AttemptOutcomes: []AttemptOutcome{
			{Retry: 0, Status: "failure", Reason: "reward_failure", Reward: ptr(0.0), Detail: "1 of 2 tests failed: test_answer — AssertionError: 41 != 42",
				Verifier: &VerifierOutput{Source: "verifier/ctrf.json", Text: "1 of 2 tests failed:\ntest_answer — AssertionError: 41 != 42 <é>\t"}},
		}},
	}
	var lines [][]byte
	for _, o := range obs {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, b)
	}
	return lines
}

// TestObservationWalkerTakesWrittenLines pins that lines as tpctl writes
// them take the fast path (else it would silently stop mattering) and
// decode as encoding/json decodes them.
func TestObservationWalkerTakesWrittenLines(t *testing.T) {
	for _, line := range written(t) {
		var got Observation
		if !decodeObservationFast(line, &got) {
			t.Errorf("walker declined a written line: %s", line)
			continue
		}
		want, err := strictDecode(line)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("line %s:\nwalker %+v\nstrict %+v (%v)", line, got, want, err)
		}
	}
}

// TestObservationFallback checks what the walker declines keeps the strict
// decoder's values and messages.
func TestObservationFallback(t *testing.T) {
	tests := []struct {
		line, err string
	}{
		{`{"trial_id":"a","bogus":1}`, `json: unknown field "bogus"`},
		{`{"repeat":1.5}`, `json: cannot unmarshal number 1.5 into Go struct field Observation.repeat of type int`},
		{`{"repeat":"1"}`, `json: cannot unmarshal string into Go struct field Observation.repeat of type int`},
		{``, `EOF`},
		{`{"trial_id":"a"`, `unexpected EOF`},
		{`{"trial_id":"a\u0041","Task":"t","task":"u","repeat":1,"repeat":2} trailing`, ``},
		{`null`, ``},
		{`{"reward":1e400}`, `json: cannot unmarshal number 1e400 into Go struct field Observation.reward of type float64`},
		{`{"trial_id":"` + "\xff" + `"}`, ``},
		{`{"evidence":null,"attempt_outcomes":null,"status":null}`, ``},
	}
	for _, tt := range tests {
		var o Observation
		err := decodeObservation([]byte(tt.line), &o)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tt.err {
			t.Errorf("%q: error %q, want %q", tt.line, gotErr, tt.err)
		}
		want, _ := strictDecode([]byte(tt.line))
		if err == nil && !reflect.DeepEqual(o, want) {
			t.Errorf("%q: %+v, strict decoder gives %+v", tt.line, o, want)
		}
	}
}

// FuzzObservationLine is the differential check: whatever the walker
// accepts, encoding/json accepts with the same value.
func FuzzObservationLine(f *testing.F) {
	for _, line := range written(f) {
		f.Add(line)
	}
	for _, s := range []string{
		`{"repeat":01}`, `{"repeat":-0}`, `{"reward":-}`, `{"reward":1.}`, `{"reward":.5}`, `{"reward":1e+}`,
		`{"trial_id":"a","trial_id":"b"}`, `{"Trial_ID":"a"}`, ` {"task":"t"} `, `{"attempt_outcomes":[{}]}`,
		`{"attempt_outcomes":[{"retry":1},]}`, `{"evidence":{"result_sha256":null}}`, `{"trainable":tru}`,
		`{"reward":123456789012345678901234567890}`, `{"repeat":9223372036854775807}`, "{\"task\":\"\t\"}",
		`{"attempt_outcomes":[{"timing":null}]}`, `{"attempt_outcomes":[{"usage":{"input_tokens":1.5}}]}`,
		`{"attempt_outcomes":[{"usage":{"input_tokens":-0,"cost_usd":null}}]}`, `{"attempt_outcomes":[{"agent":{"model":null}}]}`,
		`{"attempt_outcomes":[{"detail":"","detail":"x"}]}`, `{"attempt_outcomes":[{"verifier":{"text":"a\nb","source":"x"}}]}`,
		`{"attempt_outcomes":[{"verifier":null}]}`, `{"attempt_outcomes":[{"verifier":{"source":"x","text":"y","extra":1}}]}`, `{"attempt_outcomes":[{"usage":{"output_tokens":99999999999999999999}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var got Observation
		if !decodeObservationFast(line, &got) {
			return
		}
		want, err := strictDecode(line)
		if err != nil {
			t.Fatalf("walker accepted %q, encoding/json refuses it: %v", line, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nwalker %+v\nstrict %+v", line, got, want)
		}
	})
}

// TestAppendObservation checks the append encoder writes json.Marshal's
// bytes, for values that need escaping and number formats too.
func TestAppendObservation(t *testing.T) {
	obs := []Observation{
		{},
		{TrialID: `a"b\c<d>&é` + "\u2028\x01\xff", Reason: "tab\there", Reward: ptr(1e-7), Status: "x",
			AttemptOutcomes: []AttemptOutcome{{Reward: ptr(1e21)}, {Reward: ptr(math.Copysign(0, -1)), Reason: "ok"}}},
		{Reward: ptr(123456789.125), AttemptOutcomes: []AttemptOutcome{}},
		{Reward: ptr(5e-324)}, {Reward: ptr(1.7976931348623157e308)}, {Reward: ptr(0.000001)},
		{AttemptOutcomes: []AttemptOutcome{{Detail: "a\"<b>", Timing: &Timing{}, Usage: &Usage{}, Agent: &Agent{}}}},
		{AttemptOutcomes: []AttemptOutcome{{Verifier: &VerifierOutput{Source: "verifier/test-stdout.txt", Text: "line 1\nE   assert 1 == 2 <&>"}}}},
		{AttemptOutcomes: []AttemptOutcome{{Timing: &Timing{Verifier: ptr(1e-7)}, Usage: &Usage{OutputTokens: ptr(int64(-5)), CostUSD: ptr(1e21)}}}},
	}
	for _, o := range obs {
		checkAppendObservation(t, o)
	}
}

func checkAppendObservation(t *testing.T, o Observation) {
	t.Helper()
	want, werr := json.Marshal(o)
	got, gerr := appendObservation(nil, &o)
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%+v: error %v, json.Marshal %v", o, gerr, werr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%+v:\nappend %s\nMarshal %s", o, got, want)
	}
}

// FuzzAppendObservation compares the append encoder with json.Marshal on
// observations decoded from arbitrary lines and arbitrary rewards.
func FuzzAppendObservation(f *testing.F) {
	for _, line := range written(f) {
		f.Add(line, 0.5)
	}
	f.Add([]byte(`{"trial_id":"\u003c\ud800","reason":"\u2029"}`), 1e-9)
	f.Add([]byte(`{"trial_id":"a\"b\\c","task":"\\","reason":"reward \"reward\" is 1.0\""}`), 1.0)
	f.Fuzz(func(t *testing.T, line []byte, reward float64) {
		o, err := strictDecode(line)
		if err != nil {
			return
		}
		checkAppendObservation(t, o)
		o.Reward = &reward
		o.AttemptOutcomes = append(o.AttemptOutcomes, AttemptOutcome{Reward: &reward, Reason: o.TrialID})
		checkAppendObservation(t, o)
	})
}

// FuzzDecodePlanHead is the differential check of the plan's fast path:
// on canonical JSON, decodePlanHead gives json.Unmarshal's value or error.
func FuzzDecodePlanHead(f *testing.F) {
	for _, s := range []string{
		`{"name":"p","settings":{"trials":[1]},"trials":[{"attempts":[{"dir":"a","retry":0}],"repeat":0,"task":"t"},{"repeat":1,"task":"t"}],"version":1}`,
		`{"trials":[]}`, `{"trials":null}`, `{"Trials":[{"task":"x"}],"trials":[{"task":"y"}]}`, `{"trials":[{"Task":"x","task":"y"}]}`,
		`{"trials":[{"repeat":1.5}]}`, `{"trials":[null]}`, `{"trials":[{"task":"a\"b"}]}`, `{"trialſ":[{"task":"k"}]}`,
		`{"trials":[{"task":"a","x":1,"y":[{"z":"]"}]}],"trials":[]}`, `[]`, `{"trials":{}}`, `{"trials":[{"":1}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		canon, err := jcs.Canonical(data)
		if err != nil {
			return
		}
		var want, got planHead
		werr := json.Unmarshal(canon, &want)
		gerr := decodePlanHead(canon, &got)
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("%s: error %v, json.Unmarshal %v", canon, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\nfast %+v\njson %+v", canon, got, want)
		}
	})
}

// TestPlanHeadFastPath pins that a normalized plan's trials take the
// direct walk.
func TestPlanHeadFastPath(t *testing.T) {
	canon, err := jcs.Canonical([]byte(`{"version":1,"name":"p","settings":{"trials":[1]},
		"trials":[{"task":"t","repeat":0,"attempts":[{"retry":0,"dir":"jobs/a"}]},{"task":"ü","repeat":1,"attempts":[]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _, keys, ok := trialKeys(canon)
	if want := []trialKey{{"t", 0}, {"ü", 1}}; !ok || !reflect.DeepEqual(keys, want) {
		t.Fatalf("keys %v (%v), want %v", keys, ok, want)
	}
}

// TestIsTrialID: the check add makes agrees with TrialID.
func TestIsTrialID(t *testing.T) {
	for _, tt := range []struct {
		id, task string
		repeat   int
	}{
		{"t#0", "t", 0}, {"t#1", "t", 0}, {"t#0", "u", 0}, {"t#10", "t", 1}, {"t#-3", "t", -3},
		{"#0", "", 0}, {"a#b#2", "a#b", 2}, {"a#b#2", "a", 2}, {"t0", "t", 0}, {"t#", "t", 0},
		{"bench/task-ünï#7", "bench/task-ünï", 7}, {"x\xff#9223372036854775807", "x\xff", 9223372036854775807},
	} {
		if got, want := isTrialID(tt.id, tt.task, tt.repeat), tt.id == TrialID(tt.task, tt.repeat); got != want {
			t.Errorf("isTrialID(%q, %q, %d) = %v, want %v", tt.id, tt.task, tt.repeat, got, want)
		}
	}
}
