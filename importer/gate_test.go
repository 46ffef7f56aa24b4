package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/snapshot"
)

// TestImportEvidenceForm: evidence fields copied from result.json get a
// form check; a value of the wrong form is recorded as null with an
// evidence_invalid warning, never copied raw (issue 11 item 3).
func TestImportEvidenceForm(t *testing.T) {
	hex := strings.Repeat("ab", 32)
	tests := []struct {
		name, checksum, mode string
		wantChecksum         *string
		wantMode             *string
		wantWarnings         int
	}{
		{"valid", `"` + hex + `"`, `"separate"`, &hex, ptrTo("separate"), 0},
		{"shared", `"` + hex + `"`, `"shared"`, &hex, ptrTo("shared"), 0},
		{"null mode", `"` + hex + `"`, `null`, &hex, nil, 0},
		{"checksum not hex", `"zz` + hex[2:] + `"`, `"separate"`, nil, ptrTo("separate"), 1},
		{"checksum short", `"abc"`, `"separate"`, nil, ptrTo("separate"), 1},
		{"mode unknown", `"` + hex + `"`, `"\u001b[2Jsomething"`, &hex, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := strings.Replace(string(goodResult(`{"rewards":{"reward":1}}`, "null")), `"task_checksum":"abc"`,
				`"task_checksum":`+tt.checksum+`,"verifier_environment_mode":`+tt.mode, 1)
			root, plan := writeJob(t, []byte(res), false)
			out := filepath.Join(t.TempDir(), "snap")
			r, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: out})
			if err != nil {
				t.Fatal(err)
			}
			var ev snapshot.Evidence
			err = snapshot.ReadObservations(out, func(o snapshot.Observation) error { ev = o.Evidence; return nil })
			if err != nil {
				t.Fatal(err)
			}
			if !eqPtr(ev.TaskChecksum, tt.wantChecksum) || !eqPtr(ev.VerifierEnvironmentMode, tt.wantMode) {
				t.Errorf("evidence checksum %v mode %v, want %v and %v", deref(ev.TaskChecksum), deref(ev.VerifierEnvironmentMode), deref(tt.wantChecksum), deref(tt.wantMode))
			}
			n := 0
			for _, w := range r.Warnings {
				if w.Code == "evidence_invalid" {
					n++
				}
			}
			if n != tt.wantWarnings {
				t.Errorf("%d evidence_invalid warnings, want %d: %+v", n, tt.wantWarnings, r.Warnings)
			}
		})
	}
}

// TestImportRefusesSecretIdentity: a known secret in an identity field
// refuses the import with an error that names the trial, the field and
// the detector, never the value, and leaves nothing behind.
func TestImportRefusesSecretIdentity(t *testing.T) {
	const secret = "s3cr3t-VALUE-for-the-gate"
	env := []string{"MY_PASSWORD=" + secret}
	tests := []struct {
		name, from, to, wantField string
	}{
		{"exception type", `"exception_info":null`, `"exception_info":{"exception_type":"E` + secret + `","exception_message":"","exception_traceback":"","occurred_at":"2026-01-01T00:00:00"}`, "exception_info.exception_type"},
		{"task checksum", `"task_checksum":"abc"`, `"task_checksum":"` + secret + `"`, "task_checksum"},
		{"verifier mode", `"task_checksum":"abc"`, `"task_checksum":"abc","verifier_environment_mode":"` + secret + `"`, "verifier_environment_mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := strings.Replace(string(goodResult(`{"rewards":{"reward":1}}`, "null")), tt.from, tt.to, 1)
			root, plan := writeJob(t, []byte(res), false)
			parent := t.TempDir()
			_, err := Import(context.Background(), Options{Producers: testProducers, PlanPath: plan, Root: root, Out: filepath.Join(parent, "snap"), Environ: env})
			var ie *redact.IdentityError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v, want an *redact.IdentityError", err)
			}
			if ie.Field != tt.wantField || ie.Detector != "env:MY_PASSWORD" || !strings.Contains(ie.Where, `trial t#0 retry 0 job/t__1/result.json`) {
				t.Errorf("located as %+v", ie)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error holds the secret: %v", err)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("left %d entries beside --out", len(ents))
			}
		})
	}
}

func ptrTo(s string) *string { return &s }

func eqPtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func deref(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
