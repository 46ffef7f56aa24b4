package harbor

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzJudge: whatever result.json decodes, Judge gives a valid status, a
// known reason and a detail, never a panic; the seeds are every case file.
func FuzzJudge(f *testing.F) {
	for _, glob := range []string{"testdata/outcome/cases/*.json", resultsDir + "/cases/*.json"} {
		files, _ := filepath.Glob(glob)
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	known := map[string]bool{}
	for _, r := range Reasons() {
		known[r] = true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeTrialResultBytes(data)
		if err != nil {
			return
		}
		o := Judge(r)
		if !o.Status.Valid() || !known[o.Reason] || o.Detail == "" {
			t.Fatalf("Judge gave %+v", o)
		}
		if o.Status.Scored() && (o.Reward == nil || (*o.Reward != 0 && *o.Reward != 1)) {
			t.Fatalf("scored %s with reward %v", o.Status, o.Reward)
		}
	})
}
