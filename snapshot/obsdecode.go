package snapshot

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// Observation lines are decoded by a typed walker on jsonscan for the
// form tpctl writes (exact member names, each once, integers without
// fraction or exponent, no null where a value belongs, nothing after the
// object). Anything else (a member in another case, a duplicate, trailing
// bytes, any error) is handed to encoding/json, which decides: values and
// error messages are exactly the strict decoder's, and FuzzObservationLine
// checks the walker never accepts a line differently. The walker is ten
// times faster, which is what verify, compare and upload spend their time
// on.

// obsDecoder decodes the lines of one observations.jsonl. Lines repeat
// most of their strings (a task's repeats follow each other; statuses,
// reasons and exception types are a few words) and hold a dozen pointers,
// so it reuses strings it has made and hands out pointers from shared
// blocks: a line costs a few allocations instead of twenty.
type obsDecoder struct {
	sc    jsonscan.Decoder
	words map[string]string // interned short values, at most maxWords
	task  string            // the last line's task
	check string            // the last line's task checksum
	tmp   []AttemptOutcome  // one line's outcomes while they are read
	obsArena

	// The exact reader's position and scratch (obsexact.go).
	exactReader
	recent [16]string // recently interned words, by a hash of a few bytes
}

// obsArena is the blocks a decoder hands the members that are pointers
// or slices out from. A decoder keeps its own, and a new block is made
// when one is full, so what it handed out stays valid however long the
// caller keeps it. When nothing decoded is kept past its chunk (Verify;
// see observationsAhead), each chunk lends its arena instead (reuse):
// the blocks are then written over by the chunk's next lines, and a full
// one is replaced by one twice its size, so the arena soon holds a whole
// chunk and lines are decoded without allocating.
type obsArena struct {
	strs      []string         // block the *string members point into
	floats    []float64        // block the *float64 members point into
	outs      []AttemptOutcome // block the lines' AttemptOutcomes are cut from
	ints      []int64
	timings   []Timing
	usages    []Usage
	agents    []Agent
	verifiers []VerifierOutput
	reuse     bool
}

// reset empties the arena's blocks for a chunk's lines, keeping them.
func (a *obsArena) reset() {
	a.strs, a.floats, a.outs, a.ints = a.strs[:0], a.floats[:0], a.outs[:0], a.ints[:0]
	a.timings, a.usages, a.agents, a.verifiers = a.timings[:0], a.usages[:0], a.agents[:0], a.verifiers[:0]
}

// slot hands out the next element of the block *blk (of size elements,
// when one is made; twice the full one's under reuse), set to v.
func slot[T any](blk *[]T, size int, reuse bool, v T) *T {
	if len(*blk) == cap(*blk) {
		if reuse {
			size = max(size, 2*cap(*blk))
		}
		*blk = make([]T, 0, size)
	}
	*blk = append(*blk, v)
	return &(*blk)[len(*blk)-1]
}

// cutOutcomes copies a line's outcomes into the block and returns them.
func (a *obsArena) cutOutcomes(tmp []AttemptOutcome) []AttemptOutcome {
	n := len(tmp)
	if cap(a.outs)-len(a.outs) < n || a.outs == nil {
		size := max(blockLen, n)
		if a.reuse {
			size = max(size, 2*cap(a.outs))
		}
		a.outs = make([]AttemptOutcome, 0, size)
	}
	i := len(a.outs)
	a.outs = append(a.outs, tmp...)
	return a.outs[i : i+n : i+n]
}

// maxWords bounds the interned values, so a file of distinct reasons
// cannot grow the table without end.
const maxWords = 256

// blockLen is the length of the blocks pointers are handed out from.
const blockLen = 128

func newObsDecoder() *obsDecoder {
	return &obsDecoder{words: map[string]string{}}
}

// decode decodes one line strictly into o, which must be zero: the exact
// reader (obsexact.go) when the line is in the form tpctl writes, else the
// walker when it can, else encoding/json (which has the last word).
func (d *obsDecoder) decode(line []byte, o *Observation) error {
	if d.exact(line, o) {
		return nil
	}
	*o = Observation{}
	if d.fast(line, o) {
		return nil
	}
	*o = Observation{}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	return dec.Decode(o)
}

// decodeObservation is decode with a decoder of its own.
func decodeObservation(line []byte, o *Observation) error {
	return newObsDecoder().decode(line, o)
}

// decodeObservationFast decodes line into o and reports whether it could;
// false says nothing about the line's validity.
func decodeObservationFast(line []byte, o *Observation) bool {
	return newObsDecoder().fast(line, o)
}

func (d *obsDecoder) fast(line []byte, o *Observation) bool {
	d.sc.Reset(line, jsonscan.Options{})
	if !d.observation(o) {
		return false
	}
	_, err := d.sc.Next()
	return err == io.EOF
}

// next reads the next token and reports whether it is of kind k.
func (d *obsDecoder) next(k jsonscan.Kind) bool {
	got, err := d.sc.Next()
	return err == nil && got == k
}

// object walks the members of an object whose '{' is next, calling
// member with each key; member reads the value and returns its index
// (below 64), or false to give up. A key seen twice gives up.
func (d *obsDecoder) object(member func(key []byte) (int, bool)) bool {
	if !d.next(jsonscan.BeginObject) {
		return false
	}
	var seen uint64
	for {
		k, err := d.sc.Next()
		if err != nil {
			return false
		}
		if k == jsonscan.EndObject {
			return true
		}
		idx, ok := member(d.sc.Text())
		if !ok || seen&(1<<idx) != 0 {
			return false
		}
		seen |= 1 << idx
	}
}

// str is the text of the string token just read: prev itself when they
// are equal, the interned copy when intern is set (for a member of few
// values: a status, a reason), else a new string.
func (d *obsDecoder) str(prev string, intern bool) string {
	t := d.sc.Text()
	if string(t) == prev {
		return prev
	}
	if !intern {
		return string(t)
	}
	if s, ok := d.words[string(t)]; ok {
		return s
	}
	s := string(t)
	if len(d.words) < maxWords {
		d.words[s] = s
	}
	return s
}

// text reads a string into dst (see str).
func (d *obsDecoder) text(dst *string, prev string, intern bool) bool {
	if !d.next(jsonscan.String) {
		return false
	}
	*dst = d.str(prev, intern)
	return true
}

// strPtr reads null, or a string (see str) into a pointer from the block.
func (d *obsDecoder) strPtr(dst **string, prev string, intern bool) bool {
	k, err := d.sc.Next()
	switch {
	case err != nil:
		return false
	case k == jsonscan.Null:
		*dst = nil
		return true
	case k != jsonscan.String:
		return false
	}
	*dst = slot(&d.strs, blockLen, d.reuse, d.str(prev, intern))
	return true
}

// integer reads -?(0|[1-9][0-9]*) of at most 18 digits: what an int holds
// for sure, with the value encoding/json gives.
func (d *obsDecoder) integer(dst *int) bool {
	if !d.next(jsonscan.Number) {
		return false
	}
	n, ok := plainInt(d.sc.Raw())
	*dst = n
	return ok
}

// plainInt parses raw as integer does.
func plainInt(raw []byte) (int, bool) {
	digits, neg := raw, false
	if digits[0] == '-' {
		digits, neg = digits[1:], true
	}
	if len(digits) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false // a fraction or an exponent
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// floatPtr reads null or a number, parsed as encoding/json parses it.
func (d *obsDecoder) floatPtr(dst **float64) bool {
	k, err := d.sc.Next()
	if err != nil {
		return false
	}
	if k == jsonscan.Null {
		*dst = nil
		return true
	}
	if k != jsonscan.Number {
		return false
	}
	f, err := strconv.ParseFloat(string(d.sc.Raw()), 64)
	if err != nil {
		return false
	}
	*dst = slot(&d.floats, blockLen, d.reuse, f)
	return true
}

func (d *obsDecoder) boolean(dst *bool) bool {
	k, err := d.sc.Next()
	switch {
	case err != nil:
		return false
	case k == jsonscan.True:
		*dst = true
	case k == jsonscan.False:
		*dst = false
	default:
		return false
	}
	return true
}

// deref is *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (d *obsDecoder) observation(o *Observation) bool {
	ok := d.object(func(key []byte) (int, bool) {
		switch string(key) {
		case "trial_id":
			return 0, d.text(&o.TrialID, "", false)
		case "task":
			return 1, d.text(&o.Task, d.task, false)
		case "repeat":
			return 2, d.integer(&o.Repeat)
		case "trial_attempt":
			return 3, d.integer(&o.TrialAttempt)
		case "attempts":
			return 4, d.integer(&o.Attempts)
		case "status":
			return 5, d.text(&o.Status, "", true)
		case "reason":
			return 6, d.text(&o.Reason, "", true)
		case "reward":
			return 7, d.floatPtr(&o.Reward)
		case "exception_type":
			return 8, d.strPtr(&o.ExceptionType, "", true)
		case "trainable":
			return 9, d.boolean(&o.Trainable)
		case "evidence":
			return 10, d.evidence(&o.Evidence)
		case "attempt_outcomes":
			return 11, d.outcomes(&o.AttemptOutcomes, deref(o.Evidence.ResultSHA256))
		}
		return 0, false
	})
	if ok {
		d.task = o.Task
		d.check = deref(o.Evidence.TaskChecksum)
	}
	return ok
}

func (d *obsDecoder) evidence(e *Evidence) bool {
	return d.object(func(key []byte) (int, bool) {
		switch string(key) {
		case "result_sha256":
			return 0, d.strPtr(&e.ResultSHA256, "", false)
		case "task_checksum":
			return 1, d.strPtr(&e.TaskChecksum, d.check, false)
		case "verifier_environment_mode":
			return 2, d.strPtr(&e.VerifierEnvironmentMode, "", true)
		}
		return 0, false
	})
}

// outcomes reads null or an array of attempt outcomes into a fresh slice
// (cut from the block, its capacity its length), as encoding/json does for
// a zero destination. sha is the evidence's result digest, which the last
// attempt's usually repeats.
func (d *obsDecoder) outcomes(dst *[]AttemptOutcome, sha string) bool {
	k, err := d.sc.Next()
	switch {
	case err != nil:
		return false
	case k == jsonscan.Null:
		*dst = nil
		return true
	case k != jsonscan.BeginArray:
		return false
	}
	d.tmp = d.tmp[:0]
	for d.sc.More() {
		d.tmp = append(d.tmp, AttemptOutcome{})
		if !d.outcome(&d.tmp[len(d.tmp)-1], sha) {
			return false
		}
	}
	if !d.next(jsonscan.EndArray) {
		return false
	}
	*dst = d.cutOutcomes(d.tmp)
	return true
}

func (d *obsDecoder) outcome(a *AttemptOutcome, sha string) bool {
	return d.object(func(key []byte) (int, bool) {
		switch string(key) {
		case "retry":
			return 0, d.integer(&a.Retry)
		case "status":
			return 1, d.text(&a.Status, "", true)
		case "reason":
			return 2, d.text(&a.Reason, "", true)
		case "reward":
			return 3, d.floatPtr(&a.Reward)
		case "exception_type":
			return 4, d.strPtr(&a.ExceptionType, "", true)
		case "result_sha256":
			return 5, d.strPtr(&a.ResultSHA256, sha, false)
		case "detail":
			return 6, d.text(&a.Detail, "", false)
		case "timing":
			a.Timing = &Timing{}
			return 7, d.timing(a.Timing)
		case "usage":
			a.Usage = &Usage{}
			return 8, d.usage(a.Usage)
		case "agent":
			a.Agent = &Agent{}
			return 9, d.agent(a.Agent)
		case "verifier":
			a.Verifier = &VerifierOutput{}
			return 10, d.verifier(a.Verifier)
		}
		return 0, false
	})
}

func (d *obsDecoder) verifier(v *VerifierOutput) bool {
	return d.object(func(key []byte) (int, bool) {
		switch string(key) {
		case "source":
			return 0, d.text(&v.Source, "", true)
		case "text":
			return 1, d.text(&v.Text, "", false)
		}
		return 0, false
	})
}

// timing, usage and agent read the explanation members' objects (a null
// one goes to encoding/json).
func (d *obsDecoder) timing(t *Timing) bool {
	return d.object(func(key []byte) (int, bool) {
		switch string(key) {
		case "environment_setup_sec":
			return 0, d.floatPtr(&t.EnvironmentSetup)
		case "agent_setup_sec":
			return 1, d.floatPtr(&t.AgentSetup)
		case "agent_execution_sec":
			return 2, d.floatPtr(&t.AgentExecution)
		case "verifier_sec":
			return 3, d.floatPtr(&t.Verifier)
		}
		return 0, false
	})
}

func (d *obsDecoder) usage(u *Usage) bool {
	return d.object(func(key []byte) (int, bool) {
		switch string(key) {
		case "input_tokens":
			return 0, d.int64Ptr(&u.InputTokens)
		case "cache_tokens":
			return 1, d.int64Ptr(&u.CacheTokens)
		case "output_tokens":
			return 2, d.int64Ptr(&u.OutputTokens)
		case "cost_usd":
			return 3, d.floatPtr(&u.CostUSD)
		}
		return 0, false
	})
}

func (d *obsDecoder) agent(a *Agent) bool {
	return d.object(func(key []byte) (int, bool) {
		switch string(key) {
		case "name":
			return 0, d.text(&a.Name, "", true)
		case "model":
			return 1, d.strPtr(&a.Model, "", true)
		}
		return 0, false
	})
}

// int64Ptr reads null or an integer (see integer) into a new pointer.
func (d *obsDecoder) int64Ptr(dst **int64) bool {
	k, err := d.sc.Next()
	switch {
	case err != nil:
		return false
	case k == jsonscan.Null:
		*dst = nil
		return true
	case k != jsonscan.Number:
		return false
	}
	n, ok := plainInt(d.sc.Raw())
	if !ok {
		return false
	}
	v := int64(n)
	*dst = &v
	return true
}
