package jcs

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Vectors from RFC 8785 §3.2.2 and Appendix B.
func TestFormatNumberRFC8785(t *testing.T) {
	tests := []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	}
	for _, tt := range tests {
		got, err := FormatNumber(math.Float64frombits(tt.bits))
		if err != nil || got != tt.want {
			t.Errorf("FormatNumber(%#x) = %q, %v; want %q", tt.bits, got, err, tt.want)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := FormatNumber(bad); err == nil {
			t.Errorf("FormatNumber(%v) succeeded; want error", bad)
		}
	}
}

func TestTransform(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"rfc example", `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`, `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`},
		{"utf16 sort", `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"},
		{"nested", ` [ {"b":1,"a":[{}, []]} , "x" ] `, `[{"a":[{},[]],"b":1},"x"]`},
		{"integers", `[1, -0, 10.0, 1e2, 123456789012]`, `[1,0,10,100,123456789012]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Transform([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestTransformRejects(t *testing.T) {
	deep := ""
	for i := 0; i < MaxDepth+2; i++ {
		deep += "["
	}
	for name, in := range map[string]string{
		"duplicate key": `{"a":1,"a":2}`,
		"trailing":      `{} {}`,
		"garbage":       `{"a":}`,
		"empty":         ``,
		"nan":           `[NaN]`,
		"too deep":      deep,
		"bad utf8":      "\"\xff\"",
		"huge number":   `[1e400]`,
		"unterminated":  `[1,2`,
	} {
		if got, err := Transform([]byte(in)); err == nil {
			t.Errorf("%s: Transform succeeded with %q; want error", name, got)
		}
	}
}

func FuzzTransform(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x"],"b":null}`, `[1e30,-0,0.1]`, `"\u0000"`, `{"\ud83d\ude00":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Transform(in)
		if err != nil {
			return
		}
		// Canonical agrees with Transform and returns its input when
		// the input is already canonical.
		c, cerr := Canonical(in)
		if cerr != nil || string(c) != string(out) {
			t.Fatalf("Canonical = %s, %v; Transform = %s", c, cerr, out)
		}
		if string(in) == string(out) && len(in) > 0 && &c[0] != &in[0] {
			t.Fatalf("Canonical copied an input that was already canonical")
		}
		// Canonical form is a fixed point.
		again, err := Transform(out)
		if err != nil {
			t.Fatalf("canonical output does not parse: %v\n%s", err, out)
		}
		if string(again) != string(out) {
			t.Fatalf("not idempotent:\n%s\n%s", out, again)
		}
	})
}

func TestTransformStrings(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"\ud83d\ude00"`, "\"\U0001F600\""},
		{`"a\/b"`, `"a/b"`},
		{`"\u001f\u0020"`, `"\u001f "`},
		{`"\"\\"`, `"\"\\"`},
		{`{"b":1,"a":{"d":[1,{"z":0,"y":1}],"c":2}}`, `{"a":{"c":2,"d":[1,{"y":1,"z":0}]},"b":1}`},
		{`[-0.0, 1.0, 100000000000000000000000, 0.1e1]`, `[0,1,1e+23,1]`},
	}
	for _, tt := range tests {
		got, err := Transform([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("Transform(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{`"\ud83d"`, `"\ude00"`, `"\x"`, "\"a\tb\"", `01`, `1.`, `.5`, `-`, `1e`, `tru`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `{"a":1,"a":1}`, `{1:2}`} {
		if got, err := Transform([]byte(bad)); err == nil {
			t.Errorf("Transform(%s) = %s; want error", bad, got)
		}
	}
}

// TestCanonical checks that Canonical equals Transform, returns its input
// itself when that is canonical (no copy) and a new buffer otherwise,
// including inputs that differ only after a long canonical prefix or only
// in member order.
func TestCanonical(t *testing.T) {
	for _, tt := range []struct {
		in    string
		alias bool
	}{
		{`{"a":[1,2.5,"x"],"b":null}`, true},
		{`{"b":null,"a":[1,2.5,"x"]}`, false},
		{`{"a":[1,2.5,"x"],"b":1e21}`, false},
		{`{"a":[1,2.5,"x"],"b":"\u00e9"}`, false},
		{`{"a":[1,2.5,"x"],"b":-0}`, false},
		{`[1, 2]`, false},
		{`"\u001f"`, true},
		{`{"a":{"c":2,"d":[1,{"y":1,"z":0}]},"b":1}`, true},
		{`{"a":{"c":2,"d":[1,{"z":0,"y":1}]},"b":1}`, false},
	} {
		in := []byte(tt.in)
		want, err := Transform(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Canonical(in)
		if err != nil || string(got) != string(want) {
			t.Errorf("Canonical(%s) = %s, %v; want %s", tt.in, got, err, want)
			continue
		}
		if alias := &got[0] == &in[0]; alias != tt.alias {
			t.Errorf("Canonical(%s): returned the input itself = %v; want %v", tt.in, alias, tt.alias)
		}
	}
	for _, bad := range []string{`{"a":1,"a":1}`, `[1,]`, "\xff", `1 2`} {
		if got, err := Canonical([]byte(bad)); err == nil {
			t.Errorf("Canonical(%s) = %s; want error", bad, got)
		}
	}
}

// FuzzTransformAgreesWithEncodingJSON checks the hand-written parser
// against encoding/json: whatever the standard library calls invalid must
// be refused, and every output must be valid, equivalent JSON.
func FuzzTransformAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x"],"b":null}`, `[1e30,-0,0.1]`, `"\u00e9"`, `{"\ud83d\ude00":1,"a":2}`, `[[[]]]`, `{"a":{"a":{}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Transform(in)
		if err != nil {
			return
		}
		if !json.Valid(in) {
			t.Fatalf("accepted invalid JSON %q", in)
		}
		if !json.Valid(out) {
			t.Fatalf("produced invalid JSON %q from %q", out, in)
		}
		var a, b any
		if json.Unmarshal(in, &a) != nil || json.Unmarshal(out, &b) != nil {
			t.Fatal("unmarshal failed")
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("meaning changed:\n in %q\nout %q", in, out)
		}
	})
}

func BenchmarkTransform(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"trials":[`)
	for i := 0; i < 10000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"task":"bench/task-%05d","repeat":%d,"attempts":[{"retry":0,"dir":"jobs/x/task-%05d__%07d"}]}`, i/10, i%10, i/10, i)
	}
	sb.WriteString(`],"name":"bench","settings":{"temperature":0.7}}`)
	in := []byte(sb.String())
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Transform(in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestErrorWording: digest shows these messages to users, so moving the
// canonicalizer onto jsonscan kept them word for word, offsets included.
// testdata/errors.txt was recorded from the hand-written parser jcs had
// before (every message it could give, from its fuzz corpus and the
// inputs above); lone surrogates are among them.
func TestErrorWording(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "errors.txt"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		quoted, want, ok := strings.Cut(line, "\t")
		in, err := strconv.Unquote(quoted)
		if !ok || err != nil {
			t.Fatalf("errors.txt:%d: not a quoted input, a tab and an error: %q", i+1, line)
		}
		n++
		for name, f := range map[string]func([]byte) ([]byte, error){"Transform": Transform, "Canonical": Canonical} {
			got, err := f([]byte(in))
			if err == nil || err.Error() != want {
				t.Errorf("%s(%q) = %q, %v; want error %q", name, in, got, err, want)
			}
		}
	}
	if n < 50 {
		t.Fatalf("errors.txt holds %d cases; it lost some", n)
	}
}

// BenchmarkCanonical is BenchmarkTransform's plan already in canonical
// form: the case of every plan tpctl normalized, which Canonical returns
// without a copy.
func BenchmarkCanonical(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"name":"bench","settings":{"temperature":0.7},"trials":[`)
	for i := 0; i < 10000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"attempts":[{"dir":"jobs/x/task-%05d__%07d","retry":0}],"repeat":%d,"task":"bench/task-%05d"}`, i/10, i, i%10, i/10)
	}
	sb.WriteString(`]}`)
	in := []byte(sb.String())
	if c, err := Canonical(in); err != nil || &c[0] != &in[0] {
		b.Fatalf("not canonical: %v", err)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Canonical(in); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzAppendString: a string written by hand is the canonical form of
// the same string encoded by encoding/json. (Invalid UTF-8 is left out:
// AppendString replaces a run of bad bytes by one U+FFFD, encoding/json
// each byte; hashes depend on it, so it stays.)
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "task-00001#0", `a"b\c`, "tab\there\n", "\x00\x1f\x7f", "ünï€😀", "<>&\u2028", strings.Repeat("ab", 32)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip()
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Transform(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendString(%q) = %s, want x%s", s, got, want)
		}
		if got := AppendStringBytes(nil, []byte(s)); string(got) != string(want) {
			t.Fatalf("AppendStringBytes(%q) = %s, want %s", s, got, want)
		}
	})
}

// TestErrorPrecedence pins which error wins where two could be named: a
// lone surrogate before a later fault in the same string, and nesting past
// MaxDepth before whatever follows. The messages were recorded from jcs's
// hand-written parser, as errors.txt was.
func TestErrorPrecedence(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth)
	for _, tt := range []struct{ in, want string }{
		{"\"\\ud800\\x\"", "jcs: at offset 7: lone surrogate in string"},
		{"\"\\ud800\\u12\"", "jcs: unexpected end of JSON input in \\u escape"},
		{"\"\\ud800", "jcs: at offset 7: lone surrogate in string"},
		{"\"\\ud800\\", "jcs: at offset 7: lone surrogate in string"},
		{"\"\\ud800\n\"", "jcs: at offset 7: lone surrogate in string"},
		{"{\"\\ud800\\uZ", "jcs: unexpected end of JSON input in \\u escape"},
		{"\"\\ud800\\udc00\\ud800\\q\"", "jcs: at offset 19: lone surrogate in string"},
		{"\"\\\\ud800\\x\"", "jcs: at offset 10: invalid escape '\\x'"},
		{"[01]", "jcs: at offset 3: invalid number"},
		{"{\"a\":-01.5}", "jcs: at offset 8: invalid number"},
		{deep + "[\"ab", "jcs: at offset 257: nesting deeper than 256"},
		{deep + "[ \"\\x\"]", "jcs: at offset 258: nesting deeper than 256"},
		{deep + "[  ", "jcs: at offset 259: nesting deeper than 256"},
		{deep + "{\"a\":[", "jcs: at offset 261: nesting deeper than 256"},
		{deep + "{\"a\"  :  \"", "jcs: at offset 263: nesting deeper than 256"},
		{deep + "{\"a\"", "jcs: at offset 260: expected ':' after member name"},
		{deep + "{\"\\ud800\":1}", "jcs: at offset 264: lone surrogate in string"},
		{deep + "{\"a\" x", "jcs: at offset 261: expected ':' after member name"},
	} {
		if _, err := Transform([]byte(tt.in)); err == nil || err.Error() != tt.want {
			t.Errorf("Transform(%q): %v; want %s", tt.in, err, tt.want)
		}
	}
}

// TestFormatNumberIntegers: integers below 2^53 take FormatNumber's short
// path; they must read as ECMAScript writes them (plain digits below
// 10^21), the same as the general path writes the integers beyond it.
func TestFormatNumberIntegers(t *testing.T) {
	for _, f := range []float64{1, -1, 7, 10, 100, 1e15, 123456789012345, 1<<53 - 1, -(1<<53 - 1), 1 << 53, 1<<53 + 2, 1e20, 1e21, -1e21} {
		got, err := FormatNumber(f)
		want := strconv.FormatFloat(f, 'f', -1, 64)
		if math.Abs(f) >= 1e21 {
			want = strconv.FormatFloat(f, 'e', -1, 64) // 1e+21
		}
		if err != nil || got != want {
			t.Errorf("FormatNumber(%v) = %q, %v; want %q", f, got, err, want)
		}
	}
}
