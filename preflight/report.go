package preflight

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/internal/safefs"
)

// ReportFormat identifies the report layout; it changes only with a new
// major version of the format.
const ReportFormat = "tpctl-preflight/1"

// FingerprintRules names the documented fingerprint computation: SHA-256
// over the RFC 8785 canonical JSON of the object {"config", "params",
// "recipe", "resources", "runtime", "source"} taken from the job.
const FingerprintRules = "tpctl-preflight-fingerprint/1"

// MaxReportBytes caps a saved report read back by verify-report.
const MaxReportBytes = 4 << 20

// Status is the outcome of one check.
type Status string

// The three outcomes. Unchecked is never a pass: it says the tool could
// not or did not look.
const (
	StatusPass      Status = "pass"
	StatusFail      Status = "fail"
	StatusUnchecked Status = "unchecked"
)

// Check is one line of the report.
type Check struct {
	ID     string `json:"id"`
	Status Status `json:"status"`
	// Field is the JSON pointer into the job the check is about.
	Field  string `json:"field"`
	Reason string `json:"reason"`
	// Problems lists every located violation behind a fail (or the
	// evidence behind an unchecked); empty for most passes.
	Problems []Problem `json:"problems"`
}

// Summary counts checks by status.
type Summary struct {
	Pass      int `json:"pass"`
	Fail      int `json:"fail"`
	Unchecked int `json:"unchecked"`
}

// Fingerprint identifies the job inputs a report was made for.
type Fingerprint struct {
	Rules  string `json:"rules"`
	SHA256 string `json:"sha256"`
	// Inputs holds the SHA-256 of each input's canonical JSON, so that
	// verify-report can say which input changed.
	Inputs map[string]string `json:"inputs"`
}

// Report is the result of a preflight run, saved as evidence of readiness
// at CheckedAt; admission is still checked again at submission.
type Report struct {
	Format        string      `json:"format"`
	Job           string      `json:"job"`
	Ready         bool        `json:"ready"`
	CheckedAt     string      `json:"checked_at"`
	ToolVersion   string      `json:"tool_version"`
	Fingerprint   Fingerprint `json:"fingerprint"`
	CatalogSHA256 string      `json:"catalog_sha256"`
	Summary       Summary     `json:"summary"`
	Checks        []Check     `json:"checks"`
	Notes         []string    `json:"notes"`
}

// fingerprintInputs lists the inputs covered by the fingerprint, in order.
var fingerprintInputs = []string{"recipe", "params", "source", "config", "resources", "runtime"}

// ComputeFingerprint returns the fingerprint of a job's inputs. The name,
// derived_from and the content of the source bundle are not covered.
func ComputeFingerprint(job *Job) (Fingerprint, error) {
	params, config := job.Params, job.Config
	if params == nil {
		params = map[string]any{}
	}
	if config == nil {
		config = map[string]any{}
	}
	rt := job.Runtime
	if rt.Datasets == nil {
		rt.Datasets = []string{}
	}
	parts := map[string]any{
		"recipe":    job.Recipe,
		"params":    params,
		"source":    job.Source,
		"config":    config,
		"resources": job.Resources,
		"runtime":   rt,
	}
	fp := Fingerprint{Rules: FingerprintRules, Inputs: map[string]string{}}
	for _, name := range fingerprintInputs {
		b, err := jcs.Marshal(parts[name])
		if err != nil {
			return Fingerprint{}, fmt.Errorf("failed to canonicalize job %s: %w", name, err)
		}
		fp.Inputs[name] = digest.Bytes(b).String()
	}
	all, err := jcs.Marshal(parts)
	if err != nil {
		return Fingerprint{}, fmt.Errorf("failed to canonicalize job inputs: %w", err)
	}
	fp.SHA256 = digest.Bytes(all).String()
	return fp, nil
}

// JSON returns the report as indented JSON with a final newline. Apart
// from CheckedAt it depends only on the inputs.
func (r *Report) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("failed to encode report: %w", err)
	}
	return buf.Bytes(), nil
}

// Save writes the report atomically: a crash leaves the old file or the
// new one, never half of one.
func (r *Report) Save(path string) error {
	b, err := r.JSON()
	if err != nil {
		return err
	}
	if err := safefs.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("failed to save report: %w", err)
	}
	return nil
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// DecodeReport parses a saved report strictly: unknown fields, another
// format or malformed digests are errors.
func DecodeReport(file string, data []byte) (*Report, error) {
	bad := func(ptr, msg string) error {
		return &DecodeError{File: file, Problems: []Problem{{In: "report", Pointer: ptr, Message: msg}}}
	}
	if len(data) > MaxReportBytes {
		return nil, bad("", fmt.Sprintf("larger than the %d-byte limit for a report", MaxReportBytes))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Report
	if err := dec.Decode(&r); err != nil {
		return nil, bad("", "not a tpctl preflight report: "+err.Error())
	}
	if dec.More() {
		return nil, bad("", "data after the report object")
	}
	if r.Format != ReportFormat {
		return nil, bad("/format", fmt.Sprintf("format is %q, want %q; was it written by 'tpctl preflight --report'?", r.Format, ReportFormat))
	}
	if !hex64.MatchString(r.Fingerprint.SHA256) {
		return nil, bad("/fingerprint/sha256", "not a lowercase SHA-256")
	}
	for _, k := range slices.Sorted(maps.Keys(r.Fingerprint.Inputs)) {
		if !hex64.MatchString(r.Fingerprint.Inputs[k]) {
			return nil, bad("/fingerprint/inputs/"+escapePointer(k), "not a lowercase SHA-256")
		}
	}
	return &r, nil
}

// LoadReport reads (size-capped, no symlink) and decodes a saved report.
func LoadReport(path string) (*Report, error) {
	b, err := readInput(path, MaxReportBytes)
	if err != nil {
		return nil, fmt.Errorf("failed to read report %q: %w", path, err)
	}
	return DecodeReport(path, b)
}

// Verification says whether a saved report still applies to a job.
type Verification struct {
	Applies bool `json:"applies"`
	// Reason is one sentence for people.
	Reason string `json:"reason"`
	// ReportFingerprint and JobFingerprint are the two SHA-256 values.
	ReportFingerprint string `json:"report_fingerprint"`
	JobFingerprint    string `json:"job_fingerprint"`
	// Changed names the inputs whose digests differ ("params", …), in
	// fingerprint order; empty when they cannot be told apart.
	Changed []string `json:"changed"`
	// CheckedAt and Ready repeat the report's time and verdict.
	CheckedAt string `json:"checked_at"`
	Ready     bool   `json:"ready"`
}

// Verify compares the report's fingerprint with the job's current one. It
// does not re-run any check: a report that applies is still only evidence
// from CheckedAt.
func Verify(r *Report, job *Job) (*Verification, error) {
	fp, err := ComputeFingerprint(job)
	if err != nil {
		return nil, err
	}
	v := &Verification{
		ReportFingerprint: r.Fingerprint.SHA256,
		JobFingerprint:    fp.SHA256,
		Changed:           []string{},
		CheckedAt:         r.CheckedAt,
		Ready:             r.Ready,
	}
	if r.Fingerprint.Rules != FingerprintRules {
		v.Reason = fmt.Sprintf("the report uses fingerprint rules %q and this tpctl computes %q; run 'tpctl preflight' again", r.Fingerprint.Rules, FingerprintRules)
		return v, nil
	}
	if r.Fingerprint.SHA256 == fp.SHA256 {
		v.Applies = true
		v.Reason = "the job's inputs are unchanged since the report was made"
		return v, nil
	}
	for _, name := range fingerprintInputs {
		if old, ok := r.Fingerprint.Inputs[name]; ok && old != fp.Inputs[name] {
			v.Changed = append(v.Changed, name)
		}
	}
	if len(v.Changed) == 0 {
		v.Reason = "the job's inputs changed since the report was made"
	} else {
		v.Reason = fmt.Sprintf("the job's %s changed since the report was made", joinNames(v.Changed))
	}
	return v, nil
}

func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	s := ""
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			s += " and "
		default:
			s += ", "
		}
		s += n
	}
	return s
}
