package planfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
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
	var sb strings.Builder
	for _, e := range path {
		sb.WriteByte('/')
		if e.isIdx {
			sb.WriteString(strconv.Itoa(e.index))
		} else {
			sb.WriteString(escapePointer(e.key))
		}
	}
	return sb.String()
}

// escapePointer applies RFC 6901 escaping to one reference token.
func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// decoder builds a generic tree (map[string]any, []any, string,
// json.Number, bool, nil) from the plan's bytes. It is a small
// hand-written scanner rather than json.Decoder.Token, which allocates and
// formats an error per token and made parsing slower than the lstat calls
// of a check; it also finds what encoding/json does not report: duplicate
// member names and nesting past MaxDepth. Errors carry exact offsets.
// FuzzDecodeTree checks it against encoding/json.
type decoder struct {
	data     []byte
	i        int
	path     []pathElem
	depth    int
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

// unexpected reports the byte at the cursor (or the end of input).
func (d *decoder) unexpected(what string) error {
	if d.i >= len(d.data) {
		return d.syntax(len(d.data), "invalid JSON: unexpected end of input "+what)
	}
	r, _ := utf8.DecodeRune(d.data[d.i:])
	return d.syntax(d.i, fmt.Sprintf("invalid JSON: unexpected character %q %s", r, what))
}

func (d *decoder) ws() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) value() (any, error) {
	d.ws()
	if d.i >= len(d.data) {
		return nil, d.unexpected("(a value is missing)")
	}
	switch c := d.data[d.i]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		return d.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, d.unexpected("looking for the beginning of a value")
}

func (d *decoder) enter() error {
	d.depth++
	if d.depth > MaxDepth {
		return d.syntax(d.i, fmt.Sprintf("JSON nests deeper than %d levels", MaxDepth))
	}
	return nil
}

func (d *decoder) object() (any, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer func() { d.depth-- }()
	d.i++ // {
	m := make(map[string]any)
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return m, nil
	}
	for {
		d.ws()
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return nil, d.unexpected("where a member name (a string) was expected")
		}
		koff := d.i
		kv, err := d.str()
		if err != nil {
			return nil, err
		}
		key := kv.(string)
		d.ws()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return nil, d.unexpected("after a member name (expected ':')")
		}
		d.i++
		d.path = append(d.path, pathElem{key: key})
		d.ws()
		voff := d.i
		var v any
		if d.wantsStream(key, m) {
			v, err = d.streamTrials()
		} else {
			v, err = d.value()
		}
		if err != nil {
			return nil, err
		}
		if d.execWant && d.depth == 1 && key == "execution" {
			d.execRaw = bytes.Clone(d.data[voff:d.i])
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
		d.ws()
		if d.i < len(d.data) {
			switch d.data[d.i] {
			case ',':
				d.i++
				continue
			case '}':
				d.i++
				return m, nil
			}
		}
		return nil, d.unexpected("after an object member (expected ',' or '}')")
	}
}

func (d *decoder) array() (any, error) {
	a := make([]any, 0, 4)
	if err := d.elements(func(_ int, v any) { a = append(a, v) }); err != nil {
		return nil, err
	}
	return a, nil
}

// elements scans an array at the cursor, passing each element to each
// with the element's index on d.path.
func (d *decoder) elements(each func(i int, v any)) error {
	if err := d.enter(); err != nil {
		return err
	}
	defer func() { d.depth-- }()
	d.i++ // [
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == ']' {
		d.i++
		return nil
	}
	for n := 0; ; n++ {
		d.path = append(d.path, pathElem{index: n, isIdx: true})
		v, err := d.value()
		if err != nil {
			return err
		}
		each(n, v)
		d.path = d.path[:len(d.path)-1]
		d.ws()
		if d.i < len(d.data) {
			switch d.data[d.i] {
			case ',':
				d.i++
				continue
			case ']':
				d.i++
				return nil
			}
		}
		return d.unexpected("after an array element (expected ',' or ']')")
	}
}

func (d *decoder) literal(word string) error {
	for k := 0; k < len(word); k++ {
		if d.i >= len(d.data) || d.data[d.i] != word[k] {
			return d.unexpected("in literal " + word)
		}
		d.i++
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number scans the JSON number grammar and keeps the exact text.
func (d *decoder) number() (any, error) {
	start := d.i
	digits := func() bool {
		n := d.i
		for d.i < len(d.data) && isDigit(d.data[d.i]) {
			d.i++
		}
		return d.i > n
	}
	if d.data[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.data) && d.data[d.i] == '0':
		d.i++
	case !digits():
		return nil, d.unexpected("in number (expected a digit)")
	}
	if d.i < len(d.data) && d.data[d.i] == '.' {
		d.i++
		if !digits() {
			return nil, d.unexpected("after a decimal point (expected a digit)")
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		d.i++
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if !digits() {
			return nil, d.unexpected("in exponent (expected a digit)")
		}
	}
	return json.Number(d.data[start:d.i]), nil
}

// str scans a string; only strings with escapes go through encoding/json,
// which decodes \u surrogate pairs exactly as the standard requires.
func (d *decoder) str() (any, error) {
	start := d.i
	d.i++ // opening quote
	escaped := false
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			if !escaped {
				return string(d.data[start+1 : d.i-1]), nil
			}
			var s string
			if err := json.Unmarshal(d.data[start:d.i], &s); err != nil {
				return nil, d.syntax(start, "invalid JSON: bad string: "+err.Error())
			}
			return s, nil
		case c < 0x20:
			return nil, d.syntax(d.i, "invalid JSON: control character in string (escape it, e.g. \\n)")
		case c == '\\':
			escaped = true
			if d.i+1 >= len(d.data) {
				d.i++
				return nil, d.unexpected("in string escape")
			}
			switch e := d.data[d.i+1]; e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.i += 2
			case 'u':
				for k := 2; k < 6; k++ {
					if d.i+k >= len(d.data) || !isHex(d.data[d.i+k]) {
						d.i += k
						return nil, d.unexpected("in \\u escape (expected 4 hex digits)")
					}
				}
				d.i += 6
			default:
				d.i++
				return nil, d.unexpected("in string escape")
			}
		default:
			d.i++
		}
	}
	return nil, d.unexpected("in string (missing closing quote)")
}

func isHex(c byte) bool { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') }

// decodeTree parses data strictly. ok is false when the document is not
// usable JSON (the findings then say why).
func decodeTree(data []byte, wantExec bool) (root any, d *decoder, ok bool) {
	return decode(data, wantExec, nil)
}

func decode(data []byte, wantExec bool, st *trialStream) (root any, d *decoder, ok bool) {
	d = &decoder{data: data, execWant: wantExec, stream: st}
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
	root, err := d.value()
	if err != nil {
		return nil, d, false
	}
	d.ws()
	if d.i < len(data) {
		d.syntax(d.i, "unexpected data after the end of the plan's JSON object")
		return nil, d, false
	}
	return root, d, true
}

// positions converts byte offsets to 1-based lines and character columns
// in one forward pass over the offsets in ascending order, so the cost is
// one scan of the file however many findings there are (counting each
// column from the start of its line made a plan written on one line cost
// O(findings × file size)). pos[i] belongs to offs[i]; offsets past the
// end are clamped to it.
func positions(data []byte, offs []int) [][2]int {
	order := make([]int, len(offs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return offs[order[a]] < offs[order[b]] })
	out := make([][2]int, len(offs))
	line, lineStart, prev, prevCol := 1, 0, 0, 1
	for _, i := range order {
		off := min(offs[i], len(data))
		seg := data[prev:off]
		col := 0
		if n := bytes.Count(seg, []byte{'\n'}); n > 0 {
			line += n
			lineStart = prev + bytes.LastIndexByte(seg, '\n') + 1
			col = utf8.RuneCount(data[lineStart:off]) + 1
		} else if prev < len(data) && !utf8.RuneStart(data[prev]) {
			// prev splits a rune: counting from it would differ from
			// counting the whole line, so count the line.
			col = utf8.RuneCount(data[lineStart:off]) + 1
		} else {
			// Rune counts add up across a boundary at a rune start.
			col = prevCol + utf8.RuneCount(seg)
		}
		out[i] = [2]int{line, col}
		prev, prevCol = off, col
	}
	return out
}

// locate finds the byte offset of each wanted pointer in a document that
// decoded cleanly. An object member is located at its name, an array
// element at its value. Pointers that do not exist (a missing required
// member) fall back to their nearest existing ancestor. want must hold
// every ancestor of each wanted pointer (place adds them): only values
// whose pointer is in want are descended into, everything else is skipped
// by scanning bytes, so a few findings in a large plan cost one fast pass.
func locate(data []byte, want map[string]int) {
	l := &locator{d: decoder{data: data}, want: want}
	l.d.ws()
	l.walk(make([]byte, 0, 64), l.d.i, 1)
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
	d    decoder
	want map[string]int
}

// walk records the offset of the value at ptr (starting at the cursor) and
// consumes it. It stops quietly on anything unexpected: the document was
// already validated, and a position is only a convenience.
func (l *locator) walk(ptr []byte, off int, depth int) bool {
	o, wanted := l.want[string(ptr)]
	if wanted && o < 0 {
		l.want[string(ptr)] = off
	}
	d := &l.d
	d.ws()
	if d.i >= len(d.data) {
		return false
	}
	c := d.data[d.i]
	if !wanted || depth > MaxDepth || (c != '{' && c != '[') {
		return l.skip()
	}
	d.i++
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == byte(c+2) { // '}' or ']'
		d.i++
		return true
	}
	for n := 0; ; n++ {
		d.ws()
		child := append(ptr, '/')
		var coff int
		if c == '{' {
			coff = d.i
			if d.i >= len(d.data) || d.data[d.i] != '"' {
				return false
			}
			kv, err := d.str()
			if err != nil {
				return false
			}
			child = append(child, escapePointer(kv.(string))...)
			d.ws()
			if d.i >= len(d.data) || d.data[d.i] != ':' {
				return false
			}
			d.i++
			d.ws()
		} else {
			coff = d.i
			child = strconv.AppendInt(child, int64(n), 10)
		}
		if !l.walk(child, coff, depth+1) {
			return false
		}
		d.ws()
		if d.i >= len(d.data) {
			return false
		}
		switch d.data[d.i] {
		case ',':
			d.i++
		case byte(c + 2):
			d.i++
			return true
		default:
			return false
		}
	}
}

// skip consumes one valid JSON value without building it.
func (l *locator) skip() bool {
	d := &l.d
	depth := 0
	for d.i < len(d.data) {
		switch c := d.data[d.i]; c {
		case '"':
			d.i++
			for d.i < len(d.data) && d.data[d.i] != '"' {
				if d.data[d.i] == '\\' {
					d.i++
				}
				d.i++
			}
			d.i++
		case '{', '[':
			depth++
			d.i++
			continue
		case '}', ']':
			depth--
			d.i++
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return true
			}
			d.i++
			continue
		default: // number or literal
			for d.i < len(d.data) {
				switch d.data[d.i] {
				case ',', ']', '}', ' ', '\t', '\n', '\r':
				default:
					d.i++
					continue
				}
				break
			}
		}
		if depth <= 0 {
			return depth == 0
		}
	}
	return false
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
	pos := positions(data, known)
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
