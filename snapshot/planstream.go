package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// The streamed read of a canonical plan (OpenTrials, Verify) goes over
// the plan's bytes once, at about the speed of hashing them: planSpan
// finds where the top-level trials array starts as the plan's head is
// read (openPlan), keyWalk reads the trials from there in lockstep with
// the observations, and what follows the array is read last. Neither
// parses what it need not: the plan is canonical as a whole when its head
// (the plan with the array emptied) is, which planStream.finish checks,
// and every trial is, which keyWalk checks trial by trial, most of them
// by matching the exact form tpctl writes.

// planSpan is a lexer of JSON without insignificant whitespace (the
// canonical form): it follows strings, escapes and nesting to find the
// span of the top-level object's "trials" array as the bytes stream by.
// It need only be right for JSON that is valid: on anything else the
// checks after it (the head canonical, the array a canonical array of
// trials) refuse the plan. Those checks make the span right too: its
// start is where a correct lexer says the trials value starts, in bytes
// that are the head's own up to there.
type planSpan struct {
	off        int64 // offset of the next byte
	depth      int
	inStr, esc bool
	wantKey    bool   // at depth 1, the next string is a member name
	inKey      bool   // reading a member name at depth 1
	key        []byte // the member name, as written (escapes undecoded)
	isTrials   bool   // the last member name at depth 1 was "trials"
	valueNext  bool   // the trials value starts at the next byte
	inTrials   bool
	start, end int64 // the trials array; start -1 until found
	closed     int64 // offset just past the top-level object; -1 before
	bad        bool  // not the form a streamed read takes
	one        bool  // stop at the end of the first value (keyWalk's use)
	head       bool  // stop where the trials array starts (openPlan's use)
}

func newPlanSpan() *planSpan { return &planSpan{start: -1, end: -1, closed: -1} }

// feed lexes the next bytes of the plan.
func (s *planSpan) feed(p []byte) {
	for i := 0; i < len(p) && !s.bad && (!s.one || s.closed < 0) && (!s.head || s.start < 0); i++ {
		c := p[i]
		if s.inStr {
			if s.esc {
				s.esc = false
				if s.inKey {
					s.key = append(s.key, c)
				}
				continue
			}
			if !s.inKey {
				// Jump to the next quote or backslash.
				j := bytes.IndexByte(p[i:], '"')
				if j < 0 {
					j = len(p) - i
				}
				if k := bytes.IndexByte(p[i:i+j], '\\'); k >= 0 {
					j = k
				}
				if i += j; i == len(p) {
					break
				}
				c = p[i]
			}
			switch {
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
				if s.inKey {
					s.inKey = false
					s.isTrials = string(s.key) == "trials"
					continue
				}
			}
			if s.inKey {
				s.key = append(s.key, c)
			}
			continue
		}
		at := s.off + int64(i)
		if s.valueNext {
			s.valueNext = false
			if c != '[' || s.start >= 0 {
				s.bad = true // not an array, or a second trials member
				break
			}
			s.start, s.inTrials = at, true
		}
		switch c {
		case '"':
			s.inStr = true
			if s.depth == 1 && s.wantKey {
				s.wantKey, s.inKey, s.key = false, true, s.key[:0]
			}
		case ':':
			if s.depth == 1 && s.isTrials {
				s.isTrials, s.valueNext = false, true
			}
		case ',':
			if s.depth == 1 {
				s.wantKey, s.isTrials = true, false
			}
		case '{', '[':
			if s.depth == 0 && (c != '{' || s.closed >= 0) {
				s.bad = true // the plan is one object
				break
			}
			s.depth++
			if s.depth == 1 {
				s.wantKey = true
			}
		case '}', ']':
			s.depth--
			switch {
			case s.depth < 0:
				s.bad = true
			case s.depth == 1 && s.inTrials:
				s.end, s.inTrials = at+1, false
			case s.depth == 0:
				s.closed = at + 1
			}
		case ' ', '\t', '\r', '\n':
			if s.depth > 0 || s.closed < 0 {
				s.bad = true // whitespace the canonical form has none of
			}
		default:
			if s.depth == 0 {
				s.bad = true
			}
		}
	}
	s.off += int64(len(p))
}

// keyWalk reads the planned trials, one at a time, from the bytes of a
// plan's trials array, in blocks. The array must be in RFC 8785 form:
// '[', trials with nothing between them but commas, ']', and nothing
// after it; each trial is checked before it is handed out, by matching
// the exact form tpctl writes ({"attempts":[{"dir":…,"retry":…},…],
// "repeat":…,"task":…} with plain strings and integers) or, for any
// other, by the canonicalizer. Together with a canonical head, the plan
// is then canonical as a whole.
type keyWalk struct {
	r        io.Reader
	buf      []byte
	pos      int // next byte of buf to read
	eof      bool
	err      error // the read error that ended the array
	n        int   // trials read
	lastTask string
	started  bool
	done     bool
	// tail: the reader goes on after the array (the rest of the plan,
	// for rest); else the array must be all it holds.
	tail bool
}

func newKeyWalk(r io.Reader) *keyWalk { return &keyWalk{r: r} }

var errNotCanonical = errors.New("the trials array is not in the canonical form a streamed read takes")

// maxStreamedTrial bounds one trial of a streamed plan; a larger one
// sends the plan the held way.
const maxStreamedTrial = 1 << 20

// keyWalkBlock is how much a keyWalk reads at a time.
const keyWalkBlock = 256 << 10

// fill makes at least need bytes available from pos, unless the array
// ends first; it reports whether they are.
func (w *keyWalk) fill(need int) bool {
	if len(w.buf)-w.pos >= need {
		return true
	}
	w.buf = w.buf[:copy(w.buf, w.buf[w.pos:])]
	w.pos = 0
	for len(w.buf) < need && !w.eof {
		w.buf = slices.Grow(w.buf, max(need, keyWalkBlock)-len(w.buf))
		n, err := w.r.Read(w.buf[len(w.buf):cap(w.buf)])
		w.buf = w.buf[:len(w.buf)+n]
		if err != nil {
			w.eof = true
			if err != io.EOF {
				w.err = err
			}
		}
	}
	return len(w.buf) >= need
}

// next returns the next trial; ok is false after the last one.
func (w *keyWalk) next() (t trialKey, ok bool, err error) {
	if w.done {
		return t, false, nil
	}
	// A trial (or the end) is read from at least this much, when there
	// is as much; a longer trial is read in more.
	w.fill(64 << 10)
	if w.err != nil {
		return t, false, w.err
	}
	b := w.buf[w.pos:]
	if !w.started {
		w.started = true
		if len(b) == 0 || b[0] != '[' {
			return t, false, errNotCanonical
		}
		w.pos++
		if len(b) > 1 && b[1] == ']' {
			return t, false, w.end(1)
		}
	} else {
		// After a trial: a comma and the next, or the end.
		switch {
		case len(b) > 0 && b[0] == ']':
			return t, false, w.end(1)
		case len(b) > 0 && b[0] == ',':
			w.pos++
		default:
			return t, false, errNotCanonical
		}
	}
	task, repeat, n, ok := exactTrial(w.buf[w.pos:])
	if !ok {
		if task, repeat, n, err = w.otherTrial(); err != nil {
			return t, false, err
		}
	}
	w.pos += n
	w.n++
	if string(task) == w.lastTask {
		t.Task = w.lastTask
	} else {
		t.Task = string(task)
	}
	t.Repeat = repeat
	w.lastTask = t.Task
	return t, true, nil
}

// end checks that the ']' at pos+n-1 is the last byte of the array.
func (w *keyWalk) end(n int) error {
	w.done = true
	w.pos += n
	if w.tail {
		return w.err
	}
	if w.fill(1) || w.err != nil {
		return errors.Join(errNotCanonical, w.err)
	}
	return nil
}

// rest reads what follows the array to the end of the reader, at most
// max bytes, after the last trial (a tail walk).
func (w *keyWalk) rest(max int) ([]byte, error) {
	if !w.done || !w.tail {
		return nil, errNotCanonical
	}
	b := slices.Clone(w.buf[w.pos:])
	w.buf, w.pos = nil, 0
	more, err := io.ReadAll(io.LimitReader(w.r, int64(max-len(b)+1)))
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %w", err)
	}
	if b = append(b, more...); len(b) > max {
		return nil, errNotCanonical
	}
	return b, nil
}

// otherTrial reads a trial not in the exact form from pos: its end
// found by the lexer, its keys by walkTrial (as the plan's decoder reads
// them), its form checked by the canonicalizer.
func (w *keyWalk) otherTrial() (task []byte, repeat, n int, err error) {
	for size := 64 << 10; ; size *= 2 {
		w.fill(size)
		b := w.buf[w.pos:]
		if len(b) == 0 || b[0] != '{' {
			return nil, 0, 0, errNotCanonical
		}
		s := &planSpan{start: -1, end: -1, closed: -1, one: true}
		s.feed(b)
		if s.bad {
			return nil, 0, 0, errNotCanonical
		}
		if s.closed < 0 {
			if w.eof || size >= maxStreamedTrial {
				return nil, 0, 0, errors.Join(errNotCanonical, w.err)
			}
			continue
		}
		trial := b[:s.closed]
		d := jsonscan.NewBytes(trial, jsonscan.Options{MaxDepth: jcs.MaxDepth})
		k, err := d.Next()
		if err != nil {
			return nil, 0, 0, errNotCanonical
		}
		t, ok := walkTrial(d, k)
		if !ok {
			return nil, 0, 0, errNotCanonical
		}
		if _, err := d.Next(); err != io.EOF {
			return nil, 0, 0, errNotCanonical
		}
		if got, err := jcs.Canonical(trial); err != nil || !bytes.Equal(got, trial) {
			return nil, 0, 0, errNotCanonical
		}
		return []byte(t.Task), t.Repeat, len(trial), nil
	}
}

// exactTrial matches a trial in the exact form tpctl writes at the start
// of b, which is then canonical: member names in order, strings of
// printable ASCII with nothing to escape, integers of at most 15 digits
// (which RFC 8785 writes as they are) and no "-0". It returns the task's
// bytes, the repeat and the trial's length.
func exactTrial(b []byte) (task []byte, repeat, n int, ok bool) {
	r := canonReader{b: b}
	if !r.lit(`{"attempts":[`) {
		return nil, 0, 0, false
	}
	if !r.lit(`]`) {
		for {
			if !r.lit(`{"dir":"`) || r.plainStr() == nil || !r.lit(`,"retry":`) {
				return nil, 0, 0, false
			}
			if _, ok := r.integer(); !ok || !r.lit(`}`) {
				return nil, 0, 0, false
			}
			if r.lit(`]`) {
				break
			}
			if !r.lit(`,`) {
				return nil, 0, 0, false
			}
		}
	}
	if !r.lit(`,"repeat":`) {
		return nil, 0, 0, false
	}
	if repeat, ok = r.integer(); !ok || !r.lit(`,"task":"`) {
		return nil, 0, 0, false
	}
	if task = r.plainStr(); task == nil || !r.lit(`}`) {
		return nil, 0, 0, false
	}
	return task, repeat, r.i, true
}

// canonReader matches canonical JSON at a position.
type canonReader struct {
	b []byte
	i int
}

func (r *canonReader) lit(s string) bool {
	if len(r.b)-r.i < len(s) || string(r.b[r.i:r.i+len(s)]) != s {
		return false
	}
	r.i += len(s)
	return true
}

// plainStr reads the rest of a string whose opening quote was read, and
// its closing quote: printable ASCII but the quote and the backslash,
// which RFC 8785 writes as they are. It returns nil for anything else (an
// empty string is an empty, non-nil slice).
func (r *canonReader) plainStr() []byte {
	start := r.i
	for j := start; j < len(r.b); j++ {
		c := r.b[j]
		if c == '"' {
			r.i = j + 1
			return r.b[start:j:j]
		}
		if c < 0x20 || c > 0x7e || c == '\\' {
			return nil
		}
	}
	return nil
}

// integer reads an integer as RFC 8785 writes it: 0, or an optional minus
// and up to 15 digits without a leading zero (every such integer is a
// float64 exactly).
func (r *canonReader) integer() (int, bool) {
	b, i := r.b, r.i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	start := i
	n := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int(b[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 15 || (b[start] == '0' && (digits > 1 || neg)) {
		return 0, false
	}
	if neg {
		n = -n
	}
	r.i = i
	return n, true
}
