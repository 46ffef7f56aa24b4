package harbor

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"

	"github.com/tuneplane/tpctl/attempt"
	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/internal/formats"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/snapshot"
)

// ResultFile is the name of Harbor's per-trial result inside an attempt's
// folder.
const ResultFile = "result.json"

// ReadAttempt reads the attempt folder dir's result.json through files
// and judges it by Harbor's outcome table: a missing folder or file is
// result_missing, one that cannot be read or decoded result_invalid with
// the error as its detail. It never panics.
func ReadAttempt(files producers.Files, dir string) attempt.Attempt {
	rel := dir + "/" + ResultFile
	a := attempt.Attempt{Record: rel}
	data, err := files.ReadFile(rel, MaxResultSize)
	if err != nil {
		if isMissing(err) || errors.Is(err, fs.ErrNotExist) {
			a.Outcome = Missing()
			return a
		}
		if pe, ok := asPathError(err); ok && pe.Rel == rel {
			// The file itself was refused (symlink, special file).
			err = fmt.Errorf("%s: %w", rel, err)
		}
		a.Outcome = Invalid(err)
		return a
	}
	// What the attempt points to is held by one allocation.
	v := &attemptValues{}
	sum := digest.Bytes(data)
	var hexSum [2 * len(sum)]byte
	hex.Encode(hexSum[:], sum[:])
	v.resultSHA256 = string(hexSum[:])
	a.Evidence.ResultSHA256 = &v.resultSHA256
	// The decoded result is the decoder's until release: nothing below
	// keeps a pointer into it (strings are immutable; the rest is copied).
	d := decoders.Get().(*decoder)
	defer d.release()
	r, err := d.decodeForImport(data)
	if err != nil {
		a.Outcome = Invalid(fmt.Errorf("%s: %w", rel, err))
		return a
	}
	a.Outcome = Judge(r)
	// A plain reward verdict's detail only repeats its reason.
	if a.Outcome.Reason == ReasonRewardSuccess || a.Outcome.Reason == ReasonRewardFailure {
		a.Outcome.Detail = ""
	}
	// A failure's why is in the verifier's own words; a plain reward
	// failure has no other detail, so they become it.
	if wantsVerifierWords(a.Outcome) {
		var line string
		if a.Verifier, line = verifierWords(files, dir); a.Verifier != nil && a.Outcome.Detail == "" {
			a.Outcome.Detail = line
		}
	}
	a.UnknownFields = r.UnknownFields
	a.Task = r.TaskName
	a.Timing = timingOf(r.Timings, &v.timing)
	a.Usage = usageOf(r.Usage, &v.usage)
	if e := r.Exception; e != nil {
		v.err = attempt.Error{Class: e.Type, Message: e.Message}
		a.Error = &v.err
	}
	if vr := r.Verifier; vr != nil {
		a.Scores = scoresOf(vr, v)
	}
	// Identity fields go to the snapshot and the platform as they are;
	// the importer refuses one carrying a known secret, in this order.
	a.Identity = v.identity[:0]
	if ag := r.Agent; ag != nil && ag.Name != "" {
		a.Identity = append(a.Identity, attempt.Field{Name: "agent_info.name", Value: ag.Name})
		v.agent = snapshot.Agent{Name: ag.Name}
		if ag.HasModel && ag.ModelName != "" {
			a.Identity = append(a.Identity, attempt.Field{Name: "agent_info.model_info.name", Value: ag.ModelName})
			v.model = ag.ModelName
			v.agent.Model = &v.model
		}
		a.Agent = &v.agent
	}
	if et := a.Outcome.ExceptionType; et != nil {
		a.Identity = append(a.Identity, attempt.Field{Name: "exception_info.exception_type", Value: *et})
	}
	if ck := r.TaskChecksum; ck != "" {
		a.Identity = append(a.Identity, attempt.Field{Name: "task_checksum", Value: ck})
		if isHexDigest(ck) {
			v.taskChecksum = ck
			a.Evidence.TaskChecksum = &v.taskChecksum
		} else {
			a.Warnings = append(a.Warnings, "task_checksum is not a 64-hex-digit SHA-256 (Harbor writes dirhash(task_dir, \"sha256\")); recorded as null")
		}
	}
	if m := r.VerifierEnvironmentMode; m != nil {
		a.Identity = append(a.Identity, attempt.Field{Name: "verifier_environment_mode", Value: *m})
		if IsVerifierEnvironmentMode(*m) {
			v.verifierEnvironmentMode = *m
			a.Evidence.VerifierEnvironmentMode = &v.verifierEnvironmentMode
		} else {
			a.Warnings = append(a.Warnings, fmt.Sprintf("verifier_environment_mode %q is not one of Harbor's values (%s); recorded as null", *m, strings.Join(VerifierEnvironmentModes, ", ")))
		}
	}
	return a
}

// attemptValues holds what an attempt read from a result points to: one
// allocation per attempt, not one per value (they were most of an
// import's allocations). It lives as long as any of them.
type attemptValues struct {
	resultSHA256, taskChecksum, verifierEnvironmentMode string
	// identity has room for ReadAttempt's five identity fields.
	identity [5]attempt.Field
	agent    snapshot.Agent
	model    string
	err      attempt.Error
	timing   timingWithValues
	usage    usageWithValues
	// scores and scoreValues hold the first scores (Harbor writes one).
	scores      [2]attempt.Score
	scoreValues [2]float64
}

// isMissing reports a *safefs.PathError for a missing component.
func isMissing(err error) bool {
	pe, ok := asPathError(err)
	return ok && pe.Code == safefs.CodeMissing
}

// asPathError is errors.As for a *safefs.PathError. Its target is only
// moved to the heap when it is called: ReadAttempt's callers read
// thousands of files, and most reads succeed.
func asPathError(err error) (*safefs.PathError, bool) {
	var pe *safefs.PathError
	ok := errors.As(err, &pe)
	return pe, ok
}

// scoresOf is a verifier result's rewards by name, in file order (the
// legacy single reward as "reward").
func scoresOf(vr *VerifierResult, v *attemptValues) []attempt.Score {
	n := len(vr.Rewards)
	if vr.LegacyReward != nil {
		n++
	}
	if n == 0 {
		return nil
	}
	out := v.scores[:0]
	one := func(name string, val *Value) {
		s := attempt.Score{Name: name, Raw: val.Raw}
		if f, ok := val.Float(); ok && !math.IsNaN(f) && !math.IsInf(f, 0) && val.Kind == KindNumber {
			if i := len(out); i < len(v.scoreValues) {
				v.scoreValues[i] = f
				s.Value = &v.scoreValues[i]
			} else {
				s.Value = &f
			}
		}
		out = append(out, s)
	}
	if vr.LegacyReward != nil {
		one("reward", vr.LegacyReward)
	}
	for i := range vr.Rewards {
		one(vr.Rewards[i].Key, &vr.Rewards[i].Value)
	}
	return out
}

// timingWithValues is a snapshot.Timing with the durations it points to.
type timingWithValues struct {
	t snapshot.Timing
	v [4]float64
}

// timingOf is the phase durations of a result, to the millisecond, held
// by tv; nil when no phase has one.
func timingOf(t Timings, tv *timingWithValues) *snapshot.Timing {
	sec := func(i int, ti *TimingInfo) *float64 {
		s, ok := ti.Seconds()
		if !ok {
			return nil
		}
		tv.v[i] = math.Round(s*1000) / 1000
		return &tv.v[i]
	}
	tv.t = snapshot.Timing{EnvironmentSetup: sec(0, t.EnvironmentSetup), AgentSetup: sec(1, t.AgentSetup),
		AgentExecution: sec(2, t.AgentExecution), Verifier: sec(3, t.Verifier)}
	if tv.t == (snapshot.Timing{}) {
		return nil
	}
	return &tv.t
}

// usageWithValues is a snapshot.Usage with the counts it points to.
type usageWithValues struct {
	u    snapshot.Usage
	n    [3]int64
	cost float64
}

// usageOf is the agent's counts, held by uv; nil when it reported none.
// The counts are copied: u may point into the decoder's memory
// (decodeForImport).
func usageOf(u Usage, uv *usageWithValues) *snapshot.Usage {
	if u.IsZero() {
		return nil
	}
	for i, p := range [3]struct {
		from *int64
		to   **int64
	}{{u.InputTokens, &uv.u.InputTokens}, {u.CacheTokens, &uv.u.CacheTokens}, {u.OutputTokens, &uv.u.OutputTokens}} {
		if p.from != nil {
			uv.n[i] = *p.from
			*p.to = &uv.n[i]
		}
	}
	if u.CostUSD != nil {
		// Summed step costs carry float noise; 1e-9 USD is far below
		// anything an API bills.
		uv.cost = math.Round(*u.CostUSD*1e9) / 1e9
		uv.u.CostUSD = &uv.cost
	}
	return &uv.u
}

// isHexDigest reports whether s is 64 lowercase or uppercase hex digits.
func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// OutcomeTable is Harbor's outcome table as the seam shows it.
func OutcomeTable() outcome.Table {
	return outcome.Table{Producer: Format, Version: RulesVersion, Rules: Table()}
}

// Format is Harbor's source format name (plan.source.format).
const Format = formats.HarborFormat
