package harbor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Size caps for Harbor's job-level and per-trial declaration files. A
// TrialLock is about 1.5 KiB, so a job lock of 100,000 planned trials is
// near 150 MiB; configs and job results are a few KiB.
const (
	MaxJobLockSize    = 256 << 20
	MaxDeclFileSize   = 16 << 20
	lockDigestPrefix  = "sha256:"
	lockDigestHexSize = 64
)

// JobLock is the part of Harbor's JobLock (src/harbor/models/job/lock.py,
// <job>/lock.json, v0.22.0) tpctl reads: which Harbor wrote it and one
// TrialLock per planned trial, in Harbor's planning order.
type JobLock struct {
	SchemaVersion int
	Harbor        HarborInfo
	Trials        []TrialLock
}

// HarborInfo is JobLock.harbor: the Harbor package that planned the job.
type HarborInfo struct {
	Version       string `json:"version"`
	GitCommitHash string `json:"git_commit_hash"`
}

// TrialLock is one planned trial's resolved inputs (TrialLock, in the job
// lock and in <trial>/lock.json). Raw is the whole object as written,
// for equality with a trial's own lock and for the settings it carries.
type TrialLock struct {
	Task  TaskLock
	Agent AgentConfig
	Raw   json.RawMessage
}

// TaskLock is TrialLock.task. Name is TaskId.get_name() (the task folder
// name, or "org/name" for package tasks); Digest is "sha256:<64 hex>", the
// task content hash (Packager.compute_content_hash).
type TaskLock struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Type    string `json:"type"`
	Digest  string `json:"digest"`
	Path    string `json:"path"`
}

// AgentConfig is the identifying part of an AgentConfig: its name
// (default "oracle") and model_name (empty when none was given).
type AgentConfig struct {
	Name      string `json:"name"`
	ModelName string `json:"model_name"`
}

// TaskConfig is a TrialConfig/JobConfig task entry (a local path, a git
// task or a registry name).
type TaskConfig struct {
	Path   string `json:"path"`
	Name   string `json:"name"`
	GitURL string `json:"git_url"`
}

// Label is the task as Harbor names it before loading it: the last path
// component of a path task, else the registry name.
func (t TaskConfig) Label() string {
	if t.Path != "" {
		p := strings.TrimRight(strings.ReplaceAll(t.Path, "\\", "/"), "/")
		return p[strings.LastIndexByte(p, '/')+1:]
	}
	return t.Name
}

// DatasetConfig is a JobConfig dataset entry. Harbor selects its tasks
// (DatasetConfig._filter_task_ids) from the dataset's own list, in the
// dataset's order: those matching a task_names pattern (fnmatch; none:
// every task), less those matching an exclude_task_names pattern, then the
// first n_tasks. tpctl cannot list a dataset without the dataset itself,
// so only literal task_names with no exclusions and no n_tasks name the
// planned tasks outright.
type DatasetConfig struct {
	Path             string   `json:"path"`
	Name             string   `json:"name"`
	TaskNames        []string `json:"task_names"`
	ExcludeTaskNames []string `json:"exclude_task_names"`
	NTasks           *int     `json:"n_tasks"`
}

// Filtered reports whether the dataset's tasks are selected by a pattern,
// an exclusion or a count rather than named outright.
func (d DatasetConfig) Filtered() bool {
	return d.NTasks != nil || len(d.ExcludeTaskNames) > 0 || slices.ContainsFunc(d.TaskNames, IsPattern)
}

// Selects reports whether Harbor's task_names and exclude_task_names
// patterns keep the task named name (n_tasks aside).
func (d DatasetConfig) Selects(name string) bool {
	if len(d.TaskNames) > 0 && !slices.ContainsFunc(d.TaskNames, func(p string) bool { return FnMatch(name, p) }) {
		return false
	}
	return !slices.ContainsFunc(d.ExcludeTaskNames, func(p string) bool { return FnMatch(name, p) })
}

// JobConfig is the part of a job's config.json tpctl reads to count the
// planned trials when there is no lock.json: n_attempts × tasks × agents
// (Job._init_trial_configs). Raw is the whole object.
type JobConfig struct {
	JobName   string
	NAttempts int
	Agents    []AgentConfig
	Datasets  []DatasetConfig
	Tasks     []TaskConfig
	Raw       json.RawMessage
}

// TrialConfig is the part of a trial's config.json tpctl reads. v0.22.0
// writes it sparse (defaults left out): an absent agent is the oracle.
type TrialConfig struct {
	TrialName string
	Task      TaskConfig
	Agent     AgentConfig
	JobID     string
	Raw       json.RawMessage
}

// JobResult is the part of a job's result.json tpctl shows beside its own
// counts. Both revisions' stat names are read (n_trials/n_errors before
// v0.22.0, n_completed_trials/n_errored_trials after).
type JobResult struct {
	ID               string
	NTotalTrials     *int
	NCompletedTrials *int
	NErroredTrials   *int
	NRetries         *int
	Evals            map[string]EvalStats
}

// EvalStats is one JobStats.evals entry ("agent__model__dataset").
// Harbor's mean counts a trial without a reward as 0.
type EvalStats struct {
	NTrials int                `json:"n_trials"`
	NErrors int                `json:"n_errors"`
	Metrics []map[string]any   `json:"metrics"`
	PassAtK map[string]float64 `json:"pass_at_k"`
}

// DeclError is a job or trial declaration file that is not the Harbor
// shape: File (as given), the byte Offset and the JSON Pointer of the
// value at fault.
type DeclError struct {
	File    string
	Offset  int64
	Pointer string
	Reason  string
}

func (e *DeclError) Error() string {
	where := e.File
	if e.Offset > 0 {
		where += fmt.Sprintf(" at byte %d", e.Offset)
	}
	if e.Pointer != "" {
		where += " (" + e.Pointer + ")"
	}
	return where + ": " + e.Reason
}

// DecodeJobLock reads a job lock.json. file names it in errors.
func DecodeJobLock(data []byte, file string) (*JobLock, error) {
	var w struct {
		SchemaVersion *int              `json:"schema_version"`
		Harbor        HarborInfo        `json:"harbor"`
		Trials        []json.RawMessage `json:"trials"`
	}
	if err := decodeDecl(data, file, MaxJobLockSize, &w); err != nil {
		return nil, err
	}
	// Type errors inside the trials, located in the whole file.
	var typed struct {
		Trials []struct {
			Task  *TaskLock    `json:"task"`
			Agent *AgentConfig `json:"agent"`
		} `json:"trials"`
	}
	if err := decodeDecl(data, file, MaxJobLockSize, &typed); err != nil {
		return nil, err
	}
	if w.Trials == nil {
		return nil, &DeclError{File: file, Reason: "no \"trials\" array: not a Harbor job lock.json"}
	}
	l := &JobLock{Harbor: w.Harbor, Trials: make([]TrialLock, 0, len(w.Trials))}
	if w.SchemaVersion != nil {
		l.SchemaVersion = *w.SchemaVersion
	}
	for i, raw := range w.Trials {
		t, err := decodeTrialLock(raw)
		if err != nil {
			var de *DeclError
			if errors.As(err, &de) {
				de.File = file
				de.Pointer = "/trials/" + strconv.Itoa(i) + de.Pointer
				de.Offset = 0
				return nil, de
			}
			return nil, err
		}
		l.Trials = append(l.Trials, *t)
	}
	return l, nil
}

// DecodeTrialLock reads a trial's own lock.json.
func DecodeTrialLock(data []byte, file string) (*TrialLock, error) {
	if err := checkSize(data, file, MaxDeclFileSize); err != nil {
		return nil, err
	}
	t, err := decodeTrialLock(data)
	var de *DeclError
	if errors.As(err, &de) {
		de.File = file
	}
	return t, err
}

func decodeTrialLock(raw []byte) (*TrialLock, error) {
	var w struct {
		Task  *TaskLock    `json:"task"`
		Agent *AgentConfig `json:"agent"`
	}
	if err := decodeDecl(raw, "", MaxJobLockSize, &w); err != nil {
		return nil, err
	}
	if w.Task == nil {
		return nil, &DeclError{Pointer: "/task", Reason: "missing: a TrialLock names its task"}
	}
	if w.Task.Name == "" {
		return nil, &DeclError{Pointer: "/task/name", Reason: "missing or empty task name"}
	}
	if !validLockDigest(w.Task.Digest) {
		return nil, &DeclError{Pointer: "/task/digest", Reason: fmt.Sprintf("%q is not \"sha256:<64 lowercase hex>\"", clipText(w.Task.Digest))}
	}
	if w.Agent == nil {
		return nil, &DeclError{Pointer: "/agent", Reason: "missing: a TrialLock names its agent"}
	}
	if w.Agent.Name == "" {
		w.Agent.Name = "oracle"
	}
	return &TrialLock{Task: *w.Task, Agent: *w.Agent, Raw: bytes.Clone(raw)}, nil
}

// DecodeJobConfig reads a job config.json (either revision).
func DecodeJobConfig(data []byte, file string) (*JobConfig, error) {
	var w struct {
		JobName   string          `json:"job_name"`
		NAttempts *int            `json:"n_attempts"`
		Agents    []AgentConfig   `json:"agents"`
		Datasets  []DatasetConfig `json:"datasets"`
		Tasks     []TaskConfig    `json:"tasks"`
		TrialName *string         `json:"trial_name"`
	}
	if err := decodeDecl(data, file, MaxDeclFileSize, &w); err != nil {
		return nil, err
	}
	if w.TrialName != nil {
		return nil, &DeclError{File: file, Pointer: "/trial_name", Reason: "this is a trial's config.json, not a job's"}
	}
	c := &JobConfig{JobName: w.JobName, NAttempts: 1, Agents: w.Agents, Datasets: w.Datasets, Tasks: w.Tasks, Raw: bytes.Clone(data)}
	if w.NAttempts != nil {
		if *w.NAttempts < 1 {
			return nil, &DeclError{File: file, Pointer: "/n_attempts", Reason: fmt.Sprintf("must be at least 1 (got %d)", *w.NAttempts)}
		}
		c.NAttempts = *w.NAttempts
	}
	if len(c.Agents) == 0 {
		c.Agents = []AgentConfig{{Name: "oracle"}} // JobConfig's default agents
	}
	for i := range c.Agents {
		if c.Agents[i].Name == "" {
			c.Agents[i].Name = "oracle"
		}
	}
	return c, nil
}

// DecodeTrialConfig reads a trial config.json (either revision).
func DecodeTrialConfig(data []byte, file string) (*TrialConfig, error) {
	var w struct {
		TrialName *string      `json:"trial_name"`
		Task      *TaskConfig  `json:"task"`
		Agent     *AgentConfig `json:"agent"`
		JobID     string       `json:"job_id"`
	}
	if err := decodeDecl(data, file, MaxDeclFileSize, &w); err != nil {
		return nil, err
	}
	if w.TrialName == nil || *w.TrialName == "" {
		return nil, &DeclError{File: file, Pointer: "/trial_name", Reason: "missing: a trial's config.json names its trial"}
	}
	if w.Task == nil {
		return nil, &DeclError{File: file, Pointer: "/task", Reason: "missing: a trial's config.json names its task"}
	}
	c := &TrialConfig{TrialName: *w.TrialName, Task: *w.Task, JobID: w.JobID, Raw: bytes.Clone(data)}
	if w.Agent != nil {
		c.Agent = *w.Agent
	}
	if c.Agent.Name == "" {
		c.Agent.Name = "oracle"
	}
	return c, nil
}

// DecodeJobResult reads a job result.json (either revision).
func DecodeJobResult(data []byte, file string) (*JobResult, error) {
	var w struct {
		ID           string  `json:"id"`
		NTotalTrials *int    `json:"n_total_trials"`
		TaskName     *string `json:"task_name"`
		Stats        *struct {
			NCompleted *int                 `json:"n_completed_trials"`
			NErrored   *int                 `json:"n_errored_trials"`
			NTrials    *int                 `json:"n_trials"`
			NErrors    *int                 `json:"n_errors"`
			NRetries   *int                 `json:"n_retries"`
			Evals      map[string]EvalStats `json:"evals"`
		} `json:"stats"`
	}
	if err := decodeDecl(data, file, MaxDeclFileSize, &w); err != nil {
		return nil, err
	}
	if w.TaskName != nil {
		return nil, &DeclError{File: file, Pointer: "/task_name", Reason: "this is a trial's result.json, not a job's"}
	}
	if w.Stats == nil && w.NTotalTrials == nil {
		return nil, &DeclError{File: file, Reason: "neither \"stats\" nor \"n_total_trials\": not a Harbor job result.json"}
	}
	r := &JobResult{ID: w.ID, NTotalTrials: w.NTotalTrials}
	if s := w.Stats; s != nil {
		r.NCompletedTrials = firstInt(s.NCompleted, s.NTrials)
		r.NErroredTrials = firstInt(s.NErrored, s.NErrors)
		r.NRetries = s.NRetries
		r.Evals = s.Evals
	}
	return r, nil
}

func firstInt(a, b *int) *int {
	if a != nil {
		return a
	}
	return b
}

func validLockDigest(s string) bool {
	h, ok := strings.CutPrefix(s, lockDigestPrefix)
	if !ok || len(h) != lockDigestHexSize {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func clipText(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func checkSize(data []byte, file string, limit int64) error {
	if int64(len(data)) > limit {
		return &DeclError{File: file, Reason: fmt.Sprintf("larger than the %d MiB cap; not a Harbor file", limit>>20)}
	}
	return nil
}

// decodeDecl unmarshals one JSON object into v, turning encoding/json's
// errors into a *DeclError with the offset and pointer of the fault.
// Unknown members are ignored, as Harbor's own models ignore them.
func decodeDecl(data []byte, file string, limit int64, v any) error {
	if err := checkSize(data, file, limit); err != nil {
		return err
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return &DeclError{File: file, Reason: "not a JSON object"}
	}
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &DeclError{File: file, Offset: se.Offset, Pointer: pointerAt(data, se.Offset), Reason: "invalid JSON: " + se.Error()}
	case errors.As(err, &te):
		return &DeclError{File: file, Offset: te.Offset, Pointer: pointerAt(data, te.Offset), Reason: fmt.Sprintf("a JSON %s where Harbor writes %s", te.Value, goTypeName(te.Type.String()))}
	default:
		return &DeclError{File: file, Reason: err.Error()}
	}
}

func goTypeName(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"), strings.HasPrefix(t, "map["), strings.HasPrefix(t, "*") && strings.Contains(t, "."):
		if strings.HasPrefix(t, "[]") {
			return "an array"
		}
		return "an object"
	case t == "string", t == "*string":
		return "a string"
	case strings.Contains(t, "int"), strings.Contains(t, "float"):
		return "a number"
	case t == "bool":
		return "a boolean"
	case strings.Contains(t, "."):
		return "an object"
	}
	return t
}

// pointerAt is the JSON pointer of the innermost value that contains
// byte offset off (best effort over possibly malformed data: the tokens
// before off are walked until one fails).
func pointerAt(data []byte, off int64) string {
	type frame struct {
		array bool
		index int
		key   string
		ready bool // an object key was read and its value is next
	}
	var stack []frame
	dec := json.NewDecoder(bytes.NewReader(data))
	ptr := func() string {
		var sb strings.Builder
		for _, f := range stack {
			if f.array {
				if f.index >= 0 {
					sb.WriteString("/" + strconv.Itoa(f.index))
				}
			} else if f.ready {
				sb.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(f.key, "~", "~0"), "/", "~1"))
			}
		}
		return sb.String()
	}
	last := ""
	// value marks that a value (scalar or container start) was read in
	// the current container.
	value := func() {
		if n := len(stack); n > 0 {
			f := &stack[n-1]
			if f.array {
				f.index++
			}
		}
	}
	for dec.InputOffset() < off {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if n := len(stack); n > 0 && !stack[n-1].array && !stack[n-1].ready {
			if k, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].ready = k, true
				last = ptr()
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			value()
			last = ptr()
			stack = append(stack, frame{array: tok == json.Delim('['), index: -1})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if n := len(stack); n > 0 && !stack[n-1].array {
				stack[n-1].ready = false
			}
			last = ptr()
		default:
			value()
			last = ptr()
			if n := len(stack); n > 0 && !stack[n-1].array {
				stack[n-1].ready = false
			}
		}
	}
	return last
}
