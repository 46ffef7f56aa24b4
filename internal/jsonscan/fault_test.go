package jsonscan_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// walkAll reads every token of data and returns the error that ended the
// walk (io.EOF for a clean end) and the decoder, positioned there.
func walkAll(data []byte, opts jsonscan.Options) (*jsonscan.Decoder, error) {
	dec := jsonscan.NewBytes(data, opts)
	for {
		if _, err := dec.Next(); err != nil {
			return dec, err
		}
	}
}

func TestFault(t *testing.T) {
	type faultCase struct {
		in   string
		want jsonscan.Fault
	}
	cases := []faultCase{
		{`[1,]`, jsonscan.Fault{Offset: 3, Part: jsonscan.PartValue}},
		{`[x]`, jsonscan.Fault{Offset: 1, Part: jsonscan.PartValue}},
		{`[1 2]`, jsonscan.Fault{Offset: 3, Part: jsonscan.PartArrayComma}},
		{`{,}`, jsonscan.Fault{Offset: 1, Part: jsonscan.PartKey}},
		{`{"a":1,}`, jsonscan.Fault{Offset: 7, Part: jsonscan.PartKey}},
		{`{"a" 1}`, jsonscan.Fault{Offset: 5, Part: jsonscan.PartColon}},
		{`{"a":1 "b"}`, jsonscan.Fault{Offset: 7, Part: jsonscan.PartObjectComma}},
		{`[tru]`, jsonscan.Fault{Offset: 4, Part: jsonscan.PartLiteral, Literal: "true"}},
		{`[nulx]`, jsonscan.Fault{Offset: 4, Part: jsonscan.PartLiteral, Literal: "null"}},
		{`[-x]`, jsonscan.Fault{Offset: 2, Part: jsonscan.PartNumber}},
		{`[12.x]`, jsonscan.Fault{Offset: 4, Part: jsonscan.PartFraction}},
		{`[1.5e+x]`, jsonscan.Fault{Offset: 6, Part: jsonscan.PartExponent}},
		{"[\"ab\x01\"]", jsonscan.Fault{Offset: 4, Part: jsonscan.PartString}},
		{`["a\\\x"]`, jsonscan.Fault{Offset: 6, Part: jsonscan.PartEscape}},
		{`{"\u12g4":1}`, jsonscan.Fault{Offset: 6, Part: jsonscan.PartUnicode}},
		// The input ends too soon.
		{` `, jsonscan.Fault{Offset: 1, EOF: true, Part: jsonscan.PartValue}},
		{`[`, jsonscan.Fault{Offset: 1, EOF: true, Part: jsonscan.PartValue}},
		{`[1 `, jsonscan.Fault{Offset: 3, EOF: true, Part: jsonscan.PartArrayComma}},
		{`{`, jsonscan.Fault{Offset: 1, EOF: true, Part: jsonscan.PartKey}},
		{`{"a"`, jsonscan.Fault{Offset: 4, EOF: true, Part: jsonscan.PartColon}},
		{`{"a":`, jsonscan.Fault{Offset: 5, EOF: true, Part: jsonscan.PartValue}},
		{`{"a":1`, jsonscan.Fault{Offset: 6, EOF: true, Part: jsonscan.PartObjectComma}},
		{`[fal`, jsonscan.Fault{Offset: 4, EOF: true, Part: jsonscan.PartLiteral, Literal: "false"}},
		{`-`, jsonscan.Fault{Offset: 1, EOF: true, Part: jsonscan.PartNumber}},
		{`[1.`, jsonscan.Fault{Offset: 3, EOF: true, Part: jsonscan.PartFraction}},
		{`[1e-`, jsonscan.Fault{Offset: 4, EOF: true, Part: jsonscan.PartExponent}},
		{`{"ab`, jsonscan.Fault{Offset: 4, EOF: true, Part: jsonscan.PartString}},
		{`["a\\\`, jsonscan.Fault{Offset: 6, EOF: true, Part: jsonscan.PartEscape}},
		{`"\u00`, jsonscan.Fault{Offset: 5, EOF: true, Part: jsonscan.PartUnicode}},
		// Without NonFinite, NaN is no value at all.
		{`[NaN]`, jsonscan.Fault{Offset: 1, Part: jsonscan.PartValue}},
	}
	// With NonFinite, NaN and Infinity are literals that start numbers.
	nonFinite := []faultCase{
		{`[Nax]`, jsonscan.Fault{Offset: 3, Part: jsonscan.PartLiteral, Literal: "NaN"}},
		{`{"a":Infinite}`, jsonscan.Fault{Offset: 12, Part: jsonscan.PartLiteral, Literal: "Infinity"}},
		{`-Inf`, jsonscan.Fault{Offset: 4, EOF: true, Part: jsonscan.PartLiteral, Literal: "Infinity"}},
		{`[-x]`, jsonscan.Fault{Offset: 2, Part: jsonscan.PartNumber}},
		{`[1.5e+x]`, jsonscan.Fault{Offset: 6, Part: jsonscan.PartExponent}},
	}
	for i, tc := range append(cases, nonFinite...) {
		opts := jsonscan.Options{NonFinite: i >= len(cases)}
		dec, err := walkAll([]byte(tc.in), opts)
		got, ok := dec.Fault(err)
		if !ok || got != tc.want {
			t.Errorf("%q (%+v, %v): Fault = %+v, %v; want %+v", tc.in, opts, err, got, ok, tc.want)
		}
	}
	// Only malformed input has a fault.
	dec := jsonscan.NewBytes([]byte(`[[1]]`), jsonscan.Options{MaxDepth: 1})
	dec.Next()
	if _, err := dec.Next(); err == nil {
		t.Fatal("no limit error")
	} else if f, ok := dec.Fault(err); ok {
		t.Errorf("limit error has a fault: %+v", f)
	}
}

// TestExpected checks what Next reports it was looking for where it failed.
func TestExpected(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want jsonscan.Part
	}{
		{``, jsonscan.PartValue}, {`x`, jsonscan.PartValue}, {`[`, jsonscan.PartValue}, {`[1,`, jsonscan.PartValue}, {`{"a":`, jsonscan.PartValue},
		{`{`, jsonscan.PartKey}, {`{"a":1,`, jsonscan.PartKey}, {`{x`, jsonscan.PartKey},
		{`{"a"`, jsonscan.PartColon}, {`{"a" 1`, jsonscan.PartColon},
		{`{"a":1`, jsonscan.PartObjectComma}, {`{"a":1 2`, jsonscan.PartObjectComma},
		{`[1`, jsonscan.PartArrayComma}, {`[1 2`, jsonscan.PartArrayComma},
	} {
		d, err := walkAll([]byte(tc.in), jsonscan.Options{})
		if got := d.Expected(); got != tc.want {
			t.Errorf("%q: expected %d after %v, want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestStartKind(t *testing.T) {
	nf := jsonscan.Options{NonFinite: true}
	for _, tc := range []struct {
		c    byte
		opts jsonscan.Options
		want jsonscan.Kind
	}{
		{'{', nf, jsonscan.BeginObject}, {'[', nf, jsonscan.BeginArray}, {'"', nf, jsonscan.String},
		{'-', nf, jsonscan.Number}, {'7', nf, jsonscan.Number}, {'N', nf, jsonscan.Number}, {'I', nf, jsonscan.Number},
		{'N', jsonscan.Options{}, jsonscan.Invalid}, {'t', nf, jsonscan.True}, {'f', nf, jsonscan.False},
		{'n', nf, jsonscan.Null}, {'}', nf, jsonscan.Invalid}, {'x', nf, jsonscan.Invalid},
	} {
		if got := jsonscan.StartKind(tc.c, tc.opts); got != tc.want {
			t.Errorf("StartKind(%q, %+v) = %d, want %d", tc.c, tc.opts, got, tc.want)
		}
	}
}

// FuzzFault: malformed input (with or without NonFinite) has a fault, and
// it is exactly where the input stops being a prefix of valid JSON. Cut
// just before the offending byte, the walk meets no syntax error; with the
// byte, it meets the same error as the whole input. An input that ends too
// soon has its fault at the end.
func FuzzFault(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s), false)
	}
	for _, s := range []string{`"a\qb"`, `"\u12G4"`, `-1.5e+3`, `1.x`, `nulx`, `NaN`, `[-Infinity, Nax]`, "\"a\x01\"", `"ab`} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, nonFinite bool) {
		opts := jsonscan.Options{NonFinite: nonFinite}
		dec, err := walkAll(data, opts)
		if err == io.EOF {
			return
		}
		fault, ok := dec.Fault(err)
		if !ok {
			t.Fatalf("%q: no fault for %v", data, err)
		}
		if fault.Part == 0 || (fault.Part == jsonscan.PartLiteral) != (fault.Literal != "") {
			t.Fatalf("%q: incomplete fault %+v", data, fault)
		}
		if fault.EOF {
			if !errors.Is(err, io.ErrUnexpectedEOF) || fault.Offset != int64(len(data)) {
				t.Fatalf("%q: fault %+v for %v", data, fault, err)
			}
			return
		}
		var se *jsonscan.SyntaxError
		if !errors.As(err, &se) || fault.Offset < se.Offset || fault.Offset >= int64(len(data)) {
			t.Fatalf("%q: fault %+v for %v", data, fault, err)
		}
		if _, before := walkAll(data[:fault.Offset], opts); errors.As(before, new(*jsonscan.SyntaxError)) {
			t.Fatalf("%q: fault at %d, but the input before it fails: %v", data, fault.Offset, before)
		}
		if _, with := walkAll(data[:fault.Offset+1], opts); fmt.Sprint(with) != fmt.Sprint(err) {
			t.Fatalf("%q: fault at %d, but the input up to it fails with %v, not %v", data, fault.Offset, with, err)
		}
	})
}
