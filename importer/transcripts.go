package importer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

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

// exportWorkers is how many trajectories are built at once with a
// concurrent redactor; 0 means one per core. Tests vary it.
var exportWorkers = 0

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
	red, err := redact.OpenAllWith(ctx, opts.Redactors, redact.Options{Gate: scanner})
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
//
// When every redactor may be called from several goroutines
// (redact.Concurrent: builtin:secrets, rules:), the trajectories are
// built on every core, a few ahead of the writer, and written in the same
// order with the same skips and errors as one at a time: a result is only
// looked at once all before it were, and the build stops when Limit are
// written. Process-backed redactors see their requests in order, one
// trajectory at a time, as before.
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
	// take records one built trajectory, in selection order.
	take := func(b built) error {
		for _, n := range b.notes {
			skipped = append(skipped, Warning{n.Code, b.where + ": " + n.Message})
		}
		switch {
		case b.skipped:
			skipped = append(skipped, Warning{"trajectory_skipped", b.where + ": " + b.skip})
		case b.err != nil:
			return b.err
		case b.data != nil:
			if err := w.AddTrajectory(b.data, b.truncated); err != nil {
				return err
			}
			n++
		}
		return nil
	}
	workers := 1
	if redact.Concurrent(t.red) {
		workers = min(cmp.Or(exportWorkers, runtime.GOMAXPROCS(0)), t.opts.Limit)
	}
	if workers <= 1 {
		for _, tr := range trials {
			for _, a := range sortedAttempts(tr) {
				if n >= t.opts.Limit {
					return skipped, nil
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				if err := take(t.build(ctx, roundID, tr, a)); err != nil {
					return nil, err
				}
			}
		}
		return skipped, nil
	}

	// A slot is one attempt handed to the workers; the writer waits for
	// the slots in the order they were handed out.
	type slot struct {
		tr   planfile.Trial
		a    planfile.Attempt
		done chan built
	}
	bctx, cancel := context.WithCancel(ctx)
	order := make(chan *slot, workers) // bounds how far the builds run ahead
	jobs := make(chan *slot)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait() // no build uses the redactor once export returns
	}()
	wg.Add(1 + workers)
	go func() {
		defer wg.Done()
		defer close(jobs)
		defer close(order)
		for _, tr := range trials {
			for _, a := range sortedAttempts(tr) {
				s := &slot{tr: tr, a: a, done: make(chan built, 1)}
				select {
				case order <- s:
				case <-bctx.Done():
					return
				}
				select {
				case jobs <- s:
				case <-bctx.Done():
					return
				}
			}
		}
	}()
	for range workers {
		go func() {
			defer wg.Done()
			for s := range jobs {
				s.done <- t.build(bctx, roundID, s.tr, s.a)
			}
		}()
	}
	for s := range order {
		if n >= t.opts.Limit {
			return skipped, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var b built
		select {
		case b = <-s.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if err := take(b); err != nil {
			return nil, err
		}
	}
	return skipped, nil
}

// built is one attempt's trajectory, encoded, or why there is none.
type built struct {
	where     string
	notes     []producers.Note
	skipped   bool // the attempt's body is left out, for reason skip
	skip      string
	err       error  // aborts the import
	data      []byte // nil: the attempt has no transcript
	truncated bool
}

// build reads, redacts, scans and encodes one attempt's trajectory.
func (t *transcriber) build(ctx context.Context, roundID string, tr planfile.Trial, a planfile.Attempt) built {
	b := built{where: fmt.Sprintf("%s retry %d", tr.ID(), a.Retry)}
	parts, notes, err := t.prod.Transcript(t.root, a.Dir)
	if err != nil {
		b.skipped, b.skip = true, err.Error()
		return b
	}
	b.notes = notes
	if len(parts) == 0 {
		return b
	}
	traj, err := transcript.BuildParts(ctx, parts, t.red, t.scanner, t.opts.Limits)
	var skip *transcript.SkipError
	if errors.As(err, &skip) {
		b.skipped, b.skip = true, skip.Reason
		return b
	}
	if err != nil {
		b.err = fmt.Errorf("trajectory of %s: %w", b.where, err)
		return b
	}
	traj.RoundID, traj.TrialID, traj.TrialAttempt = roundID, tr.ID(), a.Retry
	if b.data, err = transcript.Encode(traj); err != nil {
		b.err = fmt.Errorf("trajectory of %s: %w", b.where, err)
		return b
	}
	b.truncated = traj.Truncated
	return b
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
