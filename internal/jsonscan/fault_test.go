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
func walkAll(data []byte) (*jsonscan.Decoder, error) {
	dec := jsonscan.NewBytes(data, jsonscan.Options{})
	for {
		if _, err := dec.Next(); err != nil {
			return dec, err
		}
	}
}

func TestFault(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want jsonscan.Fault
	}{
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
	} {
		dec, err := walkAll([]byte(tc.in))
		got, ok := dec.Fault(err)
		if !ok || got != tc.want {
			t.Errorf("%q (%v): Fault = %+v, %v; want %+v", tc.in, err, got, ok, tc.want)
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

// FuzzFault: a fault is exactly where the input stops being a prefix of
// valid JSON. Cut just before the offending byte, the walk meets no syntax
// error; with the byte, it meets the same error as the whole input. An
// input that ends too soon has its fault at the end.
func FuzzFault(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec, err := walkAll(data)
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
		if _, before := walkAll(data[:fault.Offset]); errors.As(before, new(*jsonscan.SyntaxError)) {
			t.Fatalf("%q: fault at %d, but the input before it fails: %v", data, fault.Offset, before)
		}
		if _, with := walkAll(data[:fault.Offset+1]); fmt.Sprint(with) != fmt.Sprint(err) {
			t.Fatalf("%q: fault at %d, but the input up to it fails with %v, not %v", data, fault.Offset, with, err)
		}
	})
}
