package importer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/transcript"
)

// MaxTraceLimit is the most trajectories one snapshot may carry.
const MaxTraceLimit = 128

// TranscriptOptions turn on trajectory export (SPEC §3). Redactors is
// required: tpctl never exports a transcript nobody chose to redact.
type TranscriptOptions struct {
	Limit     int
	Redactors []string
	// Environ adds environment entries to the secret scan's (Options.Environ).
	Environ []string
	Limits  transcript.Limits
}

// ErrNoRedactor is returned when transcripts are requested without one.
var ErrNoRedactor = errors.New("--trace-limit needs at least one --redactor; transcripts are never exported unredacted")

// Validate checks the options before any work is done.
func (o TranscriptOptions) Validate() error {
	if o.Limit < 1 || o.Limit > MaxTraceLimit {
		return fmt.Errorf("--trace-limit %d is out of range: use 1…%d", o.Limit, MaxTraceLimit)
	}
	if len(o.Redactors) == 0 {
		return ErrNoRedactor
	}
	for _, spec := range o.Redactors {
		if err := redact.CheckSpec(spec); err != nil {
			return err
		}
	}
	return nil
}

type transcriber struct {
	prod    producers.Producer
	opts    TranscriptOptions
	root    string
	red     redact.Redactor
	scanner *redact.Scanner
}

func newTranscriber(ctx context.Context, opts TranscriptOptions, prod producers.Producer, root string, scanner *redact.Scanner) (*transcriber, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Limits == (transcript.Limits{}) {
		opts.Limits = transcript.DefaultLimits
	}
	red, err := redact.OpenAll(ctx, opts.Redactors)
	if err != nil {
		return nil, err
	}
	return &transcriber{prod: prod, opts: opts, root: root, red: red, scanner: scanner}, nil
}

func (t *transcriber) close() { t.red.Close() }

// export selects trajectories in the fixed order of SPEC §3 — trials by
// (task, repeat), attempts by ascending retry, first Limit attempts that
// have a trajectory — and writes them redacted and limited. A redactor
// failure or a secret found after redaction aborts the import; an
// unreadable or unsupported file is skipped with its reason.
func (t *transcriber) export(ctx context.Context, trials []planfile.Trial, w *snapshot.Writer) ([]Warning, error) {
	roundID, err := w.RoundID()
	if err != nil {
		return nil, err
	}
	labels := make([]string, len(t.opts.Redactors))
	for i, spec := range t.opts.Redactors {
		labels[i] = redactorLabel(spec)
	}
	w.SetRedactors(labels)
	skipped := []Warning{}
	n := 0
	for _, tr := range trials {
		for _, a := range sortedAttempts(tr) {
			if n >= t.opts.Limit {
				return skipped, nil
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			where := fmt.Sprintf("%s retry %d", tr.ID(), a.Retry)
			parts, notes, err := t.prod.Transcript(t.root, a.Dir)
			if err != nil {
				skipped = append(skipped, Warning{"trajectory_skipped", where + ": " + err.Error()})
				continue
			}
			for _, n := range notes {
				skipped = append(skipped, Warning{n.Code, where + ": " + n.Message})
			}
			if len(parts) == 0 {
				continue
			}
			traj, err := transcript.BuildParts(ctx, parts, t.red, t.scanner, t.opts.Limits)
			var skip *transcript.SkipError
			if errors.As(err, &skip) {
				skipped = append(skipped, Warning{"trajectory_skipped", where + ": " + skip.Reason})
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("trajectory of %s: %w", where, err)
			}
			traj.RoundID, traj.TrialID, traj.TrialAttempt = roundID, tr.ID(), a.Retry
			b, err := transcript.Encode(traj)
			if err != nil {
				return nil, fmt.Errorf("trajectory of %s: %w", where, err)
			}
			if err := w.AddTrajectory(b, traj.Truncated); err != nil {
				return nil, err
			}
			n++
		}
	}
	return skipped, nil
}

// redactorLabel names a redactor for the manifest without a machine path:
// a rules file by its base name and content digest (which is better
// evidence than its location), an exec redactor by its program's name.
func redactorLabel(spec string) string {
	kind, arg, _ := strings.Cut(spec, ":")
	switch kind {
	case "rules":
		label := "rules:" + filepath.Base(arg)
		if b, err := safefs.ReadFileCapped(arg, 16<<20); err == nil {
			label += "@sha256:" + digest.Bytes(b).String()
		}
		return label
	case "exec":
		prog, _, _ := strings.Cut(strings.TrimSpace(arg), " ")
		return "exec:" + filepath.Base(prog)
	}
	return spec
}
