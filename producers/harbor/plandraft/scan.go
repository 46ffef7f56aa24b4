package plandraft

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/producers/harbor"
)

// job is one Harbor job folder and the trial folders below it.
type job struct {
	rel, abs string
	lock     *harbor.JobLock
	config   *harbor.JobConfig
	result   *harbor.JobResult
	trials   []*trialDir
}

// trialDir is one trial folder, identified by its own files.
type trialDir struct {
	rel, abs   string
	name       string // trial_name from its config.json
	lock       *harbor.TrialLock
	config     *harbor.TrialConfig
	finished   bool // it has a result.json
	resultTask string
	started    string
	// unparsed says why Harbor, resuming the job, would skip this folder's
	// result.json (empty, or not a TrialResult), in Harbor's words; ""
	// when it has none or it parses.
	unparsed string
}

type scanned struct {
	jobs  []*job
	loose []*trialDir
}

func (s *scanned) anyDeclared() bool {
	for _, j := range s.jobs {
		if j.lock != nil || j.config != nil {
			return true
		}
	}
	return false
}

// kind of one Harbor JSON file, told apart by the members only that
// shape has.
type kind int

const (
	kindNone kind = iota
	kindJob
	kindTrial
)

func probe(b []byte, name string) (kind, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return kindNone, false
	}
	has := func(k string) bool { _, ok := m[k]; return ok }
	switch name {
	case "lock.json":
		if has("trials") {
			return kindJob, true
		}
		if has("task") {
			return kindTrial, true
		}
	case "config.json":
		if has("trial_name") {
			return kindTrial, true
		}
		if has("agents") || has("datasets") || has("tasks") || has("job_name") || has("n_attempts") {
			return kindJob, true
		}
	case "result.json":
		if has("task_name") {
			return kindTrial, true
		}
		if has("n_total_trials") || has("stats") {
			return kindJob, true
		}
	}
	return kindNone, true
}

// scan walks root (no symlinks, no .sources caches, at most maxDraftDepth
// levels) and reads every job and trial declaration it finds. A
// declaration that cannot be read is an error naming the file: a draft
// built around it would be wrong.
func scan(root string) (*scanned, error) {
	fi, err := os.Stat(root)
	if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--root %q is not a readable folder", root)
	}
	sc := &scanned{}
	var trials []*trialDir
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if e.Name() == ".sources" || strings.Count(rel, "/") >= maxDraftDepth {
			return filepath.SkipDir
		}
		files := map[string][]byte{}
		kinds := map[kind]string{}
		for _, name := range []string{"lock.json", "config.json", "result.json"} {
			fp := filepath.Join(p, name)
			if _, err := os.Lstat(fp); err != nil {
				continue
			}
			b, err := safefs.ReadFileCapped(fp, harbor.MaxJobLockSize)
			if err != nil {
				return fmt.Errorf("%s: %w", fp, err)
			}
			k, ok := probe(b, name)
			if !ok && name == "result.json" {
				// A trial's unreadable result is the importer's to judge
				// (unscored); it still marks a trial folder.
				k, ok = kindTrial, true
			}
			if !ok {
				// Let the decoder locate the fault.
				_, derr := harbor.DecodeTrialLock(b, fp)
				if name == "lock.json" && derr == nil {
					derr = &harbor.DeclError{File: fp, Reason: "not valid JSON"}
				}
				if derr == nil {
					derr = &harbor.DeclError{File: fp, Reason: "not a JSON object"}
				}
				return derr
			}
			files[name] = b
			if k != kindNone {
				kinds[k] = name
			}
		}
		_, isJob := kinds[kindJob]
		_, isTrial := kinds[kindTrial]
		switch {
		case isJob && isTrial:
			return fmt.Errorf("%s: its %s is a job's but its %s is a trial's; a folder is one or the other", p, kinds[kindJob], kinds[kindTrial])
		case isJob:
			j, err := readJob(p, rel, files)
			if err != nil {
				return err
			}
			sc.jobs = append(sc.jobs, j)
		case isTrial:
			if rel == "." {
				return &TrialRootError{Root: root}
			}
			t, err := readTrial(p, rel, files)
			if err != nil {
				return err
			}
			trials = append(trials, t)
			return filepath.SkipDir
		}
		return nil
	})
	var tre *TrialRootError
	var de *harbor.DeclError
	if errors.As(err, &tre) || errors.As(err, &de) || errors.As(err, new(*LockMismatchError)) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read the job under %q: %w", root, err)
	}
	// Each trial belongs to the nearest job folder above it.
	for _, t := range trials {
		var owner *job
		for _, j := range sc.jobs {
			if (j.rel == "." || strings.HasPrefix(t.rel, j.rel+"/")) && (owner == nil || len(j.rel) > len(owner.rel)) {
				owner = j
			}
		}
		if owner == nil {
			sc.loose = append(sc.loose, t)
			continue
		}
		owner.trials = append(owner.trials, t)
	}
	return sc, nil
}

// decodeFile decodes files[name] (the file abs/name) into *dst; ok is
// false, and *dst untouched, when the folder has no such file.
func decodeFile[T any](files map[string][]byte, abs, name string, dst *T, decode func([]byte, string) (T, error)) (ok bool, err error) {
	b, ok := files[name]
	if !ok {
		return false, nil
	}
	v, err := decode(b, filepath.Join(abs, name))
	if err != nil {
		return true, err
	}
	*dst = v
	return true, nil
}

func readJob(abs, rel string, files map[string][]byte) (*job, error) {
	j := &job{rel: rel, abs: abs}
	if _, err := decodeFile(files, abs, "lock.json", &j.lock, harbor.DecodeJobLock); err != nil {
		return nil, err
	}
	if _, err := decodeFile(files, abs, "config.json", &j.config, harbor.DecodeJobConfig); err != nil {
		return nil, err
	}
	if b, ok := files["result.json"]; ok {
		// Only a cross-check: a job result that cannot be read is noted,
		// not fatal.
		j.result, _ = harbor.DecodeJobResult(b, filepath.Join(abs, "result.json"))
	}
	return j, nil
}

func readTrial(abs, rel string, files map[string][]byte) (*trialDir, error) {
	t := &trialDir{rel: rel, abs: abs}
	if _, err := decodeFile(files, abs, "lock.json", &t.lock, harbor.DecodeTrialLock); err != nil {
		return nil, err
	}
	if ok, err := decodeFile(files, abs, "config.json", &t.config, harbor.DecodeTrialConfig); err != nil {
		return nil, err
	} else if ok {
		t.name = t.config.TrialName
	}
	if b, ok := files["result.json"]; ok {
		t.finished = true
		r, err := harbor.DecodeTrialResultBytes(b)
		switch {
		case err == nil:
			t.resultTask = r.TaskName
			if r.StartedAt != nil {
				t.started = *r.StartedAt
			}
		case len(bytes.TrimSpace(b)) == 0:
			t.unparsed = "result.json is empty"
		default:
			t.unparsed = "result.json could not be parsed: " + err.Error()
		}
	}
	return t, nil
}

// plan lists the job's planned trials and gives each trial folder its
// slot, from the folder's own lock.json (else config.json).
func (j *job) plan(d *Draft) ([]*slot, error) {
	var slots []*slot
	var err error
	switch {
	case j.lock != nil:
		slots, err = j.lockSlots()
	case j.config != nil:
		var sel taskSelection
		var ok bool
		slots, sel, ok, err = j.configSlots()
		if err == nil && !ok {
			why := "a dataset without task_names"
			if sel.why != "" {
				why = sel.why
			}
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s: the job's config.json does not list its tasks (%s) and there is no lock.json: the draft has one trial per trial folder, so trials that never started are not in it; check the planned set by hand", j.label(), why))
			slots = j.folderSlots(d)
			return slots, nil
		}
		if err == nil && sel.note != "" {
			d.Notes = append(d.Notes, j.label()+": "+sel.note)
		}
		if err == nil && !sel.exact {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s: the job's config.json selects tasks by %s, and there is no lock.json to list what that selected: the draft plans the %d selected task(s) that have trial folders, %d attempt(s) × %d agent(s) each, so a selected task none of whose trials started is not in it; check the planned set by hand",
				j.label(), sel.why, len(sel.tasks), j.config.NAttempts, len(j.config.Agents)))
		}
		if err == nil {
			if err := j.assign(slots, d); err != nil {
				return nil, err
			}
			return j.againstTotal(slots, sel, d), nil
		}
	}
	if err != nil {
		return nil, err
	}
	if err := j.assign(slots, d); err != nil {
		return nil, err
	}
	if j.result != nil && j.result.NTotalTrials != nil && *j.result.NTotalTrials != len(slots) {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s: the job's result.json says n_total_trials %d but its %s plans %d trials; the draft follows the %s",
			j.label(), *j.result.NTotalTrials, j.declFile(), len(slots), j.declFile()))
	}
	return slots, nil
}

// againstTotal checks the slots a config.json gives (no lock.json) with
// the job result.json's n_total_trials, and never takes the larger set:
// more trials than tpctl can name are said, not invented; fewer mean the
// config names tasks Harbor did not plan (a name its dataset lacks, which
// Harbor's filter drops), so the tasks without a trial folder are left
// out when that accounts for the difference, else the draft falls back to
// the trial folders.
func (j *job) againstTotal(slots []*slot, sel taskSelection, d *Draft) []*slot {
	if j.result == nil || j.result.NTotalTrials == nil || *j.result.NTotalTrials == len(slots) {
		return slots
	}
	total := *j.result.NTotalTrials
	if total > len(slots) {
		if sel.exact {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s: the job's result.json says n_total_trials %d but its config.json plans %d trials; the draft follows the config.json",
				j.label(), total, len(slots)))
		} else {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s: the job's result.json says n_total_trials %d, more than the %d trials tpctl can name from config.json and the trial folders; the draft lists those %d and never invents the others",
				j.label(), total, len(slots), len(slots)))
		}
		return slots
	}
	started := map[string]bool{}
	for _, s := range slots {
		if s.folder != nil {
			started[s.task] = true
		}
	}
	var kept []*slot
	var dropped []string
	for _, s := range slots {
		if started[s.task] {
			kept = append(kept, s)
		} else if !slices.Contains(dropped, s.task) {
			dropped = append(dropped, s.task)
		}
	}
	if len(kept) == total {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s: the job's result.json says n_total_trials %d but its config.json plans %d trials; no trial of %s started and Harbor's own count leaves no room for them, so the draft leaves them out (never the larger set)",
			j.label(), total, len(slots), quoteList(dropped)))
		return kept
	}
	d.Warnings = append(d.Warnings, fmt.Sprintf("%s: the job's result.json says n_total_trials %d, fewer than the %d trials its config.json plans; the draft lists the trial folders only (never the larger set), so trials that never started are not in it; check the planned set by hand",
		j.label(), total, len(slots)))
	for _, s := range slots {
		s.folder = nil
	}
	return j.folderSlots(d)
}

// quoteList is the names quoted and joined with ", ".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

func (j *job) label() string {
	if j.rel == "." {
		return "the job"
	}
	return j.rel
}

func (j *job) declFile() string {
	if j.lock != nil {
		return "lock.json"
	}
	return "config.json"
}

func (j *job) lockSlots() ([]*slot, error) {
	slots := make([]*slot, 0, len(j.lock.Trials))
	for i, tl := range j.lock.Trials {
		key, m, err := lockKey(tl.Raw)
		if err != nil {
			return nil, &harbor.DeclError{File: filepath.Join(j.abs, "lock.json"), Pointer: "/trials/" + strconv.Itoa(i), Reason: err.Error()}
		}
		agent, _ := m["agent"].(map[string]any)
		slots = append(slots, &slot{
			job: j, key: key,
			pair:     Pair{tl.Agent.Name, tl.Agent.ModelName},
			task:     tl.Task.Name,
			digest:   strings.TrimPrefix(tl.Task.Digest, "sha256:"),
			settings: settingsFrom(m, agent),
			where:    filepath.ToSlash(filepath.Join(j.rel, "lock.json")) + " /trials/" + strconv.Itoa(i),
		})
	}
	return slots, nil
}

// taskSelection is the tasks a job's config.json plans.
type taskSelection struct {
	tasks []string
	// exact says tasks is the list Harbor planned; otherwise it is the
	// selected tasks that have trial folders, and why says how the config
	// selects them.
	exact bool
	why   string
	// usesFolders says the list needed the trial folders (a count or a
	// pattern the folders settle).
	usesFolders bool
	// note says how the trial folders settled an exact list.
	note string
}

// configTasks lists the tasks of config.json the way Harbor's
// Job._resolve_task_configs does: the explicit tasks, then each dataset's
// selection (DatasetConfig._filter_task_ids: task_names patterns by
// fnmatch, less exclude_task_names, then the first n_tasks in the
// dataset's order). tpctl cannot list a dataset, so a selection by
// pattern, exclusion or count is read from the job's trial folders: the
// tasks they ran that the patterns keep. ok is false when the tasks cannot
// be listed at all (a dataset selecting every task, several datasets
// selected by pattern or count).
func (j *job) configTasks() (taskSelection, bool) {
	c := j.config
	var sel taskSelection
	var explicit []string
	for _, t := range c.Tasks {
		explicit = append(explicit, t.Label())
	}
	sel.tasks = append(sel.tasks, explicit...)
	var filtered []harbor.DatasetConfig
	for _, ds := range c.Datasets {
		switch {
		case ds.Filtered():
			filtered = append(filtered, ds)
		case len(ds.TaskNames) == 0:
			return sel, false
		default:
			sel.tasks = append(sel.tasks, ds.TaskNames...)
		}
	}
	if len(filtered) > 1 {
		sel.why = "several datasets selected by pattern, exclusion or n_tasks"
		return sel, false
	}
	sel.exact = true
	if len(filtered) == 1 {
		ds := filtered[0]
		// The tasks the folders ran that no explicit task names.
		var ran []string
		for _, t := range j.trials {
			label := ""
			switch {
			case t.config != nil:
				label = t.config.Task.Label()
			case t.lock != nil:
				label = t.lock.Task.Name
			}
			if label != "" && !slices.Contains(explicit, label) && !slices.Contains(ran, label) {
				ran = append(ran, label)
			}
		}
		slices.Sort(ran)
		if len(ds.TaskNames) > 0 && !slices.ContainsFunc(ds.TaskNames, harbor.IsPattern) {
			var named []string
			for _, n := range ds.TaskNames {
				if ds.Selects(n) {
					named = append(named, n)
				}
			}
			if ds.NTasks == nil || *ds.NTasks >= len(named) {
				sel.tasks = append(sel.tasks, named...)
			} else {
				sel.usesFolders = true
				var chosen []string
				for _, n := range named {
					if slices.Contains(ran, n) {
						chosen = append(chosen, n)
					}
				}
				sel.tasks = append(sel.tasks, chosen...)
				if len(chosen) == *ds.NTasks {
					sel.note = fmt.Sprintf("n_tasks %d of the %d tasks config.json names, taken in the dataset's order; the trial folders show which: %s", *ds.NTasks, len(named), quoteList(chosen))
				} else {
					sel.exact = false
					sel.why = fmt.Sprintf("n_tasks %d of the %d tasks it names, taken in the dataset's order", *ds.NTasks, len(named))
				}
			}
		} else {
			sel.usesFolders = true
			var chosen []string
			for _, n := range ran {
				if ds.Selects(n) {
					chosen = append(chosen, n)
				}
			}
			sel.tasks = append(sel.tasks, chosen...)
			var how []string
			if len(ds.TaskNames) > 0 {
				how = append(how, "task_names patterns "+quoteList(ds.TaskNames))
			}
			if len(ds.ExcludeTaskNames) > 0 {
				how = append(how, "exclude_task_names "+quoteList(ds.ExcludeTaskNames))
			}
			if ds.NTasks != nil {
				how = append(how, "n_tasks "+strconv.Itoa(*ds.NTasks))
			}
			sel.why = strings.Join(how, " and ")
			// Harbor takes at most n_tasks: when the folders ran that many
			// selected tasks, they are the ones.
			if ds.NTasks != nil && len(chosen) == *ds.NTasks {
				sel.note = fmt.Sprintf("the dataset's tasks are selected by %s; the trial folders show which %d: %s", sel.why, *ds.NTasks, quoteList(chosen))
			} else {
				sel.exact = false
			}
		}
	}
	return sel, len(sel.tasks) > 0
}

// configSlots enumerates n_attempts × tasks × agents as Harbor does
// (Job._init_trial_configs), over the tasks configTasks lists. ok is false
// when the tasks cannot be listed.
func (j *job) configSlots() ([]*slot, taskSelection, bool, error) {
	c := j.config
	sel, ok := j.configTasks()
	if !ok {
		return nil, sel, false, nil
	}
	tasks := sel.tasks
	var raw map[string]any
	if err := json.Unmarshal(c.Raw, &raw); err != nil {
		return nil, sel, false, err
	}
	rawAgents, _ := raw["agents"].([]any)
	var slots []*slot
	for range c.NAttempts {
		for _, task := range tasks {
			for ai, a := range c.Agents {
				var agent map[string]any
				if ai < len(rawAgents) {
					agent, _ = rawAgents[ai].(map[string]any)
				}
				slots = append(slots, &slot{
					job: j, key: task + "\x00" + a.Name + "\x00" + a.ModelName,
					pair:     Pair{a.Name, a.ModelName},
					task:     task,
					settings: settingsFrom(raw, agent),
					where:    filepath.ToSlash(filepath.Join(j.rel, "config.json")) + " /agents/" + strconv.Itoa(ai),
				})
			}
		}
	}
	return slots, sel, true, nil
}

// folderSlots is one slot per trial folder, for a job whose planned set
// cannot be read.
func (j *job) folderSlots(d *Draft) []*slot {
	var slots []*slot
	for _, t := range j.sortedTrials() {
		s := &slot{job: j, folder: t}
		switch {
		case t.config != nil:
			s.task, s.pair = t.config.Task.Label(), Pair{t.config.Agent.Name, t.config.Agent.ModelName}
		case t.lock != nil:
			s.task, s.pair = t.lock.Task.Name, Pair{t.lock.Agent.Name, t.lock.Agent.ModelName}
		default:
			d.Skipped = append(d.Skipped, DraftSkip{t.rel, "no lock.json or config.json says which trial this is; add it by hand if it belongs to the plan"})
			continue
		}
		s.key = "folder\x00" + s.task + "\x00" + s.pair.Agent + "\x00" + s.pair.Model
		s.where = t.rel
		if j.config != nil {
			var raw map[string]any
			_ = json.Unmarshal(j.config.Raw, &raw)
			var agent map[string]any
			if ras, _ := raw["agents"].([]any); len(ras) > 0 {
				for i, a := range j.config.Agents {
					if a.Name == s.pair.Agent && a.ModelName == s.pair.Model && i < len(ras) {
						agent, _ = ras[i].(map[string]any)
					}
				}
			}
			s.settings = settingsFrom(raw, agent)
		}
		slots = append(slots, s)
	}
	return slots
}

func (j *job) sortedTrials() []*trialDir {
	ts := slices.Clone(j.trials)
	slices.SortFunc(ts, func(a, b *trialDir) int { return strings.Compare(a.rel, b.rel) })
	return ts
}

// assign gives each trial folder the planned slot its own lock.json (or,
// without one, its config.json's task and agent) names.
func (j *job) assign(slots []*slot, d *Draft) error {
	for _, t := range j.sortedTrials() {
		var key, file string
		switch {
		case t.lock != nil:
			k, _, err := lockKey(t.lock.Raw)
			if err != nil {
				return &harbor.DeclError{File: filepath.Join(t.abs, "lock.json"), Reason: err.Error()}
			}
			key, file = k, filepath.Join(t.abs, "lock.json")
			if j.lock == nil {
				key = t.lock.Task.Name + "\x00" + t.lock.Agent.Name + "\x00" + t.lock.Agent.ModelName
			}
		case t.config != nil:
			file = filepath.Join(t.abs, "config.json")
			key = t.config.Task.Label() + "\x00" + t.config.Agent.Name + "\x00" + t.config.Agent.ModelName
		default:
			d.Skipped = append(d.Skipped, DraftSkip{t.rel, "no lock.json or config.json says which planned trial this is; add it by hand if it belongs to the plan"})
			continue
		}
		matched, planned := false, 0
		var held []*slot
		for _, s := range slots {
			if slotMatches(s, key, t, j.lock != nil) {
				planned++
				if s.folder == nil {
					s.folder = t
					matched = true
					break
				}
				held = append(held, s)
			}
		}
		if matched {
			continue
		}
		if skipped, ok := resumed(t, held); ok {
			d.Skipped = append(d.Skipped, skipped)
			continue
		}
		if planned > 0 {
			return &LockMismatchError{Dir: t.rel, File: file, Reason: fmt.Sprintf("the job planned %d trial(s) with these inputs and other folders already hold them; a folder Harbor did not plan", planned)}
		}
		return j.mismatch(t, file, slots)
	}
	return nil
}

// resumed settles a folder that finds every slot it matches held: when
// Harbor resumes a job it skips a trial folder whose result.json is empty
// or does not parse (Job._maybe_init_existing_job: "Skipping existing
// trial directory … because result.json …"), keeps it on disk and runs
// the trial again in a new folder. Of the two, the folder Harbor counts
// takes the slot — one whose result parses, else the rerun still running
// (no result.json) — and the skipped one is left out with Harbor's
// reason. ok is false when neither folder is such a skipped one.
func resumed(t *trialDir, held []*slot) (DraftSkip, bool) {
	rank := func(f *trialDir) int {
		switch {
		case f.unparsed != "":
			return 0
		case !f.finished:
			return 1
		}
		return 2
	}
	// Which of the folders of the same inputs is the rerun of which is
	// not recorded, so the reason names them all.
	skip := func(old *trialDir) DraftSkip {
		var rels []string
		for _, s := range held {
			rels = append(rels, s.folder.rel)
		}
		return DraftSkip{old.rel, fmt.Sprintf("Harbor skipped it when it resumed the job (%s) and ran the trial again in a new folder; the draft takes the job's %d planned trial(s) with these inputs from %s",
			old.unparsed, len(held), strings.Join(rels, ", "))}
	}
	if rank(t) == 0 {
		for _, s := range held {
			if rank(s.folder) > 0 {
				return skip(t), true
			}
		}
		return DraftSkip{}, false
	}
	for _, s := range held {
		if rank(s.folder) == 0 {
			old := s.folder
			s.folder = t
			return skip(old), true
		}
	}
	return DraftSkip{}, false
}

func slotMatches(s *slot, key string, t *trialDir, byLock bool) bool {
	if byLock && t.lock != nil {
		return s.key == key
	}
	// By config: the task label and the agent.
	if t.config == nil {
		return s.key == key
	}
	label := t.config.Task.Label()
	return (s.task == label || pathBase(s, label)) && s.pair == Pair{t.config.Agent.Name, t.config.Agent.ModelName}
}

func pathBase(s *slot, label string) bool {
	if s.job.lock == nil {
		return false
	}
	for _, tl := range s.job.lock.Trials {
		if tl.Task.Name == s.task && tl.Task.Path != "" {
			return harbor.TaskConfig{Path: tl.Task.Path}.Label() == label
		}
	}
	return false
}

// mismatch explains a folder whose lock matches no planned trial by the
// first member that differs from the nearest planned one (same task and
// agent, else same task, else the first).
func (j *job) mismatch(t *trialDir, file string, slots []*slot) error {
	e := &LockMismatchError{Dir: t.rel, File: file}
	if j.lock == nil || t.lock == nil {
		e.Reason = "its task and agent are not among the job's planned trials"
		if t.config != nil {
			e.Reason = fmt.Sprintf("task %q with agent %s is not among the job's planned trials", t.config.Task.Label(), Pair{t.config.Agent.Name, t.config.Agent.ModelName})
		}
		return e
	}
	best, score := -1, -1
	for i, tl := range j.lock.Trials {
		sc := 0
		if tl.Task.Name == t.lock.Task.Name {
			sc += 2
		}
		if tl.Agent == t.lock.Agent {
			sc++
		}
		if sc > score {
			best, score = i, sc
		}
	}
	if best < 0 {
		e.Reason = "the job lock plans no trials"
		return e
	}
	var a, b any
	_ = json.Unmarshal(j.lock.Trials[best].Raw, &a)
	_ = json.Unmarshal(t.lock.Raw, &b)
	ptr, want, got := firstDiff("", a, b)
	e.Pointer = ptr
	e.Reason = fmt.Sprintf("the nearest planned trial (job lock.json /trials/%d) has %s there, the folder's lock %s; Harbor writes the same TrialLock to both, so the folder was not planned by this job or was edited", best, clipJSON(want), clipJSON(got))
	return e
}

func clipJSON(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// lockKey is the canonical form of one TrialLock, its identity among a
// job's planned trials (Harbor writes the same object to the job lock
// and to the trial's own lock.json).
func lockKey(raw json.RawMessage) (string, map[string]any, error) {
	c, err := jcs.Transform(bytes.TrimSpace(raw))
	if err != nil {
		return "", nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", nil, err
	}
	return string(c), m, nil
}

// settingsFrom drafts the plan's settings from a TrialLock (or a job
// config.json and one of its agents): the agent and model, the timeout
// multipliers, the agent's config (kwargs, timeouts), the environment and
// the verifier (less its per-task environment_mode). Environment-variable maps are left out: Harbor writes
// secrets there (templated or masked) and their names would trip
// secret_field.
func settingsFrom(m, agent map[string]any) map[string]any {
	s := map[string]any{}
	if agent != nil {
		name, _ := agent["name"].(string)
		s["agent"] = cmpOr(name, "oracle")
		if model, _ := agent["model_name"].(string); model != "" {
			s["model"] = model
		}
		if cfg := clean(without(agent, "name", "model_name", "env")); cfg != nil {
			s["agent_config"] = cfg
		}
	} else {
		s["agent"] = "oracle"
	}
	s["timeout_multiplier"] = 1.0
	for _, k := range []string{"timeout_multiplier", "agent_timeout_multiplier", "verifier_timeout_multiplier", "agent_setup_timeout_multiplier", "environment_build_timeout_multiplier"} {
		if v, ok := m[k]; ok && v != nil {
			s[k] = v
		}
	}
	if v, _ := m["install_only"].(bool); v {
		s["install_only"] = true
	}
	env := map[string]any{"type": "docker"} // EnvironmentConfig's default
	if e, ok := m["environment"].(map[string]any); ok {
		for k, v := range e {
			env[k] = v
		}
	}
	if cfg := clean(without(env, "env", "suppress_override_warnings")); cfg != nil {
		s["environment"] = cfg
	}
	ver := map[string]any{"disable": false}
	if v, ok := m["verifier"].(map[string]any); ok {
		for k, x := range v {
			ver[k] = x
		}
	}
	// environment_mode is resolved per task from its task.toml, not set by
	// the run; the importer records it per trial.
	if cfg := clean(without(ver, "env", "environment_mode")); cfg != nil {
		s["verifier"] = cfg
	}
	return s
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func without(m map[string]any, keys ...string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

// clean drops nulls and empty objects and arrays, so a sparse config and
// a full lock of the same settings draft the same.
func clean(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if c := clean(e); c != nil {
				out[k] = c
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(x) == 0 {
			return nil
		}
		out := make([]any, 0, len(x))
		for _, e := range x {
			out = append(out, clean(e))
		}
		return out
	}
	return v
}

// Detect reports whether root holds Harbor output: a job or trial
// declaration (lock.json, config.json or result.json of Harbor's shape,
// or one that cannot be read, which FromJob then reports) within the
// folders FromJob walks. It stops at the first.
func Detect(root string) bool {
	found := errors.New("found")
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if e.Name() == ".sources" || strings.Count(filepath.ToSlash(rel), "/") >= maxDraftDepth {
			return filepath.SkipDir
		}
		for _, name := range []string{"lock.json", "config.json", "result.json"} {
			fp := filepath.Join(p, name)
			if _, err := os.Lstat(fp); err != nil {
				continue
			}
			b, err := safefs.ReadFileCapped(fp, harbor.MaxJobLockSize)
			if err != nil {
				return found
			}
			if k, ok := probe(b, name); !ok || k != kindNone {
				return found
			}
		}
		return nil
	})
	return err == found
}
