package jsonscan_test

import (
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// tokens walks one decoder to the end, recording each token's kind and
// text, and the error that ended it with the offset it was seen at.
func tokens(d *jsonscan.Decoder) (got []string, err error, off int64) {
	for {
		k, err := d.Next()
		if err != nil {
			return got, err, d.InputOffset()
		}
		got = append(got, string(rune('0'+k))+string(d.Raw()))
		if k == jsonscan.String {
			got = append(got, d.String())
		}
	}
}

// TestReset: a reset decoder reads a new document exactly as a new
// decoder does, whatever state (open containers, an error, a key set) the
// last document left it in, and a reused decoder allocates nothing.
func TestReset(t *testing.T) {
	opts := jsonscan.Options{DuplicateKeys: true, MaxDepth: 8}
	reused := jsonscan.NewBytes(nil, opts)
	docs := []string{
		`{"a":[1,{"b":"x\u00e9"}`, // ends inside two containers
		`{"a":1,"a":2}`,
		`[1,2,]`,
		`{"a":1} {"a":2}`,
		`"\ud800" true`,
		`[[[[[[[[[1]]]]]]]]]`,
		``,
	}
	for _, doc := range docs {
		reused.Reset([]byte(doc), opts)
		got, err, off := tokens(reused)
		want, werr, woff := tokens(jsonscan.NewBytes([]byte(doc), opts))
		if !slices.Equal(got, want) || off != woff || (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Errorf("%s: reset decoder gives %q, %v at %d; a new one %q, %v at %d", doc, got, err, off, want, werr, woff)
		}
	}
	// Without DuplicateKeys, which costs a set per object.
	reused = jsonscan.NewBytes(nil, jsonscan.Options{MaxDepth: 8})
	line := []byte(`{"trial_id":"t#0","attempt_outcomes":[{"retry":0,"status":"success"}],"reward":1.5,"ok":true}`)
	n := testing.AllocsPerRun(50, func() {
		reused.Reset(line, jsonscan.Options{MaxDepth: 8})
		for {
			k, err := reused.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k == jsonscan.String {
				reused.Text()
			}
		}
	})
	if n != 0 {
		t.Errorf("a reused decoder allocated %.0f times per document", n)
	}
}
