package snapshot

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The exact reader takes an observation line only in the very form
// appendObservation writes (members in its order, no whitespace, strings
// of printable ASCII without escapes, numbers in JSON's grammar) and
// matches it byte for byte rather than token by token: a member name is
// one comparison with the bytes the writer wrote before it. Strings may
// hold the escapes encoding/json writes and UTF-8. It runs ahead
// of the walker (obsdecode.go), which takes every line it declines;
// FuzzObservationLine checks it never accepts a line encoding/json would
// decode otherwise. It is what makes verify's re-derivation about as fast
// as hashing the same bytes.

// exactReader is a position in one line.
type exactReader struct {
	b       []byte
	i       int
	scratch []byte // an unescaped string
	inLine  bool   // the last string str returned is bytes of the line
}

// lit consumes s if the line goes on with it.
func (r *exactReader) lit(s string) bool {
	if len(r.b)-r.i < len(s) || string(r.b[r.i:r.i+len(s)]) != s {
		return false
	}
	r.i += len(s)
	return true
}

// plain marks the bytes a string holds as themselves: printable ASCII
// and DEL, but the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str consumes a string and returns its value: the bytes between the
// quotes when they need no unescaping, else the unescaped value in
// r.scratch (valid until the next string).
func (r *exactReader) str() ([]byte, bool) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return nil, false
	}
	start := r.i + 1
	j := start
	for j < len(r.b) && plain[r.b[j]] {
		j++
	}
	if j < len(r.b) && r.b[j] == '"' {
		r.i = j + 1
		r.inLine = true
		return r.b[start:j], true
	}
	r.inLine = false
	return r.unescape(start, j)
}

// unescape goes on with a string from j, its bytes from start to j
// plain: escapes are decoded as encoding/json decodes them and UTF-8 is
// kept. What encoding/json would change (invalid UTF-8, a lone or paired
// surrogate, a control character) declines, for the walker to decide.
func (r *exactReader) unescape(start, j int) ([]byte, bool) {
	b := r.b
	out := append(r.scratch[:0], b[start:j]...)
	for j < len(b) {
		c := b[j]
		switch {
		case c == '"':
			r.i = j + 1
			r.scratch = out
			return out, true
		case plain[c]:
			out = append(out, c)
			j++
		case c == '\\':
			if j+1 >= len(b) {
				return nil, false
			}
			switch e := b[j+1]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				if j+6 > len(b) {
					return nil, false
				}
				var v rune
				for _, h := range b[j+2 : j+6] {
					switch {
					case h >= '0' && h <= '9':
						v = v<<4 | rune(h-'0')
					case h >= 'a' && h <= 'f':
						v = v<<4 | rune(h-'a'+10)
					case h >= 'A' && h <= 'F':
						v = v<<4 | rune(h-'A'+10)
					default:
						return nil, false
					}
				}
				if utf16.IsSurrogate(v) {
					return nil, false
				}
				out = utf8.AppendRune(out, v)
				j += 4
			default:
				return nil, false
			}
			j += 2
		case c >= utf8.RuneSelf:
			rn, size := utf8.DecodeRune(b[j:])
			if rn == utf8.RuneError && size == 1 {
				return nil, false
			}
			out = append(out, b[j:j+size]...)
			j += size
		default:
			return nil, false // a control character
		}
	}
	return nil, false
}

// null consumes null if it comes next.
func (r *exactReader) null() bool { return r.lit("null") }

// number consumes a number in JSON's grammar and returns its bytes.
func (r *exactReader) number() ([]byte, bool) {
	b, i := r.b, r.i
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false
		}
	}
	r.i = i
	return b[start:i], true
}

// integer consumes an integer as obsDecoder.integer takes one: no
// fraction or exponent, at most 18 digits.
func (r *exactReader) integer() (int, bool) {
	raw, ok := r.number()
	if !ok {
		return 0, false
	}
	return plainInt(raw)
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// float consumes a number and returns it as strconv.ParseFloat (which
// encoding/json uses) parses it. A decimal of at most 15 significant
// digits and no exponent is an integer below 2^53 over a power of ten
// that a float64 holds exactly, so one division, correctly rounded, gives
// the correctly rounded value; strconv takes the rest.
func (r *exactReader) float() (float64, bool) {
	raw, ok := r.number()
	if !ok {
		return 0, false
	}
	digits, neg := raw, false
	if digits[0] == '-' {
		digits, neg = digits[1:], true
	}
	var mant uint64
	n, frac, point := 0, 0, false
	for _, c := range digits {
		switch {
		case c == '.':
			point = true
			continue
		case c < '0' || c > '9':
			n = 16 // an exponent: strconv decides
		}
		if n++; n > 15 {
			break
		}
		mant = mant*10 + uint64(c-'0')
		if point {
			frac++
		}
	}
	if n > 15 {
		f, err := strconv.ParseFloat(string(raw), 64)
		return f, err == nil
	}
	f := float64(mant) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

// exact decodes line into o, which must be zero, if it is in the exact
// form, and reports whether it was; false says nothing about the line.
// Values are shared and interned as the walker shares them.
func (d *obsDecoder) exact(line []byte, o *Observation) bool {
	r := &d.exactReader
	r.b, r.i = line, 0
	var ok bool
	var s []byte
	if !r.lit(`{"trial_id":`) {
		return false
	}
	if s, ok = r.str(); !ok {
		return false
	}
	o.TrialID = d.view(s)
	if !r.lit(`,"task":`) {
		return false
	}
	if s, ok = r.str(); !ok {
		return false
	}
	o.Task = d.share(s, d.task, false)
	if !r.lit(`,"repeat":`) {
		return false
	}
	if o.Repeat, ok = r.integer(); !ok || !r.lit(`,"trial_attempt":`) {
		return false
	}
	if o.TrialAttempt, ok = r.integer(); !ok || !r.lit(`,"attempts":`) {
		return false
	}
	if o.Attempts, ok = r.integer(); !ok || !d.exactVerdict(r, &o.Status, &o.Reason, &o.Reward, &o.ExceptionType) {
		return false
	}
	switch {
	case r.lit(`,"trainable":true`):
		o.Trainable = true
	case r.lit(`,"trainable":false`):
	default:
		return false
	}
	e := &o.Evidence
	if !r.lit(`,"evidence":{"result_sha256":`) || !d.exactViewPtr(r, &e.ResultSHA256, "") {
		return false
	}
	if !r.lit(`,"task_checksum":`) || !d.exactStrPtr(r, &e.TaskChecksum, d.check, false) {
		return false
	}
	if !r.lit(`,"verifier_environment_mode":`) || !d.exactStrPtr(r, &e.VerifierEnvironmentMode, "", true) {
		return false
	}
	if !r.lit(`},"attempt_outcomes":`) {
		return false
	}
	if !r.null() {
		if !d.exactOutcomes(r, &o.AttemptOutcomes, deref(e.ResultSHA256)) {
			return false
		}
	}
	if !r.lit(`}`) || r.i != len(r.b) {
		return false
	}
	d.task = o.Task
	d.check = deref(e.TaskChecksum)
	return true
}

// share is obsDecoder.str for bytes the exact reader found.
func (d *obsDecoder) share(t []byte, prev string, intern bool) string {
	if string(t) == prev {
		return prev
	}
	if len(t) == 0 {
		return ""
	}
	if !intern {
		return string(t)
	}
	// A few words take nearly every line: a comparison with the last
	// word of the same slot saves most lookups in the table.
	slot := &d.recent[(len(t)+int(t[0])+int(t[len(t)-1])<<1)%len(d.recent)]
	if string(t) == *slot {
		return *slot
	}
	if s, ok := d.words[string(t)]; ok {
		*slot = s
		return s
	}
	s := string(t)
	if len(d.words) < maxWords {
		d.words[s] = s
	}
	*slot = s
	return s
}

// exactStrPtr reads null or a string into a pointer from the block.
func (d *obsDecoder) exactStrPtr(r *exactReader, dst **string, prev string, intern bool) bool {
	if r.null() {
		return true
	}
	s, ok := r.str()
	if !ok {
		return false
	}
	*dst = slot(&d.strs, blockLen, d.reuse, d.share(s, prev, intern))
	return true
}

// view is the string s, a string of the line str just read: under
// reuse, when s is bytes of the line itself, it is viewed without a copy
// (nothing decoded is kept past its chunk, whose bytes it views); else
// copied. Only values no later line is compared with are viewed (trial
// IDs, result digests): the words and the last task and checksum, which
// outlive their chunk, are always copies.
func (d *obsDecoder) view(s []byte) string {
	if !d.reuse || !d.inLine || len(s) == 0 {
		return string(s)
	}
	return unsafe.String(unsafe.SliceData(s), len(s))
}

// exactViewPtr is exactStrPtr for a string that is viewed (view) unless
// it equals prev.
func (d *obsDecoder) exactViewPtr(r *exactReader, dst **string, prev string) bool {
	if r.null() {
		return true
	}
	s, ok := r.str()
	if !ok {
		return false
	}
	v := prev
	if string(s) != prev {
		v = d.view(s)
	}
	*dst = slot(&d.strs, blockLen, d.reuse, v)
	return true
}

// exactFloatPtr reads null or a number into a pointer from the block.
func (d *obsDecoder) exactFloatPtr(r *exactReader, dst **float64) bool {
	if r.null() {
		return true
	}
	f, ok := r.float()
	if !ok {
		return false
	}
	*dst = slot(&d.floats, blockLen, d.reuse, f)
	return true
}

// exactInt64Ptr reads null or an integer into a pointer from the block.
func (d *obsDecoder) exactInt64Ptr(r *exactReader, dst **int64) bool {
	if r.null() {
		return true
	}
	n, ok := r.integer()
	if !ok {
		return false
	}
	*dst = slot(&d.ints, blockLen, d.reuse, int64(n))
	return true
}

// exactOutcomes reads an array of attempt outcomes into a slice cut from
// the block, as the walker's outcomes does.
func (d *obsDecoder) exactOutcomes(r *exactReader, dst *[]AttemptOutcome, sha string) bool {
	if !r.lit(`[`) {
		return false
	}
	d.tmp = d.tmp[:0]
	if !r.lit(`]`) {
		for {
			d.tmp = append(d.tmp, AttemptOutcome{})
			if !d.exactOutcome(r, &d.tmp[len(d.tmp)-1], sha) {
				return false
			}
			if r.lit(`]`) {
				break
			}
			if !r.lit(`,`) {
				return false
			}
		}
	}
	*dst = d.cutOutcomes(d.tmp)
	return true
}

// exactVerdict reads the members an observation and each of its attempts
// share, in the order tpctl writes them: status, reason, reward and
// exception_type.
func (d *obsDecoder) exactVerdict(r *exactReader, status, reason *string, reward **float64, exc **string) bool {
	if !r.lit(`,"status":`) {
		return false
	}
	s, ok := r.str()
	if !ok {
		return false
	}
	*status = d.share(s, "", true)
	if !r.lit(`,"reason":`) {
		return false
	}
	if s, ok = r.str(); !ok {
		return false
	}
	*reason = d.share(s, "", true)
	return r.lit(`,"reward":`) && d.exactFloatPtr(r, reward) &&
		r.lit(`,"exception_type":`) && d.exactStrPtr(r, exc, "", true)
}

func (d *obsDecoder) exactOutcome(r *exactReader, a *AttemptOutcome, sha string) bool {
	var ok bool
	var s []byte
	if !r.lit(`{"retry":`) {
		return false
	}
	if a.Retry, ok = r.integer(); !ok || !d.exactVerdict(r, &a.Status, &a.Reason, &a.Reward, &a.ExceptionType) {
		return false
	}
	if !r.lit(`,"result_sha256":`) || !d.exactViewPtr(r, &a.ResultSHA256, sha) {
		return false
	}
	// The explanation members, each optional, in the writer's order.
	if r.lit(`,"detail":`) {
		if s, ok = r.str(); !ok {
			return false
		}
		a.Detail = string(s)
	}
	if r.lit(`,"timing":{"environment_setup_sec":`) {
		t := slot(&d.timings, blockLen/4, d.reuse, Timing{})
		a.Timing = t
		if !d.exactFloatPtr(r, &t.EnvironmentSetup) ||
			!r.lit(`,"agent_setup_sec":`) || !d.exactFloatPtr(r, &t.AgentSetup) ||
			!r.lit(`,"agent_execution_sec":`) || !d.exactFloatPtr(r, &t.AgentExecution) ||
			!r.lit(`,"verifier_sec":`) || !d.exactFloatPtr(r, &t.Verifier) || !r.lit(`}`) {
			return false
		}
	}
	if r.lit(`,"usage":{"input_tokens":`) {
		u := slot(&d.usages, blockLen/4, d.reuse, Usage{})
		a.Usage = u
		if !d.exactInt64Ptr(r, &u.InputTokens) ||
			!r.lit(`,"cache_tokens":`) || !d.exactInt64Ptr(r, &u.CacheTokens) ||
			!r.lit(`,"output_tokens":`) || !d.exactInt64Ptr(r, &u.OutputTokens) ||
			!r.lit(`,"cost_usd":`) || !d.exactFloatPtr(r, &u.CostUSD) || !r.lit(`}`) {
			return false
		}
	}
	if r.lit(`,"agent":{"name":`) {
		ag := slot(&d.agents, blockLen/4, d.reuse, Agent{})
		a.Agent = ag
		if s, ok = r.str(); !ok {
			return false
		}
		ag.Name = d.share(s, "", true)
		if !r.lit(`,"model":`) || !d.exactStrPtr(r, &ag.Model, "", true) || !r.lit(`}`) {
			return false
		}
	}
	if r.lit(`,"verifier":{"source":`) {
		v := slot(&d.verifiers, blockLen/4, d.reuse, VerifierOutput{})
		a.Verifier = v
		if s, ok = r.str(); !ok {
			return false
		}
		v.Source = d.share(s, "", true)
		if !r.lit(`,"text":`) {
			return false
		}
		if s, ok = r.str(); !ok {
			return false
		}
		v.Text = string(s)
		return r.lit(`}}`)
	}
	return r.lit(`}`)
}
