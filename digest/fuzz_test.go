package digest

import (
	"encoding/json"
	"testing"
)

// FuzzParse checks Parse never panics and that whatever it accepts
// round-trips exactly through String and JSON.
func FuzzParse(f *testing.F) {
	for _, s := range []string{helloSHA, "", "sha256:" + helloSHA, helloSHA[:63] + "G", "ABCDEF"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err != nil {
			if !d.IsZero() {
				t.Fatalf("Parse(%q) failed but returned %v", s, d)
			}
			return
		}
		if d.String() != s {
			t.Fatalf("Parse(%q).String() = %q", s, d.String())
		}
		b, _ := json.Marshal(d)
		var back Digest
		if err := json.Unmarshal(b, &back); err != nil || back != d {
			t.Fatalf("JSON round trip of %q: %v, %v", s, back, err)
		}
	})
}

// FuzzJSON checks JSON never panics and is stable: hashing the canonical
// form again gives the same digest.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[true,null,1e3]}`, `"\u00e9"`, `[`, `{"a":1,"a":2}`, `1.0000000000000001`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := JSON(data)
		if err != nil {
			return
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("JSON accepted %q, which encoding/json rejects: %v", data, err)
		}
		_ = d
	})
}
