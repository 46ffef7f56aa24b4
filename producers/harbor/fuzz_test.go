package harbor_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/producers/harbor"
)

// FuzzDecodeTrialResult checks that any input either decodes or gives a
// typed error (never a panic), and that decode→judge always yields a known
// status and reason code. Seeds are every result file in testdata plus a
// few hostile fragments.
func FuzzDecodeTrialResult(f *testing.F) {
	for _, g := range []string{"testdata/cases/*.json", "testdata/synthetic/*/*.json"} {
		files, _ := filepath.Glob(g)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	min := `{"task_name":"t","trial_name":"t__1","task_checksum":"c",`
	for _, s := range []string{
		"", "{", "[]", "null", "\xff", "\uFEFF{}",
		min + `"verifier_result":{"rewards":{"reward":NaN}}}`,
		min + `"verifier_result":{"reward":-Infinity}}`,
		min + `"step_results":[{"step_name":"a","exception_info":{"exception_type":"TimeoutError"}}],"verifier_result":{"rewards":{"reward":1}}}`,
		min + `"exception_info":{"exception_type":"AgentTimeoutError"},"verifier_result":{"rewards":{"reward":1e400}}}`,
	} {
		f.Add([]byte(s))
	}
	reasons := harbor.Reasons()
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := harbor.DecodeTrialResult(bytes.NewReader(data))
		// The in-memory entry point must agree and must not keep
		// pointers into its (reused) buffer: overwrite it after decoding.
		buf := bytes.Clone(data)
		r2, err2 := harbor.DecodeTrialResultBytes(buf)
		for i := range buf {
			buf[i] = 'x'
		}
		if diff := cmp.Diff(r, r2, cmpopts.EquateNaNs()); diff != "" || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("DecodeTrialResultBytes differs (%v vs %v):\n%s", err, err2, diff)
		}
		// The importer's lean decode checks the same and keeps what the
		// rules and the importer read.
		r3, err3 := harbor.DecodeTrialResultForImport(data)
		if fmt.Sprint(err) != fmt.Sprint(err3) {
			t.Fatalf("DecodeTrialResultForImport error %v, want %v", err3, err)
		}
		if r != nil {
			want := *r
			want.ID, want.TrialName, want.TaskID, want.Source, want.StartedAt, want.FinishedAt = "", "", harbor.TaskID{}, nil, nil, nil
			want.Exception = withoutOccurredAt(want.Exception)
			if want.Agent != nil {
				a := *want.Agent
				a.Version, a.ModelProvider = "", nil
				want.Agent = &a
			}
			if want.Steps != nil {
				want.Steps = slices.Clone(want.Steps)
				for i := range want.Steps {
					want.Steps[i].Exception = withoutOccurredAt(want.Steps[i].Exception)
				}
			}
			if diff := cmp.Diff(&want, r3, cmpopts.EquateNaNs()); diff != "" {
				t.Fatalf("DecodeTrialResultForImport differs:\n%s", diff)
			}
			if o1, o3 := harbor.Judge(r2), harbor.Judge(r3); !cmp.Equal(o1, o3, cmpopts.EquateNaNs()) {
				t.Fatalf("judged %+v from the lean decode, %+v from the full one", o3, o1)
			}
		}
		var o outcome.Outcome
		if err != nil {
			var de *harbor.DecodeError
			var tl *harbor.TooLargeError
			if !errors.As(err, &de) && !errors.As(err, &tl) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			if de != nil && (de.Offset < 0 || de.Offset > int64(len(data))) {
				t.Fatalf("offset %d outside input of %d bytes", de.Offset, len(data))
			}
			o = harbor.Invalid(err)
		} else {
			o = harbor.Judge(r)
		}
		if !o.Status.Valid() || !slices.Contains(reasons, o.Reason) {
			t.Fatalf("unknown verdict %q/%q", o.Status, o.Reason)
		}
		if o.Status.Scored() && (o.Reward == nil || (*o.Reward != 0 && *o.Reward != 1)) {
			t.Fatalf("scored %s without a binary reward: %v", o.Status, o.Reward)
		}
	})
}

func withoutOccurredAt(e *harbor.ExceptionInfo) *harbor.ExceptionInfo {
	if e == nil {
		return nil
	}
	c := *e
	c.OccurredAt = ""
	return &c
}
