package planfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/redact"
)

// MaxPlanSize caps the bytes read from a plan file. An indented plan of
// 1,000,000 trials is about 200 MB, so 256 MiB holds it while a hostile
// or mistaken input (/dev/zero, a wrong file) is refused without being
// read. It no longer has to protect an import's memory, which Scan makes
// independent of the plan's size; it still bounds what Load (plan check,
// and imports of plans Scan declines) holds: about five times the file.
const MaxPlanSize = 256 << 20

// MaxDepth caps JSON nesting. A valid plan nests at most five levels plus
// whatever settings hold; deeper input is refused before it can exhaust
// the stack of the schema validator.
const MaxDepth = 64

// SchemaID is the $id of the embedded import-plan schema.
const SchemaID = "https://tuneplane.dev/schemas/import-plan.v1.json"

// Severities of a finding.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Stable finding codes (SPEC §11). Tests, CI scripts and the README depend
// on them: never rename one.
const (
	CodeJSONSyntax         = "json_syntax"
	CodeDuplicateKey       = "duplicate_key"
	CodePlanTooLarge       = "plan_too_large"
	CodeSchema             = "schema"
	CodeUnknownField       = "unknown_field"
	CodeDigestFormat       = "digest_format"
	CodeDigestPlaceholder  = "digest_placeholder"
	CodeCheckpointUnpinned = "checkpoint_unpinned"
	CodeRevisionUnverified = "revision_unverified"
	CodeDuplicateTrial     = "duplicate_trial"
	CodeDuplicateRetry     = "duplicate_retry"
	CodeDuplicateDir       = "duplicate_dir"
	CodePathAbsolute       = safefs.CodeAbsolute
	CodePathTraversal      = safefs.CodeTraversal
	CodePathUnclean        = safefs.CodeUnclean
	CodeSymlink            = safefs.CodeSymlink
	CodeDirMissing         = safefs.CodeMissing
	CodeNotDir             = safefs.CodeNotDir
	CodeNotFile            = "not_file"
	CodeDirUnreadable      = "dir_unreadable"
	CodeRootInvalid        = "root_invalid"
	CodeSecretField        = "secret_field"
	CodeSettingsIncomplete = "settings_incomplete"
	CodeControlCharacter   = "control_character"
	CodeSecretValue        = "secret_value"
	CodePlaceholder        = "placeholder"
)

// Finding is one problem in a plan. Pointer is an RFC 6901 JSON pointer
// into the plan ("" is the whole document). Line and Column (1-based;
// the column counts Unicode characters) locate it in the file for text and
// GitHub output; they are 0 when there is no position (a plan that is too
// large, a bad --root). They are left out of the JSON report so that it is
// exactly the SPEC §11 contract.
type Finding struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Pointer  string `json:"pointer"`
	Message  string `json:"message"`
	Hint     string `json:"hint"`
	// More is set on the last finding of a code that had more than
	// MaxFindingsPerCode: how many of that code and severity are not
	// listed. Such a finding has no pointer.
	More   int `json:"more,omitempty"`
	Line   int `json:"-"`
	Column int `json:"-"`
}

// Options change how a plan is checked.
type Options struct {
	// Root is the folder attempt dirs are relative to; empty skips the
	// filesystem rules of Check.
	Root string
	// AllowUnverifiedFormat turns revision_unverified into a warning.
	AllowUnverifiedFormat bool
	// Strict turns every warning into an error.
	Strict bool
	// AllowExecution accepts a top-level "execution" object (eval plans,
	// SPEC §8) and keeps it raw in Plan.Execution; otherwise it is an
	// unknown field.
	AllowExecution bool
	// Scanner, when set, refuses identity fields (name, split, checkpoint,
	// task, dir) that carry a secret it knows: secret_value.
	Scanner *redact.Scanner
}

// Source names the tool and revision whose output format the folders hold.
type Source struct {
	Format   string `json:"format"`
	Revision string `json:"revision"`
}

// Checkpoint is the evaluated model: an exact, content-pinned reference
// and the routing name it was served under (which proves nothing).
type Checkpoint struct {
	Ref      string `json:"ref"`
	ServedAs string `json:"served_as,omitempty"`
}

// Protocol holds the four declared SHA-256 digests (64 lowercase hex).
type Protocol struct {
	DatasetDigest     string `json:"dataset_digest"`
	VerifierDigest    string `json:"verifier_digest"`
	EnvironmentDigest string `json:"environment_digest"`
	HarnessDigest     string `json:"harness_digest"`
}

// Attempt is one execution of a trial, in its own folder.
type Attempt struct {
	Retry int    `json:"retry"`
	Dir   string `json:"dir"`
}

// Trial is one planned sample of a task. Attempts is empty when the trial
// never ran (it still counts in the denominator as missing).
type Trial struct {
	Task     string    `json:"task"`
	Repeat   int       `json:"repeat"`
	Attempts []Attempt `json:"attempts"`
}

// ID is the trial identity "<task>#<repeat>" used everywhere downstream.
func (t Trial) ID() string { return t.Task + "#" + strconv.Itoa(t.Repeat) }

// Plan is a decoded import plan (SPEC §1). Trials keep file order, so
// finding pointers (/trials/3) refer to the file; Normalized sorts them.
// Settings numbers are json.Number so that re-encoding keeps their exact
// text.
type Plan struct {
	Version    int             `json:"version"`
	Source     Source          `json:"source"`
	Name       string          `json:"name"`
	Split      string          `json:"split"`
	Trainable  bool            `json:"trainable"`
	Checkpoint Checkpoint      `json:"checkpoint"`
	Protocol   Protocol        `json:"protocol"`
	Settings   map[string]any  `json:"settings"`
	Trials     []Trial         `json:"trials"`
	Execution  json.RawMessage `json:"execution,omitempty"`
}

// Report is the result of checking one plan file; its JSON form is the
// `tpctl plan check --output json` contract of SPEC §11. Findings is never
// null.
type Report struct {
	Valid    bool      `json:"valid"`
	Plan     string    `json:"plan"`
	Trials   int       `json:"trials"`
	Findings []Finding `json:"findings"`
}

// HasErrors reports whether any finding is an error (not a warning).
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Load reads the plan at path (at most MaxPlanSize bytes), parses it and,
// when opts.Root is set, checks its folders. The error is non-nil only when
// the file cannot be read at all; every problem with its content is a
// finding in the report, sorted by pointer then code. The plan is nil when
// the file is not a JSON object.
func Load(path string, opts Options) (*Plan, *Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to open plan %q: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("failed to stat plan %q: %w", path, err)
	}
	if fi.IsDir() {
		return nil, nil, fmt.Errorf("plan %q is a folder, not a file", path)
	}
	rep := &Report{Plan: path, Findings: []Finding{}}
	// The size check comes first so a huge file costs neither time nor
	// memory; the capped read below still guards pipes and files that grow.
	if fi.Mode().IsRegular() && fi.Size() > MaxPlanSize {
		rep.Findings = append(rep.Findings, tooLarge(fi.Size()))
		return nil, rep, nil
	}
	data, err := safefs.ReadCapped(f, path, MaxPlanSize)
	if err != nil {
		var tl *safefs.TooLargeError
		if errors.As(err, &tl) {
			rep.Findings = append(rep.Findings, tooLarge(-1))
			return nil, rep, nil
		}
		return nil, nil, fmt.Errorf("failed to read plan %q: %w", path, err)
	}
	p, fs := Parse(data, path, opts)
	if p != nil {
		checked := Check(p, opts)
		ps := make([]pending, len(checked))
		for i, f := range checked {
			ps[i] = pending{Finding: f, off: -1}
		}
		fs = append(fs, place(data, ps)...)
		rep.Trials = len(p.Trials)
	}
	SortFindings(fs)
	rep.Findings = append(rep.Findings, capFindings(fs)...)
	rep.Valid = !HasErrors(rep.Findings)
	return p, rep, nil
}

func tooLarge(size int64) Finding {
	msg := fmt.Sprintf("plan is larger than the %d-byte limit", MaxPlanSize)
	if size >= 0 {
		msg = fmt.Sprintf("plan is %d bytes, over the %d-byte limit", size, MaxPlanSize)
	}
	return Finding{
		Severity: SeverityError,
		Code:     CodePlanTooLarge,
		Pointer:  "",
		Message:  msg,
		Hint:     "check that PLAN names an import-plan.json; split a job this large into several plans",
	}
}
