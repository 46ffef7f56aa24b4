package lmeval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/tuneplane/tpctl/attempt"
	"github.com/tuneplane/tpctl/internal/formats"
	"github.com/tuneplane/tpctl/internal/jsonscan"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/transcript"
)

// Format is lm-eval's source format name (plan.source.format).
const Format = formats.LMEvalFormat

// MaxImportSamplesBytes caps a samples file read by an import (through
// producers.Files, which reads a file whole).
const MaxImportSamplesBytes = 1 << 30

// Producer is lm-eval's producer (producers.Producer). An attempt is one
// document of one task under the plan's metric and filter, located in the
// task's samples file by the plan's attempts[].dir:
//
//	<samples file>#<doc_id>/<metric>/<filter>
//
// (metric and filter escaped as JSON-pointer tokens: "~" as "~0", "/" as
// "~1"). A samples file is parsed once per import and indexed by document
// and filter, not once per attempt.
type Producer struct {
	mu    sync.Mutex
	cache map[string]*fileIndex
}

// New returns lm-eval's producer, for the registry in cmd/tpctl.
func New() *Producer { return &Producer{} }

var _ producers.Producer = (*Producer)(nil)

// Format is "lm-eval".
func (*Producer) Format() string { return Format }

// Name is "lm-eval".
func (*Producer) Name() string { return "lm-eval" }

// Outcomes is lm-eval-outcomes/1.
func (*Producer) Outcomes() outcome.Table {
	// A planned document without a line has no attempt: the import
	// counts the trial missing; its row says so (status "missing").
	return outcome.Table{Producer: Format, Version: RulesVersion, Rules: Table()}
}

// Detect reports whether root holds an lm-eval results file (at most
// four folders down).
func (*Producer) Detect(root string) bool {
	l, err := Scan(root)
	return err == nil && len(l.Runs) > 0
}

// Locator is the attempt locator of document doc of a samples file
// (relative to the root) under score.
func Locator(samples string, doc int, score Score) string {
	return samples + "#" + strconv.Itoa(doc) + "/" + jsonscan.EscapePointer(score.Metric) + "/" + jsonscan.EscapePointer(score.Filter)
}

// ParseLocator splits an attempt locator into the samples file, the
// document and the score.
func ParseLocator(loc string) (file string, doc int, score Score, err error) {
	file, isFile := planfile.LocatorPath(loc)
	if !isFile {
		return "", 0, Score{}, fmt.Errorf("attempt %q names no document (want FILE#DOC/METRIC/FILTER)", loc)
	}
	parts := strings.Split(loc[len(file)+1:], "/")
	if len(parts) != 3 {
		return "", 0, Score{}, fmt.Errorf("attempt %q: want FILE#DOC/METRIC/FILTER", loc)
	}
	doc, err = strconv.Atoi(parts[0])
	if err != nil || doc < 0 || strconv.Itoa(doc) != parts[0] {
		return "", 0, Score{}, fmt.Errorf("attempt %q: %q is not a document id", loc, parts[0])
	}
	return file, doc, Score{Metric: unescape(parts[1]), Filter: unescape(parts[2])}, nil
}

func unescape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// fileIndex is one samples file read once: each line's values by document
// and filter.
type fileIndex struct {
	once  sync.Once
	err   error
	task  string
	lines map[docKey]*indexedLine
}

type indexedLine struct {
	line    int
	sha     string
	metrics []string
	values  map[string]Value
}

func (p *Producer) index(files producers.Files, rel string) *fileIndex {
	p.mu.Lock()
	if p.cache == nil {
		p.cache = map[string]*fileIndex{}
	}
	ix := p.cache[rel]
	if ix == nil {
		ix = &fileIndex{}
		p.cache[rel] = ix
	}
	p.mu.Unlock()
	ix.once.Do(func() {
		ix.task, _, _ = SamplesName(path.Base(rel))
		data, err := files.ReadFile(rel, MaxImportSamplesBytes)
		if err != nil {
			ix.err = err
			return
		}
		ix.lines = map[docKey]*indexedLine{}
		_, ix.err = ReadSamples(bytes.NewReader(data), rel, Limits{File: MaxImportSamplesBytes}, false, func(s *Sample) error {
			ix.lines[docKey{s.DocID, s.Filter}] = &indexedLine{line: s.Line, sha: s.SHA256, metrics: s.Metrics, values: s.Values}
			return nil
		})
	})
	return ix
}

// ReadAttempt judges one document by the plan's metric and filter.
func (p *Producer) ReadAttempt(files producers.Files, loc string) attempt.Attempt {
	rel, doc, score, err := ParseLocator(loc)
	if err != nil {
		return attempt.Attempt{Record: loc, Outcome: invalid(err)}
	}
	a := attempt.Attempt{Record: rel}
	ix := p.index(files, rel)
	if ix.err != nil {
		var pe *safefs.PathError
		if (errors.As(ix.err, &pe) && pe.Code == safefs.CodeMissing) || errors.Is(ix.err, fs.ErrNotExist) {
			a.Outcome = outcome.Outcome{Status: outcome.Unscored, Reason: outcome.ReasonResultMissing, Detail: rel + " is gone"}
			return a
		}
		a.Outcome = invalid(ix.err)
		return a
	}
	if ix.task != "" {
		a.Task = TrialTask(ix.task, doc)
	}
	l := ix.lines[docKey{doc, score.Filter}]
	if l == nil {
		a.Outcome = outcome.Outcome{Status: outcome.Unscored, Reason: outcome.ReasonResultMissing,
			Detail: fmt.Sprintf("%s has no line for document %d under filter %s", rel, doc, score.Filter)}
		return a
	}
	sha := l.sha
	a.Evidence.ResultSHA256 = &sha
	v := Judge(&Sample{Metrics: l.metrics, Values: l.values}, score)
	a.Outcome = outcome.Outcome{Status: outcome.Status(v.Status), Reason: v.Reason, Reward: v.Reward, Detail: v.Detail}
	if v.Detail != "" {
		a.Outcome.Detail = fmt.Sprintf("line %d: %s", l.line, v.Detail)
	}
	names := l.metrics
	if len(names) == 0 {
		names = []string{score.Metric}
	}
	for _, n := range names {
		val, ok := l.values[n]
		if !ok {
			continue
		}
		s := attempt.Score{Name: n, Raw: val.Raw}
		if f, ok := pythonFloat(val.Raw); ok && val.Kind == jsonscan.Number {
			s.Value = &f
		}
		a.Scores = append(a.Scores, s)
	}
	return a
}

func invalid(err error) outcome.Outcome {
	return outcome.Outcome{Status: outcome.Unscored, Reason: outcome.ReasonResultInvalid, Detail: err.Error()}
}

// Transcript is the document's prompt and response: one part whose
// reader streams the samples file to the document's line (bodies are off
// by default and at most a few hundred are built, so no index is kept).
func (p *Producer) Transcript(root, loc string) ([]transcript.Part, []producers.Note, error) {
	rel, doc, score, err := ParseLocator(loc)
	if err != nil {
		return nil, nil, err
	}
	full, err := safefs.Resolve(root, rel)
	if err != nil {
		return nil, nil, nil // no file, no transcript (the attempt says why)
	}
	errFound := errors.New("found")
	read := func(ctx context.Context, body *transcript.Body) (transcript.SourceInfo, error) {
		f, err := safefs.OpenRegular(full)
		if err != nil {
			return transcript.SourceInfo{}, err
		}
		defer f.Close()
		var hit *Sample
		_, err = ReadSamples(f, rel, Limits{}, true, func(s *Sample) error {
			if s.DocID == doc && s.Filter == score.Filter {
				hit = s
				return errFound
			}
			return ctx.Err()
		})
		if err != nil && err != errFound {
			return transcript.SourceInfo{}, &transcript.SkipError{Reason: err.Error()}
		}
		if hit == nil {
			return transcript.SourceInfo{}, &transcript.SkipError{Reason: fmt.Sprintf("%s has no line for document %d under filter %s", rel, doc, score.Filter)}
		}
		msgs, err := Transcript(hit)
		if err != nil {
			return transcript.SourceInfo{}, &transcript.SkipError{Reason: fmt.Sprintf("%s line %d: %v", rel, hit.Line, err)}
		}
		for _, m := range msgs {
			if body.Full() {
				body.Count(1)
				continue
			}
			if err := body.Add(ctx, transcript.Message{Role: m.Role, Content: m.Content}); err != nil {
				return transcript.SourceInfo{}, err
			}
		}
		return transcript.SourceInfo{SchemaVersion: "lm-eval-sample", Steps: len(msgs)}, nil
	}
	return []transcript.Part{{Path: full, Read: read}}, nil, nil
}
