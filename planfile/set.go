package planfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// PointerError is a `plan set` pointer that names nothing the plan has
// or the schema allows. Closest is the nearest pointer that does.
type PointerError struct {
	Pointer string
	Closest string
	Reason  string
}

func (e *PointerError) Error() string {
	s := fmt.Sprintf("%s: %s", displayPtr(e.Pointer), e.Reason)
	if e.Closest != "" {
		s += fmt.Sprintf("; the closest valid pointer is %s", e.Closest)
	}
	return s
}

// ValueError is a `plan set` value the plan schema refuses at Pointer.
type ValueError struct {
	Pointer string
	Code    string
	Reason  string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("%s: %s (%s)", displayPtr(e.Pointer), e.Reason, e.Code)
}

func displayPtr(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// Set returns data with the value at pointer (RFC 6901) replaced by value
// (one JSON value), or added as a new member of an existing object. Every
// other byte is kept, so formatting and member order stay as they were.
// When the existing value is a string, value may also be bare text, which
// is taken as that string (so a digest of digits stays a string).
//
// The result is checked against the plan schema: a value the schema
// refuses at pointer (wrong type, digest form, an unknown member) is a
// *ValueError; a pointer into nothing is a *PointerError naming the
// closest valid pointer. Findings that were already there (placeholders
// elsewhere) are not Set's business.
func Set(data []byte, pointer string, value []byte, opts Options) ([]byte, error) {
	segs, err := splitPointer(pointer)
	if err != nil {
		return nil, &PointerError{Pointer: pointer, Reason: err.Error()}
	}
	if len(segs) == 0 {
		return nil, &PointerError{Pointer: pointer, Reason: "plan set changes one value, not the whole plan", Closest: "/split"}
	}
	_, before := Parse(data, "", opts)
	for _, f := range before {
		if f.Code == CodeJSONSyntax || f.Code == CodeDuplicateKey || f.Code == CodePlanTooLarge {
			return nil, fmt.Errorf("the plan cannot be read (%s at %s: %s); fix it first", f.Code, displayPtr(f.Pointer), f.Message)
		}
	}
	w := &spanWalker{data: data}
	root, err := w.value(0, "")
	if err != nil {
		return nil, err
	}
	target, parent := root.find(segs)
	var out []byte
	switch {
	case target != nil:
		v, err := literal(value, data[target.start] == '"')
		if err != nil {
			return nil, &ValueError{Pointer: pointer, Code: CodeSchema, Reason: err.Error()}
		}
		out = splice(data, target.start, target.end, v)
	case parent != nil && parent.kind == '{':
		// A new member: JSON when it parses as JSON, else text.
		v, err := literal(value, false)
		if err != nil {
			v, err = literal(value, true)
		}
		if err != nil {
			return nil, &ValueError{Pointer: pointer, Code: CodeSchema, Reason: err.Error()}
		}
		out = insertMember(data, parent, segs[len(segs)-1], v)
	default:
		return nil, &PointerError{Pointer: pointer, Reason: "the plan has nothing there", Closest: closestPointer(pointer, root.pointers(nil))}
	}
	_, after := Parse(out, "", opts)
	had := map[string]bool{}
	for _, f := range before {
		had[f.Code+"\x00"+f.Pointer] = true
	}
	for _, f := range after {
		if f.Severity != SeverityError || had[f.Code+"\x00"+f.Pointer] || !within(f.Pointer, pointer) && f.Code != CodeUnknownField {
			continue
		}
		if f.Code == CodeUnknownField {
			return nil, &PointerError{Pointer: pointer, Reason: "the plan schema has no such member", Closest: closestPointer(pointer, root.pointers(nil))}
		}
		return nil, &ValueError{Pointer: pointer, Code: f.Code, Reason: f.Message}
	}
	return out, nil
}

// within reports whether finding pointer f is at p, below it, or at its
// parent (a missing-member finding is reported on the parent).
func within(f, p string) bool {
	return f == p || strings.HasPrefix(f, p+"/") || f == parentPointer(p)
}

func splitPointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("a JSON pointer starts with / (RFC 6901)")
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

func escapeSeg(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// literal is the JSON text of one value given on the command line. With
// bareString, text that is not a JSON string is taken as the string.
func literal(v []byte, bareString bool) ([]byte, error) {
	t := bytes.TrimSpace(v)
	if bareString && (len(t) == 0 || t[0] != '"') {
		return json.Marshal(string(v))
	}
	if !json.Valid(t) {
		if bareString {
			return json.Marshal(string(v))
		}
		return nil, fmt.Errorf("%q is not a JSON value (quote a string: '\"text\"')", clip(nil, string(v)))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, t); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func splice(data []byte, start, end int, v []byte) []byte {
	out := make([]byte, 0, len(data)-(end-start)+len(v))
	out = append(out, data[:start]...)
	out = append(out, v...)
	return append(out, data[end:]...)
}

// insertMember adds "key": v as the last member of object n, indented like
// its other members.
func insertMember(data []byte, n *node, key string, v []byte) []byte {
	k, _ := json.Marshal(key)
	member := append(append(k, ": "...), v...)
	if len(n.members) == 0 {
		return splice(data, n.start, n.end, append(append([]byte("{"), member...), '}'))
	}
	last := n.members[len(n.members)-1]
	indent := []byte(" ")
	if nl := bytes.LastIndexByte(data[:last.keyStart], '\n'); nl >= 0 {
		ws := data[nl:last.keyStart]
		if len(bytes.TrimLeft(ws, "\n \t")) == 0 {
			indent = ws
		}
	}
	ins := append(append([]byte(","), indent...), member...)
	return splice(data, last.value.end, last.value.end, ins)
}

// node is one JSON value's byte span and, for containers, its children.
type node struct {
	kind       byte // '{', '[', or 0 for a scalar
	start, end int
	ptr        string
	members    []member
	elems      []*node
}

type member struct {
	key      string
	keyStart int
	value    *node
}

func (n *node) find(segs []string) (target, parent *node) {
	cur := n
	for i, s := range segs {
		var next *node
		switch cur.kind {
		case '{':
			for _, m := range cur.members {
				if m.key == s {
					next = m.value
				}
			}
		case '[':
			if idx, err := strconv.Atoi(s); err == nil && idx >= 0 && idx < len(cur.elems) && strconv.Itoa(idx) == s {
				next = cur.elems[idx]
			}
		}
		if next == nil {
			if i == len(segs)-1 {
				return nil, cur
			}
			return nil, nil
		}
		cur = next
	}
	return cur, nil
}

func (n *node) pointers(out []string) []string {
	if n.ptr != "" {
		out = append(out, n.ptr)
	}
	for _, m := range n.members {
		out = m.value.pointers(out)
	}
	for _, e := range n.elems {
		out = e.pointers(out)
	}
	return out
}

// spanWalker is a small recursive reader of a plan already known to be
// well-formed (Parse found no syntax error), recording byte spans.
type spanWalker struct {
	data  []byte
	depth int
}

func (w *spanWalker) ws(i int) int {
	for i < len(w.data) && (w.data[i] == ' ' || w.data[i] == '\t' || w.data[i] == '\n' || w.data[i] == '\r') {
		i++
	}
	return i
}

func (w *spanWalker) value(i int, ptr string) (*node, error) {
	i = w.ws(i)
	if i >= len(w.data) {
		return nil, fmt.Errorf("unexpected end of the plan")
	}
	if w.depth > MaxDepth {
		return nil, fmt.Errorf("the plan nests deeper than %d levels", MaxDepth)
	}
	n := &node{start: i, ptr: ptr}
	switch c := w.data[i]; c {
	case '{':
		n.kind = '{'
		w.depth++
		defer func() { w.depth-- }()
		i = w.ws(i + 1)
		for i < len(w.data) && w.data[i] != '}' {
			ks := i
			ke, err := w.stringEnd(i)
			if err != nil {
				return nil, err
			}
			var key string
			if err := json.Unmarshal(w.data[ks:ke], &key); err != nil {
				return nil, err
			}
			i = w.ws(ke)
			if i >= len(w.data) || w.data[i] != ':' {
				return nil, fmt.Errorf("expected ':' at byte %d", i)
			}
			v, err := w.value(i+1, ptr+"/"+escapeSeg(key))
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, member{key: key, keyStart: ks, value: v})
			i = w.ws(v.end)
			if i < len(w.data) && w.data[i] == ',' {
				i = w.ws(i + 1)
			}
		}
		n.end = i + 1
	case '[':
		n.kind = '['
		w.depth++
		defer func() { w.depth-- }()
		i = w.ws(i + 1)
		for i < len(w.data) && w.data[i] != ']' {
			v, err := w.value(i, ptr+"/"+strconv.Itoa(len(n.elems)))
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
			i = w.ws(v.end)
			if i < len(w.data) && w.data[i] == ',' {
				i = w.ws(i + 1)
			}
		}
		n.end = i + 1
	case '"':
		e, err := w.stringEnd(i)
		if err != nil {
			return nil, err
		}
		n.end = e
	default:
		j := i
		for j < len(w.data) && !strings.ContainsRune(",]} \t\r\n", rune(w.data[j])) {
			j++
		}
		n.end = j
	}
	if n.end > len(w.data) {
		return nil, fmt.Errorf("unexpected end of the plan")
	}
	return n, nil
}

func (w *spanWalker) stringEnd(i int) (int, error) {
	if i >= len(w.data) || w.data[i] != '"' {
		return 0, fmt.Errorf("expected a string at byte %d", i)
	}
	for j := i + 1; j < len(w.data); j++ {
		switch w.data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated string at byte %d", i)
}

// schemaPointers are members the schema allows that a plan may leave out.
var schemaPointers = []string{
	"/version", "/source/format", "/source/revision", "/name", "/split", "/trainable",
	"/checkpoint/ref", "/checkpoint/served_as", "/protocol/dataset_digest",
	"/protocol/verifier_digest", "/protocol/environment_digest", "/protocol/harness_digest",
	"/settings",
}

// closestPointer is the candidate (or schema pointer) nearest to p by edit
// distance over its segments' text.
func closestPointer(p string, have []string) string {
	best, bestD := "", -1
	for _, c := range append(have, schemaPointers...) {
		d := ptrDistance(p, c)
		if bestD < 0 || d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	return best
}

func ptrDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
