package harbor

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzDecodeForImport checks ReadAttempt's decode into the decoder's own
// result against DecodeTrialResultForImport, on a decoder that has just
// read another file: nothing of the earlier result (its rewards, agent,
// timings, usage counts) may show in the next, and the errors agree.
func FuzzDecodeForImport(f *testing.F) {
	var files [][]byte
	for _, g := range []string{"testdata/cases/*.json", "testdata/synthetic/*/*.json"} {
		paths, _ := filepath.Glob(g)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			files = append(files, data)
		}
	}
	for i := range files {
		f.Add(files[i], files[(i+1)%len(files)])
	}
	min := `{"task_name":"t","trial_name":"t__1","task_checksum":"c",`
	f.Add([]byte(min+`"agent_info":{"name":"a","model_info":{"name":"m"}},"agent_result":{"n_input_tokens":5},"verifier_result":{"rewards":{"a":1,"b":0}},"verifier":{"started_at":"2026-01-01T00:00:00Z","finished_at":"2026-01-01T00:00:01Z"}}`),
		[]byte(min+`"agent_info":null,"verifier_result":{"rewards":{}}}`))
	f.Fuzz(func(t *testing.T, prev, data []byte) {
		want, werr := DecodeTrialResultForImport(data)
		d := new(decoder)
		d.decodeForImport(prev)
		got, gerr := d.decodeForImport(data)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Fatalf("error %v, DecodeTrialResultForImport %v", gerr, werr)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateNaNs()); diff != "" {
			t.Fatalf("differs from DecodeTrialResultForImport after another file:\n%s", diff)
		}
	})
}
