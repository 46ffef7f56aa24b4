package inspect

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// The fields below follow Inspect's pydantic models at the validated
// commit (src/inspect_ai/log/_log.py: EvalLog, EvalSpec, EvalDataset,
// EvalConfig, EvalResults, EvalScore, EvalSample, EvalSampleLimit,
// EvalRetryError; src/inspect_ai/_util/error.py: EvalError). Only what
// tpctl judges, plans, compares or digests is read; the rest is kept as
// the raw subtree where a digest needs it.

// SampleID is a dataset sample's id: Inspect allows an integer or a
// string, and 1 and "1" are different ids.
type SampleID struct {
	Text   string // the integer's digits or the string's text
	Number bool   // an integer id
}

// String is the id as a person reads it.
func (s SampleID) String() string { return s.Text }

// Key tells ids apart by kind and text (1 and "1" differ).
func (s SampleID) Key() string {
	if s.Number {
		return "n:" + s.Text
	}
	return "s:" + s.Text
}

func sampleID(n *node) (SampleID, error) {
	switch {
	case n.isString():
		return SampleID{Text: n.text}, nil
	case n.isNumber():
		i, ok := n.int()
		if !ok {
			return SampleID{}, fmt.Errorf("sample id %s is not an integer or a string", n.text)
		}
		return SampleID{Text: strconv.FormatInt(i, 10), Number: true}, nil
	}
	return SampleID{}, errors.New("sample id is not an integer or a string")
}

// Header is what a log says about its run as a whole.
type Header struct {
	// Version is the log format version (always SupportedVersion once
	// read).
	Version int
	// Status is Inspect's: "started", "success", "cancelled" or "error".
	Status string
	// InspectVersion is eval.packages.inspect_ai: the version of Inspect
	// that wrote the log ("" when the log names none).
	InspectVersion string
	EvalID         string
	RunID          string
	EvalSetID      string
	Task           string
	TaskID         string
	TaskVersion    string
	TaskFile       string
	Model          string
	Created        string
	Dataset        Dataset
	// Epochs is eval.config.epochs, 1 when unset (Inspect's default,
	// EvalConfigDefaults).
	Epochs int
	// EpochsSet says eval.config.epochs was written.
	EpochsSet bool
	// ScoreOnError is eval.config.score_on_error.
	ScoreOnError bool
	// Limit is eval.config.limit as written ("" when unset): 10, or [0, 10].
	Limit string
	// Scorers are eval.scorers' names in order (nil in logs older than
	// the field).
	Scorers []string
	// Results are Inspect's own figures, nil when the log has none.
	Results *Results
	// Error is the error that ended the run, nil when none.
	Error *EvalError
	// HeaderMember is the member the header was read from in an .eval
	// (header.json, or _journal/start.json for a log still being written).
	HeaderMember string

	eval, plan *node
}

// Dataset is eval.dataset.
type Dataset struct {
	Name     string
	Location string
	// Samples is the dataset's size (eval.dataset.samples), -1 when the
	// log does not say.
	Samples int64
	// SampleIDs are the ids the run planned, in order; HasSampleIDs says
	// the log lists them (older logs do not).
	SampleIDs    []SampleID
	HasSampleIDs bool
	Shuffled     bool
}

// Results is Inspect's own results block.
type Results struct {
	TotalSamples     int64
	CompletedSamples int64
	Scores           []ScoreFigure
}

// ScoreFigure is one EvalScore of the results.
type ScoreFigure struct {
	Name    string `json:"name"`
	Scorer  string `json:"scorer"`
	Reducer string `json:"reducer,omitempty"`
	// Scored and Unscored are scored_samples and unscored_samples, nil
	// where the log (older than the fields) has none.
	Scored   *int64         `json:"scored_samples"`
	Unscored *int64         `json:"unscored_samples"`
	Metrics  []MetricFigure `json:"metrics"`
}

// MetricFigure is one metric of a score, in the log's order.
type MetricFigure struct {
	Name string `json:"name"`
	// Value is nil when the metric is not a finite number (NaN).
	Value *float64 `json:"value"`
}

// EvalError is Inspect's EvalError: the message and the traceback.
type EvalError struct {
	Message   string
	Traceback string
}

// Class is the exception class read from the traceback's last line
// ("openai.RateLimitError: …" gives "openai.RateLimitError"), "" when the
// traceback names none.
func (e *EvalError) Class() string {
	if e == nil {
		return ""
	}
	return exceptionClass(e.Traceback)
}

func decodeHeader(root *node, logName, member string) (*Header, error) {
	bad := func(ptr string, format string, args ...any) error {
		return &Error{Log: logName, Member: member, Pointer: ptr, Err: fmt.Errorf(format, args...)}
	}
	if !root.isObject() {
		return nil, bad("", "not an Inspect log: the document is not a JSON object")
	}
	h := &Header{Version: SupportedVersion}
	// Every Inspect log, of any version, has an eval object; another JSON
	// document (an import plan, whose version is 1) is no log at all.
	ev := root.get("eval")
	if !ev.isObject() {
		return nil, bad("/eval", "not an Inspect log: no eval object")
	}
	// EvalLog.version defaults to 2 in Inspect's model, so a log without
	// the field is read as version 2, as Inspect reads it.
	if v := root.get("version"); v != nil {
		i, ok := v.int()
		if !ok || i != SupportedVersion {
			return nil, &VersionError{Log: logName, Version: v.compact()}
		}
	}
	h.Status = root.get("status").str()
	h.eval, h.plan = ev, root.get("plan")
	h.InspectVersion = ev.path("packages", "inspect_ai").str()
	h.EvalID = ev.get("eval_id").str()
	h.RunID = ev.get("run_id").str()
	h.EvalSetID = ev.get("eval_set_id").str()
	h.Task = ev.get("task").str()
	if h.Task == "" {
		return nil, bad("/eval/task", "the log names no task")
	}
	h.TaskID = ev.get("task_id").str()
	if tv := ev.get("task_version"); tv.isString() {
		h.TaskVersion = tv.text
	} else if tv.isNumber() {
		h.TaskVersion = tv.text
	}
	h.TaskFile = ev.get("task_file").str()
	h.Model = ev.get("model").str()
	h.Created = ev.get("created").str()

	ds := ev.get("dataset")
	h.Dataset = Dataset{Name: ds.get("name").str(), Location: ds.get("location").str(), Samples: -1}
	if n, ok := ds.get("samples").int(); ok {
		h.Dataset.Samples = n
	}
	if sh := ds.get("shuffled"); sh != nil && sh.kind == jsonscan.True {
		h.Dataset.Shuffled = true
	}
	if ids := ds.get("sample_ids"); ids.isArray() {
		h.Dataset.HasSampleIDs = true
		for i, e := range ids.elems {
			id, err := sampleID(e)
			if err != nil {
				return nil, bad("/eval/dataset/sample_ids/"+strconv.Itoa(i), "%v", err)
			}
			h.Dataset.SampleIDs = append(h.Dataset.SampleIDs, id)
		}
	} else if !ids.isNull() {
		return nil, bad("/eval/dataset/sample_ids", "not an array")
	}

	cfg := ev.get("config")
	h.Epochs = 1
	if e := cfg.get("epochs"); !e.isNull() {
		n, ok := e.int()
		if !ok || n < 1 || n > 1<<20 {
			return nil, bad("/eval/config/epochs", "epochs %s is not a positive integer", e.compact())
		}
		h.Epochs, h.EpochsSet = int(n), true
	}
	if soe := cfg.get("score_on_error"); soe != nil && soe.kind == jsonscan.True {
		h.ScoreOnError = true
	}
	if lim := cfg.get("limit"); !lim.isNull() {
		h.Limit = lim.compact()
	}
	if sc := ev.get("scorers"); sc.isArray() {
		for _, s := range sc.items() {
			h.Scorers = append(h.Scorers, s.get("name").str())
		}
	}
	if r := root.get("results"); r.isObject() {
		res, err := decodeResults(r)
		if err != nil {
			return nil, bad("/results", "%v", err)
		}
		h.Results = res
	}
	h.Error = decodeError(root.get("error"))
	return h, nil
}

func decodeResults(r *node) (*Results, error) {
	res := &Results{}
	res.TotalSamples, _ = r.get("total_samples").int()
	res.CompletedSamples, _ = r.get("completed_samples").int()
	for _, s := range r.get("scores").items() {
		if !s.isObject() {
			return nil, errors.New("a score is not an object")
		}
		f := ScoreFigure{Name: s.get("name").str(), Scorer: s.get("scorer").str(), Reducer: s.get("reducer").str()}
		if n, ok := s.get("scored_samples").int(); ok {
			f.Scored = &n
		}
		if n, ok := s.get("unscored_samples").int(); ok {
			f.Unscored = &n
		}
		mk, mv := s.get("metrics").members()
		for i, k := range mk {
			v, _ := mv[i].get("value").float()
			name := mv[i].get("name").str()
			if name == "" {
				name = k
			}
			mf := MetricFigure{Name: name}
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				mf.Value = &v
			}
			f.Metrics = append(f.Metrics, mf)
		}
		res.Scores = append(res.Scores, f)
	}
	return res, nil
}

func decodeError(n *node) *EvalError {
	if !n.isObject() {
		return nil
	}
	return &EvalError{Message: n.get("message").str(), Traceback: n.get("traceback").str()}
}

// Sample is one EvalSample: one (sample, epoch) the run attempted.
type Sample struct {
	ID    SampleID
	Epoch int64
	// Member is where the sample is in the log: its zip member, or its
	// JSON pointer ("/samples/3") in a .json log.
	Member string
	// Scores are the sample's scores by scorer name, in the log's order.
	Scores []Score
	// Error is the error that ended the last attempt, nil when none.
	Error *EvalError
	// Retries are the errors of earlier attempts (error_retries), oldest
	// first; the sample itself is the last attempt.
	Retries []EvalError
	// Limit is the limit the sample hit, nil when none.
	Limit *SampleLimit
	// Usage is model_usage, summed over models (nil when none).
	Usage                  *Usage
	TotalTime, WorkingTime *float64
	StartedAt, CompletedAt string
	UUID                   string
	// Unknown counts top-level fields tpctl does not know.
	Unknown int

	messages     *node
	attachments  *node
	withMessages bool
}

// Score is one named score of a sample.
type Score struct {
	Name string
	// Raw is the value as the log writes it (compact JSON).
	Raw   string
	value *node
}

// SampleLimit is EvalSampleLimit.
type SampleLimit struct {
	Type  string
	Value float64
}

// Usage is a sample's token counts over every model it called.
type Usage struct {
	InputTokens, OutputTokens, TotalTokens int64
	CacheReadTokens, CacheWriteTokens      int64
	ReasoningTokens                        int64
	// Cost is the total cost where every model reports one, nil otherwise.
	Cost *float64
}

// sampleFields are EvalSample's top-level fields (for the unknown count);
// the value says whether tpctl builds it (messages only on request).
var sampleFields = map[string]bool{
	"id": true, "epoch": true, "scores": true, "error": true, "error_retries": true,
	"limit": true, "model_usage": true, "total_time": true, "working_time": true,
	"started_at": true, "completed_at": true, "uuid": true,
	"messages": false, "attachments": false,
	"input": false, "choices": false, "target": false, "sandbox": false, "files": false,
	"setup": false, "output": false, "metadata": false, "store": false, "events": false,
	"timelines": false, "role_usage": false, "model_fallbacks": false, "invalidation": false,
	"events_data": false, "turn_count": false, "token_limit": false, "token_limit_type": false,
	"token_limit_usage": false,
}

// decodeSample reads one sample whose first token k was just returned,
// building only the fields it needs and skipping the rest (events are the
// bulk of a sample). On error it returns the pointer inside the sample.
func decodeSample(d *jsonscan.Decoder, k jsonscan.Kind, opts SampleOptions, b *budget) (*Sample, string, error) {
	if k != jsonscan.BeginObject {
		if err := d.Skip(k); err != nil {
			return nil, "", err
		}
		return nil, "", errors.New("a sample is not a JSON object")
	}
	s := &Sample{withMessages: opts.Messages}
	var id, epoch *node
	for {
		kk, err := d.Next()
		if err != nil {
			return nil, "", err
		}
		if kk == jsonscan.EndObject {
			break
		}
		key := d.String()
		ptr := "/" + jsonscan.EscapePointer(key)
		vk, err := d.Next()
		if err != nil {
			return nil, ptr, err
		}
		want, known := sampleFields[key]
		if !known {
			s.Unknown++
		}
		if key == "error_retries" {
			if err := decodeRetries(d, vk, s, b); err != nil {
				return nil, ptr, err
			}
			continue
		}
		if !want && !(opts.Messages && (key == "messages" || key == "attachments")) {
			if err := d.Skip(vk); err != nil {
				return nil, ptr, err
			}
			continue
		}
		v, err := build(d, vk, b)
		if err != nil {
			return nil, ptr, err
		}
		switch key {
		case "id":
			id = v
		case "epoch":
			epoch = v
		case "scores":
			if !v.isNull() && !v.isObject() {
				return nil, ptr, errors.New("scores is not an object")
			}
			for i, name := range v.keys {
				sv := v.elems[i]
				if !sv.isObject() {
					return nil, ptr + "/" + jsonscan.EscapePointer(name), errors.New("a score is not an object")
				}
				val := sv.get("value")
				if val == nil {
					return nil, ptr + "/" + jsonscan.EscapePointer(name), errors.New("a score has no value")
				}
				s.Scores = append(s.Scores, Score{Name: name, Raw: val.compact(), value: val})
			}
		case "error":
			s.Error = decodeError(v)
			if !v.isNull() && s.Error == nil {
				return nil, ptr, errors.New("error is not an object")
			}
		case "limit":
			if v.isObject() {
				lv, _ := v.get("limit").float()
				s.Limit = &SampleLimit{Type: v.get("type").str(), Value: lv}
				if s.Limit.Type == "" {
					return nil, ptr + "/type", errors.New("a limit with no type")
				}
			} else if !v.isNull() {
				return nil, ptr, errors.New("limit is not an object")
			}
		case "model_usage":
			s.Usage = decodeUsage(v)
		case "total_time":
			if f, ok := v.float(); ok {
				s.TotalTime = &f
			}
		case "working_time":
			if f, ok := v.float(); ok {
				s.WorkingTime = &f
			}
		case "started_at":
			s.StartedAt = v.str()
		case "completed_at":
			s.CompletedAt = v.str()
		case "uuid":
			s.UUID = v.str()
		case "messages":
			s.messages = v
		case "attachments":
			s.attachments = v
		}
	}
	if id == nil {
		return nil, "/id", errors.New("the sample has no id")
	}
	sid, err := sampleID(id)
	if err != nil {
		return nil, "/id", err
	}
	s.ID = sid
	e, ok := epoch.int()
	if !ok || e < 1 {
		return nil, "/epoch", errors.New("the sample has no epoch (a positive integer)")
	}
	s.Epoch = e
	return s, "", nil
}

// decodeRetries reads error_retries, keeping each error's message and
// traceback and skipping its events.
func decodeRetries(d *jsonscan.Decoder, k jsonscan.Kind, s *Sample, b *budget) error {
	if k == jsonscan.Null {
		return nil
	}
	if k != jsonscan.BeginArray {
		if err := d.Skip(k); err != nil {
			return err
		}
		return errors.New("error_retries is not an array")
	}
	for {
		ek, err := d.Next()
		if err != nil {
			return err
		}
		if ek == jsonscan.EndArray {
			return nil
		}
		if ek != jsonscan.BeginObject {
			return errors.New("an error retry is not an object")
		}
		var e EvalError
		for {
			kk, err := d.Next()
			if err != nil {
				return err
			}
			if kk == jsonscan.EndObject {
				break
			}
			key := d.String()
			vk, err := d.Next()
			if err != nil {
				return err
			}
			if key != "message" && key != "traceback" {
				if err := d.Skip(vk); err != nil {
					return err
				}
				continue
			}
			v, err := build(d, vk, b)
			if err != nil {
				return err
			}
			if key == "message" {
				e.Message = v.str()
			} else {
				e.Traceback = v.str()
			}
		}
		s.Retries = append(s.Retries, e)
	}
}

func decodeUsage(v *node) *Usage {
	if !v.isObject() || len(v.keys) == 0 {
		return nil
	}
	u := &Usage{}
	var cost float64
	costs := 0
	for _, m := range v.elems {
		add := func(dst *int64, key string) {
			if n, ok := m.get(key).int(); ok {
				*dst += n
			}
		}
		add(&u.InputTokens, "input_tokens")
		add(&u.OutputTokens, "output_tokens")
		add(&u.TotalTokens, "total_tokens")
		add(&u.CacheReadTokens, "input_tokens_cache_read")
		add(&u.CacheWriteTokens, "input_tokens_cache_write")
		add(&u.ReasoningTokens, "reasoning_tokens")
		if c, ok := m.get("total_cost").float(); ok && !math.IsNaN(c) && !math.IsInf(c, 0) {
			cost += c
			costs++
		}
	}
	if costs == len(v.elems) {
		u.Cost = &cost
	}
	return u
}

// Reduction is one scorer's reduced per-sample scores (EvalSampleReductions).
type Reduction struct {
	Scorer  string
	Reducer string
	Samples []ReducedScore
}

// ReducedScore is one sample's reduced score.
type ReducedScore struct {
	SampleID SampleID
	Raw      string
}

func decodeReductions(root *node) ([]Reduction, error) {
	if root.isNull() {
		return nil, nil
	}
	if !root.isArray() {
		return nil, errors.New("reductions is not an array")
	}
	var out []Reduction
	for _, r := range root.items() {
		red := Reduction{Scorer: r.get("scorer").str(), Reducer: r.get("reducer").str()}
		for _, s := range r.get("samples").items() {
			rs := ReducedScore{Raw: s.get("value").compact()}
			if id := s.get("sample_id"); !id.isNull() {
				sid, err := sampleID(id)
				if err != nil {
					return nil, err
				}
				rs.SampleID = sid
			}
			red.Samples = append(red.Samples, rs)
		}
		out = append(out, red)
	}
	return out, nil
}

// exceptionClass reads the exception class from a Python traceback's last
// line: "module.Class: message" or a bare "Class". The lines of an
// exception group ("  | ValueError: x", "  +----") are read through their
// frame, and a line that does not start with a dotted identifier is not a
// class.
func exceptionClass(tb string) string {
	lines := strings.Split(strings.TrimRight(tb, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		line = strings.TrimSpace(strings.TrimLeft(line, "|+- "))
		if line == "" {
			continue
		}
		name := line
		if c := strings.IndexByte(line, ':'); c >= 0 {
			name = line[:c]
		}
		if isDottedIdent(name) {
			return name
		}
		return ""
	}
	return ""
}

func isDottedIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if part == "" {
			return false
		}
		for i, r := range part {
			ok := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
			if !ok {
				return false
			}
		}
	}
	return true
}
