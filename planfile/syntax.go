package planfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// pending is a finding whose position is known either as a byte offset
// (off >= 0) or only by its pointer (off < 0, located later).
type pending struct {
	Finding
	off int
}

// pathElem is one step of the current JSON pointer; the string is built
// only when a finding needs it, so the common (valid) path allocates none.
type pathElem struct {
	key   string
	index int
	isIdx bool
}

func pointerOf(path []pathElem) string {
	var b []byte
	for _, e := range path {
		if e.isIdx {
			b = strconv.AppendInt(append(b, '/'), int64(e.index), 10)
		} else {
			b = jsonscan.AppendPointer(b, e.key)
		}
	}
	return string(b)
}

// escapePointer applies RFC 6901 escaping to one reference token.
var escapePointer = jsonscan.EscapePointer

// decoder builds a generic tree (map[string]any, []any, string,
// json.Number, bool, nil) from the plan's tokens (internal/jsonscan). It
// also finds what encoding/json does not report: duplicate member names
// (a finding; the first member is kept) and nesting past MaxDepth. Syntax
// errors are worded for plan authors and placed at the byte where the JSON
// goes wrong. FuzzDecodeTree checks it against encoding/json.
type decoder struct {
	data     []byte
	sc       *jsonscan.Decoder
	path     []pathElem
	found    []pending
	execRaw  []byte
	hasExec  bool
	execWant bool
	stream   *trialStream // nil: build the whole tree (decodeTree)
}

// errStop ends decoding after a finding that makes the rest meaningless.
var errStop = errors.New("stop")

func (d *decoder) syntax(off int, msg string) error {
	d.found = append(d.found, pending{Finding: Finding{
		Severity: SeverityError,
		Code:     CodeJSONSyntax,
		Pointer:  pointerOf(d.path),
		Message:  msg,
		Hint:     "fix the JSON at this line and column (an editor with JSON support shows the exact place)",
	}, off: off})
	return errStop
}

// fail reports the error the scanner's Next returned.
func (d *decoder) fail(err error) error {
	var limit *jsonscan.LimitError
	if errors.As(err, &limit) {
		return d.syntax(int(limit.Offset), fmt.Sprintf("JSON nests deeper than %d levels", MaxDepth))
	}
	f, ok := d.sc.Fault(err)
	if !ok { // a decoder over bytes has no other errors
		return d.syntax(int(d.sc.InputOffset()), "invalid JSON: "+err.Error())
	}
	var what string
	switch f.Part {
	case jsonscan.PartValue:
		what = "looking for the beginning of a value"
		if f.EOF {
			what = "(a value is missing)"
		}
	case jsonscan.PartKey:
		what = "where a member name (a string) was expected"
	case jsonscan.PartColon:
		what = "after a member name (expected ':')"
	case jsonscan.PartObjectComma:
		what = "after an object member (expected ',' or '}')"
	case jsonscan.PartArrayComma:
		what = "after an array element (expected ',' or ']')"
	case jsonscan.PartLiteral:
		what = "in literal " + f.Literal
	case jsonscan.PartNumber:
		what = "in number (expected a digit)"
	case jsonscan.PartFraction:
		what = "after a decimal point (expected a digit)"
	case jsonscan.PartExponent:
		what = "in exponent (expected a digit)"
	case jsonscan.PartString:
		if !f.EOF {
			return d.syntax(int(f.Offset), "invalid JSON: control character in string (escape it, e.g. \\n)")
		}
		what = "in string (missing closing quote)"
	case jsonscan.PartEscape:
		what = "in string escape"
	case jsonscan.PartUnicode:
		what = "in \\u escape (expected 4 hex digits)"
	}
	if f.Part == jsonscan.PartColon || f.Part == jsonscan.PartArrayComma {
		// The walkers put a member's name or an element's index on the
		// path before the Next that reads the separator in front of its
		// value; a missing separator belongs to the container.
		d.path = d.path[:len(d.path)-1]
	}
	if f.EOF {
		return d.syntax(len(d.data), "invalid JSON: unexpected end of input "+what)
	}
	r, _ := utf8.DecodeRune(d.data[f.Offset:])
	return d.syntax(int(f.Offset), fmt.Sprintf("invalid JSON: unexpected character %q %s", r, what))
}

// next reads the next token; a malformed one is reported.
func (d *decoder) next() (jsonscan.Kind, error) {
	k, err := d.sc.Next()
	if err != nil {
		return k, d.fail(err)
	}
	return k, nil
}

// value builds the value whose first token, k, was just read.
func (d *decoder) value(k jsonscan.Kind) (any, error) {
	switch k {
	case jsonscan.BeginObject:
		return d.object()
	case jsonscan.BeginArray:
		return d.array()
	case jsonscan.String:
		return d.sc.String(), nil
	case jsonscan.Number:
		return json.Number(d.sc.Raw()), nil
	case jsonscan.True:
		return true, nil
	case jsonscan.False:
		return false, nil
	}
	return nil, nil // null: Next returns no other kind where a value starts
}

func (d *decoder) object() (any, error) {
	m := make(map[string]any)
	for {
		k, err := d.next()
		if err != nil {
			return nil, err
		}
		if k == jsonscan.EndObject {
			return m, nil
		}
		koff := int(d.sc.Start()) // k is a member name
		key := d.sc.String()
		d.path = append(d.path, pathElem{key: key})
		if k, err = d.next(); err != nil {
			return nil, err
		}
		voff := int(d.sc.Start())
		var v any
		if d.wantsStream(key, m, k) {
			v, err = d.streamTrials()
		} else {
			v, err = d.value(k)
		}
		if err != nil {
			return nil, err
		}
		if d.execWant && d.sc.Depth() == 1 && key == "execution" {
			d.execRaw = bytes.Clone(d.data[voff:d.sc.InputOffset()])
			d.hasExec = true
		}
		if _, dup := m[key]; dup {
			d.found = append(d.found, pending{Finding: Finding{
				Severity: SeverityError,
				Code:     CodeDuplicateKey,
				Pointer:  pointerOf(d.path),
				Message:  fmt.Sprintf("member %q appears more than once in the same object; only the first is used", key),
				Hint:     "keep one of the members and delete the others",
			}, off: koff})
		} else {
			m[key] = v
		}
		d.path = d.path[:len(d.path)-1]
	}
}

func (d *decoder) array() (any, error) {
	a := make([]any, 0, 4)
	for n := 0; ; n++ {
		d.path = append(d.path, pathElem{index: n, isIdx: true})
		k, err := d.next()
		if err != nil {
			return nil, err
		}
		if k == jsonscan.EndArray {
			d.path = d.path[:len(d.path)-1]
			return a, nil
		}
		v, err := d.value(k)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		d.path = d.path[:len(d.path)-1]
	}
}

// decodeTree parses data strictly. ok is false when the document is not
// usable JSON (the findings then say why).
func decodeTree(data []byte, wantExec bool) (root any, d *decoder, ok bool) {
	return decode(data, wantExec, nil)
}

func decode(data []byte, wantExec bool, st *trialStream) (root any, d *decoder, ok bool) {
	d = &decoder{data: data, execWant: wantExec, stream: st,
		sc: jsonscan.NewBytes(data, jsonscan.Options{MaxDepth: MaxDepth})}
	if len(bytes.TrimSpace(data)) == 0 {
		d.syntax(0, "plan is empty")
		return nil, d, false
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		d.syntax(off, "plan is not valid UTF-8")
		return nil, d, false
	}
	k, err := d.next()
	if err == nil {
		root, err = d.value(k)
	}
	if err != nil {
		return nil, d, false
	}
	if off, more := d.sc.Rest(); more {
		d.syntax(int(off), "unexpected data after the end of the plan's JSON object")
		return nil, d, false
	}
	return root, d, true
}

// locate finds the byte offset of each wanted pointer in a document that
// decoded cleanly. An object member is located at its name, an array
// element at its value. Pointers that do not exist (a missing required
// member) fall back to their nearest existing ancestor. want must hold
// every ancestor of each wanted pointer (place adds them): only values
// whose pointer is in want are descended into, everything else is skipped
// without being built, so a few findings in a large plan cost one fast
// pass.
func locate(data []byte, want map[string]int) {
	l := &locator{sc: jsonscan.NewBytes(data, jsonscan.Options{}), want: want}
	if k, err := l.sc.Next(); err == nil {
		l.walk(make([]byte, 0, 64), int(l.sc.Start()), k)
	}
	for ptr, off := range want {
		if off >= 0 {
			continue
		}
		for p := ptr; p != ""; {
			p = parentPointer(p)
			if o, ok := want[p]; ok && o >= 0 {
				want[ptr] = o
				break
			}
		}
	}
}

type locator struct {
	sc   *jsonscan.Decoder
	want map[string]int
}

// walk records the offset of the value at ptr, whose first token k starts
// at off, and consumes the value. It stops quietly on anything
// unexpected: the document was already validated, and a position is only
// a convenience.
func (l *locator) walk(ptr []byte, off int, k jsonscan.Kind) bool {
	o, wanted := l.want[string(ptr)]
	if wanted && o < 0 {
		l.want[string(ptr)] = off
	}
	if !wanted || (k != jsonscan.BeginObject && k != jsonscan.BeginArray) {
		return l.sc.Skip(k) == nil
	}
	for n := 0; ; n++ {
		t, err := l.sc.Next()
		if err != nil {
			return false
		}
		if t == jsonscan.EndObject || t == jsonscan.EndArray {
			return true
		}
		coff := int(l.sc.Start())
		var child []byte
		if k == jsonscan.BeginObject {
			child = jsonscan.AppendPointer(ptr, string(l.sc.Text()))
			if t, err = l.sc.Next(); err != nil {
				return false
			}
		} else {
			child = strconv.AppendInt(append(ptr, '/'), int64(n), 10)
		}
		if !l.walk(child, coff, t) {
			return false
		}
	}
}

// place turns pending findings into located ones: offsets known at parse
// time are used as they are, the rest are found by pointer.
func place(data []byte, ps []pending) []Finding {
	if len(ps) == 0 {
		return []Finding{}
	}
	want := map[string]int{}
	for _, p := range ps {
		if p.off >= 0 {
			continue
		}
		for q := p.Pointer; ; q = parentPointer(q) {
			if _, ok := want[q]; !ok {
				want[q] = -1
			}
			if q == "" {
				break
			}
		}
	}
	if len(want) > 0 {
		locate(data, want)
	}
	offs := make([]int, len(ps))
	for i, p := range ps {
		offs[i] = p.off
		if p.off < 0 {
			offs[i] = want[p.Pointer]
		}
	}
	// Findings without any position (none of their ancestors exist) keep
	// line 0; they are left out of the pass.
	known := make([]int, 0, len(offs))
	for _, off := range offs {
		if off >= 0 {
			known = append(known, off)
		}
	}
	pos := jsonscan.Positions(data, known)
	out := make([]Finding, 0, len(ps))
	k := 0
	for i, p := range ps {
		f := p.Finding
		if offs[i] >= 0 {
			f.Line, f.Column = pos[k][0], pos[k][1]
			k++
		}
		out = append(out, f)
	}
	return out
}

// parentPointer drops the last reference token of a JSON pointer.
func parentPointer(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}
