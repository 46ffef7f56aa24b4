package harbor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/internal/jsonscan"
	"github.com/tuneplane/tpctl/internal/safefs"
)

// maxDepth bounds nesting so a hostile file of "[[[[…" cannot exhaust the
// stack; Harbor's deepest objects (config.environment.mounts…) are < 10.
const maxDepth = 256

// maxUnknownPointers bounds TrialResult.UnknownFieldPointers.
const maxUnknownPointers = 16

// maxMembers bounds the keys of an object tpctl interprets and the number
// of steps, so memory stays proportional to the (capped) input and never
// many times it: Harbor writes a handful of reward keys and steps.
const maxMembers = 4096

// DecodeError is a result.json that is not well-formed JSON or not Harbor's
// TrialResult shape. Offset is the byte offset where the problem was found;
// Pointer is the JSON pointer (RFC 6901) of the value being read ("" is the
// document root).
type DecodeError struct {
	Offset  int64
	Pointer string
	Reason  string
}

func (e *DecodeError) Error() string {
	if e.Pointer == "" {
		return fmt.Sprintf("at byte %d: %s", e.Offset, e.Reason)
	}
	return fmt.Sprintf("at byte %d (%s): %s", e.Offset, e.Pointer, e.Reason)
}

// TooLargeError is a result.json bigger than the size cap.
type TooLargeError struct {
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("result is larger than the %d MiB cap for one result.json; this is not a Harbor trial result", e.Limit>>20)
}

// DecodeTrialResult reads one Harbor trial result.json (either validated
// revision) from r. It reads at most MaxResultSize+1 bytes (and none at all
// when r can Stat itself and is too big), never panics, and returns a
// *DecodeError, a *TooLargeError or a wrapped read error.
//
// Python's bare NaN, Infinity and -Infinity tokens (json.dumps writes them;
// Go's encoding/json refuses them) are accepted anywhere a number may stand
// and kept as such, so a NaN reward stays visible to the outcome rules.
func DecodeTrialResult(r io.Reader) (*TrialResult, error) {
	data, err := readCapped(r, MaxResultSize)
	if err != nil {
		return nil, err
	}
	return decodeBytes(data, false)
}

// DecodeTrialResultBytes is DecodeTrialResult for a result already in
// memory (the importer reads files into reused buffers). data is not
// retained: every string is copied out of it.
func DecodeTrialResultBytes(data []byte) (*TrialResult, error) {
	if int64(len(data)) > MaxResultSize {
		return nil, &TooLargeError{Limit: MaxResultSize}
	}
	return decodeBytes(data, false)
}

// DecodeTrialResultForImport is DecodeTrialResultBytes for the importer,
// which reads only what outcome.Judge needs plus TaskName, TaskChecksum,
// VerifierEnvironmentMode and the unknown fields. It checks the whole
// file exactly as DecodeTrialResultBytes does (same errors, same unknown
// fields), but copies no text nobody reads: ID, TrialName, TaskID, Source,
// Agent.Version, Agent.ModelProvider, StartedAt, FinishedAt and
// ExceptionInfo.OccurredAt stay empty.
func DecodeTrialResultForImport(data []byte) (*TrialResult, error) {
	if int64(len(data)) > MaxResultSize {
		return nil, &TooLargeError{Limit: MaxResultSize}
	}
	return decodeBytes(data, true)
}

// readCapped reads r through safefs.ReadCapped and gives its refusals
// this package's error types.
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	data, err := safefs.ReadCapped(r, "result", limit)
	var tl *safefs.TooLargeError
	if errors.As(err, &tl) {
		return nil, &TooLargeError{Limit: limit}
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read result: %w", err)
	}
	return data, nil
}

// scanOpts reads Harbor's files: Python writes NaN and Infinity, and the
// nesting cap keeps a hostile "[[[[…" from growing the scanner's stack.
var scanOpts = jsonscan.Options{NonFinite: true, MaxDepth: maxDepth}

// decoder is the typed walker over jsonscan's tokens. It keeps
// encoding-level errors in this package's own words (DecodeError reasons
// reach users in import warnings), translating the scanner's.
type decoder struct {
	s       jsonscan.Decoder
	sub     jsonscan.Decoder // reads timing and usage objects (extras.go)
	data    []byte
	path    []string // JSON pointer segments of the value being read
	pathBuf [8]string
	buf     []byte // unescaped string text
	res     *TrialResult
	// lean leaves out what outcome.Judge and the importer never read
	// (DecodeTrialResultForImport), checking it all the same.
	lean bool

	// times holds the text of the phase timings' started_at and
	// finished_at (timing), cut into strings of one allocation when the
	// whole result has been read (finishTimings); timeAt says where.
	times  []byte
	timeAt [4]timingText

	// scratch says the result is ReadAttempt's, which reads it and drops
	// it before release: then result, timings and usage hold it and what
	// it points to, and the decoder allocates them once, not per file.
	scratch bool
	result  TrialResult
	timings [4]timingWithText
	usage   [2]usageValues
	agent   AgentInfo
	// verifier and rewardBuf hold the trial-level verifier_result.
	verifier  VerifierResult
	rewardBuf []Reward

	// interned are strings read before, reused (internTable).
	interned internTable
}

func decodeBytes(data []byte, lean bool) (*TrialResult, error) {
	d := decoders.Get().(*decoder)
	defer d.release()
	res := &TrialResult{}
	if err := d.decode(data, lean, res); err != nil {
		return nil, err
	}
	return res, nil
}

// decodeForImport is DecodeTrialResultForImport into the decoder's own
// result: it and what it points to are the caller's only until release,
// and strings are copied out of data as always. ReadAttempt reads a
// result this way; a TrialResult and its timings per file were a fifth
// of an import's allocated bytes.
func (d *decoder) decodeForImport(data []byte) (*TrialResult, error) {
	if int64(len(data)) > MaxResultSize {
		return nil, &TooLargeError{Limit: MaxResultSize}
	}
	d.result = TrialResult{}
	if err := d.decode(data, true, &d.result); err != nil {
		return nil, err
	}
	return &d.result, nil
}

// decode reads one result from data into res, which is zero: the
// decoder's own result (decodeForImport) or a new one.
func (d *decoder) decode(data []byte, lean bool, res *TrialResult) error {
	d.scratch = res == &d.result
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return &DecodeError{Offset: int64(off), Reason: "invalid UTF-8; Harbor writes result.json as UTF-8"}
	}
	d.s.Reset(data, scanOpts)
	d.data, d.res, d.lean, d.path = data, res, lean, d.pathBuf[:0]
	d.times, d.timeAt = d.times[:0], [4]timingText{}
	k, err := d.s.Next()
	if err == io.EOF {
		return d.errAt(d.end(), 0, "empty input: result.json has no JSON content (Harbor writes it only when a trial ends; the trial may have been killed)")
	}
	if err != nil {
		return d.fail(err, topObject, 0, 0, 0)
	}
	if k != jsonscan.BeginObject {
		return d.wrongType(topObject, k)
	}
	if err := d.topLevel(); err != nil {
		return err
	}
	if _, err := d.s.Next(); err != io.EOF {
		off := d.s.InputOffset()
		if err == nil {
			off = d.s.Start()
		}
		return d.errAt(off, 0, "unexpected %s after the top-level object", d.describe(off))
	}
	d.finishTimings()
	return nil
}

// decoders are reused: a decoder's scanner stack and text buffer would
// otherwise be allocated again for each of an import's many small files.
var decoders = sync.Pool{New: func() any { return new(decoder) }}

// maxPooledInput is the largest input after which a decoder goes back to
// the pool: its buffers grow with the text it unescaped, at most the
// input's size, and a rare big result must not stay pinned.
const maxPooledInput = 64 << 10

// release returns d to the pool holding nothing of the input or result.
func (d *decoder) release() {
	if len(d.data) > maxPooledInput {
		return
	}
	d.s.Reset(nil, scanOpts)
	d.data, d.res = nil, nil
	clear(d.pathBuf[:])
	d.path = nil
	d.scratch, d.result, d.timings = false, TrialResult{}, [4]timingWithText{}
	d.agent, d.verifier = AgentInfo{}, VerifierResult{}
	clear(d.rewardBuf[:cap(d.rewardBuf)])
	d.rewardBuf = d.rewardBuf[:0]
	decoders.Put(d)
}

func (d *decoder) end() int64 { return int64(len(d.data)) }

// pointer renders the first n segments of the path as an RFC 6901 JSON
// pointer.
func (d *decoder) pointer(n int) string {
	var b []byte
	for _, s := range d.path[:max(n, 0)] {
		b = jsonscan.AppendPointer(b, s)
	}
	return string(b)
}

// errAt is a DecodeError at offset off naming the first n path segments.
func (d *decoder) errAt(off int64, n int, format string, args ...any) error {
	return &DecodeError{Offset: off, Pointer: d.pointer(n), Reason: fmt.Sprintf(format, args...)}
}

var byteOrderMark = []byte("\uFEFF")

// describe names the byte at off for error messages.
func (d *decoder) describe(off int64) string {
	if off >= d.end() {
		return "end of input (the file is truncated)"
	}
	c := d.data[off]
	if c >= 0x20 && c < 0x7f {
		return strconv.Quote(string(c))
	}
	if bytes.HasPrefix(d.data[off:], byteOrderMark) {
		return "byte order mark"
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// want is the JSON types a value may have where the walker reads it, and
// how an error names them.
type want struct {
	kinds uint8 // a bit per Kind; 0 accepts any value
	name  string
}

func (w want) accepts(k Kind) bool { return w.kinds == 0 || w.kinds&(1<<k) != 0 }

var (
	anyValue   = want{}
	aString    = want{1 << KindString, "a string"}
	optString  = want{1<<KindString | 1<<KindNull, "a string or null"}
	anObject   = want{1 << KindObject, "an object"}
	optObject  = want{1<<KindObject | 1<<KindNull, "an object or null"}
	optArray   = want{1<<KindArray | 1<<KindNull, "an array or null"}
	optRewards = want{1<<KindObject | 1<<KindNull, "an object of reward values or null"}
	aStep      = want{1 << KindObject, "a step result object"}
	topObject  = want{1 << KindObject, "a JSON object (a Harbor TrialResult) at the top level"}
)

// kindOf is the Kind of a value whose first token is k.
func kindOf(k jsonscan.Kind) Kind {
	switch k {
	case jsonscan.BeginObject:
		return KindObject
	case jsonscan.BeginArray:
		return KindArray
	case jsonscan.String:
		return KindString
	case jsonscan.Number:
		return KindNumber
	case jsonscan.True, jsonscan.False:
		return KindBool
	case jsonscan.Null:
		return KindNull
	}
	return 0
}

// wrongType reports a value of the wrong JSON type at the current path.
func (d *decoder) wrongType(w want, k jsonscan.Kind) error {
	return d.errAt(d.s.Start(), len(d.path), "expected %s, found %s", w.name, kindOf(k))
}

// fail translates an error of Next into this package's message. The
// pointer names the first valueN path segments when a value was expected,
// structN when a key, ':' or ',' was, and glueN when a number or literal
// ran into letters or digits (the value just read).
func (d *decoder) fail(err error, w want, valueN, structN, glueN int) error {
	ctx := d.s.Expected()
	if err == io.EOF {
		var reason string
		switch ctx {
		case jsonscan.PartValue:
			return d.errAt(d.end(), valueN, "unexpected end of input: the file is truncated")
		case jsonscan.PartKey:
			reason = "expected a quoted object key, found end of input (the file is truncated)"
		case jsonscan.PartColon:
			reason = "expected ':' after an object key, found end of input (the file is truncated)"
		case jsonscan.PartObjectComma:
			reason = "expected ',' or '}', found end of input (the file is truncated)"
		default:
			reason = "expected ',' or ']', found end of input (the file is truncated)"
		}
		return d.errAt(d.end(), structN, "%s", reason)
	}
	var le *jsonscan.LimitError
	if errors.As(err, &le) {
		if k := kindOf(jsonscan.StartKind(d.data[le.Offset], scanOpts)); !w.accepts(k) {
			return d.errAt(le.Offset, valueN, "expected %s, found %s", w.name, k)
		}
		return d.errAt(le.Offset+1, valueN, "nesting deeper than %d levels", maxDepth)
	}
	var se *jsonscan.SyntaxError
	if !errors.As(err, &se) && err != io.ErrUnexpectedEOF {
		return d.errAt(d.s.InputOffset(), valueN, "%v", err) // a read error: none from memory
	}
	off := d.s.InputOffset()
	c := d.data[off]
	switch ctx {
	case jsonscan.PartValue:
		if k := jsonscan.StartKind(c, scanOpts); k != jsonscan.Invalid {
			return d.badToken(err, off, w, valueN)
		}
		return d.errAt(off, valueN, "expected a JSON value, found %s", d.describe(off))
	case jsonscan.PartKey:
		if c == '"' {
			return d.badToken(err, off, anyValue, structN)
		}
		return d.errAt(off, structN, "expected a quoted object key, found %s", d.describe(off))
	case jsonscan.PartColon:
		return d.errAt(off, structN, "expected ':' after an object key, found %s", d.describe(off))
	}
	if d.glued(off) {
		return d.errAt(off, glueN, "invalid literal: unexpected %s", d.describe(off))
	}
	if ctx == jsonscan.PartObjectComma {
		return d.errAt(off, structN, "expected ',' or '}' after an object member, found %s", d.describe(off))
	}
	return d.errAt(off, structN, "expected ',' or ']' after an array element, found %s", d.describe(off))
}

func isAlnum(c byte) bool { return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z' }

// glued reports a letter, digit or '_' right after a number or literal
// ("truex", "NaNa", "01"): it is refused as part of that token.
func (d *decoder) glued(off int64) bool {
	c := d.data[off]
	return (c == '_' || isAlnum(c)) && off > 0 && isAlnum(d.data[off-1])
}

// badToken explains the invalid string, number or literal at start, where
// Next failed with err.
func (d *decoder) badToken(err error, start int64, w want, n int) error {
	k := kindOf(jsonscan.StartKind(d.data[start], scanOpts))
	if !w.accepts(k) {
		return d.errAt(start, n, "expected %s, found %s", w.name, k)
	}
	f, _ := d.s.Fault(err)
	off := f.Offset
	switch k {
	case KindString:
		switch {
		case f.EOF:
		case f.Part == jsonscan.PartString:
			return d.errAt(off, n, "control character 0x%02x inside a string", d.data[off])
		case f.Part == jsonscan.PartEscape:
			return d.errAt(off-1, n, "invalid escape %q in string", d.data[off-1:off+1])
		case f.Part == jsonscan.PartUnicode:
			if b := start + int64(bytes.LastIndexByte(d.data[start:off], '\\')); b+6 <= d.end() {
				return d.errAt(b, n, `invalid \u escape in string`)
			}
		}
		return d.errAt(d.end(), n, "unterminated string starting at byte %d (the file is truncated)", start)
	case KindNumber:
		switch f.Part {
		case jsonscan.PartFraction:
			return d.errAt(off, n, "invalid number: expected a digit after '.', found %s", d.describe(off))
		case jsonscan.PartExponent:
			return d.errAt(off, n, "invalid number: expected a digit in the exponent, found %s", d.describe(off))
		}
		at := start
		if d.data[start] == '-' {
			at++
		}
		return d.errAt(start, n, "invalid number: expected a digit, found %s", d.describe(at))
	}
	word := "null"
	switch d.data[start] {
	case 't':
		word = "true"
	case 'f':
		word = "false"
	}
	if f.EOF {
		return d.errAt(start, n, "unexpected end of input inside %q (the file is truncated)", word)
	}
	return d.errAt(start, n, "invalid literal: expected %q, found %s", word, d.describe(start))
}

// value reads the first token of the value at the current path (its key
// or index pushed) and checks its type.
func (d *decoder) value(w want) (jsonscan.Kind, error) {
	k, err := d.s.Next()
	if err != nil {
		n := len(d.path)
		return k, d.fail(err, w, n, n-1, n)
	}
	if !w.accepts(kindOf(k)) {
		return k, d.wrongType(w, k)
	}
	return k, nil
}

// skip walks the rest of a value whose first token was k; errors inside
// name the skipped value.
func (d *decoder) skip(k jsonscan.Kind) error {
	if err := d.s.Skip(k); err != nil {
		n := len(d.path)
		return d.fail(err, anyValue, n, n, n)
	}
	return nil
}

func (d *decoder) str() (string, error) {
	if _, err := d.value(aString); err != nil {
		return "", err
	}
	return d.text(), nil
}

// text is the last string token's text, copied out of the input.
func (d *decoder) text() string {
	raw := d.s.Raw()
	body := raw[1 : len(raw)-1]
	if !d.s.Verbatim() {
		d.buf = jsonscan.AppendUnquoted(d.buf[:0], body)
		body = d.buf
	}
	return d.interned.of(body)
}

// internTable holds the short strings a decoder read last, by a hash of
// their bytes: the files of one import repeat most of their text (task
// names and checksums, agent and model names, reward values), and a
// string read again is then not allocated again. They survive release:
// they are immutable copies, at most 64 × maxInterned bytes.
type internTable [64]string

// maxInterned is the longest text an internTable keeps.
const maxInterned = 128

// of is b as a string: the one kept when it is there, else a new one,
// then kept.
func (t *internTable) of(b []byte) string {
	n := len(b)
	if n == 0 || n > maxInterned {
		return string(b)
	}
	// Names differ most at their end (task-00041), checksums anywhere.
	h := (uint(n) + 7*uint(b[n-1]) + 31*uint(b[n/2]) + 131*uint(b[0])) % uint(len(t))
	if s := t[h]; s == string(b) {
		return s
	}
	s := string(b)
	t[h] = s
	return s
}

// extra reads a string or null that only DecodeTrialResult's callers
// see: under lean it is checked, not built, and ok is false.
func (d *decoder) extra(w want) (s string, ok bool, err error) {
	k, err := d.value(w)
	if err != nil || k == jsonscan.Null || d.lean {
		return "", false, err
	}
	return d.text(), true, nil
}

// extraPtr is extra for an optional field.
func (d *decoder) extraPtr() (*string, error) {
	s, ok, err := d.extra(optString)
	if !ok {
		return nil, err
	}
	kept := s // only a kept string goes to the heap
	return &kept, nil
}

// optText reads a string or null; ok is false for null.
func (d *decoder) optText() (s string, ok bool, err error) {
	k, err := d.value(optString)
	if err != nil || k == jsonscan.Null {
		return "", false, err
	}
	return d.text(), true, nil
}

func (d *decoder) optStr() (*string, error) {
	s, ok, err := d.optText()
	if !ok {
		return nil, err
	}
	kept := s // only a kept string goes to the heap
	return &kept, nil
}

// check reads a value of type w and skips it.
func (d *decoder) check(w want) error {
	k, err := d.value(w)
	if err != nil {
		return err
	}
	return d.skip(k)
}

// timing reads the TimingInfo or null of phase i (0 environment_setup,
// 1 agent_setup, 2 agent_execution, 3 verifier) and reports whether it
// was an object (the phase started); finishTimings sets the result's
// Timings.
func (d *decoder) timing(i int) (bool, error) {
	raw, ok, err := d.optObjectRaw()
	if ok {
		d.timeAt[i] = parseTiming(&d.sub, raw, &d.times)
	}
	return ok, err
}

// agentResult reads an AgentContext or null and adds its counts to the
// result's Usage (a multi-step trial sums its steps').
func (d *decoder) agentResult() error {
	raw, ok, err := d.optObjectRaw()
	if ok {
		var vals *usageValues
		if d.scratch {
			// The first counts are the result's; later ones are only
			// added to them.
			vals = &d.usage[0]
			if !d.res.Usage.IsZero() {
				vals = &d.usage[1]
			}
		}
		u := parseUsage(&d.sub, raw, vals)
		if d.res.Usage.IsZero() {
			// The first counts are taken as they are, as add would give
			// them but for a cost of -0, which the sum 0 + -0 makes 0.
			if u.CostUSD != nil && *u.CostUSD == 0 {
				*u.CostUSD = 0
			}
			d.res.Usage = u
		} else {
			d.res.Usage.add(u)
		}
	}
	return err
}

// optObjectRaw reads an object or null, returning the object's bytes.
func (d *decoder) optObjectRaw() ([]byte, bool, error) {
	k, err := d.value(optObject)
	if err != nil || k == jsonscan.Null {
		return nil, false, err
	}
	start := d.s.Start()
	if err := d.skip(k); err != nil {
		return nil, false, err
	}
	return d.data[start:d.s.InputOffset()], true, nil
}

// raw reads any value as written. Nested objects and arrays are checked
// for syntax only.
func (d *decoder) raw() (Value, error) {
	k, err := d.value(anyValue)
	if err != nil {
		return Value{}, err
	}
	start := d.s.Start()
	if err := d.skip(k); err != nil {
		return Value{}, err
	}
	return Value{Kind: kindOf(k), Raw: d.interned.of(d.data[start:d.s.InputOffset()])}, nil
}

// unknown counts and skips a key tpctl does not know.
func (d *decoder) unknown() error {
	d.res.UnknownFields++
	if len(d.res.UnknownFieldPointers) < maxUnknownPointers {
		d.res.UnknownFieldPointers = append(d.res.UnknownFieldPointers, d.pointer(len(d.path)))
	}
	return d.check(anyValue)
}

// members walks the keys of an object tpctl interprets. Duplicate keys
// are refused: Python keeps the last one silently, which would let a file
// say two things at once.
type members struct {
	n0    int    // path length of the object itself
	known uint64 // knownKeyNames seen, a bit each
	seen  keySet // other keys seen
}

func (d *decoder) members() members { return members{n0: len(d.path)} }

// next reads the next key and pushes it on the path (it stays there while
// its value is read); ok is false at the end of the object.
func (d *decoder) next(o *members) (key string, ok bool, err error) {
	k, err := d.s.Next()
	if err != nil {
		return "", false, d.fail(err, anyValue, len(d.path), o.n0, len(d.path))
	}
	d.path = d.path[:o.n0]
	if k == jsonscan.EndObject {
		return "", false, nil
	}
	keyAt := d.s.Start()
	if bits.OnesCount64(o.known)+o.seen.len() >= maxMembers {
		return "", false, d.errAt(keyAt, o.n0, "object has more than %d keys; this is not a Harbor trial result", maxMembers)
	}
	text := d.s.Text()
	var dup bool
	if i := knownKeyIndex(text); i >= 0 {
		key = knownKeyNames[i]
		dup = o.known&(1<<i) != 0
		o.known |= 1 << i
	} else {
		key = string(text)
		dup = !o.seen.add(key)
	}
	if dup {
		return "", false, d.errAt(keyAt, o.n0, "duplicate key %q", key)
	}
	d.path = append(d.path, key)
	return key, true, nil
}

// object reads the members of the object whose '{' was just read, calling
// member with each key (on the path while member reads its value); it
// stops at the first error.
func (d *decoder) object(member func(key string) error) error {
	o := d.members()
	for {
		key, ok, err := d.next(&o)
		if err != nil || !ok {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
	}
}

// keySet holds an object's other keys for duplicate detection: a slice
// while small, a map beyond.
type keySet struct {
	few  [16]string
	n    int
	many map[string]struct{}
}

func (s *keySet) len() int { return s.n }

// add records key and reports whether it was new.
func (s *keySet) add(key string) bool {
	if s.many != nil {
		if _, dup := s.many[key]; dup {
			return false
		}
		s.many[key] = struct{}{}
		s.n++
		return true
	}
	for _, k := range s.few[:s.n] {
		if k == key {
			return false
		}
	}
	if s.n < len(s.few) {
		s.few[s.n] = key
		s.n++
		return true
	}
	s.many = make(map[string]struct{}, 2*len(s.few))
	for _, k := range s.few {
		s.many[k] = struct{}{}
	}
	s.many[key] = struct{}{}
	s.n++
	return true
}

// knownKeyNames are the member names the walker looks for; a name's
// index is its bit for duplicate detection. Reading one as a key
// allocates nothing (a string per key was a twentieth of an import's
// CPU time, a map of seen keys per big object a tenth of the decoding
// time).
var knownKeyNames = [...]string{
	"agent_execution", "agent_info", "agent_result", "agent_setup", "config", "environment_setup",
	"exception_info", "exception_message", "exception_traceback", "exception_type", "finished_at",
	"git_commit_id", "git_url", "id", "model_info", "name", "occurred_at", "org", "path", "provider",
	"ref", "reward", "rewards", "source", "started_at", "step_name", "step_results", "task_checksum",
	"task_id", "task_name", "trial_name", "trial_uri", "verifier", "verifier_environment_mode",
	"verifier_result", "version",
}

// knownKeyIndex is the index of key in knownKeyNames, -1 for any other
// key. A switch over the constant names: next asks for every key of
// every file, and a map lookup was three times slower (TestKnownKeyIndex
// keeps the two lists the same).
func knownKeyIndex(key []byte) int {
	switch string(key) {
	case "agent_execution":
		return 0
	case "agent_info":
		return 1
	case "agent_result":
		return 2
	case "agent_setup":
		return 3
	case "config":
		return 4
	case "environment_setup":
		return 5
	case "exception_info":
		return 6
	case "exception_message":
		return 7
	case "exception_traceback":
		return 8
	case "exception_type":
		return 9
	case "finished_at":
		return 10
	case "git_commit_id":
		return 11
	case "git_url":
		return 12
	case "id":
		return 13
	case "model_info":
		return 14
	case "name":
		return 15
	case "occurred_at":
		return 16
	case "org":
		return 17
	case "path":
		return 18
	case "provider":
		return 19
	case "ref":
		return 20
	case "reward":
		return 21
	case "rewards":
		return 22
	case "source":
		return 23
	case "started_at":
		return 24
	case "step_name":
		return 25
	case "step_results":
		return 26
	case "task_checksum":
		return 27
	case "task_id":
		return 28
	case "task_name":
		return 29
	case "trial_name":
		return 30
	case "trial_uri":
		return 31
	case "verifier":
		return 32
	case "verifier_environment_mode":
		return 33
	case "verifier_result":
		return 34
	case "version":
		return 35
	}
	return -1
}

func (d *decoder) topLevel() error {
	r := d.res
	var haveTask, haveTrial, haveChecksum bool
	err := d.object(func(key string) (err error) {
		switch key {
		case "id":
			r.ID, _, err = d.extra(aString)
		case "task_name":
			r.TaskName, err = d.str()
			haveTask = true
		case "trial_name":
			r.TrialName, _, err = d.extra(aString)
			haveTrial = true
		case "task_checksum":
			r.TaskChecksum, err = d.str()
			haveChecksum = true
		case "trial_uri":
			err = d.check(aString)
		case "task_id":
			err = d.taskID(&r.TaskID)
		case "source":
			r.Source, err = d.extraPtr()
		case "config":
			err = d.check(anObject)
		case "agent_info":
			err = d.agentInfo()
		case "agent_result":
			err = d.agentResult()
		case "environment_setup":
			r.Phases.EnvironmentSetup, err = d.timing(0)
		case "agent_setup":
			r.Phases.AgentSetup, err = d.timing(1)
		case "agent_execution":
			r.Phases.AgentExecution, err = d.timing(2)
		case "verifier":
			r.Phases.Verifier, err = d.timing(3)
		case "verifier_result":
			r.Verifier, err = d.verifierResult(true)
		case "verifier_environment_mode":
			r.HasVerifierEnvironmentMode = true
			r.VerifierEnvironmentMode, err = d.optStr()
		case "exception_info":
			r.Exception, err = d.exceptionInfo()
		case "started_at":
			r.StartedAt, err = d.extraPtr()
		case "finished_at":
			r.FinishedAt, err = d.extraPtr()
		case "step_results":
			err = d.stepResults()
		default:
			err = d.unknown()
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, f := range []struct {
		ok   bool
		name string
	}{{haveTask, "task_name"}, {haveTrial, "trial_name"}, {haveChecksum, "task_checksum"}} {
		if !f.ok {
			return d.errAt(d.s.InputOffset(), 0, "missing required field %q: this is not a Harbor trial result.json", f.name)
		}
	}
	return nil
}

func (d *decoder) taskID(t *TaskID) error {
	if _, err := d.value(anObject); err != nil {
		return err
	}
	var hasOrg, hasGit bool
	err := d.object(func(key string) error {
		var dst *string
		switch key {
		case "path":
			dst = &t.Path
		case "git_url":
			dst = &t.GitURL
		case "git_commit_id":
			dst = &t.GitCommitID
		case "org":
			dst = &t.Org
		case "name":
			dst = &t.Name
		case "ref":
			dst = &t.Ref
		default:
			return d.unknown()
		}
		s, ok, err := d.extra(optString)
		if ok && err == nil {
			*dst = s
			hasOrg = hasOrg || key == "org"
			hasGit = hasGit || key == "git_url"
		}
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case d.lean:
	case hasOrg:
		t.Kind = "package"
	case hasGit:
		t.Kind = "git"
	default:
		t.Kind = "local"
	}
	return nil
}

func (d *decoder) agentInfo() error {
	k, err := d.value(optObject)
	if err != nil || k == jsonscan.Null {
		return err
	}
	// Kept under lean too: the importer records the agent and model.
	a := &d.agent
	if !d.scratch {
		a = &AgentInfo{}
	}
	*a = AgentInfo{}
	err = d.object(func(key string) (err error) {
		switch key {
		case "name":
			a.Name, err = d.str()
		case "version":
			a.Version, _, err = d.extra(aString)
		case "model_info":
			err = d.modelInfo(a)
		default:
			err = d.unknown()
		}
		return err
	})
	if err != nil {
		return err
	}
	d.res.Agent = a
	return nil
}

func (d *decoder) modelInfo(a *AgentInfo) error {
	k, err := d.value(optObject)
	if err != nil || k == jsonscan.Null {
		return err
	}
	a.HasModel = true
	return d.object(func(key string) (err error) {
		switch key {
		case "name":
			a.ModelName, err = d.str()
		case "provider":
			a.ModelProvider, err = d.extraPtr()
		default:
			err = d.unknown()
		}
		return err
	})
}

// verifierResult reads a verifier_result: the trial's (top) or a step's.
func (d *decoder) verifierResult(top bool) (*VerifierResult, error) {
	k, err := d.value(optObject)
	if err != nil || k == jsonscan.Null {
		return nil, err
	}
	var v *VerifierResult
	if top && d.scratch {
		v = &d.verifier
		*v = VerifierResult{}
	} else {
		v = &VerifierResult{}
	}
	return v, d.object(func(key string) (err error) {
		switch key {
		case "rewards":
			err = d.rewards(v)
		case "reward":
			var val Value
			if val, err = d.raw(); err == nil {
				v.LegacyReward = &val
			}
		default:
			err = d.unknown()
		}
		return err
	})
}

func (d *decoder) rewards(v *VerifierResult) error {
	k, err := d.value(optRewards)
	if err != nil || k == jsonscan.Null {
		return err
	}
	v.HasRewards = true
	v.Rewards = []Reward{}
	own := v == &d.verifier
	if own {
		if d.rewardBuf == nil {
			d.rewardBuf = make([]Reward, 0, 4)
		}
		v.Rewards = d.rewardBuf[:0]
	}
	err = d.object(func(name string) error {
		val, err := d.raw()
		if err == nil {
			v.Rewards = append(v.Rewards, Reward{Key: name, Value: val})
		}
		return err
	})
	if own {
		d.rewardBuf = v.Rewards[:0] // grown, for the next result
	}
	return err
}

func (d *decoder) exceptionInfo() (*ExceptionInfo, error) {
	k, err := d.value(optObject)
	if err != nil || k == jsonscan.Null {
		return nil, err
	}
	start := d.s.Start()
	e := &ExceptionInfo{}
	var haveType bool
	err = d.object(func(key string) (err error) {
		switch key {
		case "exception_type":
			e.Type, err = d.str()
			haveType = true
		case "exception_message":
			e.Message, _, err = d.optText()
		case "occurred_at":
			e.OccurredAt, _, err = d.extra(optString)
		case "exception_traceback":
			err = d.check(optString)
		default:
			err = d.unknown()
		}
		return err
	})
	if err != nil {
		return e, err
	}
	if !haveType {
		return nil, d.errAt(start, len(d.path), "exception_info has no exception_type")
	}
	return e, nil
}

func (d *decoder) stepResults() error {
	k, err := d.value(optArray)
	if err != nil || k == jsonscan.Null {
		return err
	}
	d.res.MultiStep = true
	d.res.Steps = []StepResult{}
	n0 := len(d.path)
	for i := 0; ; i++ {
		prevEnd := d.s.InputOffset()
		d.path = append(d.path[:n0], strconv.Itoa(i))
		k, err := d.s.Next()
		switch {
		case err == nil && k == jsonscan.EndArray:
			d.path = d.path[:n0]
			return nil
		case i >= maxMembers && (err == nil || d.s.Expected() == jsonscan.PartValue):
			// Harbor writes a handful of steps; the count is checked
			// right after the comma, before the element.
			off := prevEnd + int64(bytes.IndexByte(d.data[prevEnd:], ',')) + 1
			return d.errAt(off, len(d.path), "more than %d step results; this is not a Harbor trial result", maxMembers)
		case err != nil:
			return d.fail(err, aStep, n0+1, n0, n0)
		case k != jsonscan.BeginObject:
			return d.wrongType(aStep, k)
		}
		s, err := d.step(d.s.Start())
		if err != nil {
			return err
		}
		d.res.Steps = append(d.res.Steps, s)
	}
}

// step reads one step result whose '{' is at start.
func (d *decoder) step(start int64) (StepResult, error) {
	var s StepResult
	var haveName bool
	err := d.object(func(key string) (err error) {
		switch key {
		case "step_name":
			s.Name, err = d.str()
			haveName = true
		case "verifier_result":
			s.Verifier, err = d.verifierResult(false)
		case "exception_info":
			s.Exception, err = d.exceptionInfo()
		case "agent_result":
			err = d.agentResult()
		case "agent_execution", "verifier":
			err = d.check(optObject)
		default:
			err = d.unknown()
		}
		return err
	})
	if err != nil {
		return s, err
	}
	if !haveName {
		return s, d.errAt(start, len(d.path), "step result has no step_name")
	}
	return s, nil
}
