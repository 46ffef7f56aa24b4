package jsonscan_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// failAfter returns errRead instead of io.EOF at the end of its input.
type failAfter struct{ r io.Reader }

var errRead = errors.New("read failed")

func (f failAfter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		err = errRead
	}
	return n, err
}

// chunks returns at most n bytes per Read, to cross buffer refills at
// every position.
type chunks struct {
	r io.Reader
	n int
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

// refTokens is encoding/json's account of data: one line per token (the
// token, More before it, the offset after it), then the error.
func refTokens(data []byte, chunk int) []string {
	var r io.Reader = bytes.NewReader(data)
	if chunk < 0 {
		r, chunk = failAfter{r}, -chunk
	}
	dec := json.NewDecoder(&chunks{r, chunk})
	dec.UseNumber()
	var out []string
	for {
		more := dec.More()
		tok, err := dec.Token()
		if err != nil {
			return append(out, fmt.Sprintf("error %q at %d", err, dec.InputOffset()))
		}
		var s string
		switch v := tok.(type) {
		case json.Delim:
			s = string(v)
		case string:
			s = fmt.Sprintf("string %q", v)
		case json.Number:
			s = "number " + string(v)
		case bool:
			s = fmt.Sprint(v)
		case nil:
			s = "null"
		}
		out = append(out, fmt.Sprintf("%v %s @%d", more, s, dec.InputOffset()))
	}
}

// scanTokens is the same account from jsonscan.
func scanTokens(data []byte, chunk int) []string {
	var dec *jsonscan.Decoder
	switch {
	case chunk == 0:
		dec = jsonscan.NewBytes(data, jsonscan.Options{})
	case chunk < 0:
		dec = jsonscan.NewDecoder(&chunks{failAfter{bytes.NewReader(data)}, -chunk}, jsonscan.Options{})
	default:
		dec = jsonscan.NewDecoder(&chunks{bytes.NewReader(data), chunk}, jsonscan.Options{})
	}
	var out []string
	for {
		more := dec.More()
		k, err := dec.Next()
		if err != nil {
			return append(out, fmt.Sprintf("error %q at %d", err, dec.InputOffset()))
		}
		var s string
		switch k {
		case jsonscan.BeginObject:
			s = "{"
		case jsonscan.EndObject:
			s = "}"
		case jsonscan.BeginArray:
			s = "["
		case jsonscan.EndArray:
			s = "]"
		case jsonscan.String:
			s = fmt.Sprintf("string %q", dec.String())
		case jsonscan.Number:
			s = "number " + string(dec.Raw())
		case jsonscan.True:
			s = "true"
		case jsonscan.False:
			s = "false"
		case jsonscan.Null:
			s = "null"
		}
		out = append(out, fmt.Sprintf("%v %s @%d", more, s, dec.InputOffset()))
	}
}

var seeds = []string{
	``, ` `, `{}`, `[]`, `{"a":1}`, `[1,2,3]`, `{"a":[true,false,null],"b":{"c":"d"}}`,
	`"abc"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u20ac\ud83d\ude00"`, `"\ud800"`, `"\udc00x"`,
	`"\ud800\u0041"`, `"\ud800\ud800"`, "\"\xff\xfe\"", "\"\xed\xa0\x80\"", "\"caf\xc3\xa9\"",
	`-0`, `-`, `0.`, `1.5e+3`, `1E-2`, `01`, `1e`, `1.x`, `-x`, `12345678901234567890`,
	`tru`, `truex`, `nul`, `nulx`, `fals`, `falsy`, `NaN`, `Infinity`, `-Infinity`,
	`{"a" 1}`, `{"a":1 "b":2}`, `{1:2}`, `{"a":1,}`, `[1,]`, `[1 2]`, `[,1]`, `{,}`, `:`, `,`,
	`]`, `}`, `{"a":}`, `[}`, `{]`, `{} {}`, `{} x`, `{} "a"`, `1 2`, "\"a\x01b\"", `"\x"`,
	`"\u12g4"`, `"abc`, `"abc\`, `"\u12`, `[1`, `{"a"`, `{"a":`, "[\n1,\r\n\t2 ]",
	`{"long":"` + strings.Repeat("abcdefgh", 20) + `\n` + strings.Repeat("é", 9) + `"}`,
}

func TestTokensAgree(t *testing.T) {
	for _, s := range seeds {
		for _, chunk := range []int{1, 3, 7, 1 << 20, -1, -5} {
			want := strings.Join(refTokens([]byte(s), chunk), "\n")
			got := strings.Join(scanTokens([]byte(s), chunk), "\n")
			if got != want {
				t.Errorf("%q (chunk %d):\n got %s\nwant %s", s, chunk, got, want)
			}
		}
		want := strings.Join(refTokens([]byte(s), 1<<20), "\n")
		if got := strings.Join(scanTokens([]byte(s), 0), "\n"); got != want {
			t.Errorf("%q (bytes):\n got %s\nwant %s", s, got, want)
		}
	}
}

// FuzzTokensAgree holds the scanner to encoding/json's Decoder.Token: the
// same tokens, decoded values, offsets, valid/invalid verdict and error
// text, whatever the read sizes.
func FuzzTokensAgree(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		n := int(chunk%16) + 1
		if chunk&16 != 0 {
			n = -n // a read error instead of the end of input
		}
		want := strings.Join(refTokens(data, n), "\n")
		if got := strings.Join(scanTokens(data, n), "\n"); got != want {
			t.Fatalf("%q (chunk %d):\n got %s\nwant %s", data, n, got, want)
		}
		if n > 0 {
			want = strings.Join(refTokens(data, 1<<20), "\n")
		}
		if got := strings.Join(scanTokens(data, 0), "\n"); n > 0 && got != want {
			t.Fatalf("%q (bytes):\n got %s\nwant %s", data, got, want)
		}
		// Skip agrees with Valid on one value.
		dec := jsonscan.NewBytes(data, jsonscan.Options{})
		k, err := dec.Next()
		if err == nil {
			err = dec.Skip(k)
		}
		if err == nil {
			_, err = dec.Next()
			if err == io.EOF {
				err = nil
			} else if err == nil {
				err = errors.New("more data")
			}
		}
		if valid := json.Valid(data); valid != (err == nil) {
			t.Fatalf("%q: json.Valid %v, Skip error %v", data, valid, err)
		}
	})
}

func TestNonFinite(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`[NaN,Infinity,-Infinity,1]`, "NaN Infinity -Infinity 1 "},
		{`[NaX]`, `invalid character 'X' in literal NaN`},
		{`[-Inf]`, `invalid character ']' in literal Infinity`},
	} {
		dec := jsonscan.NewBytes([]byte(tc.in), jsonscan.Options{NonFinite: true})
		var got strings.Builder
		for {
			k, err := dec.Next()
			if err != nil {
				if err != io.EOF {
					got.WriteString(err.Error())
				}
				break
			}
			if k == jsonscan.Number {
				got.WriteString(string(dec.Raw()) + " ")
			}
		}
		if got.String() != tc.want {
			t.Errorf("%s: got %q, want %q", tc.in, got.String(), tc.want)
		}
	}
	// Off by default, with encoding/json's message.
	_, err := jsonscan.NewBytes([]byte(`NaN`), jsonscan.Options{}).Next()
	if err == nil || err.Error() != `invalid character 'N' looking for beginning of value` {
		t.Errorf("NaN without the option: %v", err)
	}
}

func TestPointer(t *testing.T) {
	for _, tc := range []struct{ in, want string }{{"a", "a"}, {"a/b", "a~1b"}, {"~", "~0"}, {"~/", "~0~1"}, {"", ""}} {
		if got := jsonscan.EscapePointer(tc.in); got != tc.want {
			t.Errorf("EscapePointer(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := string(jsonscan.AppendPointer(nil, tc.in)); got != "/"+tc.want {
			t.Errorf("AppendPointer(%q) = %q", tc.in, got)
		}
	}
}

// tokensWith is scanTokens from memory with opts.
func tokensWith(data []byte, opts jsonscan.Options) (toks []string, err error) {
	dec := jsonscan.NewBytes(data, opts)
	for {
		k, err := dec.Next()
		if err != nil {
			return toks, err
		}
		s := fmt.Sprint(k)
		switch k {
		case jsonscan.String:
			s += " " + strconv.Quote(dec.String())
		case jsonscan.Number:
			s += " " + string(dec.Raw())
		}
		toks = append(toks, s)
	}
}

func TestDepthAndDuplicates(t *testing.T) {
	for _, tc := range []struct {
		in   string
		opts jsonscan.Options
		want string // error text, "" for none (io.EOF)
		off  int64
	}{
		{`[[1]]`, jsonscan.Options{MaxDepth: 2}, "", 0},
		{`[[[1]]]`, jsonscan.Options{MaxDepth: 2}, "nesting deeper than 2 levels", 2},
		{`{"a":{"b":{}}}`, jsonscan.Options{MaxDepth: 2}, "nesting deeper than 2 levels", 10},
		{`{"a":1,"b":{"a":2},"c":[{"a":3}]}`, jsonscan.Options{DuplicateKeys: true}, "", 0},
		{`{"a":1,"b":2,"a":3}`, jsonscan.Options{DuplicateKeys: true}, `key "a" appears twice in one object`, 13},
		{`{"\u0061":1,"a":3}`, jsonscan.Options{DuplicateKeys: true}, `key "a" appears twice in one object`, 12},
		{`[{"x":1},{"x":1}]`, jsonscan.Options{DuplicateKeys: true}, "", 0},
		{`{"a":1,"b":2,"a":3}`, jsonscan.Options{}, "", 0},
	} {
		_, err := tokensWith([]byte(tc.in), tc.opts)
		var off int64
		var le *jsonscan.LimitError
		var de *jsonscan.DuplicateKeyError
		switch {
		case errors.As(err, &le):
			off = le.Offset
		case errors.As(err, &de):
			off = de.Offset
		}
		got := ""
		if err != io.EOF {
			got = fmt.Sprint(err)
		}
		if got != tc.want || off != tc.off {
			t.Errorf("%s %+v: got %q at %d, want %q at %d", tc.in, tc.opts, got, off, tc.want, tc.off)
		}
	}
}

// FuzzOptions: with depth and duplicate checks on, the scanner returns
// the same tokens as without until it stops on one of those errors, and
// it stops on a duplicate only where a key really repeats.
func FuzzOptions(f *testing.F) {
	for _, s := range append(seeds, `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `{"a":{"a":{"a":[]}},"b":1}`, `[[[[[[]]]]]]`) {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, depth uint8) {
		plain, perr := tokensWith(data, jsonscan.Options{})
		opts := jsonscan.Options{MaxDepth: int(depth%8) + 1, DuplicateKeys: true}
		got, err := tokensWith(data, opts)
		if len(got) > len(plain) || strings.Join(got, "\n") != strings.Join(plain[:len(got)], "\n") {
			t.Fatalf("%q: tokens differ from the plain scan", data)
		}
		var le *jsonscan.LimitError
		var de *jsonscan.DuplicateKeyError
		switch {
		case errors.As(err, &le), errors.As(err, &de):
		default:
			if len(got) != len(plain) || fmt.Sprint(err) != fmt.Sprint(perr) {
				t.Fatalf("%q: stopped with %v, plain scan with %v", data, err, perr)
			}
		}
		if de != nil {
			// The plain scan's next token must be a key already seen in
			// the innermost open object.
			type frame struct {
				obj, wantKey bool
				keys         map[string]bool
			}
			var stack []*frame
			valueDone := func() {
				if n := len(stack); n > 0 && stack[n-1].obj {
					stack[n-1].wantKey = true
				}
			}
			for i, tok := range plain[:len(got)+1] {
				last := i == len(got)
				switch {
				case tok == fmt.Sprint(jsonscan.BeginObject):
					stack = append(stack, &frame{obj: true, wantKey: true, keys: map[string]bool{}})
				case tok == fmt.Sprint(jsonscan.BeginArray):
					stack = append(stack, &frame{})
				case tok == fmt.Sprint(jsonscan.EndObject), tok == fmt.Sprint(jsonscan.EndArray):
					stack = stack[:len(stack)-1]
					valueDone()
				case len(stack) > 0 && stack[len(stack)-1].wantKey:
					top := stack[len(stack)-1]
					if last && !top.keys[tok] {
						t.Fatalf("%q: duplicate %q reported for a new key", data, de.Key)
					}
					top.keys[tok] = true
					top.wantKey = false
					continue
				default:
					valueDone()
				}
				if last {
					t.Fatalf("%q: duplicate %q reported on a token that is not a key", data, de.Key)
				}
			}
		}
	})
}
