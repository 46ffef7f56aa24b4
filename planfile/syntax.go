package planfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// json.Number, bool, nil) from the tokens of encoding/json, adding what
// encoding/json does not check: duplicate member names and a depth cap.
// It also remembers the raw bytes of a top-level "execution" member.
type decoder struct {
	data     []byte
	dec      *json.Decoder
	path     []pathElem
	depth    int
	found    []pending
	execRaw  []byte
	hasExec  bool
	execWant bool
}

// errStop ends decoding after a finding that makes the rest meaningless.
var errStop = errors.New("stop")

// start returns the offset where the next token begins: InputOffset is
// the end of the previous token, so skip white space and separators.
func (d *decoder) start() int {
	off := int(d.dec.InputOffset())
	for off < len(d.data) {
		switch d.data[off] {
		case ' ', '\t', '\n', '\r', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

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

func (d *decoder) tokenErr(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		off := int(se.Offset) - 1
		if off < 0 {
			off = 0
		}
		return d.syntax(off, "invalid JSON: "+se.Error())
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return d.syntax(len(d.data), "invalid JSON: unexpected end of input (an object or array is not closed)")
	}
	return d.syntax(d.start(), "invalid JSON: "+err.Error())
}

func (d *decoder) value() (any, error) {
	off := d.start()
	tok, err := d.dec.Token()
	if err != nil {
		return nil, d.tokenErr(err)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > MaxDepth {
		return nil, d.syntax(off, fmt.Sprintf("JSON nests deeper than %d levels", MaxDepth))
	}
	switch delim {
	case '{':
		m := make(map[string]any)
		for d.dec.More() {
			koff := d.start()
			kt, err := d.dec.Token()
			if err != nil {
				return nil, d.tokenErr(err)
			}
			key, ok := kt.(string)
			if !ok {
				return nil, d.syntax(koff, "invalid JSON: object member name is not a string")
			}
			d.path = append(d.path, pathElem{key: key})
			capture := d.execWant && d.depth == 1 && key == "execution"
			voff := d.start()
			v, err := d.value()
			if err != nil {
				return nil, err
			}
			if capture {
				d.execRaw = bytes.Clone(d.data[voff:d.dec.InputOffset()])
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
		if _, err := d.dec.Token(); err != nil {
			return nil, d.tokenErr(err)
		}
		return m, nil
	default: // '['
		a := make([]any, 0, 4)
		for i := 0; d.dec.More(); i++ {
			d.path = append(d.path, pathElem{index: i, isIdx: true})
			v, err := d.value()
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			d.path = d.path[:len(d.path)-1]
		}
		if _, err := d.dec.Token(); err != nil {
			return nil, d.tokenErr(err)
		}
		return a, nil
	}
}

// decodeTree parses data strictly. ok is false when the document is not
// usable JSON (the findings then say why).
func decodeTree(data []byte, wantExec bool) (root any, d *decoder, ok bool) {
	d = &decoder{data: data, execWant: wantExec}
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
	d.dec = json.NewDecoder(bytes.NewReader(data))
	d.dec.UseNumber()
	root, err := d.value()
	if err != nil {
		return nil, d, false
	}
	end := d.start()
	if end < len(data) {
		d.syntax(end, "unexpected data after the end of the plan's JSON object")
		return nil, d, false
	}
	return root, d, true
}

// lineIndex converts byte offsets to 1-based line and character columns.
type lineIndex struct {
	data   []byte
	starts []int
}

func newLineIndex(data []byte) *lineIndex {
	li := &lineIndex{data: data, starts: []int{0}}
	for i, c := range data {
		if c == '\n' {
			li.starts = append(li.starts, i+1)
		}
	}
	return li
}

func (li *lineIndex) pos(off int) (line, col int) {
	if off > len(li.data) {
		off = len(li.data)
	}
	i := sort.Search(len(li.starts), func(i int) bool { return li.starts[i] > off }) - 1
	return i + 1, utf8.RuneCount(li.data[li.starts[i]:off]) + 1
}

// locate finds the byte offset of each wanted pointer in a document that
// decoded cleanly. An object member is located at its name, an array
// element at its value. Pointers that do not exist (a missing required
// member) fall back to their nearest existing ancestor.
func locate(data []byte, want map[string]int) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	d := &decoder{data: data, dec: dec}
	var walk func(ptr string, off int, depth int) error
	walk = func(ptr string, off int, depth int) error {
		if _, ok := want[ptr]; ok && want[ptr] < 0 {
			want[ptr] = off
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		delim, ok := tok.(json.Delim)
		if !ok || depth > MaxDepth {
			return nil
		}
		if delim == '{' {
			for dec.More() {
				koff := d.start()
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				if err := walk(ptr+"/"+escapePointer(key), koff, depth+1); err != nil {
					return err
				}
			}
		} else {
			for i := 0; dec.More(); i++ {
				if err := walk(ptr+"/"+strconv.Itoa(i), d.start(), depth+1); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token()
		return err
	}
	_ = walk("", d.start(), 1)
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

// place turns pending findings into located ones: offsets known at parse
// time are used as they are, the rest are found by pointer.
func place(data []byte, ps []pending) []Finding {
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
	li := newLineIndex(data)
	out := make([]Finding, 0, len(ps))
	for _, p := range ps {
		off := p.off
		if off < 0 {
			off = want[p.Pointer]
		}
		f := p.Finding
		if off >= 0 {
			f.Line, f.Column = li.pos(off)
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
