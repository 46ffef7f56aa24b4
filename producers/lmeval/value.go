package lmeval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// Number is a JSON number as lm-eval wrote it. Python's json module
// writes NaN, Infinity and -Infinity for non-finite floats, and they are
// read as numbers too.
type Number string

// maxDepth bounds the nesting of every value read (a task config nests a
// few levels; a hostile file nests thousands).
const maxDepth = 64

// scanOptions are the scanner options of every read: Python's non-finite
// numbers, a nesting bound, and a key twice in one object refused (which
// of two values lm-eval meant is unknowable).
var scanOptions = jsonscan.Options{NonFinite: true, MaxDepth: maxDepth, DuplicateKeys: true}

// readValue reads the value whose first token k Next just returned into
// map[string]any, []any, Number, string, bool or nil.
func readValue(d *jsonscan.Decoder, k jsonscan.Kind) (any, error) {
	switch k {
	case jsonscan.BeginObject:
		m := map[string]any{}
		for {
			kk, err := d.Next()
			if err != nil {
				return nil, err
			}
			if kk == jsonscan.EndObject {
				return m, nil
			}
			key := d.String()
			vk, err := d.Next()
			if err != nil {
				return nil, err
			}
			v, err := readValue(d, vk)
			if err != nil {
				return nil, err
			}
			m[key] = v
		}
	case jsonscan.BeginArray:
		a := []any{}
		for {
			kk, err := d.Next()
			if err != nil {
				return nil, err
			}
			if kk == jsonscan.EndArray {
				return a, nil
			}
			v, err := readValue(d, kk)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
	case jsonscan.String:
		return d.String(), nil
	case jsonscan.Number:
		return Number(d.Raw()), nil
	case jsonscan.True:
		return true, nil
	case jsonscan.False:
		return false, nil
	case jsonscan.Null:
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected JSON token")
}

// readDocument reads one whole JSON document (an object) from data.
func readDocument(data []byte) (map[string]any, error) {
	d := jsonscan.NewBytes(data, scanOptions)
	k, err := d.Next()
	if err == io.EOF {
		return nil, fmt.Errorf("empty file")
	}
	if err != nil {
		return nil, jsonError(d, err)
	}
	if k != jsonscan.BeginObject {
		return nil, fmt.Errorf("not a JSON object")
	}
	v, err := readValue(d, k)
	if err != nil {
		return nil, jsonError(d, err)
	}
	if off, more := d.Rest(); more {
		return nil, fmt.Errorf("data after the JSON object at byte %d", off)
	}
	return v.(map[string]any), nil
}

// jsonError words a scanner error with its byte offset.
func jsonError(d *jsonscan.Decoder, err error) error {
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return fmt.Errorf("truncated JSON (ends inside a value)")
	}
	return fmt.Errorf("not JSON at byte %d: %w", d.InputOffset(), err)
}

// Canonical returns v (as readValue builds it, or built of the same
// types) as canonical JSON: object keys in byte order, no white space,
// strings escaped as encoding/json does without HTML escaping, numbers as
// lm-eval wrote them. Equal inputs give equal bytes.
func Canonical(v any) []byte {
	var b bytes.Buffer
	writeCanonical(&b, v)
	return b.Bytes()
}

func writeCanonical(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case Number:
		b.WriteString(string(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case string:
		writeString(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	default:
		// Only the types above are ever built; anything else is a
		// programming error, written visibly rather than dropped.
		writeString(b, fmt.Sprintf("%v", x))
	}
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}

// str returns m[key] when it is a string.
func str(m map[string]any, key string) (string, bool) {
	s, ok := m[key].(string)
	return s, ok
}

// object returns m[key] when it is an object.
func object(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// integer returns v as a non-negative integer when it is one (Python
// writes ints without a fraction; 10.0 is accepted as 10).
func integer(v any) (int, bool) {
	n, ok := v.(Number)
	if !ok {
		return 0, false
	}
	if i, err := strconv.Atoi(string(n)); err == nil {
		return i, i >= 0
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f < 0 || f != float64(int(f)) || f > 1<<53 {
		return 0, false
	}
	return int(f), true
}

// text renders a scalar as lm-eval wrote it ("" for null, objects and
// arrays).
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case Number:
		return string(x)
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	return ""
}
