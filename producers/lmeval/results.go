package lmeval

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// MaxResultsBytes caps a results file. lm-eval's results hold the task
// configs, the chat template and the environment report; a few MiB at most.
const MaxResultsBytes = 64 << 20

// Results is one results_<timestamp>.json, as
// lm_eval/loggers/evaluation_tracker.py save_results_aggregated writes it.
type Results struct {
	// File names the file in messages.
	File string
	// Timestamp is the run's date id from the file name (lm-eval's
	// datetime.now().isoformat() with ':' as '-'); the run's samples
	// files carry the same one.
	Timestamp string

	// ModelName is lm-eval's model_name (the pretrained=, model=, path=
	// or engine= of --model_args); ModelSource is --model ("hf", "vllm",
	// …). Both are "" in results older than the tracker.
	ModelName, ModelSource string
	// ModelRevision and ModelSHA are config.model_revision and
	// config.model_sha (Hugging Face models report them), "" when absent.
	ModelRevision, ModelSHA string
	// ConfigModel is config.model (the model type, or the name in older
	// results).
	ConfigModel string
	// LMEvalVersion and GitHash say which lm-eval wrote the file.
	LMEvalVersion, GitHash string
	// ChatTemplateSHA and SystemInstructionSHA are lm-eval's own SHA-256
	// of the chat template and the system instruction, "" when none was
	// used. The texts themselves are never kept.
	ChatTemplateSHA, SystemInstructionSHA string
	// FewshotAsMultiturn is nil when the file does not say.
	FewshotAsMultiturn *bool
	// Limit is config.limit as written ("" when null or absent).
	Limit string

	// Tasks are the evaluated tasks (those with a config; in
	// aggregate-only files, every entry of "results"), by name.
	Tasks []*Task
	// Groups are the group entries of "results" (group_subtasks with
	// children): aggregates over tasks, never planned themselves.
	Groups []string
	// TaskHashes reports whether the file carries task_hashes for any
	// task (lm-eval writes them only with --log_samples).
	TaskHashes bool
}

// Task is one task of a results file.
type Task struct {
	Name string
	// Counted is false when the file has no n-samples entry for the task
	// (aggregate-only results): the planned set is unknown.
	Counted bool
	// Original is the number of documents in the task's evaluation split;
	// Effective the number lm-eval evaluated (fewer under --limit).
	Original, Effective int
	// Version is versions[task] as written ("" when absent).
	Version string
	// NShot is n-shot[task], nil when absent.
	NShot *int
	// Config is configs[task] as read, nil when absent.
	Config map[string]any
	// OutputType, Repeats, MetricNames and FilterNames come from Config:
	// output_type, repeats (1 when absent), metric_list[].metric and
	// filter_list[].name ("none" alone when the task has no filter list,
	// lm-eval's default filter).
	OutputType  string
	Repeats     int
	MetricNames []string
	FilterNames []string
	// HigherIsBetter is higher_is_better[task][metric], nil when not said.
	HigherIsBetter map[string]*bool
	// Figures are lm-eval's own aggregates for the task ("acc,none": 0.6),
	// in file order; stderr entries are kept beside their metric.
	Figures []Figure
	// TaskHash is task_hashes[task], "" when absent.
	TaskHash string
}

// Figure is one of lm-eval's aggregates for a task.
type Figure struct {
	Metric string
	// Filter is "" in old files that wrote "acc" rather than "acc,none".
	Filter string
	// Value is the aggregate as written (a Number, or a string such as
	// "N/A"); Stderr likewise, nil when absent.
	Value, Stderr any
}

// Text is the figure's value as lm-eval wrote it.
func (f Figure) Text() string { return text(f.Value) }

// ResultsError is a results file tpctl cannot read.
type ResultsError struct {
	File    string
	Pointer string // JSON pointer of the value at fault, "" for the file
	Err     error
}

func (e *ResultsError) Error() string {
	if e.Pointer != "" {
		return fmt.Sprintf("%s: %s: %v", e.File, e.Pointer, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *ResultsError) Unwrap() error { return e.Err }

// TooLargeError is a file or line over its cap.
type TooLargeError struct {
	File  string
	Line  int // 0 for the whole file
	Limit int64
}

func (e *TooLargeError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d is larger than %d bytes", e.File, e.Line, e.Limit)
	}
	return fmt.Sprintf("%s: larger than %d bytes", e.File, e.Limit)
}

// ReadResults reads a results file from r (at most MaxResultsBytes).
// name is the file's name, for messages and its timestamp.
func ReadResults(r io.Reader, name string) (*Results, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxResultsBytes+1))
	if err != nil {
		return nil, &ResultsError{File: name, Err: err}
	}
	if int64(len(data)) > MaxResultsBytes {
		return nil, &TooLargeError{File: name, Limit: MaxResultsBytes}
	}
	return ParseResults(data, name)
}

// ParseResults reads a results file's bytes.
func ParseResults(data []byte, name string) (*Results, error) {
	doc, err := readDocument(data)
	if err != nil {
		return nil, &ResultsError{File: name, Err: err}
	}
	bad := func(ptr, format string, a ...any) error {
		return &ResultsError{File: name, Pointer: ptr, Err: fmt.Errorf(format, a...)}
	}
	res := &Results{File: name}
	if ts, ok := ResultsTimestamp(baseName(name)); ok {
		res.Timestamp = ts
	}
	results := object(doc, "results")
	if results == nil {
		return nil, bad("/results", "missing or not an object: not lm-eval's results file")
	}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"model_name", &res.ModelName}, {"model_source", &res.ModelSource},
		{"lm_eval_version", &res.LMEvalVersion}, {"git_hash", &res.GitHash},
		{"chat_template_sha", &res.ChatTemplateSHA}, {"system_instruction_sha", &res.SystemInstructionSHA},
	} {
		switch v := doc[f.key].(type) {
		case nil:
		case string:
			*f.dst = v
		default:
			return nil, bad("/"+f.key, "not a string")
		}
	}
	if b, ok := doc["fewshot_as_multiturn"].(bool); ok {
		res.FewshotAsMultiturn = &b
	}
	if cfg := object(doc, "config"); cfg != nil {
		res.ModelRevision, _ = str(cfg, "model_revision")
		res.ModelSHA, _ = str(cfg, "model_sha")
		res.ConfigModel, _ = str(cfg, "model")
		res.Limit = text(cfg["limit"])
	}

	configs := object(doc, "configs")
	subtasks := object(doc, "group_subtasks")
	var names []string
	if configs != nil {
		for n := range configs {
			names = append(names, n)
		}
	} else {
		for n := range results {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for n, kids := range subtasks {
		if a, ok := kids.([]any); ok && len(a) > 0 && (configs == nil || configs[n] == nil) {
			res.Groups = append(res.Groups, n)
			names = slices.DeleteFunc(names, func(s string) bool { return s == n })
		}
	}
	slices.Sort(res.Groups)

	order := resultsKeyOrder(data)
	nSamples := object(doc, "n-samples")
	versions := object(doc, "versions")
	nShot := object(doc, "n-shot")
	hib := object(doc, "higher_is_better")
	hashes := object(doc, "task_hashes")
	for _, n := range names {
		t := &Task{Name: n, Repeats: 1}
		ptr := "/n-samples/" + escape(n)
		if c, present := nSamples[n]; present {
			cm, ok := c.(map[string]any)
			if !ok {
				return nil, bad(ptr, "not an object")
			}
			var ok1, ok2 bool
			t.Original, ok1 = integer(cm["original"])
			t.Effective, ok2 = integer(cm["effective"])
			if !ok1 {
				return nil, bad(ptr+"/original", "not a count")
			}
			if !ok2 {
				return nil, bad(ptr+"/effective", "not a count")
			}
			t.Counted = true
		}
		if v, ok := versions[n]; ok {
			t.Version = text(v)
		}
		if v, ok := integer(nShot[n]); ok {
			t.NShot = &v
		}
		if h, ok := hashes[n].(string); ok && h != "" {
			t.TaskHash = h
			res.TaskHashes = true
		}
		if m := object(hib, n); m != nil {
			t.HigherIsBetter = map[string]*bool{}
			for k, v := range m {
				if b, ok := v.(bool); ok {
					t.HigherIsBetter[k] = &b
				} else {
					t.HigherIsBetter[k] = nil
				}
			}
		}
		if cfg, present := configs[n]; present {
			cm, ok := cfg.(map[string]any)
			if !ok {
				return nil, bad("/configs/"+escape(n), "not an object")
			}
			if err := t.readConfig(cm); err != nil {
				return nil, &ResultsError{File: name, Pointer: "/configs/" + escape(n) + err.ptr, Err: err.err}
			}
		}
		t.readFigures(object(results, n), order[n])
		res.Tasks = append(res.Tasks, t)
	}
	return res, nil
}

type configError struct {
	ptr string
	err error
}

func (t *Task) readConfig(cm map[string]any) *configError {
	t.Config = cm
	t.OutputType, _ = str(cm, "output_type")
	if v, present := cm["repeats"]; present && v != nil {
		n, ok := integer(v)
		if !ok || n < 1 {
			return &configError{"/repeats", fmt.Errorf("not a positive count: %s", text(v))}
		}
		t.Repeats = n
	}
	if ml, ok := cm["metric_list"].([]any); ok {
		for i, m := range ml {
			mm, _ := m.(map[string]any)
			name, ok := str(mm, "metric")
			if !ok || name == "" {
				// A metric given as a function is dumped as its source;
				// it is still named in the results' figures.
				if src, isStr := mm["metric"].(string); isStr && src != "" {
					name = src
				} else {
					return &configError{fmt.Sprintf("/metric_list/%d/metric", i), fmt.Errorf("not a metric name")}
				}
			}
			if !slices.Contains(t.MetricNames, name) {
				t.MetricNames = append(t.MetricNames, name)
			}
		}
	}
	if fl, ok := cm["filter_list"].([]any); ok {
		for i, f := range fl {
			fm, _ := f.(map[string]any)
			name, ok := str(fm, "name")
			if !ok || name == "" {
				return &configError{fmt.Sprintf("/filter_list/%d/name", i), fmt.Errorf("not a filter name")}
			}
			if !slices.Contains(t.FilterNames, name) {
				t.FilterNames = append(t.FilterNames, name)
			}
		}
	}
	if len(t.FilterNames) == 0 {
		t.FilterNames = []string{"none"}
	}
	return nil
}

// readFigures collects "metric,filter" entries of results[task], in the
// file's order (order lists each task's keys as written).
func (t *Task) readFigures(m map[string]any, order []string) {
	var stderr []Figure
	for _, k := range order {
		v, ok := m[k]
		if !ok {
			continue
		}
		switch k {
		case "alias", "name", "sample_len", "sample_count":
			continue
		}
		metric, filter, _ := strings.Cut(k, ",")
		f := Figure{Metric: metric, Filter: filter, Value: v}
		if base, ok := strings.CutSuffix(metric, "_stderr"); ok {
			f.Metric = base
			stderr = append(stderr, f)
			continue
		}
		t.Figures = append(t.Figures, f)
	}
	for _, s := range stderr {
		for i := range t.Figures {
			if t.Figures[i].Metric == s.Metric && t.Figures[i].Filter == s.Filter {
				t.Figures[i].Stderr = s.Value
			}
		}
	}
}

// resultsKeyOrder returns, per task of the top-level "results" object,
// its keys in the order written (a map forgets it; lm-eval writes each
// metric in metric_list order followed by its stderr). data already
// parsed once, so errors cannot occur and are ignored.
func resultsKeyOrder(data []byte) map[string][]string {
	out := map[string][]string{}
	d := jsonscan.NewBytes(data, jsonscan.Options{NonFinite: true, MaxDepth: maxDepth})
	if k, err := d.Next(); err != nil || k != jsonscan.BeginObject {
		return out
	}
	for {
		k, err := d.Next()
		if err != nil || k != jsonscan.String {
			return out
		}
		top := d.String()
		k, err = d.Next()
		if err != nil {
			return out
		}
		if top != "results" || k != jsonscan.BeginObject {
			if d.Skip(k) != nil {
				return out
			}
			continue
		}
		for {
			k, err := d.Next()
			if err != nil || k != jsonscan.String {
				return out
			}
			task := d.String()
			k, err = d.Next()
			if err != nil {
				return out
			}
			if k != jsonscan.BeginObject {
				if d.Skip(k) != nil {
					return out
				}
				continue
			}
			var keys []string
			for {
				k, err := d.Next()
				if err != nil {
					return out
				}
				if k == jsonscan.EndObject {
					break
				}
				keys = append(keys, d.String())
				vk, err := d.Next()
				if err != nil || d.Skip(vk) != nil {
					return out
				}
			}
			out[task] = keys
		}
	}
}

// Task returns the task named name, or nil.
func (r *Results) Task(name string) *Task {
	for _, t := range r.Tasks {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// TaskNames returns the tasks' names in order.
func (r *Results) TaskNames() []string {
	out := make([]string, len(r.Tasks))
	for i, t := range r.Tasks {
		out[i] = t.Name
	}
	return out
}

// Figure returns lm-eval's aggregate for metric under filter, or false.
// An old file's unfiltered figure ("acc") stands for filter "none".
func (t *Task) Figure(metric, filter string) (Figure, bool) {
	for _, f := range t.Figures {
		if f.Metric == metric && (f.Filter == filter || (f.Filter == "" && filter == "none")) {
			return f, true
		}
	}
	return Figure{}, false
}

// Limited reports whether lm-eval evaluated fewer documents than the
// task's split holds (--limit).
func (t *Task) Limited() bool { return t.Counted && t.Effective < t.Original }

// escape is one JSON-pointer token.
func escape(tok string) string { return jsonscan.EscapePointer(tok) }

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}
