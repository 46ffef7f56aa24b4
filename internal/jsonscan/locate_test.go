package jsonscan_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// TestContext checks what Next reports it was looking for where it
// failed, and where each token began.
func TestContext(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want jsonscan.Context
	}{
		{``, jsonscan.InValue}, {`x`, jsonscan.InValue}, {`[`, jsonscan.InValue}, {`[1,`, jsonscan.InValue}, {`{"a":`, jsonscan.InValue},
		{`{`, jsonscan.InKey}, {`{"a":1,`, jsonscan.InKey}, {`{x`, jsonscan.InKey},
		{`{"a"`, jsonscan.AfterKey}, {`{"a" 1`, jsonscan.AfterKey},
		{`{"a":1`, jsonscan.AfterMember}, {`{"a":1 2`, jsonscan.AfterMember},
		{`[1`, jsonscan.AfterElement}, {`[1 2`, jsonscan.AfterElement},
	} {
		d := jsonscan.NewBytes([]byte(tc.in), jsonscan.Options{})
		var err error
		for err == nil {
			_, err = d.Next()
		}
		if got := d.Context(); got != tc.want {
			t.Errorf("%q: context %d after %v, want %d", tc.in, got, err, tc.want)
		}
	}
	in := ` { "a" : [ 12 , "x\n" , true , {} ] } `
	d := jsonscan.NewBytes([]byte(in), jsonscan.Options{})
	var starts []int64
	for {
		k, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		starts = append(starts, d.TokenStart(k))
	}
	want := []int64{1, 3, 9, 11, 16, 24, 31, 32, 34, 36}
	if len(starts) != len(want) {
		t.Fatalf("starts %v, want %v", starts, want)
	}
	for i := range want {
		if starts[i] != want[i] {
			t.Fatalf("starts %v, want %v", starts, want)
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

func TestLocate(t *testing.T) {
	nf := jsonscan.Options{NonFinite: true}
	for _, tc := range []struct {
		in   string // the token starts after the first '|'
		off  int64  // offset of the offending byte, -1 for the end of input
		flaw jsonscan.Flaw
	}{
		{`|"abc"`, 0, jsonscan.FlawNone},
		{`|1.5e3`, 0, jsonscan.FlawNone},
		{"|\"ab\x01c\"", 3, jsonscan.FlawString},
		{`|"ab`, -1, jsonscan.FlawString},
		{`[|"a\\\qb"]`, 6, jsonscan.FlawEscape},
		{`|"a\`, -1, jsonscan.FlawEscape},
		{`|"\u12G4"`, 5, jsonscan.FlawHexEscape},
		{`|"\u12`, -1, jsonscan.FlawHexEscape},
		{`|-x`, 1, jsonscan.FlawNumber},
		{`|-`, -1, jsonscan.FlawNumber},
		{`|-Inf`, -1, jsonscan.FlawNumber},
		{`|Nax`, 2, jsonscan.FlawNumber},
		{`|12.x`, 3, jsonscan.FlawFraction},
		{`|12.`, -1, jsonscan.FlawFraction},
		{`|1e+x`, 3, jsonscan.FlawExponent},
		{`|1E`, -1, jsonscan.FlawExponent},
		{`{"a":|nulx}`, 8, jsonscan.FlawLiteral},
		{`|tr`, -1, jsonscan.FlawLiteral},
	} {
		start := int64(strings.IndexByte(tc.in, '|'))
		data := []byte(tc.in[:start] + tc.in[start+1:])
		want := tc.off
		if want < 0 {
			want = int64(len(data))
		}
		if tc.flaw == jsonscan.FlawNone {
			want = start
		}
		off, flaw := jsonscan.Locate(data, start, nf)
		if off != want || flaw != tc.flaw {
			t.Errorf("%s: Locate = %d, %d; want %d, %d", tc.in, off, flaw, want, tc.flaw)
		}
	}
	// Without NonFinite, NaN is not a token at all.
	if _, flaw := jsonscan.Locate([]byte(`NaN`), 0, jsonscan.Options{}); flaw == jsonscan.FlawNone {
		t.Error("NaN located as valid without NonFinite")
	}
}

// FuzzLocate: Locate calls a token invalid exactly when Next refuses it,
// and the prefix up to the byte it names still scans without a syntax
// error (the token is cut short there, not wrong).
func FuzzLocate(f *testing.F) {
	for _, s := range []string{`"a\qb"`, `"\u12G4"`, `-1.5e+3`, `1.x`, `nulx`, `NaN`, `-Infinity`, "\"a\x01\"", `"ab`} {
		f.Add([]byte(s))
	}
	nf := jsonscan.Options{NonFinite: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || jsonscan.StartKind(data[0], nf) == jsonscan.Invalid || data[0] == '{' || data[0] == '[' {
			return
		}
		_, err := jsonscan.NewBytes(data, nf).Next()
		var se *jsonscan.SyntaxError
		bad := errors.As(err, &se) || err == io.ErrUnexpectedEOF
		off, flaw := jsonscan.Locate(data, 0, nf)
		if bad != (flaw != jsonscan.FlawNone) {
			t.Fatalf("%q: Next %v, Locate %d at %d", data, err, flaw, off)
		}
		if !bad {
			return
		}
		if off < 0 || off > int64(len(data)) {
			t.Fatalf("%q: offset %d outside the input", data, off)
		}
		if _, err := jsonscan.NewBytes(data[:off], nf).Next(); errors.As(err, &se) {
			t.Fatalf("%q: the prefix before offset %d already fails: %v", data, off, err)
		}
	})
}
