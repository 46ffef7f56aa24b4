package ui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestJSONRule(t *testing.T) {
	type inner struct {
		Z string `json:"z"`
		A string `json:"a"`
	}
	v := struct {
		MessageType string   `json:"message_type"`
		Name        string   `json:"name"`
		Inner       inner    `json:"inner"`
		List        []string `json:"list"`
		Null        *int     `json:"null"`
	}{"thing", "<a&b> \x1b[31m \u0085 \u202e \u2028 \x7f é", inner{"z", "a"}, []string{}, nil}
	var buf bytes.Buffer
	if err := JSON(&buf, v); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	want := `{"message_type":"thing","name":"<a&b> \u001b[31m \u0085 \u202e \u2028 \u007f é","inner":{"z":"z","a":"a"},"list":[],"null":null}` + "\n"
	if got != want {
		t.Errorf("JSON:\n got %s\nwant %s", got, want)
	}
	// The decoded value is the original.
	var back struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back.Name != v.Name {
		t.Errorf("round trip: %q, %v; want %q", back.Name, err, v.Name)
	}
}

// TestJSONEscapesEveryUnsafeRune: no C1 control or bidi character is left
// raw, whatever else surrounds it, and decoding gives the input back.
func TestJSONEscapesEveryUnsafeRune(t *testing.T) {
	for _, r := range []rune{0x7f, 0x80, 0x9b, 0x9f, 0x61c, 0x200e, 0x200f, 0x202a, 0x202e, 0x2066, 0x2069} {
		s := "x" + string(r) + "y\xff"
		var buf bytes.Buffer
		if err := JSON(&buf, s); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsRune(buf.String(), r) {
			t.Errorf("U+%04X left raw: %q", r, buf.String())
		}
		var back string
		if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back != strings.ToValidUTF8(s, "\uFFFD") {
			t.Errorf("U+%04X: decoded %q, %v", r, back, err)
		}
	}
	// Characters that are safe stay as they are.
	var buf bytes.Buffer
	_ = JSON(&buf, "ü → 日本 \u00a0")
	if got := buf.String(); got != "\"ü → 日本 \u00a0\"\n" {
		t.Errorf("safe text changed: %q", got)
	}
}

// perByteValid is s with each invalid byte replaced by U+FFFD, as
// encoding/json coerces strings (strings.ToValidUTF8 would replace a run
// of invalid bytes by one).
func perByteValid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r)
		i += n
	}
	return b.String()
}

func FuzzEscapeJSON(f *testing.F) {
	f.Add("plain")
	f.Add("\u0085\u202e\x7f\"\\")
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		if err := JSON(&buf, s); err != nil {
			t.Fatal(err)
		}
		var back string
		if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
			t.Fatalf("invalid JSON %q: %v", buf.String(), err)
		}
		if want := perByteValid(s); back != want {
			t.Errorf("decoded %q, want %q", back, want)
		}
		for _, r := range buf.String() {
			if jsonUnsafe(r) {
				t.Errorf("U+%04X raw in %q", r, buf.String())
			}
		}
	})
}
