package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CheckJSON returns a *PayloadError for the first string of the JSON
// document data (an object key or a value, in document order) that
// carries a known secret, naming its field by JSON pointer; then, as a
// backstop, it checks the whole document as CheckPayload does. It is the
// gate in front of a signature (attest): what is signed is published
// with its signature, and the field tells the user where the secret came
// from (a plan's name, a split, served_as). A nil Scanner checks nothing.
func (s *Scanner) CheckJSON(where string, data []byte) error {
	if s == nil || len(data) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	// path holds one entry per open container: the key or index the
	// next value takes; inObj tells which it is.
	type frame struct {
		obj    bool
		key    string
		index  int
		expect bool // in an object: the next string is a key
	}
	var stack []frame
	pointer := func() string {
		var b strings.Builder
		for _, f := range stack {
			b.WriteByte('/')
			if f.obj {
				b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(f.key))
			} else {
				b.WriteString(strconv.Itoa(f.index))
			}
		}
		return b.String()
	}
	// advance moves past a finished value in the container it was in.
	advance := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].obj {
				stack[n-1].expect = true
			} else {
				stack[n-1].index++
			}
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			// Not JSON after all: the whole text is still checked.
			return s.CheckPayload(where, data)
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{obj: true, expect: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				advance()
			}
		case string:
			n := len(stack)
			if n > 0 && stack[n-1].obj && stack[n-1].expect {
				// A member name with a secret is named by its object:
				// its own pointer would print the secret.
				if h := s.Scan("", t); len(h) > 0 {
					stack = stack[:n-1]
					return &PayloadError{Where: where, Field: "a member name in " + orElse(pointer(), "the top object"), Detector: h[0].Detector, Count: h[0].Count}
				}
				stack[n-1].key, stack[n-1].expect = t, false
				continue
			}
			if utf8.ValidString(t) {
				if h := s.Scan("", t); len(h) > 0 {
					return &PayloadError{Where: where, Field: pointer(), Detector: h[0].Detector, Count: h[0].Count}
				}
			}
			advance()
		default:
			advance()
		}
	}
	return s.CheckPayload(where, data)
}

func orElse(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
