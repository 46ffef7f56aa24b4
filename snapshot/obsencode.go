package snapshot

import (
	"encoding/json"
	"math"
	"strconv"
)

// appendObservation appends o as json.Marshal encodes it, byte for byte,
// without reflection: it runs once per trial of every import. Strings
// that need escaping and non-finite numbers (which json.Marshal refuses)
// are left to encoding/json; FuzzAppendObservation checks the two agree.
func appendObservation(b []byte, o *Observation) ([]byte, error) {
	b = append(b, `{"trial_id":`...)
	b = appendJSONString(b, o.TrialID)
	b = append(b, `,"task":`...)
	b = appendJSONString(b, o.Task)
	b = append(b, `,"repeat":`...)
	b = strconv.AppendInt(b, int64(o.Repeat), 10)
	b = append(b, `,"trial_attempt":`...)
	b = strconv.AppendInt(b, int64(o.TrialAttempt), 10)
	b = append(b, `,"attempts":`...)
	b = strconv.AppendInt(b, int64(o.Attempts), 10)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, o.Status)
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, o.Reason)
	b = append(b, `,"reward":`...)
	b, ok := appendJSONFloat(b, o.Reward)
	if !ok {
		return nil, marshalError(o)
	}
	b = append(b, `,"exception_type":`...)
	b = appendJSONStringPtr(b, o.ExceptionType)
	b = append(b, `,"trainable":`...)
	b = strconv.AppendBool(b, o.Trainable)
	b = append(b, `,"evidence":{"result_sha256":`...)
	b = appendJSONStringPtr(b, o.Evidence.ResultSHA256)
	b = append(b, `,"task_checksum":`...)
	b = appendJSONStringPtr(b, o.Evidence.TaskChecksum)
	b = append(b, `,"verifier_environment_mode":`...)
	b = appendJSONStringPtr(b, o.Evidence.VerifierEnvironmentMode)
	b = append(b, `},"attempt_outcomes":`...)
	if o.AttemptOutcomes == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range o.AttemptOutcomes {
			a := &o.AttemptOutcomes[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"retry":`...)
			b = strconv.AppendInt(b, int64(a.Retry), 10)
			b = append(b, `,"status":`...)
			b = appendJSONString(b, a.Status)
			b = append(b, `,"reason":`...)
			b = appendJSONString(b, a.Reason)
			b = append(b, `,"reward":`...)
			if b, ok = appendJSONFloat(b, a.Reward); !ok {
				return nil, marshalError(o)
			}
			b = append(b, `,"exception_type":`...)
			b = appendJSONStringPtr(b, a.ExceptionType)
			b = append(b, `,"result_sha256":`...)
			b = appendJSONStringPtr(b, a.ResultSHA256)
			if b, ok = appendExplanation(b, a); !ok {
				return nil, marshalError(o)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// appendExplanation appends a's optional members (omitempty, as
// json.Marshal writes them); false for a value it refuses.
func appendExplanation(b []byte, a *AttemptOutcome) ([]byte, bool) {
	ok := true
	floats := func(names []string, vals ...*float64) {
		for i, v := range vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, names[i]...)
			var good bool
			b, good = appendJSONFloat(b, v)
			ok = ok && good
		}
	}
	if a.Detail != "" {
		b = append(b, `,"detail":`...)
		b = appendJSONString(b, a.Detail)
	}
	if t := a.Timing; t != nil {
		b = append(b, `,"timing":{`...)
		floats([]string{`"environment_setup_sec":`, `"agent_setup_sec":`, `"agent_execution_sec":`, `"verifier_sec":`},
			t.EnvironmentSetup, t.AgentSetup, t.AgentExecution, t.Verifier)
		b = append(b, '}')
	}
	if u := a.Usage; u != nil {
		for i, f := range []struct {
			name string
			v    *int64
		}{{`"input_tokens":`, u.InputTokens}, {`"cache_tokens":`, u.CacheTokens}, {`"output_tokens":`, u.OutputTokens}} {
			if i == 0 {
				b = append(b, `,"usage":{`...)
			} else {
				b = append(b, ',')
			}
			b = append(b, f.name...)
			if f.v == nil {
				b = append(b, "null"...)
			} else {
				b = strconv.AppendInt(b, *f.v, 10)
			}
		}
		b = append(b, `,"cost_usd":`...)
		var good bool
		b, good = appendJSONFloat(b, u.CostUSD)
		ok = ok && good
		b = append(b, '}')
	}
	if ag := a.Agent; ag != nil {
		b = append(b, `,"agent":{"name":`...)
		b = appendJSONString(b, ag.Name)
		b = append(b, `,"model":`...)
		b = appendJSONStringPtr(b, ag.Model)
		b = append(b, '}')
	}
	if v := a.Verifier; v != nil {
		b = append(b, `,"verifier":{"source":`...)
		b = appendJSONString(b, v.Source)
		b = append(b, `,"text":`...)
		b = appendJSONString(b, v.Text)
		b = append(b, '}')
	}
	return b, ok
}

// marshalError is json.Marshal's error for o. It marshals a copy: o
// itself then does not escape, so Writer.Add's observation is not moved
// to the heap for a path only a refused value takes.
func marshalError(o *Observation) error {
	c := *o
	_, err := json.Marshal(&c)
	return err
}

// appendJSONString writes s quoted; quotes and backslashes are escaped
// here (details quote their values: reward "reward" is 1.0), and a string
// with anything else encoding/json escapes (control characters, <, >, &,
// non-ASCII that may be invalid or U+2028/U+2029) goes through
// encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c >= 0x7f, c == '<', c == '>', c == '&':
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	from := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, s[from:i]...)
			b = append(b, '\\', c)
			from = i + 1
		}
	}
	b = append(b, s[from:]...)
	return append(b, '"')
}

func appendJSONStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

// appendJSONFloat writes f (or null) as encoding/json does; false for a
// value it refuses.
func appendJSONFloat(b []byte, f *float64) ([]byte, bool) {
	if f == nil {
		return append(b, "null"...), true
	}
	v := *f
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return b, false
	}
	// encoding/json's floatEncoder: ES6 number formatting.
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}
