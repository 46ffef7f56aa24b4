package jsonscan_test

import (
	"io"
	"testing"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// TestResetAllocatesNothing: a reused decoder reads a small document (a
// JSON Lines line) without allocating, which is why snapshot reuses one
// per observations.jsonl.
func TestResetAllocatesNothing(t *testing.T) {
	d := jsonscan.NewBytes(nil, jsonscan.Options{})
	line := []byte(`{"trial_id":"t#0","attempt_outcomes":[{"retry":0,"status":"success","reason":"caf\u00e9"}],"reward":1.5,"ok":true}`)
	n := testing.AllocsPerRun(50, func() {
		d.Reset(line, jsonscan.Options{})
		for {
			k, err := d.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k == jsonscan.String {
				d.Text()
			}
		}
	})
	if n != 0 {
		t.Errorf("a reused decoder allocated %.0f times per document", n)
	}
}
