package lmeval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/snapshot"
)

// MarshalJSON writes a number as lm-eval wrote it; Python's NaN and
// ±Infinity, which JSON cannot hold, as strings.
func (n Number) MarshalJSON() ([]byte, error) {
	if json.Valid([]byte(n)) && n != "" && n[0] != '"' {
		return []byte(n), nil
	}
	return json.Marshal(string(n))
}

// Candidate is one task of one run under a root: what one plan covers.
type Candidate struct {
	Run   Run
	Task  string
	Model string
}

// Flags are the plan init flags that pick this candidate among others.
func (c Candidate) Flags(all []Candidate) string {
	flags := "--task " + shellWord(c.Task)
	sameTask, sameModel := 0, 0
	for _, o := range all {
		if o.Task == c.Task {
			sameTask++
			if o.Model == c.Model {
				sameModel++
			}
		}
	}
	if sameTask > 1 && c.Model != "" {
		flags += " --model " + shellWord(c.Model)
	}
	if sameModel > 1 || (sameTask > 1 && c.Model == "") {
		flags += " --log " + shellWord(c.Run.ResultsPath())
	}
	return flags
}

// RunsError is a root holding several lm-eval tasks (or runs of one)
// where one plan covers one: each is named with the flags that pick it.
type RunsError struct {
	Root       string
	Candidates []Candidate
	// Asked is what the flags asked for, "" when nothing was.
	Asked string
}

func (e *RunsError) Error() string {
	var b strings.Builder
	if len(e.Candidates) == 0 {
		fmt.Fprintf(&b, "no lm-eval task under %s matches %s", e.Root, e.Asked)
		return b.String()
	}
	fmt.Fprintf(&b, "%s holds %d lm-eval tasks and one plan covers one:", e.Root, len(e.Candidates))
	for _, c := range e.Candidates {
		fmt.Fprintf(&b, "\n  %s (model %s, %s): %s", c.Task, orDash(c.Model), c.Run.ResultsPath(), c.Flags(e.Candidates))
	}
	return b.String()
}

// Hint says what to do next.
func (e *RunsError) Hint() string {
	if len(e.Candidates) == 0 {
		return "tpctl plan init --root " + e.Root + " without --task lists every task"
	}
	return "add the flags of one task, e.g. tpctl plan init --root " + shellWord(e.Root) + " " + e.Candidates[0].Flags(e.Candidates)
}

// Hint says what to do next.
func (e *ChoiceError) Hint() string {
	if e.Why != "" {
		return "pick another with " + e.Flag + " NAME"
	}
	return "pick one with " + e.Flag + " NAME"
}

// Hint says what to do next.
func (e *AggregateOnlyError) Hint() string {
	return "lm-eval ≥ 0.4.3 with --output_path DIR --log_samples writes what tpctl needs"
}

// Hint says what to do next.
func (e *DuplicateError) Hint() string {
	return "remove one of the two lines, or re-run the task with lm-eval"
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '@' || r == ':' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Placeholder of the revision when the results file names no lm-eval
// version.
const PlaceholderRevision = "REPLACE_LM_EVAL_REVISION"

// VerifierRule names how the verifier digest is proposed.
const VerifierRule = "lm-eval scoring: SHA-256 of the canonical output_type, the metric_list entry of the plan's metric and the filter_list entry of its filter"

// Draft drafts the plan of one lm-eval task: documents 0 … effective−1,
// each with its samples line as its attempt (FILE#DOC/METRIC/FILTER), or
// no attempt when the samples file lacks it (missing).
func (p *Producer) Draft(ctx context.Context, root string, opts producers.DraftOptions) (*producers.Draft, error) {
	l, err := Scan(root)
	if err != nil {
		return nil, err
	}
	d := &producers.Draft{}
	var cands []Candidate
	results := map[string]*Results{}
	for _, r := range l.Runs {
		res, err := OpenResults(root, r)
		if err != nil {
			d.Skipped = append(d.Skipped, producers.Skip{Dir: r.ResultsPath(), Reason: err.Error()})
			continue
		}
		results[r.ResultsPath()] = res
		for _, t := range res.Tasks {
			cands = append(cands, Candidate{Run: r, Task: t.Name, Model: res.ModelName})
		}
	}
	for _, o := range l.Orphans {
		d.Skipped = append(d.Skipped, producers.Skip{Dir: o, Reason: "a samples file with no results file of its date beside it (lm-eval writes the results first)"})
	}
	if len(cands) == 0 {
		if len(d.Skipped) > 0 {
			return nil, fmt.Errorf("%s: no readable lm-eval results file: %s: %s", root, d.Skipped[0].Dir, d.Skipped[0].Reason)
		}
		return nil, fmt.Errorf("no lm-eval results file (results_<date>.json) under %s", root)
	}
	var picked []Candidate
	for _, c := range cands {
		if opts.Task != "" && c.Task != opts.Task {
			continue
		}
		if opts.Model != "" && c.Model != opts.Model && path.Base(c.Run.Dir) != opts.Model {
			continue
		}
		if opts.Log != "" && c.Run.ResultsPath() != opts.Log && c.Run.Results != opts.Log {
			continue
		}
		picked = append(picked, c)
	}
	if len(picked) != 1 {
		var asked []string
		for _, f := range []struct{ flag, v string }{{"--task", opts.Task}, {"--model", opts.Model}, {"--log", opts.Log}} {
			if f.v != "" {
				asked = append(asked, f.flag+" "+f.v)
			}
		}
		e := &RunsError{Root: root, Candidates: picked, Asked: strings.Join(asked, " ")}
		if len(picked) == 0 {
			e.Candidates = nil
			var names []string
			for _, c := range cands {
				names = append(names, c.Task)
			}
			e.Asked += " (tasks: " + strings.Join(names, ", ") + ")"
		}
		return nil, e
	}
	c := picked[0]
	res := results[c.Run.ResultsPath()]
	t := res.Task(c.Task)
	planned, err := PlanTask(c.Run.ResultsPath(), t)
	if err != nil {
		return nil, err
	}
	score, err := Choose(t, opts.Metric, opts.Filter)
	if err != nil {
		return nil, err
	}

	plan := &planfile.Plan{
		Version:    1,
		Source:     planfile.Source{Format: Format, Revision: res.Revision()},
		Name:       "lm-eval " + t.Name,
		Split:      opts.Split,
		Checkpoint: planfile.Checkpoint{Ref: planfile.PlaceholderCheckpoint, ServedAs: res.ModelName},
		Protocol: planfile.Protocol{DatasetDigest: planfile.PlaceholderDataset, VerifierDigest: planfile.PlaceholderVerifier,
			EnvironmentDigest: planfile.PlaceholderEnvironment, HarnessDigest: planfile.PlaceholderHarness},
		Settings: PlanSettings(res, t, score),
	}
	if res.ModelName != "" {
		plan.Name += " · " + res.ModelName
	}
	if plan.Source.Revision == "" {
		plan.Source.Revision = PlaceholderRevision
		d.Warnings = append(d.Warnings, "the results file names no lm_eval_version: fill /source/revision by hand")
	}
	if plan.Split == "" {
		plan.Split = planfile.PlaceholderSplit
	}
	if ck := res.Checkpoint(); res.ModelSource == "hf" && isHex40(res.ModelSHA) {
		plan.Checkpoint.Ref = "hf://" + ck
		d.Notes = append(d.Notes, fmt.Sprintf("checkpoint proposed from the results' model_name and config.model_sha: %s", plan.Checkpoint.Ref))
	} else if res.ModelName != "" {
		d.Notes = append(d.Notes, fmt.Sprintf("lm-eval ran %s (%s); it records no content pin, so /checkpoint/ref stays a placeholder", res.ModelName, orDash(res.ModelSource)))
	}

	// The samples file: which planned documents have a line.
	present := map[int]bool{}
	samplesRel := c.Run.SamplesPath(t.Name)
	var sum *SamplesSummary
	unplanned := 0
	if samplesRel != "" {
		f, err := OpenSamples(root, c.Run, t.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", samplesRel, err)
		}
		sum, err = ReadSamples(f, samplesRel, Limits{}, false, func(s *Sample) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if s.Filter != score.Filter {
				return nil
			}
			if s.DocID >= planned.Documents {
				unplanned++
				return nil
			}
			present[s.DocID] = true
			return nil
		})
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	plan.Trials = make([]planfile.Trial, planned.Documents)
	for doc := range planned.Documents {
		tr := planfile.Trial{Task: TrialTask(t.Name, doc), Repeat: 0, Attempts: []planfile.Attempt{}}
		if present[doc] {
			tr.Attempts = []planfile.Attempt{{Retry: 0, Dir: Locator(samplesRel, doc, score)}}
		}
		plan.Trials[doc] = tr
	}

	dp := ProposeDataset(t, sum)
	if dp.Value != "" {
		plan.Protocol.DatasetDigest = dp.Value
		d.Proposed = append(d.Proposed, producers.Proposal{Pointer: "/protocol/dataset_digest", Value: dp.Value, Rule: dp.Rule})
	}
	d.Notes = append(d.Notes, "dataset digest: "+dp.Note)
	if dp.Reproduced != nil && !*dp.Reproduced {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s does not reproduce lm-eval's task_hashes[%s]: the file was cut short or changed after lm-eval wrote it", samplesRel, t.Name))
	}
	if v := VerifierDigest(t, score); v != "" {
		plan.Protocol.VerifierDigest = v
		d.Proposed = append(d.Proposed, producers.Proposal{Pointer: "/protocol/verifier_digest", Value: v, Rule: VerifierRule})
		d.Notes = append(d.Notes, "verifier digest proposed from the task's metric and filter config ("+score.Metric+", "+score.Filter+")")
	}
	if t.Repeats > 1 {
		d.Notes = append(d.Notes, fmt.Sprintf("lm-eval repeats each document %d times and scores it once over them (filter %s): one trial per document", t.Repeats, score.Filter))
	}
	have := len(present)
	switch {
	case samplesRel == "":
		d.Warnings = append(d.Warnings, fmt.Sprintf("lm-eval wrote no samples file for %s (run with --log_samples): all %s planned documents are missing", t.Name, thousands(planned.Documents)))
	case have < planned.Documents:
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s holds %s of %s planned documents under filter %s: the rest are missing", samplesRel, thousands(have), thousands(planned.Documents), score.Filter))
	}
	if unplanned > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s has %s under filter %s beyond documents 0…%d (lm-eval's --samples?): not planned, left out", samplesRel, plural(unplanned, "line"), score.Filter, planned.Documents-1))
	}
	d.Plan = plan
	d.Summary = fmt.Sprintf("drafted %s %s of task %s (%s, %s under filter %s): %s with a sample line, %s missing",
		thousands(planned.Documents), plural(planned.Documents, "document"), t.Name, planned.DocumentsText(), score.Metric, score.Filter,
		thousands(have), thousands(planned.Documents-have))
	return d, nil
}

// PlanSettings are the plan's settings for t judged by score: the settings
// digest inputs (SettingsInputs) with the metric, the filter, the repeats
// and which part of the split the run planned (dataset: the planned
// documents of n-samples.original, read by snapshot.DatasetScope as every
// producer's is, so each rate says "10 of 2,376 documents of the split").
func PlanSettings(res *Results, t *Task, score Score) map[string]any {
	s := SettingsInputs(res, t)
	s["metric"] = score.Metric
	s["filter"] = score.Filter
	s["repeats"] = t.Repeats
	d := Planned{Documents: t.Effective, Original: t.Original}.DatasetScope()
	s["dataset"] = map[string]any{"planned_samples": t.Effective, "samples": t.Original, "item": d.Item, "whole": d.Whole}
	// The categories plan check looks for (planfile.SettingsCategories):
	// what lm-eval generates with, and that it calls no tools.
	s["generation"] = map[string]any{"output_type": nullable(t.OutputType), "generation_kwargs": t.Config["generation_kwargs"]}
	s["tool_policy"] = "none: lm-eval sends each request as one prompt, with no tools"
	return s
}

// VerifierDigest is the proposed verifier digest: the canonical scoring
// config of score ("" when the results carry no config).
func VerifierDigest(t *Task, score Score) string {
	if t.Config == nil {
		return ""
	}
	in := map[string]any{"output_type": t.Config["output_type"], "metric": nil, "filter": nil}
	if ml, ok := t.Config["metric_list"].([]any); ok {
		for _, m := range ml {
			if mm, ok := m.(map[string]any); ok && mm["metric"] == score.Metric {
				in["metric"] = mm
			}
		}
	}
	if fl, ok := t.Config["filter_list"].([]any); ok {
		for _, f := range fl {
			if fm, ok := f.(map[string]any); ok && fm["name"] == score.Filter {
				in["filter"] = fm
			}
		}
	}
	sum := sha256.Sum256(Canonical(in))
	return hex.EncodeToString(sum[:])
}

func isHex40(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// RunFacts are lm-eval's own figures for the task a plan covers: shown
// beside tpctl's counts at import ("producer_job" in its JSON).
type RunFacts struct {
	Results          string       `json:"results"`
	Task             string       `json:"task"`
	Model            string       `json:"model"`
	LMEvalVersion    string       `json:"lm_eval_version"`
	Documents        int          `json:"documents"`
	DocumentsOfSplit int          `json:"documents_of_split"`
	SamplesFile      string       `json:"samples_file"`
	Metric           string       `json:"metric,omitempty"`
	Filter           string       `json:"filter,omitempty"`
	Figures          []FactFigure `json:"figures"`
}

// FactFigure is one of lm-eval's aggregates as written.
type FactFigure struct {
	Metric string `json:"metric"`
	Filter string `json:"filter"`
	Value  string `json:"value"`
	Stderr string `json:"stderr,omitempty"`
}

// Beside is lm-eval's figure beside tpctl's counts of the import, and why
// they differ, in lines.
func (f *RunFacts) Beside(c snapshot.Counts) []string {
	figs := f.Figures
	if f.Metric != "" {
		figs = nil
		for _, g := range f.Figures {
			if g.Metric == f.Metric && (g.Filter == f.Filter || g.Filter == "" && f.Filter == "none") {
				figs = append(figs, g)
			}
		}
	}
	var says []string
	for _, g := range figs {
		name := g.Metric
		if g.Filter != "" && g.Filter != "none" {
			name += " (" + g.Filter + ")"
		}
		says = append(says, name+" "+g.Value)
	}
	first := "lm-eval reports no figure for " + f.Task
	if len(says) > 0 {
		first = "lm-eval says " + strings.Join(says, ", ")
	}
	first += fmt.Sprintf(" over %s %s", thousands(f.Documents), plural(f.Documents, "document"))
	if f.DocumentsOfSplit > f.Documents {
		first += fmt.Sprintf(" (%s of %s documents of the split)", thousands(f.Documents), thousands(f.DocumentsOfSplit))
	}
	first += fmt.Sprintf("; tpctl: %s of %s scored", thousands(c.Success), thousands(c.Scored()))
	if n := c.Unscored + c.InfraError; n > 0 {
		first += fmt.Sprintf(", %s unscored", thousands(n))
	}
	if c.Missing > 0 {
		first += fmt.Sprintf(", %s missing", thousands(c.Missing))
	}
	lines := []string{first}
	var why []string
	switch {
	case f.SamplesFile == "" && c.Missing > 0:
		why = append(why, "lm-eval wrote no samples file for the task (run with --log_samples), so no document could be checked: its figure stands on documents tpctl cannot see")
	case c.Missing > 0:
		why = append(why, fmt.Sprintf("the samples file holds %s of the %s planned documents; lm-eval averaged over every document it ran", thousands(c.Expected-c.Missing), thousands(c.Expected)))
	}
	if c.Unscored > 0 {
		why = append(why, "tpctl keeps documents whose value is not 0 or 1 out of the rate")
	}
	if len(why) > 0 {
		lines = append(lines, "why they differ: "+strings.Join(why, "; "))
	}
	return lines
}

// CheckJob finds the lm-eval run the plan was drafted from (through its
// samples file's name, else the only run under root holding the plan's
// task) and returns lm-eval's own figures for the task; it says the plan
// differs when lm-eval's n-samples.effective is not the plan's count.
func (p *Producer) CheckJob(root string, plan producers.PlannedSet) (*producers.JobCheck, error) {
	// The attempts are all read: the index's bytes are no longer needed.
	p.mu.Lock()
	p.cache = nil
	p.mu.Unlock()

	var run *Run
	var task string
	var score Score
	for _, loc := range plan.Sample {
		rel, _, sc, err := ParseLocator(loc)
		if err != nil {
			continue
		}
		tk, ts, ok := SamplesName(path.Base(rel))
		if !ok {
			continue
		}
		l, err := Scan(root)
		if err != nil {
			return nil, err
		}
		for i := range l.Runs {
			if l.Runs[i].Dir == path.Dir(rel) && l.Runs[i].Timestamp == ts {
				run, task, score = &l.Runs[i], tk, sc
			}
		}
		break
	}
	if score.Metric == "" {
		score.Metric, _ = plan.Settings["metric"].(string)
		score.Filter, _ = plan.Settings["filter"].(string)
	}
	if run == nil {
		// The first of the plan's tasks ("<task>/<doc_id>") that names
		// an lm-eval task.
		if plan.Tasks != nil {
			err := plan.Tasks(func(t producers.PlannedTask) bool {
				if i := strings.LastIndexByte(t.Name, '/'); i > 0 {
					if _, err := strconv.Atoi(t.Name[i+1:]); err == nil {
						task = t.Name[:i]
						return false
					}
				}
				return true
			})
			if err != nil {
				return nil, err
			}
		}
		if task == "" {
			return nil, nil
		}
		l, err := Scan(root)
		if err != nil {
			return nil, err
		}
		var found []Run
		for _, r := range l.Runs {
			res, err := OpenResults(root, r)
			if err == nil && res.Task(task) != nil {
				found = append(found, r)
			}
		}
		if len(found) != 1 {
			return nil, nil
		}
		run = &found[0]
	}
	res, err := OpenResults(root, *run)
	if err != nil {
		return nil, err
	}
	t := res.Task(task)
	if t == nil {
		return nil, nil
	}
	facts := &RunFacts{Results: run.ResultsPath(), Task: task, Model: res.ModelName, LMEvalVersion: res.LMEvalVersion,
		Documents: t.Effective, DocumentsOfSplit: t.Original, SamplesFile: run.SamplesPath(task), Metric: score.Metric, Filter: score.Filter,
		Figures: []FactFigure{}}
	for _, g := range t.Figures {
		facts.Figures = append(facts.Figures, FactFigure{Metric: g.Metric, Filter: g.Filter, Value: g.Text(), Stderr: text(g.Stderr)})
	}
	c := &producers.JobCheck{Facts: facts}
	if t.Counted && t.Effective != plan.Trials {
		c.Differs = fmt.Sprintf("the plan lists %s trials but lm-eval's n-samples.effective for %s is %s (%s); plan init --root drafts every planned document",
			thousands(plan.Trials), task, thousands(t.Effective), run.ResultsPath())
	}
	return c, nil
}
