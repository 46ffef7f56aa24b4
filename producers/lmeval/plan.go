package lmeval

import (
	"fmt"
	"github.com/tuneplane/tpctl/internal/ui/digits"
	"io"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/snapshot"
)

// The planned set of a task is lm-eval's own word: document ids
// 0 … n-samples.effective−1 (evaluator.py iterates the first `limit`
// documents of the split; n-samples.effective counts them).
//
// repeats: lm-eval sends each request repeats times and then scores the
// document once, its filter folding the repeats into one answer
// (take_first, majority_vote: a "maj@64" filter); the sample line holds one
// value per document and filter. One trial per document is therefore
// planned, with repeats recorded beside it: a trial per repeat would count
// one verdict repeats times and narrow every interval by √repeats.

// AggregateOnlyError is a task whose results file has no n-samples entry
// (lm-eval before 0.4.3, or its tests/testdata/*-res.json): the documents
// lm-eval ran are unknown, so no planned set can be drafted.
type AggregateOnlyError struct {
	File, Task string
}

func (e *AggregateOnlyError) Error() string {
	return fmt.Sprintf("%s: task %s has only lm-eval's aggregate (no n-samples entry, no samples): the documents it ran are unknown, so tpctl cannot plan them; re-run with lm-eval ≥ 0.4.3 and --log_samples", e.File, e.Task)
}

// Planned is the planned set of one task.
type Planned struct {
	Task string
	// Documents is n-samples.effective: documents 0 … Documents−1.
	Documents int
	// Original is n-samples.original, the split's size.
	Original int
	// Repeats is the task's repeats (each document is one trial).
	Repeats int
}

// PlanTask returns t's planned set.
func PlanTask(file string, t *Task) (Planned, error) {
	if !t.Counted {
		return Planned{}, &AggregateOnlyError{File: file, Task: t.Name}
	}
	return Planned{Task: t.Name, Documents: t.Effective, Original: t.Original, Repeats: t.Repeats}, nil
}

// TrialTask is the tpctl task of document doc of lm-eval task task: one
// name per document, the same in every run, so two runs pair by document.
func TrialTask(task string, doc int) string { return task + "/" + strconv.Itoa(doc) }

// DatasetScope is the planned documents against the split, as the plan's
// settings.dataset records them and every view words them
// (snapshot.DatasetScope).
func (p Planned) DatasetScope() *snapshot.DatasetScope {
	return &snapshot.DatasetScope{PlannedSamples: int64(p.Documents), Samples: int64(p.Original), Item: "document", Whole: "split"}
}

// DocumentsText says how many documents were planned, and of what, as
// every view does: "10 of 2,376 documents of the split" for a limited
// run, "all 2,376 documents of the split" otherwise.
func (p Planned) DocumentsText() string { return p.DatasetScope().String() }

// Row is the outcome of one planned document.
type Row struct {
	Doc    int
	Status string
	Reason string
	Reward *float64
	Detail string
	// Line is the document's line in the samples file (0 when missing);
	// SHA256 the digest of that line's bytes.
	Line   int
	SHA256 string
}

// Counts are a task's planned documents by status.
type Counts struct {
	Planned, Success, Failure, Unscored, Missing int
}

// Scored is Success+Failure.
func (c Counts) Scored() int { return c.Success + c.Failure }

// Outcomes is every planned document of one task, judged.
type Outcomes struct {
	Planned Planned
	Score   Score
	// Rows holds one row per planned document, by document id.
	Rows   []Row
	Counts Counts
	// SamplesFile is the samples file read, "" when there was none.
	SamplesFile string
	// Samples is what the read found (nil without a file).
	Samples *SamplesSummary
	// Unplanned are document ids with a line for the score's filter that
	// lie outside the planned set (at most 20 kept); UnplannedLines counts
	// them all.
	Unplanned      []int
	UnplannedLines int
}

// JudgeTask judges every planned document of p by score from the samples
// file r (nil: lm-eval wrote none, and every planned document is missing).
// A read error (a line that is not a record, a duplicate, a cap) is
// returned: the file cannot be trusted for any document.
func JudgeTask(p Planned, score Score, r io.Reader, name string, lim Limits) (*Outcomes, error) {
	o := &Outcomes{Planned: p, Score: score, Rows: make([]Row, p.Documents)}
	for i := range o.Rows {
		o.Rows[i] = Row{Doc: i, Status: StatusMissing, Reason: ReasonNoSampleLine}
	}
	if r != nil {
		o.SamplesFile = name
		sum, err := ReadSamples(r, name, lim, false, func(s *Sample) error {
			if s.Filter != score.Filter {
				return nil
			}
			if s.DocID >= p.Documents {
				o.UnplannedLines++
				if len(o.Unplanned) < 20 {
					o.Unplanned = append(o.Unplanned, s.DocID)
				}
				return nil
			}
			v := Judge(s, score)
			o.Rows[s.DocID] = Row{Doc: s.DocID, Status: v.Status, Reason: v.Reason, Reward: v.Reward, Detail: v.Detail, Line: s.Line, SHA256: s.SHA256}
			return nil
		})
		if err != nil {
			return nil, err
		}
		o.Samples = sum
	}
	o.Counts.Planned = p.Documents
	for _, row := range o.Rows {
		switch row.Status {
		case StatusSuccess:
			o.Counts.Success++
		case StatusFailure:
			o.Counts.Failure++
		case StatusUnscored:
			o.Counts.Unscored++
		default:
			o.Counts.Missing++
		}
	}
	return o, nil
}

// WriteTable prints the rows, one per planned document, as tab-separated
// columns: document, status, reason, reward, line, detail.
func (o *Outcomes) WriteTable(w io.Writer) error {
	var b strings.Builder
	b.WriteString("doc\tstatus\treason\treward\tline\tdetail\n")
	for _, r := range o.Rows {
		reward := "-"
		if r.Reward != nil {
			reward = strconv.FormatFloat(*r.Reward, 'g', -1, 64)
		}
		line := "-"
		if r.Line > 0 {
			line = strconv.Itoa(r.Line)
		}
		fmt.Fprintf(&b, "%d\t%s\t%s\t%s\t%s\t%s\n", r.Doc, r.Status, r.Reason, reward, line, r.Detail)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Beside is lm-eval's own figure for the task beside tpctl's count, with
// why they differ: "lm-eval says exact_match 0.0 over 5,000 documents;
// tpctl: 0 of 10 scored, 4,990 missing (…)". t is the task read from the
// results file.
func (o *Outcomes) Beside(t *Task) string {
	var b strings.Builder
	name := o.Score.Metric
	if o.Score.Filter != "none" {
		name += " (" + o.Score.Filter + ")"
	}
	if f, ok := t.Figure(o.Score.Metric, o.Score.Filter); ok {
		fmt.Fprintf(&b, "lm-eval says %s %s over %s %s", name, f.Text(), thousands(t.Effective), plural(t.Effective, "document"))
	} else {
		fmt.Fprintf(&b, "lm-eval reports no %s figure for %s", name, t.Name)
	}
	c := o.Counts
	fmt.Fprintf(&b, "; tpctl: %s of %s scored", thousands(c.Success), thousands(c.Scored()))
	if c.Unscored > 0 {
		fmt.Fprintf(&b, ", %s unscored", thousands(c.Unscored))
	}
	if c.Missing > 0 {
		fmt.Fprintf(&b, ", %s missing", thousands(c.Missing))
	}
	var why []string
	switch {
	case o.SamplesFile == "" && c.Planned > 0:
		why = append(why, "lm-eval wrote no samples file for the task (run with --log_samples), so no document can be checked")
	case c.Missing > 0:
		why = append(why, fmt.Sprintf("the samples file holds %s of %s documents under filter %s", thousands(c.Planned-c.Missing), thousands(c.Planned), o.Score.Filter))
	}
	if c.Unscored > 0 {
		why = append(why, fmt.Sprintf("%s %s had no 0 or 1 for %s", thousands(c.Unscored), plural(c.Unscored, "document"), o.Score.Metric))
	}
	if o.UnplannedLines > 0 {
		verb := "were"
		if o.UnplannedLines == 1 {
			verb = "was"
		}
		why = append(why, fmt.Sprintf("%s %s outside documents 0…%d %s left out", thousands(o.UnplannedLines), plural(o.UnplannedLines, "line"), o.Planned.Documents-1, verb))
	}
	if o.Planned.Documents < o.Planned.Original {
		why = append(why, fmt.Sprintf("lm-eval ran %s (--limit)", o.Planned.DocumentsText()))
	}
	if len(why) > 0 {
		b.WriteString(" (" + strings.Join(why, "; ") + ")")
	}
	return b.String()
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string { return digits.Group(int64(n)) }

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
