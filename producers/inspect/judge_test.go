package inspect

import (
	"math"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

func parseSample(t *testing.T, doc string) *Sample {
	t.Helper()
	d := jsonscan.NewBytes([]byte(doc), scanOptions)
	k, err := d.Next()
	if err != nil {
		t.Fatal(err)
	}
	s, ptr, err := decodeSample(d, k, SampleOptions{Messages: true}, &budget{left: 1 << 20})
	if err != nil {
		t.Fatalf("%s: %v", ptr, err)
	}
	return s
}

// Tracebacks as Python formats them (traceback.format_exception), the way
// Inspect's eval_error() records them.
const (
	tbRateLimit = "Traceback (most recent call last):\n  File \"/x/openai/_base_client.py\", line 1, in request\n    raise self._make_status_error_from_response(err.response) from None\nopenai.RateLimitError: Error code: 429 - {'error': 'rate limited'}\n"
	tbValue     = "Traceback (most recent call last):\n  File \"/x/task.py\", line 9, in solve\n    raise ValueError(\"bad tool output\")\nValueError: bad tool output\n"
	tbSandbox   = "Traceback (most recent call last):\n  File \"/x/docker.py\", line 3, in exec\ninspect_ai.util._sandbox.environment.SandboxUnavailableError: sandbox is not running\n"
	tbCancelled = "Traceback (most recent call last):\n  File \"/x/run.py\", line 1, in run\nasyncio.exceptions.CancelledError\n"
	tbGroup     = "  + Exception Group Traceback (most recent call last):\n  |   File \"/x/run.py\", line 1\n  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)\n  +-+---------------- 1 ----------------\n    | Traceback (most recent call last):\n    | httpx.ConnectError: All connection attempts failed\n    +------------------------------------\n"
)

func tb(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "\"", `\"`), "\n", `\n`) }

// TestJudge covers every row of inspect-outcomes/1. The shared logs hold
// no error, retry, score_on_error, Score.unscored or operator limit, so
// these samples are written here from Inspect's models (EvalSample,
// EvalRetryError, EvalSampleLimit and Score in src/inspect_ai/log/_log.py
// and scorer/_metric.py at the validated commit).
func TestJudge(t *testing.T) {
	const base = `"id": 1, "epoch": 1`
	cases := []struct {
		name     string
		sample   string
		status   Status
		reason   string
		attempts int
		class    string
		limit    string
		reward   float64 // NaN for none
		detail   string  // substring
	}{
		{"C is success", `{` + base + `, "scores": {"match": {"value": "C"}}}`, Success, ReasonScoreSuccess, 1, "", "", 1, ""},
		{"I is failure", `{` + base + `, "scores": {"match": {"value": "I"}}}`, Failure, ReasonScoreFailure, 1, "", "", 0, ""},
		{"N is failure", `{` + base + `, "scores": {"match": {"value": "N"}}}`, Failure, ReasonScoreFailure, 1, "", "", 0, ""},
		{"P is 0.5, not binary", `{` + base + `, "scores": {"match": {"value": "P"}}}`, Unscored, ReasonScoreNotBinary, 1, "", "", 0.5, "\"P\""},
		{"true is success", `{` + base + `, "scores": {"match": {"value": true}}}`, Success, ReasonScoreSuccess, 1, "", "", 1, ""},
		{"false is failure", `{` + base + `, "scores": {"match": {"value": false}}}`, Failure, ReasonScoreFailure, 1, "", "", 0, ""},
		{"1.0 is success", `{` + base + `, "scores": {"match": {"value": 1.0}}}`, Success, ReasonScoreSuccess, 1, "", "", 1, ""},
		{"0 is failure", `{` + base + `, "scores": {"match": {"value": 0}}}`, Failure, ReasonScoreFailure, 1, "", "", 0, ""},
		{"0.7 not binary", `{` + base + `, "scores": {"match": {"value": 0.7}}}`, Unscored, ReasonScoreNotBinary, 1, "", "", 0.7, "0.7"},
		{"yes is success", `{` + base + `, "scores": {"match": {"value": "Yes"}}}`, Success, ReasonScoreSuccess, 1, "", "", 1, ""},
		{"string 1.0 is success", `{` + base + `, "scores": {"match": {"value": " 1.0 "}}}`, Success, ReasonScoreSuccess, 1, "", "", 1, ""},
		{"lower c is not C", `{` + base + `, "scores": {"match": {"value": "c"}}}`, Unscored, ReasonScoreNotConvertible, 1, "", "", math.NaN(), "\"c\""},
		{"a dict is not convertible", `{` + base + `, "scores": {"match": {"value": {"a": 1}}}}`, Unscored, ReasonScoreNotConvertible, 1, "", "", math.NaN(), ""},
		{"a list is not convertible", `{` + base + `, "scores": {"match": {"value": [1]}}}`, Unscored, ReasonScoreNotConvertible, 1, "", "", math.NaN(), ""},
		{"Score.unscored is NaN", `{` + base + `, "scores": {"match": {"value": NaN, "explanation": "grader refused"}}}`, Unscored, ReasonScoreUnscored, 1, "", "", math.NaN(), ""},
		{"Infinity is not finite", `{` + base + `, "scores": {"match": {"value": Infinity}}}`, Unscored, ReasonScoreNotFinite, 1, "", "", math.NaN(), ""},
		{"string inf is not a finite number", `{` + base + `, "scores": {"match": {"value": "inf"}}}`, Unscored, ReasonScoreNotConvertible, 1, "", "", math.NaN(), ""},
		{"no scores", `{` + base + `}`, Unscored, ReasonScoreMissing, 1, "", "", math.NaN(), ""},
		{"another scorer's score only", `{` + base + `, "scores": {"other": {"value": "C"}}}`, Unscored, ReasonScoreMissing, 1, "", "", math.NaN(), `no score named "match"`},
		{"token limit keeps its score", `{` + base + `, "scores": {"match": {"value": "C"}}, "limit": {"type": "token", "limit": 1000}}`, Success, ReasonLimitScored, 1, "", "token", 1, "token limit 1000"},
		{"time limit keeps a failure", `{` + base + `, "scores": {"match": {"value": "I"}}, "limit": {"type": "time", "limit": 60}}`, Failure, ReasonLimitScored, 1, "", "time", 0, "time limit"},
		{"custom limit without score", `{` + base + `, "limit": {"type": "custom", "limit": 1}}`, Unscored, ReasonLimitUnscored, 1, "", "custom", math.NaN(), "custom limit"},
		{"operator limit is unscored whatever the score", `{` + base + `, "scores": {"match": {"value": "C"}}, "limit": {"type": "operator", "limit": 0}}`, Unscored, ReasonOperatorLimit, 1, "", "operator", 1, "operator limit"},
		{"error without score", `{` + base + `, "error": {"message": "bad tool output", "traceback": "` + tb(tbValue) + `", "traceback_ansi": ""}}`, Unscored, ReasonSampleError, 1, "ValueError", "", math.NaN(), "ValueError: bad tool output"},
		{"provider error is infra", `{` + base + `, "error": {"message": "Error code: 429", "traceback": "` + tb(tbRateLimit) + `", "traceback_ansi": ""}}`, InfraError, ReasonInfraException, 1, "openai.RateLimitError", "", math.NaN(), ""},
		{"sandbox error is infra", `{` + base + `, "error": {"message": "sandbox is not running", "traceback": "` + tb(tbSandbox) + `", "traceback_ansi": ""}}`, InfraError, ReasonInfraException, 1, "inspect_ai.util._sandbox.environment.SandboxUnavailableError", "", math.NaN(), ""},
		{"an exception group's last class", `{` + base + `, "error": {"message": "x", "traceback": "` + tb(tbGroup) + `", "traceback_ansi": ""}}`, InfraError, ReasonInfraException, 1, "httpx.ConnectError", "", math.NaN(), ""},
		{"cancelled", `{` + base + `, "error": {"message": "CancelledError('Cancelled via cancel scope')", "traceback": "` + tb(tbCancelled) + `", "traceback_ansi": ""}}`, Unscored, ReasonCancelled, 1, "asyncio.exceptions.CancelledError", "", math.NaN(), ""},
		{"score_on_error keeps the score and the error", `{` + base + `, "scores": {"match": {"value": "I"}}, "error": {"message": "bad tool output", "traceback": "` + tb(tbValue) + `", "traceback_ansi": ""}}`, Failure, ReasonErrorScored, 1, "ValueError", "", 0, "ValueError"},
		{"score_on_error keeps a success", `{` + base + `, "scores": {"match": {"value": "C"}}, "error": {"message": "late", "traceback": "` + tb(tbValue) + `", "traceback_ansi": ""}}`, Success, ReasonErrorScored, 1, "ValueError", "", 1, "late"},
		{"error then a successful retry: the last decides", `{` + base + `, "scores": {"match": {"value": "C"}}, "error_retries": [{"message": "Error code: 429", "traceback": "` + tb(tbRateLimit) + `", "traceback_ansi": "", "events": [{"event": "model"}]}]}`, Success, ReasonScoreSuccess, 2, "", "", 1, ""},
		{"two errors, the last not retried", `{` + base + `, "error": {"message": "bad tool output", "traceback": "` + tb(tbValue) + `", "traceback_ansi": ""}, "error_retries": [{"message": "a", "traceback": "` + tb(tbRateLimit) + `", "traceback_ansi": ""}]}`, Unscored, ReasonSampleError, 2, "ValueError", "", math.NaN(), ""},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := Judge(parseSample(t, c.sample), "match")
			v := j.Final()
			seen[v.Reason+"/"+string(v.Status)] = true
			if v.Status != c.status || v.Reason != c.reason {
				t.Errorf("verdict %s/%s, want %s/%s (%+v)", v.Status, v.Reason, c.status, c.reason, v)
			}
			if len(j.Attempts) != c.attempts {
				t.Errorf("%d attempts, want %d", len(j.Attempts), c.attempts)
			}
			if v.ExceptionType != c.class {
				t.Errorf("exception class %q, want %q", v.ExceptionType, c.class)
			}
			if v.Limit != c.limit {
				t.Errorf("limit %q, want %q", v.Limit, c.limit)
			}
			if math.IsNaN(c.reward) != (v.Reward == nil) || (v.Reward != nil && *v.Reward != c.reward) {
				t.Errorf("reward %v, want %v", v.Reward, c.reward)
			}
			if !strings.Contains(v.Detail, c.detail) {
				t.Errorf("detail %q, want it to contain %q", v.Detail, c.detail)
			}
		})
	}
	// The retried attempts are judged by the same table.
	j := Judge(parseSample(t, cases[len(cases)-2].sample), "match")
	if a := j.Attempts[0]; a.Status != InfraError || a.Reason != ReasonInfraException {
		t.Errorf("the retried 429: %+v", a)
	}
	seen[ReasonResultMissing+"/"+string(Unscored)] = Missing().Reason == ReasonResultMissing
	seen[ReasonResultInvalid+"/"+string(Unscored)] = Invalid(errBudget).Reason == ReasonResultInvalid
	for _, r := range Table() {
		if !seen[r.Reason+"/"+string(r.Status)] {
			t.Errorf("table row %s/%s has no case", r.Status, r.Reason)
		}
	}
}

// TestValueToFloat follows value_to_float's branches and Python's float().
func TestValueToFloat(t *testing.T) {
	cases := []struct {
		raw string
		f   float64
		ok  bool
	}{
		{`"C"`, 1, true}, {`"I"`, 0, true}, {`"P"`, 0.5, true}, {`"N"`, 0, true},
		{`"c"`, 0, false}, {`"YES"`, 1, true}, {`"True"`, 1, true}, {`"no"`, 0, true}, {`"FALSE"`, 0, true},
		{`true`, 1, true}, {`false`, 0, true}, {`3`, 3, true}, {`-0.0`, 0, true}, {`1e400`, math.Inf(1), true},
		{`"1_000"`, 1000, true}, {`"1__0"`, 0, false}, {`"_1"`, 0, false}, {`"1_"`, 0, false},
		{`" 2.5\n"`, 2.5, true}, {`".5"`, 0.5, true}, {`"5."`, 5, true}, {`"."`, 0, false},
		{`"1e3"`, 1000, true}, {`"1e"`, 0, false}, {`"0x10"`, 0, false}, {`"+1"`, 1, true},
		{`"١"`, 1, true}, {`"nan"`, 0, false}, {`"-inf"`, 0, false}, {`"1e400"`, 0, false},
		{`null`, 0, false}, {`[1]`, 0, false}, {`{}`, 0, false}, {`""`, 0, false}, {`"abc"`, 0, false},
	}
	for _, c := range cases {
		f, ok := ValueToFloat(c.raw)
		if ok != c.ok || (ok && f != c.f) {
			t.Errorf("ValueToFloat(%s) = %v, %v; want %v, %v", c.raw, f, ok, c.f, c.ok)
		}
	}
	if f, ok := ValueToFloat(`NaN`); !ok || !math.IsNaN(f) {
		t.Errorf("NaN: %v %v", f, ok)
	}
}

func TestExceptionClass(t *testing.T) {
	for tbk, want := range map[string]string{
		tbRateLimit: "openai.RateLimitError", tbValue: "ValueError", tbCancelled: "asyncio.exceptions.CancelledError",
		tbGroup: "httpx.ConnectError", "": "", "KeyError": "KeyError", "something went wrong here": "",
		"Traceback:\n  File x\nRuntimeError: a: b\n\n": "RuntimeError",
	} {
		if got := exceptionClass(tbk); got != want {
			t.Errorf("exceptionClass(%q) = %q, want %q", tbk, got, want)
		}
	}
}
