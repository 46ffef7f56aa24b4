package importer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/harbor"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/planfile"
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
	Limits    transcript.Limits
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
	opts    TranscriptOptions
	root    string
	red     redact.Redactor
	scanner *redact.Scanner
}

func newTranscriber(ctx context.Context, opts TranscriptOptions, root string, scanner *redact.Scanner) (*transcriber, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Limits == (transcript.Limits{}) {
		opts.Limits = transcript.DefaultLimits
	}
	red, err := redact.OpenAllWith(ctx, opts.Redactors, redact.Options{Gate: scanner})
	if err != nil {
		return nil, err
	}
	return &transcriber{opts: opts, root: root, red: red, scanner: scanner}, nil
}

func (t *transcriber) close() { t.red.Close() }

// StepMarkerPrefix starts the content of the system message that opens
// each step of a multi-step attempt's body (docs/transcripts.md).
const StepMarkerPrefix = "[tpctl: step boundary] "

// stepMarker is the boundary message before step i (1-based) of n.
func stepMarker(i, n int, name string) string {
	return fmt.Sprintf("%sstep %d of %d: %q", StepMarkerPrefix, i, n, name)
}

// trajectoryParts lists, resolved under root with every component
// lstat'ed (a symlink anywhere on the way is refused with a *PathError
// rather than followed out of the job folder), the ATIF files of one
// attempt: agent/trajectory.json for a single-step trial, else every
// step's steps/<name>/agent/trajectory.json in execution order — the order
// of step_results in the attempt's result.json — each behind a step
// boundary marker. Steps without a trajectory are left out. When
// result.json gives no step order, the step folders are taken in name
// order and note says so. It returns no parts when the attempt has no
// trajectory.
func trajectoryParts(root, rel, dir string) (parts []transcript.Part, note string, err error) {
	resolve := func(c string) (string, bool, error) {
		p, err := safefs.Resolve(root, c)
		var pe *safefs.PathError
		if errors.As(err, &pe) && pe.Code == safefs.CodeMissing {
			return "", false, nil
		}
		return p, err == nil, err
	}
	if p, ok, err := resolve(rel + "/agent/trajectory.json"); err != nil || ok {
		if err != nil {
			return nil, "", err
		}
		return []transcript.Part{{Path: p}}, "", nil
	}
	names, ordered := stepOrder(root, rel)
	if !ordered {
		names = stepFolders(dir)
		if len(names) > 0 {
			note = "result.json gives no step order (step_results), so the steps are in folder-name order"
		}
	}
	for i, n := range names {
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, `/\`) {
			return nil, "", fmt.Errorf("step name %q is not a folder name; its trajectory is not read", n)
		}
		p, ok, err := resolve(rel + "/steps/" + n + "/agent/trajectory.json")
		if err != nil {
			return nil, "", err
		}
		if ok {
			parts = append(parts, transcript.Part{Marker: stepMarker(i+1, len(names), n), Path: p})
		}
	}
	if len(parts) == 0 {
		note = ""
	}
	return parts, note, nil
}

// stepOrder reads the step names in execution order from the attempt's
// result.json; ordered is false when it cannot be read or is not a
// multi-step result.
func stepOrder(root, rel string) (names []string, ordered bool) {
	p, err := safefs.Resolve(root, rel+"/"+ResultFile)
	if err != nil {
		return nil, false
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	r, err := harbor.DecodeTrialResult(f)
	if err != nil || !r.MultiStep {
		return nil, false
	}
	for _, st := range r.Steps {
		names = append(names, st.Name)
	}
	return names, true
}

// stepFolders lists the attempt's steps/ folder names in name order. A
// symlinked step folder is listed too, so that resolving it refuses it
// with a stated reason instead of passing over it.
func stepFolders(dir string) []string {
	entries, err := os.ReadDir(filepath.Join(dir, "steps"))
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() || e.Type()&os.ModeSymlink != 0 {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

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
			dir, err := safefs.Resolve(t.root, a.Dir)
			if err != nil {
				continue
			}
			where := fmt.Sprintf("%s retry %d", tr.ID(), a.Retry)
			parts, note, err := trajectoryParts(t.root, a.Dir, dir)
			if err != nil {
				skipped = append(skipped, Warning{"trajectory_skipped", where + ": " + err.Error()})
				continue
			}
			if note != "" {
				skipped = append(skipped, Warning{"trajectory_step_order", where + ": " + note})
			}
			if len(parts) == 0 {
				// Say so when the only transcript is the legacy litellm
				// format, rather than skipping the attempt silently.
				if fi, err := os.Lstat(filepath.Join(dir, "agent", "litellm-trajectory.jsonl")); err == nil && fi.Mode().IsRegular() {
					skipped = append(skipped, Warning{"trajectory_skipped", fmt.Sprintf(
						"%s retry %d: agent/litellm-trajectory.jsonl is the legacy litellm format, which tpctl does not read; export ATIF (agent/trajectory.json) instead",
						tr.ID(), a.Retry)})
				}
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
