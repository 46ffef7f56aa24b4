package inspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// node is one JSON value of a log, kept only for the parts tpctl reads
// (the header, one sample without its events); the bulk of a log (events,
// attachments, the store) is skipped by the scanner and never built.
type node struct {
	kind  jsonscan.Kind
	text  string // a string's decoded text, or a number's source text
	keys  []string
	elems []*node // an object's values (parallel to keys) or an array's items
}

// scanOptions is how every log document is scanned: Python's json module
// writes NaN and ±Infinity (Score.unscored is NaN), a repeated key is a
// broken document, and nesting is bounded.
var scanOptions = jsonscan.Options{NonFinite: true, MaxDepth: maxDepth, DuplicateKeys: true}

// maxDepth bounds nesting (a tool call's arguments may nest, a hostile
// document may nest without end).
const maxDepth = 512

// budget caps the nodes one built value may hold, so a document within its
// byte cap still cannot make a tree that is mostly overhead.
type budget struct{ left int }

var errBudget = errors.New("too many JSON values")

// build reads the value whose first token k was just returned by d.
func build(d *jsonscan.Decoder, k jsonscan.Kind, b *budget) (*node, error) {
	if b.left--; b.left < 0 {
		return nil, errBudget
	}
	n := &node{kind: k}
	switch k {
	case jsonscan.String:
		n.text = d.String()
	case jsonscan.Number:
		n.text = string(d.Raw())
	case jsonscan.True, jsonscan.False, jsonscan.Null:
	case jsonscan.BeginObject:
		for {
			kk, err := d.Next()
			if err != nil {
				return nil, err
			}
			if kk == jsonscan.EndObject {
				return n, nil
			}
			key := d.String()
			vk, err := d.Next()
			if err != nil {
				return nil, err
			}
			v, err := build(d, vk, b)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, key)
			n.elems = append(n.elems, v)
		}
	case jsonscan.BeginArray:
		for {
			ek, err := d.Next()
			if err != nil {
				return nil, err
			}
			if ek == jsonscan.EndArray {
				return n, nil
			}
			v, err := build(d, ek, b)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
		}
	default:
		return nil, fmt.Errorf("unexpected JSON token")
	}
	return n, nil
}

// get returns the member key of an object, nil when n is not an object or
// has no such member.
func (n *node) get(key string) *node {
	if n == nil || n.kind != jsonscan.BeginObject {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.elems[i]
		}
	}
	return nil
}

// path follows keys down from n.
func (n *node) path(keys ...string) *node {
	for _, k := range keys {
		n = n.get(k)
	}
	return n
}

func (n *node) isNull() bool   { return n == nil || n.kind == jsonscan.Null }
func (n *node) isObject() bool { return n != nil && n.kind == jsonscan.BeginObject }
func (n *node) isArray() bool  { return n != nil && n.kind == jsonscan.BeginArray }
func (n *node) isString() bool { return n != nil && n.kind == jsonscan.String }
func (n *node) isNumber() bool { return n != nil && n.kind == jsonscan.Number }

// str returns a string member's text ("" when absent or not a string).
func (n *node) str() string {
	if n.isString() {
		return n.text
	}
	return ""
}

// float returns a number's value as Python's float() reads it: NaN and
// ±Infinity by name, finite numbers rounded to the nearest double, and
// numbers beyond a double's range as ±Inf (as Python does for 1e400).
func (n *node) float() (float64, bool) {
	if !n.isNumber() {
		return 0, false
	}
	return parseJSONNumber(n.text), true
}

func parseJSONNumber(s string) float64 {
	switch s {
	case "NaN":
		return math.NaN()
	case "Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// ParseFloat returns ±Inf with a range error, which is Python's
		// reading; grammar errors cannot happen after the scanner.
		return f
	}
	return f
}

// int returns an integral number member (JSON integers only, as Python's
// int fields are written).
func (n *node) int() (int64, bool) {
	if !n.isNumber() {
		return 0, false
	}
	i, err := strconv.ParseInt(n.text, 10, 64)
	if err != nil {
		return 0, false
	}
	return i, true
}

// plain converts n into plain Go data for canonical serialization:
// objects as map[string]any, arrays as []any, numbers as json.Number (or
// the strings "NaN", "Infinity", "-Infinity", which JSON cannot hold),
// strings, booleans and nil.
func (n *node) plain() any {
	if n == nil {
		return nil
	}
	switch n.kind {
	case jsonscan.String:
		return n.text
	case jsonscan.Number:
		switch n.text {
		case "NaN", "Infinity", "-Infinity":
			return n.text
		}
		return json.Number(n.text)
	case jsonscan.True:
		return true
	case jsonscan.False:
		return false
	case jsonscan.BeginObject:
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			m[k] = n.elems[i].plain()
		}
		return m
	case jsonscan.BeginArray:
		a := make([]any, len(n.elems))
		for i, e := range n.elems {
			a[i] = e.plain()
		}
		return a
	}
	return nil
}

// compact writes n as compact JSON with keys in document order (a tool
// call's arguments as the model wrote them, a score's raw value).
func (n *node) compact() string {
	var b []byte
	b = n.appendJSON(b)
	return string(b)
}

func (n *node) appendJSON(b []byte) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	switch n.kind {
	case jsonscan.String:
		q, _ := json.Marshal(n.text)
		return append(b, q...)
	case jsonscan.Number:
		return append(b, n.text...)
	case jsonscan.True:
		return append(b, "true"...)
	case jsonscan.False:
		return append(b, "false"...)
	case jsonscan.BeginObject:
		b = append(b, '{')
		for i, k := range n.keys {
			if i > 0 {
				b = append(b, ',')
			}
			q, _ := json.Marshal(k)
			b = append(b, q...)
			b = append(b, ':')
			b = n.elems[i].appendJSON(b)
		}
		return append(b, '}')
	case jsonscan.BeginArray:
		b = append(b, '[')
		for i, e := range n.elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.appendJSON(b)
		}
		return append(b, ']')
	}
	return append(b, "null"...)
}

// readDocument builds one whole JSON document from r (a capped zip member
// or file), failing on trailing data.
func readDocument(r io.Reader, nodes int) (*node, error) {
	d := jsonscan.NewDecoder(r, scanOptions)
	k, err := d.Next()
	if err != nil {
		return nil, err
	}
	n, err := build(d, k, &budget{left: nodes})
	if err != nil {
		return nil, err
	}
	if err := expectEnd(d); err != nil {
		return nil, err
	}
	return n, nil
}

// expectEnd fails when anything but white space follows the document.
func expectEnd(d *jsonscan.Decoder) error {
	if off, more := d.Rest(); more {
		return fmt.Errorf("data after the JSON document at offset %d", off)
	}
	return nil
}

// items returns an array's elements (nil for nil or a non-array).
func (n *node) items() []*node {
	if !n.isArray() {
		return nil
	}
	return n.elems
}

// members returns an object's keys and values (nil for a non-object).
func (n *node) members() ([]string, []*node) {
	if !n.isObject() {
		return nil, nil
	}
	return n.keys, n.elems
}

func jsonNumber(s string) json.Number { return json.Number(s) }

func int64ToNumber(i int64) json.Number { return json.Number(strconv.FormatInt(i, 10)) }
