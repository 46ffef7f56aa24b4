package inspect

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/outcome"
)

// RulesVersion names the outcome table below. It is recorded in every
// snapshot judged by it; any change to the status or reason a given sample
// gets must bump it.
const RulesVersion = "inspect-outcomes/1"

// Status is a verdict's status: tpctl's outcome model's (package outcome).
type Status = outcome.Status

// The four statuses.
const (
	Success    = outcome.Success
	Failure    = outcome.Failure
	InfraError = outcome.InfraError
	Unscored   = outcome.Unscored
)

// Reason codes of inspect-outcomes/1. They are part of the snapshot and
// upload contract: never rename one; add a code and bump RulesVersion.
// ReasonResultMissing and ReasonResultInvalid are the codes every
// producer shares (outcome.ReasonResultMissing, …).
const (
	ReasonResultMissing       = "result_missing"
	ReasonResultInvalid       = "result_invalid"
	ReasonOperatorLimit       = "operator_limit"
	ReasonCancelled           = "cancelled"
	ReasonInfraException      = "infra_exception"
	ReasonSampleError         = "sample_error"
	ReasonLimitUnscored       = "limit_unscored"
	ReasonScoreMissing        = "score_missing"
	ReasonScoreUnscored       = "score_unscored"
	ReasonScoreNotConvertible = "score_not_convertible"
	ReasonScoreNotFinite      = "score_not_finite"
	ReasonScoreNotBinary      = "score_not_binary"
	ReasonErrorScored         = "error_scored"
	ReasonLimitScored         = "limit_scored"
	ReasonScoreSuccess        = "score_success"
	ReasonScoreFailure        = "score_failure"
)

// Rule is one row of the table (outcome.Rule).
type Rule = outcome.Rule

// The table, in the order Judge applies it (the first row that matches
// decides). "The score" is the primary scorer's score of the attempt.
var rules = []Rule{
	outcome.Row("a planned (sample, epoch) the log holds no sample for", Unscored, ReasonResultMissing),
	outcome.Row("the sample's record cannot be read (not JSON, over the size cap, not EvalSample's shape; the error is kept in detail)", Unscored, ReasonResultInvalid),
	outcome.Row("the sample hit an operator limit (a person stopped it): not the model's verdict, whatever its score", Unscored, ReasonOperatorLimit),
	outcome.Row("the attempt ended in an error and has no score, and the error is a cancellation (CancelledError or Cancelled, as Inspect's is_cancellation_message reads it)", Unscored, ReasonCancelled),
	outcome.Row("the attempt ended in an error and has no score, and the exception class (the traceback's last line) is in the infrastructure list inspect-infra/1 (sandbox and model-provider failures, listed in docs/outcomes.md)", InfraError, ReasonInfraException),
	outcome.Row("the attempt ended in any other error and has no score (the message and the exception class are kept)", Unscored, ReasonSampleError),
	outcome.Row("the sample hit a limit (message, token, time, working, context, cost, turn, custom) and has no score", Unscored, ReasonLimitUnscored),
	outcome.Row("no score from the primary scorer", Unscored, ReasonScoreMissing),
	outcome.Row("the score is NaN: Score.unscored, excluded by Inspect from metrics and reducers", Unscored, ReasonScoreUnscored),
	outcome.Row("value_to_float cannot convert the score (a list, a dict, null, text that is no number; Inspect would count it 0.0 with a warning)", Unscored, ReasonScoreNotConvertible),
	outcome.Row("value_to_float gives ±Infinity (a number or a string of one)", Unscored, ReasonScoreNotFinite),
	outcome.Row("value_to_float gives anything but 0 or 1 (\"P\" is 0.5, 0.7, 3)", Unscored, ReasonScoreNotBinary),
	outcome.Row("the attempt ended in an error but was scored (score_on_error) and value_to_float gives 1: the score stands, the error is kept", Success, ReasonErrorScored),
	outcome.Row("the attempt ended in an error but was scored (score_on_error) and value_to_float gives 0", Failure, ReasonErrorScored),
	outcome.Row("the sample hit a limit (message, token, time, working, context, cost, turn, custom) and value_to_float gives 1: the score stands, as Inspect scores a limited sample; the limit is kept", Success, ReasonLimitScored),
	outcome.Row("the sample hit a limit and value_to_float gives 0", Failure, ReasonLimitScored),
	outcome.Row("value_to_float gives 1 (\"C\", true, 1, \"yes\", \"1.0\")", Success, ReasonScoreSuccess),
	outcome.Row("value_to_float gives 0 (\"I\", \"N\", false, 0, \"no\")", Failure, ReasonScoreFailure),
}

// Table returns every rule in the order Judge applies them; the caller may
// modify the returned slice.
func Table() []Rule { return append([]Rule(nil), rules...) }

// Reasons returns every reason code once, in table order.
func Reasons() []string { return (*Producer)(nil).Outcomes().Reasons() }

// InfraListVersion names the list of infrastructure exception classes;
// adding or removing a class changes verdicts, so it bumps RulesVersion
// too.
const InfraListVersion = "inspect-infra/1"

// InfraClass is one exception class that means the sandbox or the model
// provider failed, not the model: as a Python traceback's last line names
// it (module-qualified; openai, anthropic and httpx set their exceptions'
// __module__ to the package name).
type InfraClass struct {
	Class  string `json:"exception_class"`
	Source string `json:"source"`
}

var infraClasses = []InfraClass{
	{"inspect_ai.util._sandbox.environment.SandboxUnavailableError", "Inspect: the sandbox provider cannot start an exec (the sandbox is not running)"},
	{"openai.APIConnectionError", "OpenAI SDK: the provider could not be reached"},
	{"openai.APITimeoutError", "OpenAI SDK: the request timed out"},
	{"openai.InternalServerError", "OpenAI SDK: the provider answered 5xx"},
	{"openai.RateLimitError", "OpenAI SDK: 429 after Inspect's retries"},
	{"anthropic.APIConnectionError", "Anthropic SDK: the provider could not be reached"},
	{"anthropic.APITimeoutError", "Anthropic SDK: the request timed out"},
	{"anthropic.InternalServerError", "Anthropic SDK: the provider answered 5xx (529 overloaded)"},
	{"anthropic.RateLimitError", "Anthropic SDK: 429 after Inspect's retries"},
	{"httpx.ConnectError", "httpx: the connection failed"},
	{"httpx.ConnectTimeout", "httpx: connecting timed out"},
	{"httpx.ReadTimeout", "httpx: reading the answer timed out"},
	{"httpx.RemoteProtocolError", "httpx: the server closed the connection mid-answer"},
}

// InfraClasses returns the infrastructure exception list (InfraListVersion).
func InfraClasses() []InfraClass { return append([]InfraClass(nil), infraClasses...) }

func isInfra(class string) bool {
	for _, c := range infraClasses {
		if c.Class == class {
			return true
		}
	}
	return false
}

// isCancellation follows Inspect's is_cancellation_message
// (_util/error.py): the message is a backend cancellation's repr; or the
// traceback names CancelledError.
func isCancellation(e *EvalError) bool {
	for _, name := range []string{"CancelledError", "Cancelled"} {
		if strings.HasPrefix(e.Message, name+"(") {
			return true
		}
	}
	c := e.Class()
	return c == "CancelledError" || c == "asyncio.exceptions.CancelledError" || c == "asyncio.CancelledError"
}

// Verdict is the judgement of one attempt.
type Verdict struct {
	Status Status
	Reason string
	// Reward is the number value_to_float gave the score, when finite
	// (kept when unscored, e.g. 0.5).
	Reward *float64
	// Score is the primary scorer's score as the log writes it, "" when
	// none.
	Score string
	// ExceptionType is the exception class from the traceback, "" when
	// none.
	ExceptionType string
	// Error is the attempt's error, nil when none.
	Error *EvalError
	// Limit is the limit the sample hit ("token"), "" when none.
	Limit string
	// Detail says why in words ("" where the reason says it all).
	Detail string
}

// Judgement is every attempt of one (sample, epoch): the errors Inspect
// retried (error_retries), oldest first, then the sample itself, which
// decides (as Harbor's highest retry does).
type Judgement struct {
	Attempts []Verdict
}

// Final is the deciding verdict.
func (j Judgement) Final() Verdict { return j.Attempts[len(j.Attempts)-1] }

// Missing is the verdict for a planned (sample, epoch) the log holds no
// sample for.
func Missing() Verdict {
	return Verdict{Status: Unscored, Reason: ReasonResultMissing}
}

// Invalid is the verdict for a sample whose record cannot be read.
func Invalid(err error) Verdict {
	return Verdict{Status: Unscored, Reason: ReasonResultInvalid, Detail: err.Error()}
}

// Judge applies the table to one sample for the primary scorer. It is
// pure: the same sample always gets the same verdicts.
func Judge(s *Sample, scorer string) Judgement {
	var j Judgement
	for i := range s.Retries {
		e := s.Retries[i]
		j.Attempts = append(j.Attempts, judgeError(&e))
	}
	j.Attempts = append(j.Attempts, judgeLast(s, scorer))
	return j
}

// judgeError judges an attempt that ended in an error and has no score.
func judgeError(e *EvalError) Verdict {
	v := Verdict{Status: Unscored, Error: e, ExceptionType: e.Class(), Detail: errorDetail(e)}
	switch {
	case isCancellation(e):
		v.Reason = ReasonCancelled
	case isInfra(v.ExceptionType):
		v.Status, v.Reason = InfraError, ReasonInfraException
	default:
		v.Reason = ReasonSampleError
	}
	return v
}

func errorDetail(e *EvalError) string {
	msg := strings.TrimSpace(e.Message)
	c := e.Class()
	switch {
	case c == "" && msg == "":
		return "the sample ended in an error with no message"
	case c == "":
		return msg
	case msg == "" || strings.HasPrefix(msg, c+"(") || strings.HasPrefix(msg, lastDotted(c)+"("):
		if msg == "" {
			return c
		}
		return msg
	}
	return c + ": " + msg
}

func lastDotted(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func limitDetail(l *SampleLimit) string {
	if l.Value == 0 || math.IsNaN(l.Value) {
		return l.Type + " limit reached"
	}
	return l.Type + " limit " + strconv.FormatFloat(l.Value, 'g', -1, 64) + " reached"
}

func judgeLast(s *Sample, scorer string) Verdict {
	var score *Score
	for i := range s.Scores {
		if s.Scores[i].Name == scorer {
			score = &s.Scores[i]
			break
		}
	}
	v := Verdict{Error: s.Error}
	if s.Error != nil {
		v.ExceptionType = s.Error.Class()
	}
	if score != nil {
		v.Score = score.Raw
	}
	if s.Limit != nil {
		v.Limit = s.Limit.Type
	}
	if s.Limit != nil && s.Limit.Type == "operator" {
		v.Status, v.Reason, v.Detail = Unscored, ReasonOperatorLimit, limitDetail(s.Limit)
		v.Reward = reward(score)
		return v
	}
	if score == nil {
		switch {
		case s.Error != nil:
			ev := judgeError(s.Error)
			ev.Limit = v.Limit
			return ev
		case s.Limit != nil:
			v.Status, v.Reason, v.Detail = Unscored, ReasonLimitUnscored, limitDetail(s.Limit)
		default:
			v.Status, v.Reason = Unscored, ReasonScoreMissing
			if len(s.Scores) > 0 {
				names := make([]string, len(s.Scores))
				for i, sc := range s.Scores {
					names[i] = sc.Name
				}
				v.Detail = fmt.Sprintf("no score named %q (the sample has %s)", scorer, strings.Join(names, ", "))
			}
		}
		return v
	}
	f, ok := valueToFloat(score.value)
	switch {
	case ok && math.IsNaN(f):
		v.Status, v.Reason = Unscored, ReasonScoreUnscored
		return v
	case !ok:
		v.Status, v.Reason, v.Detail = Unscored, ReasonScoreNotConvertible, "score "+clip(score.Raw)
		return v
	case math.IsInf(f, 0):
		v.Status, v.Reason, v.Detail = Unscored, ReasonScoreNotFinite, "score "+clip(score.Raw)
		return v
	}
	v.Reward = &f
	if f != 0 && f != 1 {
		v.Status, v.Reason, v.Detail = Unscored, ReasonScoreNotBinary, "score "+clip(score.Raw)
		return v
	}
	v.Status = Failure
	if f == 1 {
		v.Status = Success
	}
	switch {
	case s.Error != nil:
		v.Reason, v.Detail = ReasonErrorScored, errorDetail(s.Error)
	case s.Limit != nil:
		v.Reason, v.Detail = ReasonLimitScored, limitDetail(s.Limit)
	case f == 1:
		v.Reason = ReasonScoreSuccess
	default:
		v.Reason = ReasonScoreFailure
	}
	return v
}

func reward(s *Score) *float64 {
	if s == nil {
		return nil
	}
	f, ok := valueToFloat(s.value)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// clip keeps a raw value short enough for a detail line.
func clip(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
