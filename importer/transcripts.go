package importer

import (
	"context"
	"errors"
	"fmt"

	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/snapshot"
)

// MaxTraceLimit is the most trajectories one snapshot may carry.
const MaxTraceLimit = 128

// TranscriptOptions turn on trajectory export (SPEC §3). Redactors is
// required: tpctl never exports a transcript nobody chose to redact.
type TranscriptOptions struct {
	Limit     int
	Redactors []string
	// Environ is the process environment, for the secret scan.
	Environ []string
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
	return nil
}

type transcriber struct{}

// newTranscriber: transcript export lands with the atif/redact/transcript
// packages; until then it is refused rather than silently skipped.
func newTranscriber(context.Context, TranscriptOptions, string) (*transcriber, error) {
	return nil, errors.New("transcript export is not available in this build yet")
}

func (t *transcriber) close() {}

func (t *transcriber) export(context.Context, []planfile.Trial, *snapshot.Writer) ([]Warning, error) {
	return nil, nil
}
