package jsonscan_test

import (
	"io"
	"testing"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// TestReset reuses one decoder, left in every state, for a fresh
// document: it must scan like a new one.
func TestReset(t *testing.T) {
	docs := []string{`{"a":[1,{"b":"x\n"}]}`, `[[[`, `{"a":1,"a":2}`, `"\u00e9"`, `{"a"`, `[1,2]`}
	var d jsonscan.Decoder
	for _, first := range docs {
		for _, second := range docs {
			opts := jsonscan.Options{DuplicateKeys: true, MaxDepth: 2}
			d.Reset([]byte(first), opts)
			for {
				if _, err := d.Next(); err != nil {
					break
				}
			}
			d.Reset([]byte(second), opts)
			got, gotErr := drain(&d)
			want, wantErr := drain(jsonscan.NewBytes([]byte(second), opts))
			if got != want || gotErr != wantErr {
				t.Errorf("%s after %s: got %q %v, want %q %v", second, first, got, gotErr, want, wantErr)
			}
		}
	}
}

func drain(d *jsonscan.Decoder) (string, string) {
	var toks string
	for {
		k, err := d.Next()
		if err != nil {
			if err == io.EOF {
				return toks, ""
			}
			return toks, err.Error()
		}
		toks += string(rune('0'+k)) + string(d.Raw()) + "|"
		if k == jsonscan.String {
			toks += d.String()
		}
	}
}
