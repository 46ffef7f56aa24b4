package evalrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/internal/formats"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/redact"
	"github.com/tuneplane/tpctl/snapshot"
)

// MaxTaskTOMLSize caps the bytes read from a task.toml; real ones are a
// few KiB.
const MaxTaskTOMLSize = 1 << 20

// maxTaskEntries bounds the walk of one task folder looking for symlinks,
// so a mistaken path (a home folder) cannot make check-plan run for ever.
const maxTaskEntries = 20000

// Eval is a checked eval plan, ready to run.
type Eval struct {
	// Plan is the decoded plan; its Execution member holds the raw section.
	Plan *planfile.Plan
	// Exec is the decoded execution section.
	Exec *Execution
	// PlanPath is the plan file as given; PlanDir the absolute folder
	// task paths are relative to.
	PlanPath string
	PlanDir  string
	// PlanSHA256 is the SHA-256 of the plan file's bytes.
	PlanSHA256 string
	// Trials are the planned trials in canonical (task, repeat) order, the
	// order they run in.
	Trials []PlannedTrial
}

// PlannedTrial is one trial with the names tpctl gives it on disk.
type PlannedTrial struct {
	planfile.Trial
	// Name is the trial folder, config and log name (see trialName).
	Name string
	// TaskDir is the absolute task folder.
	TaskDir string
	// Index is the trial's position in the plan file (/trials/<Index>).
	Index int
}

// CheckPlan reads and checks an eval plan without Harbor and without
// starting anything: the import-plan rules (planfile.Parse), then the eval
// rules (execution section, local task folders, secret-looking values,
// at most MaxTrials unique trials without attempts) and finally every
// generated TrialConfig against the embedded schema of the Harbor
// revision. The error is non-nil only when the file cannot be read; every
// problem with its content is a finding. The Eval is nil when the report
// has errors. sc is the invocation's registry of secrets (nil: the
// credential patterns only).
func CheckPlan(path string, sc *redact.Scanner) (*Eval, *planfile.Report, error) {
	if sc == nil {
		sc = redact.NewScanner(nil)
	}
	rep := &planfile.Report{Plan: path, Findings: []planfile.Finding{}}
	data, err := safefs.ReadFileCapped(path, planfile.MaxPlanSize)
	if err != nil {
		var tl *safefs.TooLargeError
		if errors.As(err, &tl) {
			rep.Findings = append(rep.Findings, errorf(planfile.CodePlanTooLarge, "",
				fmt.Sprintf("plan is larger than the %d-byte limit", planfile.MaxPlanSize),
				"check that PLAN names an eval plan; an evaluation has at most 128 trials"))
			return nil, rep, nil
		}
		return nil, nil, fmt.Errorf("failed to read eval plan %q: %w", path, err)
	}
	absDir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, nil, fmt.Errorf("failed to resolve the folder of eval plan %q: %w", path, err)
	}
	// A known secret in the name, a task or a dir would make the import
	// after the run refuse the whole round: say so before anything runs.
	p, fs := planfile.Parse(data, path, planfile.Options{AllowExecution: true, Scanner: sc})
	rep.Findings = append(rep.Findings, fs...)
	var ev *Eval
	if p != nil {
		rep.Trials = len(p.Trials)
		ev = &Eval{Plan: p, PlanPath: path, PlanDir: absDir, PlanSHA256: digest.Bytes(data).String()}
		rep.Findings = append(rep.Findings, ev.check()...)
	}
	planfile.SortFindings(rep.Findings)
	rep.Findings = dedupe(rep.Findings)
	rep.Valid = !planfile.HasErrors(rep.Findings)
	if !rep.Valid {
		return nil, rep, nil
	}
	return ev, rep, nil
}

// check applies the eval rules and fills Exec and Trials.
func (ev *Eval) check() []planfile.Finding {
	p := ev.Plan
	var out []planfile.Finding
	switch n := len(p.Trials); {
	case n == 0:
		out = append(out, errorf(codeNoTrials, "/trials", "the plan lists no trials",
			"list every (task, repeat) to run; an evaluation of nothing proves nothing"))
	case n > MaxTrials:
		out = append(out, errorf(codeTooManyTrials, "/trials",
			fmt.Sprintf("the plan lists %d trials; tpctl eval run runs at most %d, one at a time", n, MaxTrials),
			"split the plan, or run a bigger set as a Harbor job and bring it in with 'tpctl import'"))
	}
	for i, t := range p.Trials {
		if len(t.Attempts) > 0 {
			out = append(out, errorf(codeAttemptsPresent, "/trials/"+strconv.Itoa(i)+"/attempts",
				fmt.Sprintf("trial %q already lists %d attempts", t.ID(), len(t.Attempts)),
				"an eval plan lists trials that have not run yet; remove attempts (tpctl eval run fills them in), or use 'tpctl import' for finished runs"))
		}
	}
	if len(p.Execution) == 0 {
		return append(out, errorf(codeExecutionMissing, "", "the plan has no execution section",
			"add \"execution\" with harbor, tasks, agent, model and limits (see docs/eval.md); for results that already exist use 'tpctl plan check' and 'tpctl import'"))
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(p.Execution))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return append(out, errorf(planfile.CodeSchema, "/execution", "execution is not valid JSON: "+err.Error(), "fix the JSON syntax"))
	}
	schemaFs := validate("eval-plan.v1.json#/$defs/execution", doc, "/execution", planfile.CodeSchema, "see docs/eval.md for the execution section")
	e, err := decodeExecution(p.Execution)
	if err != nil {
		return append(append(out, schemaFs...), errorf(planfile.CodeSchema, "/execution", err.Error(), "see docs/eval.md"))
	}
	ev.Exec = e

	var sem []planfile.Finding
	sem = append(sem, secretFindings(doc)...)
	sem = append(sem, ev.checkRevision()...)
	sem = append(sem, ev.checkModel()...)
	sem = append(sem, ev.checkAgent()...)
	if _, clash := p.Settings["execution"]; clash {
		sem = append(sem, errorf(codeSettingsConflict, "/settings/execution",
			"settings already has an \"execution\" member",
			"remove it: tpctl eval run records the effective execution settings there itself"))
	}
	sem = append(sem, ev.checkTasks()...)
	if !planfile.HasErrors(sem) && !planfile.HasErrors(schemaFs) {
		sem = append(sem, ev.checkTrialConfigs()...)
	}
	// After the TrialConfigs: they are generated without an endpoint the
	// agent would not use, so both findings are reported at once.
	sem = append(sem, ev.checkEndpointTarget()...)
	// A specific finding on a member makes the generic schema finding on
	// the same pointer redundant (as in plan check).
	specific := map[string]bool{}
	for _, f := range sem {
		specific[f.Pointer] = true
	}
	for _, f := range schemaFs {
		if f.Code == planfile.CodeSchema && specific[f.Pointer] {
			continue
		}
		out = append(out, f)
	}
	return append(out, sem...)
}

func revisionName(commit string) string {
	for _, r := range formats.Harbor {
		if r.Commit == commit {
			return r.Name
		}
	}
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

func (ev *Eval) checkRevision() []planfile.Finding {
	rev := ev.Exec.Harbor.Revision
	if rev == "" {
		return nil // schema: required / wrong type
	}
	var out []planfile.Finding
	if _, ok := trialConfigSchemaFile(rev); !ok {
		out = append(out, errorf(planfile.CodeRevisionUnverified, "/execution/harbor/revision",
			fmt.Sprintf("Harbor revision %q is not one tpctl was validated against", clip(rev)),
			"install a validated Harbor and name its commit here; 'tpctl formats' lists them (an eval cannot run an unvalidated Harbor)"))
	}
	if src := ev.Plan.Source.Revision; src != "" && src != rev {
		out = append(out, errorf(codeRevisionMismatch, "/execution/harbor/revision",
			fmt.Sprintf("execution.harbor.revision %q differs from source.revision %q", clip(rev), clip(src)),
			"the results are written by the Harbor that runs them: give both the same commit"))
	}
	return out
}

func (ev *Eval) checkModel() []planfile.Finding {
	var out []planfile.Finding
	m := ev.Exec.Model
	if sa := ev.Plan.Checkpoint.ServedAs; sa != "" && m.Name != "" && sa != m.Name {
		out = append(out, errorf(codeModelMismatch, "/execution/model/name",
			fmt.Sprintf("model name %q differs from checkpoint.served_as %q", clip(m.Name), clip(sa)),
			"route the evaluated checkpoint under one name and use it in both places"))
	}
	if m.Endpoint != "" {
		if f, bad := checkEndpoint(m.Endpoint); bad {
			out = append(out, f)
		}
	}
	return out
}

func checkEndpoint(raw string) (planfile.Finding, bool) {
	const ptr = "/execution/model/endpoint"
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errorf(codeEndpointInvalid, ptr, fmt.Sprintf("endpoint %q is not an http(s) URL with a host", clip(raw)),
			"give the model server's base URL, e.g. http://127.0.0.1:8000/v1"), true
	}
	if u.User != nil {
		return errorf(CodeSecretValue, ptr, "endpoint carries user credentials",
			"remove user:password@ from the URL; pass credentials through the environment (agent.env)"), true
	}
	for k := range u.Query() {
		if planfile.IsSecretName(k) {
			return errorf(CodeSecretValue, ptr, fmt.Sprintf("endpoint query parameter %q looks like a credential", k),
				"remove it from the URL; pass credentials through the environment (agent.env)"), true
		}
	}
	return planfile.Finding{}, false
}

func (ev *Eval) checkAgent() []planfile.Finding {
	a := ev.Exec.Agent
	var out []planfile.Finding
	if (a.Name == "") == (a.ImportPath == "") {
		out = append(out, errorf(planfile.CodeSchema, "/execution/agent",
			"give exactly one of agent.name and agent.import_path",
			"name a built-in Harbor agent (e.g. terminus-2) or a custom one as module:Class"))
	}
	if rule, ok := endpointRuleFor(ev.Exec.Harbor.Revision, a.Name); ok && a.ImportPath == "" {
		for _, k := range rule.SandboxKeys {
			if !slices.Contains(a.Env, k) {
				out = append(out, errorf(CodeAgentKeyMissing, "/execution/agent/env",
					fmt.Sprintf("%s reads %s inside the sandbox, and Harbor passes it there only through agent.env; without it the agent has no key", a.Name, k),
					fmt.Sprintf("add %q to agent.env and export it when running 'tpctl eval run' (tpctl passes it as the template ${%s}, never the value)", k, k)))
			}
		}
	}
	for i, n := range a.Env {
		if strings.Contains(n, "=") {
			out = append(out, errorf(CodeSecretValue, "/execution/agent/env/"+strconv.Itoa(i),
				"agent.env holds a NAME=value pair; only names are allowed",
				"keep the name only and export the value in the environment of 'tpctl eval run'"))
		}
	}
	return out
}

// checkEndpointTarget makes sure the declared endpoint reaches the agent
// the way the agent reads it (endpointRules): an endpoint the agent drops
// would evaluate another model than the declared checkpoint.
func (ev *Eval) checkEndpointTarget() []planfile.Finding {
	e := ev.Exec
	if e.Model.Endpoint == "" || (e.Agent.Name == "") == (e.Agent.ImportPath == "") {
		return nil
	}
	if _, known := endpointRules[e.Harbor.Revision]; !known {
		return nil // revision_unverified says it
	}
	const ptr = "/execution/model/endpoint"
	t, unverified, err := e.endpointTarget()
	if err != nil {
		hint := endpointHint(e.Harbor.Revision, e.Agent.Name)
		return []planfile.Finding{errorf(codeEndpointUnused, ptr, err.Error()+": the evaluation would not score the declared checkpoint", hint)}
	}
	var out []planfile.Finding
	if unverified {
		out = append(out, warnf(codeEndpointUnverified, ptr,
			fmt.Sprintf("custom agent %q gets the endpoint as the %s keyword argument; tpctl cannot check that it reads it", clip(e.Agent.ImportPath), t.Kwarg),
			"make sure the agent passes kwargs."+t.Kwarg+" to its model client"))
	}
	if _, clash := e.Agent.Kwargs[t.Kwarg]; clash && t.Kwarg != "" {
		out = append(out, errorf(planfile.CodeSchema, "/execution/agent/kwargs/"+escape(t.Kwarg),
			"agent.kwargs."+t.Kwarg+" and model.endpoint both set the endpoint",
			"keep only model.endpoint"))
	}
	if slices.Contains(e.Agent.Env, t.Env) && t.Env != "" {
		out = append(out, errorf(planfile.CodeSchema, "/execution/agent/env",
			"agent.env names "+t.Env+", which tpctl sets from model.endpoint for "+e.Agent.Name,
			"remove "+t.Env+" from agent.env; tpctl passes model.endpoint as "+t.Env))
	}
	return out
}

// checkTasks resolves every task folder, checks it has a readable
// task.toml and no symlinks, and names every trial.
func (ev *Eval) checkTasks() []planfile.Finding {
	var out []planfile.Finding
	tasks := ev.Exec.Tasks
	used := map[string]bool{}
	dirs := map[string]string{}
	names := slices.Sorted(maps.Keys(tasks))
	for _, task := range names {
		ptr := "/execution/tasks/" + escape(task)
		dir, fs := checkTaskDir(ev.PlanDir, tasks[task], task, ptr)
		out = append(out, fs...)
		if dir != "" {
			dirs[task] = dir
		}
	}
	byName := map[string]string{}
	for i, t := range ev.Plan.Trials {
		ptr := "/trials/" + strconv.Itoa(i)
		if t.Task == "" {
			continue // schema finding
		}
		used[t.Task] = true
		if _, ok := tasks[t.Task]; !ok {
			out = append(out, errorf(codeTaskPathMissing, ptr+"/task",
				fmt.Sprintf("task %q has no folder in execution.tasks", clip(t.Task)),
				fmt.Sprintf("add \"%s\": \"<folder with task.toml>\" to execution.tasks", t.Task)))
		}
		name := trialName(t.Task, t.Repeat)
		if other, dup := byName[name]; dup && other != t.ID() {
			out = append(out, errorf(codeTrialNameCollision, ptr,
				fmt.Sprintf("trials %q and %q both get the folder name %q", other, t.ID(), name),
				"rename one task: names are kept to letters, digits, '.', '_' and '-' and cut to 64 bytes"))
		}
		byName[name] = t.ID()
		ev.Trials = append(ev.Trials, PlannedTrial{Trial: t, Name: name, TaskDir: dirs[t.Task], Index: i})
	}
	for _, task := range names {
		if !used[task] {
			out = append(out, warnf(codeTaskUnused, "/execution/tasks/"+escape(task),
				fmt.Sprintf("task %q is not used by any trial", clip(task)), "remove it or add its trials"))
		}
	}
	slices.SortStableFunc(ev.Trials, func(a, b PlannedTrial) int {
		return snapshot.CompareTrials(a.Task, a.Repeat, b.Task, b.Repeat)
	})
	return out
}

// checkTaskDir checks one task folder; it returns the absolute folder when
// it is usable.
func checkTaskDir(planDir, rel, task, ptr string) (string, []planfile.Finding) {
	if rel == "" {
		return "", nil // schema: wrong type or empty
	}
	dir, err := safefs.Resolve(planDir, rel)
	if err != nil {
		code := planfile.CodePathUnclean
		var pe *safefs.PathError
		if errors.As(err, &pe) {
			code = pe.Code
		}
		hint := map[string]string{
			planfile.CodePathAbsolute:  "give the task folder relative to the plan file's folder",
			planfile.CodePathTraversal: "remove '..'; move the tasks under the plan's folder",
			planfile.CodeSymlink:       "point at the real folder: tpctl never follows symlinks, so a plan cannot pull in files from elsewhere",
			planfile.CodeDirMissing:    "check the path; it is relative to the folder of the plan file",
			planfile.CodeNotDir:        "check the path; every component must be a folder",
		}[code]
		if hint == "" {
			hint = "write it with single forward slashes and no '.', empty or trailing segments"
		}
		// safefs words these for --root; a task folder is relative to the
		// plan's folder, which the hint says.
		msg := err.Error()
		switch code {
		case planfile.CodePathAbsolute:
			msg = fmt.Sprintf("path %q is absolute", clip(rel))
		case planfile.CodePathTraversal:
			msg = fmt.Sprintf("path %q contains '..'", clip(rel))
		}
		return "", []planfile.Finding{errorf(code, ptr, fmt.Sprintf("task %q: %s", clip(task), msg), hint)}
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return "", []planfile.Finding{errorf(planfile.CodeNotDir, ptr, fmt.Sprintf("task %q: %q is not a folder", clip(task), rel),
			"name the task folder, the one holding task.toml")}
	}
	var out []planfile.Finding
	tomlPath := filepath.Join(dir, "task.toml")
	data, err := safefs.ReadFileCapped(tomlPath, MaxTaskTOMLSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		out = append(out, errorf(codeTaskTOMLMissing, ptr, fmt.Sprintf("task %q: %s/task.toml does not exist", clip(task), rel),
			"point at a Harbor task folder (task.toml, instruction.md, environment/, tests/)"))
	case err != nil:
		out = append(out, errorf(codeTaskTOMLInvalid, ptr, fmt.Sprintf("task %q: cannot read %s/task.toml: %v", clip(task), rel, err),
			"make task.toml a readable regular file (not a symlink) under 1 MiB"))
	default:
		var doc struct {
			Task struct {
				Name string `toml:"name"`
			} `toml:"task"`
		}
		if err := toml.Unmarshal(data, &doc); err != nil {
			out = append(out, errorf(codeTaskTOMLInvalid, ptr, fmt.Sprintf("task %q: %s/task.toml is not valid TOML: %v", clip(task), rel, oneLine(err.Error())),
				"fix task.toml; Harbor would refuse it before the trial starts"))
		} else {
			// Harbor reports [task].name as result.json task_name, else the
			// folder name; the plan's task is matched against it on import.
			want := doc.Task.Name
			if want == "" {
				want = filepath.Base(dir)
			}
			if want != task {
				out = append(out, warnf(codeTaskNameMismatch, ptr,
					fmt.Sprintf("Harbor will report this task as %q, not %q", clip(want), clip(task)),
					"use Harbor's task name ([task].name in task.toml, else the folder name) as the plan's task name"))
			}
		}
	}
	if link, err := findSymlink(dir); err != nil {
		out = append(out, errorf(planfile.CodeDirUnreadable, ptr, fmt.Sprintf("task %q: cannot walk %s: %v", clip(task), rel, err),
			"check the permissions of the task folder"))
	} else if link != "" {
		out = append(out, errorf(planfile.CodeSymlink, ptr, fmt.Sprintf("task %q: %s/%s is a symlink", clip(task), rel, link),
			"replace the symlink with the real file: Harbor would copy whatever it points to into the sandbox"))
	}
	if planfile.HasErrors(out) {
		return "", out
	}
	return dir, out
}

// errTooManyEntries stops the walk of a suspiciously large task folder.
var errTooManyEntries = errors.New("more than 20000 entries; is this really a task folder?")

// findSymlink returns the first symlink (slash path relative to dir) in
// the tree, in lexical order, or "".
func findSymlink(dir string) (string, error) {
	found, n := "", 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > maxTaskEntries {
			return errTooManyEntries
		}
		if d.Type()&fs.ModeSymlink != 0 {
			rel, _ := filepath.Rel(dir, p)
			found = filepath.ToSlash(rel)
			return filepath.SkipAll
		}
		return nil
	})
	return found, err
}

// checkTrialConfigs generates every trial's TrialConfig (with a stand-in
// output folder) and validates it against the revision's schema.
func (ev *Eval) checkTrialConfigs() []planfile.Finding {
	var out []planfile.Finding
	for _, t := range ev.Trials {
		if t.TaskDir == "" {
			continue
		}
		cfg := ev.Exec.TrialConfig(t.Name, t.TaskDir, filepath.Join(ev.PlanDir, "OUT", "trials"))
		data, err := cfg.Marshal()
		if err != nil {
			out = append(out, errorf(codeTrialConfigInvalid, "/trials/"+strconv.Itoa(t.Index), err.Error(), "report this bug"))
			continue
		}
		fs := validateTrialConfig(ev.Exec.Harbor.Revision, data, "")
		for _, f := range fs {
			where := f.Pointer
			if where == "" {
				where = "/"
			}
			f.Message = fmt.Sprintf("TrialConfig of trial %q at %s: %s", t.ID(), where, f.Message)
			f.Pointer = configPointer(where)
			out = append(out, f)
		}
		if len(fs) > 0 {
			// Every trial shares the execution section: one report is
			// enough and keeps a 128-trial plan's output readable.
			break
		}
	}
	return out
}

// configPointer maps a pointer into a generated TrialConfig back to the
// plan member it came from, so editors jump to the right place.
func configPointer(p string) string {
	switch {
	case strings.HasPrefix(p, "/agent/model_name"):
		return "/execution/model/name"
	case strings.HasPrefix(p, "/agent/kwargs"):
		return "/execution/agent/kwargs"
	case strings.HasPrefix(p, "/agent/name"):
		return "/execution/agent/name"
	case strings.HasPrefix(p, "/agent/import_path"):
		return "/execution/agent/import_path"
	case strings.HasPrefix(p, "/agent"):
		return "/execution/agent"
	case strings.HasPrefix(p, "/environment"):
		return "/execution/environment"
	case strings.HasPrefix(p, "/task"):
		return "/execution/tasks"
	}
	return "/execution"
}

// secretPatterns are high-confidence credential shapes. A value matching
// one is refused wherever it appears in the execution section.
var secretPatterns = []struct {
	name string
	re   *regexp.Regexp
}{
	{"OpenAI-style API key", regexp.MustCompile(`\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}`)},
	{"GitHub token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})`)},
	{"Hugging Face token", regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`)},
	{"AWS access key", regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`)}, // same prefixes as redact builtin:secrets
	{"Google API key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},
	{"Slack token", regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
	{"JWT", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.`)},
	{"bearer token", regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}`)},
	{"private key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`)},
}

// secretFindings walks the execution section: member names that look like
// credentials (planfile.IsSecretName) and string values that look like
// one are refused. Task names (keys of tasks) are names of tasks, not
// fields, and are skipped.
func secretFindings(doc any) []planfile.Finding {
	var out []planfile.Finding
	var walk func(ptr string, v any, depth int)
	walk = func(ptr string, v any, depth int) {
		if depth > planfile.MaxDepth {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				kp := ptr + "/" + escape(k)
				if ptr != "/execution/tasks" && planfile.IsSecretName(k) {
					out = append(out, errorf(planfile.CodeSecretField, kp,
						fmt.Sprintf("field %q looks like a credential; plans must not hold secrets", k),
						"remove it: name the environment variable in execution.agent.env and export it when running 'tpctl eval run'"))
					continue
				}
				walk(kp, x[k], depth+1)
			}
		case []any:
			for i, e := range x {
				walk(ptr+"/"+strconv.Itoa(i), e, depth+1)
			}
		case string:
			for _, p := range secretPatterns {
				if p.re.MatchString(x) {
					out = append(out, errorf(CodeSecretValue, ptr,
						fmt.Sprintf("value looks like a %s; plans must not hold secrets", p.name),
						"remove it: name the environment variable in execution.agent.env and export it when running 'tpctl eval run'"))
					break
				}
			}
		}
	}
	walk("/execution", doc, 0)
	return out
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return clip(s)
}

// dedupe drops a finding with the same severity, code and pointer as the
// one before it (sorted input): planfile already reports secret-named
// members of the execution section, with their line and column.
func dedupe(fs []planfile.Finding) []planfile.Finding {
	out := fs[:0]
	for i, f := range fs {
		if i > 0 {
			p := out[len(out)-1]
			if p.Severity == f.Severity && p.Code == f.Code && p.Pointer == f.Pointer {
				if p.Line == 0 && f.Line > 0 {
					out[len(out)-1] = f
				}
				continue
			}
		}
		out = append(out, f)
	}
	return out
}
