package inspect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tuneplane/tpctl/attempt"
	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/internal/formats"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/transcript"
)

// Format is plan.source.format for Inspect logs.
const Format = formats.InspectFormat

// DatasetRule names how the dataset digest is proposed from a log
// (docs/digest-rules.md, "inspect-dataset").
const DatasetRule = "tpctl-digest/1 inspect-dataset"

// Producer is Inspect's producers.Producer. It caches each log an import
// reads (keyed by its path under the root, dropped by CheckJob at the end
// of the import), so the attempts of one log read it once, not once each.
type Producer struct {
	mu    sync.Mutex
	cache map[string]*cached
}

// New returns Inspect's producer.
func New() *Producer { return &Producer{cache: map[string]*cached{}} }

var _ producers.Producer = (*Producer)(nil)

// Format is "inspect".
func (*Producer) Format() string { return Format }

// Name is "Inspect".
func (*Producer) Name() string { return "Inspect" }

// Outcomes is inspect-outcomes/1.
func (*Producer) Outcomes() outcome.Table {
	return outcome.Table{Producer: Format, Version: RulesVersion, Rules: Table()}
}

// maxLogSize caps one log read through the import's files.
const maxLogSize = 4 << 30

// maxListed bounds the folder entries looked at for logs.
const maxListed = 10000

// found is one log found in a folder.
type found struct {
	file   string // slash path under the root
	log    *Log
	err    error // a VersionError or another refusal
	closer func()
}

// isCandidate says whether a file name may be an Inspect log (Inspect's
// own manifests in a log folder are not).
func isCandidate(name string) bool {
	if name == ManifestName || name == "logs.json" || name == "import-plan.json" {
		return false
	}
	return strings.HasSuffix(name, ".eval") || strings.HasSuffix(name, ".json")
}

// findLogs opens every Inspect log directly under root (symlinks are not
// followed). A file that is not an Inspect log is skipped; a log refused
// for its version is kept with its error.
func findLogs(root string) (logs []found, skipped []producers.Skip) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil
	}
	for i, e := range entries {
		if i >= maxListed {
			break
		}
		if !e.Type().IsRegular() || !isCandidate(e.Name()) {
			continue
		}
		f, err := safefs.OpenRegular(filepath.Join(root, e.Name()))
		if err != nil {
			skipped = append(skipped, producers.Skip{Dir: e.Name(), Reason: err.Error()})
			continue
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			continue
		}
		l, err := Open(f, fi.Size(), e.Name(), Limits{})
		var ve *VersionError
		switch {
		case err == nil:
			logs = append(logs, found{file: e.Name(), log: l, closer: func() { f.Close() }})
		case errors.As(err, &ve):
			f.Close()
			logs = append(logs, found{file: e.Name(), err: err, closer: func() {}})
		default:
			f.Close()
			if strings.HasSuffix(e.Name(), ".eval") {
				skipped = append(skipped, producers.Skip{Dir: e.Name(), Reason: "not a readable Inspect log: " + err.Error()})
			}
		}
	}
	return logs, skipped
}

// Detect reports whether root holds an Inspect log (of any version: one
// tpctl refuses is still Inspect's, and the draft says why).
func (*Producer) Detect(root string) bool {
	logs, _ := findLogs(root)
	for _, l := range logs {
		l.closer()
	}
	return len(logs) > 0
}

// LogsError is a folder of several logs: one plan is one log.
type LogsError struct {
	Root string
	Logs []LogChoice
}

// LogChoice is one log of a folder, and the flag that picks it.
type LogChoice struct {
	File, Task, Model string
}

func (e *LogsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s holds %d Inspect logs; one plan is one log (task × model):", e.Root, len(e.Logs))
	for _, c := range e.Logs {
		fmt.Fprintf(&b, "\n  --log %s   (task %s, model %s)", c.File, orDash(c.Task), orDash(c.Model))
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// NoLogError is a folder with no Inspect log the options select.
type NoLogError struct {
	Root string
	Why  string
}

func (e *NoLogError) Error() string { return "no Inspect log under " + e.Root + e.Why }

// Draft drafts the plan of one log: every planned (sample, epoch), its
// attempts (error_retries, then the sample), the settings, and the dataset
// digest proposed from the log.
func (p *Producer) Draft(_ context.Context, root string, opts producers.DraftOptions) (*producers.Draft, error) {
	logs, skipped := findLogs(root)
	defer func() {
		for _, l := range logs {
			l.closer()
		}
	}()
	var pick []found
	for _, l := range logs {
		if opts.Log != "" && l.file != opts.Log {
			continue
		}
		if l.log != nil && opts.Task != "" && l.log.Header.Task != opts.Task {
			continue
		}
		if l.log != nil && opts.Model != "" && l.log.Header.Model != opts.Model {
			continue
		}
		pick = append(pick, l)
	}
	switch {
	case len(pick) == 0 && len(logs) == 0:
		return nil, &NoLogError{Root: root}
	case len(pick) == 0:
		return nil, &NoLogError{Root: root, Why: " matches " + selection(opts)}
	case len(pick) > 1:
		e := &LogsError{Root: root}
		for _, l := range pick {
			c := LogChoice{File: l.file}
			if l.log != nil {
				c.Task, c.Model = l.log.Header.Task, l.log.Header.Model
			}
			e.Logs = append(e.Logs, c)
		}
		return nil, e
	}
	f := pick[0]
	if f.err != nil {
		return nil, f.err
	}
	d, err := draftLog(f.file, f.log, opts, skipped)
	if err != nil {
		return nil, err
	}
	d.Warnings = append(d.Warnings, manifestWarnings(root, logs)...)
	return d, nil
}

// manifestWarnings reads the eval set's manifest (eval-set.json) when the
// folder has one: a task × model it planned with no log in the folder is
// a run that never wrote one, and the plan of another log cannot count
// it, so it is said.
func manifestWarnings(root string, logs []found) []string {
	data, err := safefs.ReadFileCapped(filepath.Join(root, ManifestName), 64<<20)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return []string{ManifestName + " could not be read: " + err.Error()}
	}
	m, err := ReadManifest(data, ManifestName)
	if err != nil {
		return []string{err.Error()}
	}
	var headers []*Header
	for _, l := range logs {
		if l.log != nil {
			headers = append(headers, &l.log.Header)
		}
	}
	var out []string
	for _, t := range m.Unlogged(headers) {
		out = append(out, fmt.Sprintf("the eval set %s planned task %s with model %s (task_id %s), and the folder holds no log of it: its samples are counted nowhere",
			orDash(m.EvalSetID), orDash(t.Name), orDash(t.Model), t.TaskID))
	}
	return out
}

func selection(o producers.DraftOptions) string {
	var s []string
	for _, kv := range [][2]string{{"--log", o.Log}, {"--task", o.Task}, {"--model", o.Model}} {
		if kv[1] != "" {
			s = append(s, kv[0]+" "+kv[1])
		}
	}
	return strings.Join(s, " ")
}

// TaskCollisionError is a log whose sample ids would name one trial twice
// (the integer 1 and the string "1").
type TaskCollisionError struct {
	Log, Task string
}

func (e *TaskCollisionError) Error() string {
	return fmt.Sprintf("%s: two sample ids, an integer and a string of the same text, both name trial %s: tpctl cannot plan both", e.Log, e.Task)
}

func draftLog(file string, l *Log, opts producers.DraftOptions, skipped []producers.Skip) (*producers.Draft, error) {
	sum, err := Summarize(l, opts.Scorer)
	if err != nil {
		return nil, err
	}
	h := sum.Header
	plan := &planfile.Plan{
		Version:    1,
		Source:     planfile.Source{Format: Format, Revision: h.InspectVersion},
		Name:       h.Task,
		Split:      cmpOr(opts.Split, planfile.PlaceholderSplit),
		Checkpoint: planfile.Checkpoint{Ref: planfile.PlaceholderCheckpoint, ServedAs: h.Model},
		Protocol: planfile.Protocol{
			VerifierDigest:    planfile.PlaceholderVerifier,
			EnvironmentDigest: planfile.PlaceholderEnvironment,
			HarnessDigest:     planfile.PlaceholderHarness,
		},
		Settings: Settings(h, sum.Plan, sum.Scorer),
	}
	d := &producers.Draft{Plan: plan, Skipped: skipped}
	if plan.Source.Revision == "" {
		plan.Source.Revision = planfile.PlaceholderRevision
		d.Warnings = append(d.Warnings, "the log does not record its Inspect version (eval.packages.inspect_ai): /source/revision is left a placeholder")
	} else if !formats.Validated(Format, plan.Source.Revision) {
		d.Warnings = append(d.Warnings, fmt.Sprintf("the log was written by Inspect %s, outside the validated range %s … %s (tpctl formats)", plan.Source.Revision, formats.InspectMin, formats.InspectMax))
	}
	seen := map[string]bool{}
	for _, t := range sum.Trials {
		tr := planfile.Trial{Task: TrialTask(h.Task, t.ID), Repeat: t.Epoch - 1, Attempts: []planfile.Attempt{}}
		key := tr.ID()
		if seen[key] {
			return nil, &TaskCollisionError{Log: file, Task: tr.Task}
		}
		seen[key] = true
		if t.Sample != "" {
			for r := range t.Judgement.Attempts {
				tr.Attempts = append(tr.Attempts, planfile.Attempt{Retry: r, Dir: Locator(file, t.ID, t.Epoch, r, sum.Scorer)})
			}
		}
		plan.Trials = append(plan.Trials, tr)
	}
	ds, err := datasetDigest(h, sum.Plan)
	if err != nil {
		return nil, err
	}
	plan.Protocol.DatasetDigest = ds
	d.Proposed = append(d.Proposed, producers.Proposal{Pointer: "/protocol/dataset_digest", Value: ds, Rule: DatasetRule})
	d.Notes = append(d.Notes, fmt.Sprintf("dataset_digest %s was proposed from the log's dataset name, location and planned sample ids (%s, docs/digest-rules.md): proposed, never certified; confirm it is the dataset you mean", ds[:12]+"…", DatasetRule))
	if sum.Scorer != "" {
		d.Notes = append(d.Notes, "primary scorer: "+sum.Scorer+" (its score decides each sample; settings.scorer records it)")
	} else {
		d.Warnings = append(d.Warnings, "the log names no scorer (run without scoring): every sample will be unscored")
	}
	d.Warnings = append(d.Warnings, sum.Plan.Warnings...)
	if sum.Plan.Limited() {
		d.Warnings = append(d.Warnings, fmt.Sprintf("a limited run: the log planned %s; every rate is over those samples, never the whole dataset", sum.Plan.Scope()))
	}
	for _, u := range sum.Unplanned {
		d.Warnings = append(d.Warnings, "the log holds a sample outside its planned set, not counted: "+u)
	}
	for _, u := range sum.Duplicates {
		d.Warnings = append(d.Warnings, "the log holds this (sample, epoch) twice; the first is used: "+u)
	}
	for _, diff := range sum.Differences {
		d.Warnings = append(d.Warnings, CodeCountsDiffer+": "+diff.String())
	}
	held := len(sum.Trials) - sum.Missing()
	d.Summary = fmt.Sprintf("drafted %s from %s (%s × %s; %s): %d held, %d missing",
		countOf(len(sum.Trials), "planned trial"), file, countOf(len(sum.Plan.SampleIDs), "sample"), countOf(sum.Plan.Epochs, "epoch"),
		sum.Plan.Scope(), held, sum.Missing())
	return d, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return thousands(int64(n)) + " " + noun + "s"
}

// TrialTask is the plan's task of a sample: "<Inspect task>/<sample id>".
func TrialTask(task string, id SampleID) string { return task + "/" + id.Text }

// Locator is the attempt locator of one attempt of a planned (sample,
// epoch): the log's path under the root, then "#" and a fragment of
// comma-separated fields naming the sample (an integer id as its digits,
// a string id JSON-quoted), the epoch, the attempt (0 … len(error_retries);
// the last is the sample itself) and the primary scorer, each value
// query-escaped: "logs/x.eval#sample=1,epoch=1,retry=0,scorer=match".
func Locator(file string, id SampleID, epoch, retry int, scorer string) string {
	sid := id.Text
	if !id.Number {
		b, _ := json.Marshal(id.Text)
		sid = string(b)
	}
	return file + "#sample=" + url.QueryEscape(sid) + ",epoch=" + strconv.Itoa(epoch) + ",retry=" + strconv.Itoa(retry) + ",scorer=" + url.QueryEscape(scorer)
}

// locator is a parsed Locator.
type locator struct {
	file   string
	id     SampleID
	epoch  int
	retry  int
	scorer string
}

func parseLocator(loc string) (locator, error) {
	file, frag, ok := strings.Cut(loc, "#")
	if !ok {
		return locator{}, errors.New("the attempt locator names no sample (want FILE#sample=…,epoch=…,retry=…,scorer=…)")
	}
	q := map[string]string{}
	for _, kv := range strings.Split(frag, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return locator{}, fmt.Errorf("the attempt locator's fragment %q: %q is not name=value", frag, kv)
		}
		uv, err := url.QueryUnescape(v)
		if err != nil {
			return locator{}, fmt.Errorf("the attempt locator's %s: %w", k, err)
		}
		if _, dup := q[k]; dup {
			return locator{}, fmt.Errorf("the attempt locator names %s twice", k)
		}
		q[k] = uv
	}
	l := locator{file: file, scorer: q["scorer"]}
	sid := q["sample"]
	switch {
	case strings.HasPrefix(sid, `"`):
		var s string
		if err := json.Unmarshal([]byte(sid), &s); err != nil {
			return locator{}, fmt.Errorf("the attempt locator's sample %q: %w", sid, err)
		}
		l.id = SampleID{Text: s}
	default:
		if _, err := strconv.ParseInt(sid, 10, 64); err != nil {
			return locator{}, fmt.Errorf("the attempt locator's sample %q is not an integer or a quoted string", sid)
		}
		l.id = SampleID{Text: sid, Number: true}
	}
	var err error
	if l.epoch, err = strconv.Atoi(q["epoch"]); err != nil || l.epoch < 1 {
		return locator{}, fmt.Errorf("the attempt locator's epoch %q is not a positive integer", q["epoch"])
	}
	if l.retry, err = strconv.Atoi(q["retry"]); err != nil || l.retry < 0 {
		return locator{}, fmt.Errorf("the attempt locator's retry %q is not a whole number", q["retry"])
	}
	return l, nil
}

// Settings are the plan's settings of a log: what the settings digest
// covers (SettingsInputs, without nulls) under the plan's categories
// (generation, repeats, runtime), the primary scorer, and the dataset's
// size beside the planned samples.
func Settings(h *Header, p *Plan, scorer string) map[string]any {
	in := SettingsInputs(h)
	gen := map[string]any{}
	for _, k := range []string{"model_generate_config", "plan_config"} {
		if m, ok := in[k].(map[string]any); ok {
			gen[k] = m
		}
	}
	runtime := map[string]any{}
	for _, k := range []string{"sandbox", "epochs_reducer", "score_on_error", "retry_on_error"} {
		runtime[k] = in[k]
	}
	// The limits under plan-friendly names: a member named like
	// "token_limit" reads as a credential to the plan's secret-field rule
	// (planfile.IsSecretName), so Inspect's names are not kept here.
	if lim, ok := in["limits"].(map[string]any); ok {
		named := map[string]any{}
		for from, to := range limitNames {
			named[to] = lim[from]
		}
		runtime["limits"] = named
	}
	solver := map[string]any{}
	for _, k := range []string{"solver", "solver_args", "plan_steps", "plan_finish"} {
		solver[k] = in[k]
	}
	dataset := map[string]any{
		"planned_samples": int64ToNumber(int64(len(p.SampleIDs))),
	}
	if d := p.DatasetScope(); d != nil {
		dataset["samples"] = int64ToNumber(d.Samples)
	}
	s := map[string]any{
		"generation":   gen,
		"repeats":      in["epochs"],
		"runtime":      runtime,
		"solver":       solver,
		"scorers":      in["scorers"],
		"scorer":       scorer,
		"task_args":    in["task_args"],
		"task_version": in["task_version"],
		"dataset":      dataset,
	}
	out, _ := prune(s).(map[string]any)
	return out
}

// limitNames maps eval.config's limits to the plan's settings keys.
var limitNames = map[string]string{
	"limit":            "samples",
	"sample_id":        "sample_ids",
	"message_limit":    "messages",
	"token_limit":      "tokens",
	"token_limit_type": "tokens_counted",
	"turn_limit":       "turns",
	"time_limit":       "time_sec",
	"working_limit":    "working_sec",
	"cost_limit":       "cost_usd",
}

// prune drops null members and empty objects, so a setting the log does
// not write is absent rather than null.
func prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			if e = prune(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		out := make([]any, 0, len(t))
		for _, e := range t {
			if e = prune(e); e != nil {
				out = append(out, e)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case string:
		if t == "" {
			return nil
		}
	}
	return v
}

// datasetDigest is the proposed dataset digest: the RFC 8785 form of
// DatasetInputs.
func datasetDigest(h *Header, p *Plan) (string, error) {
	b, err := json.Marshal(DatasetInputs(h, p))
	if err != nil {
		return "", err
	}
	d, err := digest.JSON(b)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(d[:]), nil
}

// cached is one log as an import read it.
type cached struct {
	once    sync.Once
	err     error
	header  *Header
	sha     string
	samples map[string]*Sample
}

func (p *Producer) load(files producers.Files, file string) *cached {
	p.mu.Lock()
	c, ok := p.cache[file]
	if !ok {
		c = &cached{}
		p.cache[file] = c
	}
	p.mu.Unlock()
	c.once.Do(func() {
		data, err := files.ReadFile(file, maxLogSize)
		if err != nil {
			c.err = err
			return
		}
		data = bytes.Clone(data) // the caller's buffer is reused
		sum := sha256.Sum256(data)
		c.sha = hex.EncodeToString(sum[:])
		l, err := Open(bytes.NewReader(data), int64(len(data)), file, Limits{})
		if err != nil {
			c.err = err
			return
		}
		c.header = &l.Header
		c.samples = map[string]*Sample{}
		c.err = l.Samples(SampleOptions{}, func(s *Sample) error {
			k := Planned{ID: s.ID, Epoch: int(s.Epoch)}.Key()
			if _, dup := c.samples[k]; !dup {
				c.samples[k] = s
			}
			return nil
		})
	})
	return c
}

// ReadAttempt reads and judges one attempt of a planned (sample, epoch).
func (p *Producer) ReadAttempt(files producers.Files, loc string) attempt.Attempt {
	var a attempt.Attempt
	l, err := parseLocator(loc)
	if err != nil {
		a.Record = loc
		a.Outcome = outcome.Outcome{Status: outcome.Unscored, Reason: outcome.ReasonResultInvalid, Detail: err.Error()}
		return a
	}
	a.Record = l.file
	c := p.load(files, l.file)
	if c.err != nil {
		var pe *safefs.PathError
		if errors.Is(c.err, fs.ErrNotExist) || (errors.As(c.err, &pe) && pe.Code == safefs.CodeMissing) {
			a.Outcome = outcome.Outcome{Status: outcome.Unscored, Reason: outcome.ReasonResultMissing, Detail: "the log " + l.file + " is not there"}
			return a
		}
		a.Outcome = outcome.Outcome{Status: outcome.Unscored, Reason: outcome.ReasonResultInvalid, Detail: c.err.Error()}
		return a
	}
	a.Evidence.ResultSHA256 = &c.sha
	s, ok := c.samples[Planned{ID: l.id, Epoch: l.epoch}.Key()]
	if !ok {
		a.Outcome = outcome.Outcome{Status: outcome.Unscored, Reason: outcome.ReasonResultMissing,
			Detail: fmt.Sprintf("the log holds no sample %s of epoch %d", l.id, l.epoch)}
		return a
	}
	a.Record = l.file + "#" + s.Member
	a.Task = TrialTask(c.header.Task, s.ID)
	j := Judge(s, l.scorer)
	if l.retry >= len(j.Attempts) {
		a.Outcome = outcome.Outcome{Status: outcome.Unscored, Reason: outcome.ReasonResultMissing,
			Detail: fmt.Sprintf("the sample has %d attempts; the plan names attempt %d", len(j.Attempts), l.retry)}
		return a
	}
	v := j.Attempts[l.retry]
	a.Outcome = outcome.Outcome{Status: outcome.Status(v.Status), Reason: v.Reason, Reward: v.Reward, Detail: v.Detail}
	if v.ExceptionType != "" {
		et := v.ExceptionType
		a.Outcome.ExceptionType = &et
		a.Identity = append(a.Identity, attempt.Field{Name: "error.traceback (exception class)", Value: et})
	}
	if v.Error != nil {
		a.Error = &attempt.Error{Class: v.ExceptionType, Message: v.Error.Message}
	}
	if v.Limit != "" {
		a.Limits = []string{v.Limit}
	}
	last := l.retry == len(j.Attempts)-1
	if last {
		for _, sc := range s.Scores {
			var val *float64
			if f, ok := valueToFloat(sc.value); ok && f == f && f-f == 0 {
				val = &f
			}
			a.Scores = append(a.Scores, attempt.Score{Name: sc.Name, Value: val, Raw: sc.Raw})
		}
		if s.TotalTime != nil {
			a.Timing = &snapshot.Timing{AgentExecution: s.TotalTime}
		}
		if u := s.Usage; u != nil {
			in, out := u.InputTokens, u.OutputTokens
			a.Usage = &snapshot.Usage{InputTokens: &in, OutputTokens: &out, CostUSD: u.Cost}
			if u.CacheReadTokens > 0 {
				cr := u.CacheReadTokens
				a.Usage.CacheTokens = &cr
			}
		}
		a.UnknownFields = s.Unknown
	}
	if m := c.header.Model; m != "" {
		a.Agent = &snapshot.Agent{Name: agentName(c.header), Model: &m}
		a.Identity = append(a.Identity, attempt.Field{Name: "eval.model", Value: m})
	}
	return a
}

// agentName is the solver the run used: eval.solver, else the plan's
// steps joined.
func agentName(h *Header) string {
	if s := h.eval.get("solver").str(); s != "" {
		return s
	}
	var steps []string
	for _, st := range h.plan.get("steps").items() {
		if n := st.get("solver").str(); n != "" {
			steps = append(steps, n)
		}
	}
	if len(steps) == 0 {
		return "inspect"
	}
	return strings.Join(steps, "+")
}

// Transcript is the sample's messages, read from the log under root (the
// last attempt's conversation; Inspect keeps no messages of a retried
// attempt).
func (*Producer) Transcript(root, loc string) ([]transcript.Part, []producers.Note, error) {
	l, err := parseLocator(loc)
	if err != nil {
		return nil, nil, err
	}
	abs, err := safefs.Resolve(root, l.file)
	if err != nil {
		return nil, nil, nil
	}
	read := func(ctx context.Context, body *transcript.Body) (transcript.SourceInfo, error) {
		s, err := readSample(abs, l.file, l.id, l.epoch)
		if err != nil {
			return transcript.SourceInfo{}, &transcript.SkipError{Path: l.file, Reason: err.Error(), Err: err}
		}
		msgs, err := s.Messages()
		if err != nil {
			return transcript.SourceInfo{}, err
		}
		for i, m := range msgs {
			if body.Full() {
				body.Count(len(msgs) - i)
				break
			}
			tm := transcript.Message{Role: m.Role, Content: m.Content}
			if m.ToolName != "" {
				tm.ToolName = &msgs[i].ToolName
			}
			if m.CallID != "" {
				tm.CallID = &msgs[i].CallID
			}
			if err := body.Add(ctx, tm); err != nil {
				return transcript.SourceInfo{}, err
			}
		}
		return transcript.SourceInfo{SchemaVersion: "inspect-log/2", Steps: len(msgs), UnknownFields: s.Unknown}, nil
	}
	return []transcript.Part{{Path: abs, Read: read}}, nil, nil
}

// openLogFile opens the log at abs (a regular file: safefs.OpenRegular)
// and reads its header (Open; name is for messages). The caller closes f
// once done with l, whose samples are read from it.
func openLogFile(abs, name string) (l *Log, f *os.File, err error) {
	if f, err = safefs.OpenRegular(abs); err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		l, err = Open(f, fi.Size(), name, Limits{})
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return l, f, nil
}

// readSample reads one sample with its messages from the log at abs.
func readSample(abs, name string, id SampleID, epoch int) (*Sample, error) {
	l, f, err := openLogFile(abs, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	want := Planned{ID: id, Epoch: epoch}.Key()
	opts := SampleOptions{Messages: true}
	if l.Format == FormatEval {
		// Inspect names members <id>_epoch_<n>.json; a member read is
		// checked against the id it holds, and the rest are searched.
		m := samplesDir + id.Text + "_epoch_" + strconv.Itoa(epoch) + ".json"
		if slices.Contains(l.samples, m) {
			if s, err := l.SampleAt(m, opts); err == nil && (Planned{ID: s.ID, Epoch: int(s.Epoch)}).Key() == want {
				return s, nil
			}
		}
	}
	var hit *Sample
	errFound := errors.New("found")
	err = l.Samples(opts, func(s *Sample) error {
		if (Planned{ID: s.ID, Epoch: int(s.Epoch)}).Key() == want {
			hit = s
			return errFound
		}
		return nil
	})
	if hit != nil {
		return hit, nil
	}
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("the log holds no sample %s of epoch %d", id, epoch)
}

// Facts are Inspect's own figures about a log, shown beside tpctl's
// counts (the import's producer_job).
type Facts struct {
	Log            string `json:"log"`
	InspectVersion string `json:"inspect_version"`
	Status         string `json:"status"`
	// Planned and Held are the body's: planned (sample, epoch) pairs and
	// samples the log holds.
	Planned int `json:"planned"`
	Held    int `json:"held"`
	// DatasetSamples is eval.dataset.samples (-1 unknown); PlannedSamples
	// the planned samples; Scope words them ("3 of 2,376 samples of the
	// dataset").
	DatasetSamples   int64         `json:"dataset_samples"`
	PlannedSamples   int           `json:"planned_samples"`
	Scope            string        `json:"scope"`
	TotalSamples     *int64        `json:"total_samples"`
	CompletedSamples *int64        `json:"completed_samples"`
	Scores           []ScoreFigure `json:"scores"`
	Differences      []Difference  `json:"differences"`
}

// Lines words the figures for a terminal, with why they differ.
func (f *Facts) Lines() []string {
	out := []string{fmt.Sprintf("inspect log   %s (Inspect %s, status %s): %s", f.Log, orDash(f.InspectVersion), orDash(f.Status), f.Scope)}
	if f.TotalSamples != nil {
		line := fmt.Sprintf("  inspect says total_samples %d · completed_samples %d", *f.TotalSamples, *f.CompletedSamples)
		for _, s := range f.Scores {
			for _, m := range s.Metrics {
				v := "NaN"
				if m.Value != nil {
					v = strconv.FormatFloat(*m.Value, 'g', 4, 64)
				}
				line += fmt.Sprintf(" · %s %s %s", s.Name, m.Name, v)
			}
		}
		out = append(out, line)
	}
	out = append(out, "  why they differ: Inspect counts the samples that completed and drops errored ones from its metrics, and reduces epochs; tpctl counts every planned (sample, epoch), a missing one included, and keeps unscored samples out of the success rate")
	return out
}

// logOfTasks finds the one log directly under root whose task names every
// planned trial's task ("<task>/<sample id>"), "" when none or several.
func logOfTasks(root string, tasks producers.PlannedTasks) string {
	if tasks == nil {
		return ""
	}
	logs, _ := findLogs(root)
	defer func() {
		for _, l := range logs {
			l.closer()
		}
	}()
	hit := ""
	for _, l := range logs {
		if l.log == nil {
			continue
		}
		some, all := false, true
		err := tasks(func(t producers.PlannedTask) bool {
			some = true
			all = strings.HasPrefix(t.Name, l.log.Header.Task+"/")
			return all
		})
		if err != nil || !some || !all {
			continue
		}
		if hit != "" {
			return ""
		}
		hit = l.file
	}
	return hit
}

// CheckJob sets Inspect's own figures beside the plan: the log's header
// (results.total_samples, completed_samples, each score's counts and
// metrics) against its body; a difference is warned as
// producer_counts_differ, and the header is never believed.
func (p *Producer) CheckJob(root string, plan producers.PlannedSet) (*producers.JobCheck, error) {
	p.mu.Lock()
	p.cache = map[string]*cached{} // the import is over: its logs are read again next time
	p.mu.Unlock()
	var file string
	for _, loc := range plan.Sample {
		if f, _, ok := strings.Cut(loc, "#"); ok {
			file = f
			break
		}
	}
	if file == "" {
		// No planned attempt ran (a log holding no samples): the log is
		// the one under root whose task names the plan's trials.
		file = logOfTasks(root, plan.Tasks)
		if file == "" {
			return nil, nil
		}
	}
	abs, err := safefs.Resolve(root, file)
	if err != nil {
		return nil, err
	}
	l, f, err := openLogFile(abs, path.Base(file))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sum, err := Summarize(l, "")
	var se *ScorerError
	if errors.As(err, &se) {
		sum, err = Summarize(l, se.Scorer[0]) // the figures do not depend on the scorer
	}
	if err != nil {
		return nil, err
	}
	h := sum.Header
	facts := &Facts{
		Log: file, InspectVersion: h.InspectVersion, Status: h.Status,
		Planned: len(sum.Trials), Held: sum.Body.Present,
		DatasetSamples: sum.Plan.DatasetSize, PlannedSamples: len(sum.Plan.SampleIDs), Scope: sum.Plan.Scope(),
		Differences: sum.Differences,
	}
	if r := h.Results; r != nil {
		facts.TotalSamples, facts.CompletedSamples = &r.TotalSamples, &r.CompletedSamples
		facts.Scores = r.Scores
	}
	c := &producers.JobCheck{Facts: facts}
	for _, d := range sum.Differences {
		c.Warnings = append(c.Warnings, producers.Note{Code: CodeCountsDiffer, Message: d.String() + " (the header is not believed: tpctl counts the log's samples)"})
	}
	if plan.Trials != len(sum.Trials) {
		c.Differs = fmt.Sprintf("the plan lists %d trials but the log %s planned %d (%s × %s); plan init --root drafts every planned (sample, epoch)",
			plan.Trials, file, len(sum.Trials), countOf(len(sum.Plan.SampleIDs), "sample"), countOf(sum.Plan.Epochs, "epoch"))
	}
	return c, nil
}
