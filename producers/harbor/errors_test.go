package harbor

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// compact is a result that uses every member the decoder reads, on few
// bytes, with every kind of JSON token and some whitespace.
const compact = `{"id":"i","task_name":"t","trial_name":"t__1","task_checksum":"c","trial_uri":"u",` +
	`"task_id":{"path":"p","git_url":null},"source":null,"config":{"a":[1,-2.5e+3,true,false,null,"s\n"]},` +
	`"agent_info":{"name":"n","version":"v","model_info":{"name":"m","provider":null}},"agent_result":null,` +
	`"environment_setup":{},"agent_setup":null,"verifier_result":{"rewards":{"reward":1.0,"b":NaN}},` +
	`"verifier_environment_mode":"shared","exception_info":{"exception_type":"E","exception_message":"m",` +
	`"occurred_at":"o","exception_traceback":null},"started_at":"s","finished_at":null,` +
	"\n \"step_results\": [{\"step_name\":\"a\",\"verifier_result\":{\"reward\":-Infinity},\"exception_info\":null}],\"x\":[0]}"

// hostile are hand-written malformed results, one per way a token can be
// wrong, in every place the decoder reads one.
var hostile = []string{
	"", " ", "\uFEFF{}", "\x00", "]", "[", "tru", "nul", "-", "1.", "\"a", "x",
	`{`, `{"`, `{"a`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `{"a" 1}`, `{"a":}`, `{"a":1 2}`, `{"a":1,}`, `{,}`, `{1:2}`,
	`{"a":1]`, `{"a":[1 2]}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":[1}`, `{"a":{"b":}}`, `{"a":{"b" 1}}`,
	`{"a":01}`, `{"a":1x}`, `{"a":1_}`, `{"a":truex}`, `{"a":NaNa}`, `{"a":-Infinityx}`, `{"a":[nullx]}`, `{"a":1.5.3}`,
	`{"a":-}`, `{"a":-x}`, `{"a":-I}`, `{"a":-Inf}`, `{"a":Nax}`, `{"a":Na`, `{"a":Infinite}`, `{"a":1.}`, `{"a":1.x}`,
	`{"a":1e}`, `{"a":1e+}`, `{"a":1ex}`, `{"a":1e+x}`, `{"a":nan}`, `{"a":nulx}`, `{"a":tr`, `{"a":fals}`,
	`{"a":"\q"}`, `{"a":"\u12G4"}`, `{"a":"\u1`, `{"a":"\u1x"}`, `{"a":"\u1x`, "{\"a\":\"\x01\"}", `{"a":"\`, `{"a":"b`,
	`{"a\q":1}`, "{\"a\x01\":1}", `{"a":"b"x}`, `{"a":"b"]`, `{"a":{}x}`, `{"a":[]]}`, `{"a":1}x`, `{"a":1} {}`, `{"a":1}]`,
	`{"a":1} "x`, `{"a":1} 1`, `{"a":1} tru`,
	`{"task_name":1.x}`, `{"task_name":tru}`, `{"task_name":"\q"}`, `{"source":nul`, `{"source":nulx}`, `{"source":[`,
	`{"source":` + strings.Repeat("[", 300), `{"x":` + strings.Repeat("[", 300), `{"x":` + strings.Repeat(`{"a":`, 300),
	`{"verifier_result":{"rewards":{"reward":1x}}}`, `{"verifier_result":{"rewards":{"r":1,"r":2}}}`,
	`{"verifier_result":{"rewards":{"r":` + strings.Repeat("[", 300) + `}}}`, `{"verifier_result":{"reward":[1 2]}}`,
	`{"step_results":[1x]}`, `{"step_results":[{}x]}`, `{"step_results":[{"step_name":"a"},]}`, `{"step_results":[{"step_name":"a"}`,
	`{"step_results":[{"step_name":"a"} x]}`, `{"step_results":[`, `{"step_results":[{"step_name":"a"},`,
	`{"exception_info":{}}`, `{"exception_info":{"exception_type":"E","exception_type":"F"}}`, `{"t\u0061sk_name":"t","task_name":"u"}`,
	`{"task_id":{"org":"o","org":"p"}}`, `{"agent_info":{"model_info":{"name":1}}}`, `{"config":{"a":1,"a":2},"task_name":"t","trial_name":"t","task_checksum":"c"}`,
}

// describe2 describes the outcome of decoding in, which
// DecodeTrialResultForImport must report identically.
func describe2(in []byte) string {
	full := describeErr(DecodeTrialResultBytes(in))
	if lean := describeErr(DecodeTrialResultForImport(in)); lean != full {
		return fmt.Sprintf("%s, but DecodeTrialResultForImport: %s", full, lean)
	}
	return full
}

func describeErr(r *TrialResult, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("ok (%d unknown fields)", r.UnknownFields)
}

// TestErrorMessages pins the exact error for every prefix of compact, for
// compact with each byte replaced by 'x', and for the hostile inputs:
// result_invalid messages reach users in import warnings.
func TestErrorMessages(t *testing.T) {
	var b strings.Builder
	if r, err := DecodeTrialResultBytes([]byte(compact)); err != nil || r.UnknownFields != 1 {
		t.Fatalf("compact: %v", describeErr(r, err))
	}
	for i := range len(compact) {
		fmt.Fprintf(&b, "prefix %d: %s\n", i, describe2([]byte(compact[:i])))
	}
	for i := range len(compact) {
		in := []byte(compact)
		in[i] = 'x'
		fmt.Fprintf(&b, "x at %d: %s\n", i, describe2(in))
	}
	for _, in := range hostile {
		name := fmt.Sprintf("%q", in)
		if len(in) > 60 {
			name = fmt.Sprintf("%q… (%d bytes)", in[:60], len(in))
		}
		fmt.Fprintf(&b, "%s: %s\n", name, describe2([]byte(in)))
	}
	const golden = "testdata/errors.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./harbor -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", golden, diff)
	}
}
