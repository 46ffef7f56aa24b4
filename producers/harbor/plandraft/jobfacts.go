package plandraft

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/producers/harbor"
)

// JobFacts is what Harbor's own job files say about the trials a plan's
// folders belong to: how many the job planned for the plan's (agent,
// model) pairs, and Harbor's own counts from the job result.json.
type JobFacts struct {
	// Jobs are the job folders, relative to the root (the root itself as
	// given).
	Jobs []string `json:"jobs"`
	// Pairs are the (agent, model) pairs of the plan's trial folders.
	Pairs []Pair `json:"pairs"`
	// Planned is the number of trials the jobs planned for Pairs; -1
	// when a job's declaration does not list its trials.
	Planned int `json:"planned"`
	// Source names the declaration Planned was read from.
	Source string `json:"source"`
	// Harbor is the job result.json's numbers (one job only; nil
	// otherwise or when it has none).
	Harbor *HarborNumbers `json:"harbor,omitempty"`

	// tasks counts the planned trials of Pairs by the job's own task name
	// (TaskLock.name, or the config's task label); nil when Planned < 0.
	tasks map[string]int
}

// HarborNumbers are a job result.json's counts and the evals entries of
// the plan's pairs, shown beside tpctl's own.
type HarborNumbers struct {
	NTotalTrials *int `json:"n_total_trials"`
	NCompleted   *int `json:"n_completed_trials"`
	NErrored     *int `json:"n_errored_trials"`
	NRetries     *int `json:"n_retries"`
	// Evals are JobStats.evals entries ("agent__model__dataset") of the
	// plan's pairs.
	Evals map[string]harbor.EvalStats `json:"evals"`
}

// maxFactsFile caps the job files the import's check reads: a job lock of
// about 40,000 planned trials. A bigger one is reported (job_unreadable)
// rather than held in memory next to the import; plan init reads up to
// harbor.MaxJobLockSize.
const maxFactsFile = 64 << 20

// ReadJobFacts finds the Harbor job folders holding dirs (attempt folders
// relative to root; a sample is enough) and reads their declarations.
// It returns nil, nil when none of dirs lies in a job folder with a
// lock.json or config.json.
func ReadJobFacts(root string, dirs []string) (*JobFacts, error) {
	jobs := map[string]*job{}
	pairs := map[Pair]bool{}
	for _, d := range dirs {
		if safefs.CheckRel(d) != nil {
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(d))
		if p, ok := folderPair(abs); ok {
			pairs[p] = true
		}
		if _, err := jobAbove(root, d, jobs); err != nil {
			return nil, err
		}
	}
	if len(jobs) == 0 || len(pairs) == 0 {
		return nil, nil
	}
	f := &JobFacts{Pairs: sortedPairs(countOf(pairs)), tasks: map[string]int{}}
	for _, rel := range slices.Sorted(mapKeys(jobs)) {
		j := jobs[rel]
		if rel == "." {
			rel = root
		}
		f.Jobs = append(f.Jobs, rel)
		n, src, tasks := j.plannedFor(pairs)
		if n < 0 || f.Planned < 0 {
			f.Planned, f.tasks = -1, nil
		} else {
			f.Planned += n
			for t, c := range tasks {
				f.tasks[t] += c
			}
		}
		if f.Source == "" || f.Source == src {
			f.Source = src
		} else {
			f.Source = "lock.json and config.json"
		}
	}
	if len(jobs) == 1 {
		var only *job
		for _, j := range jobs {
			only = j
		}
		if r := only.result; r != nil {
			h := &HarborNumbers{NTotalTrials: r.NTotalTrials, NCompleted: r.NCompletedTrials, NErrored: r.NErroredTrials, NRetries: r.NRetries, Evals: map[string]harbor.EvalStats{}}
			for key, ev := range r.Evals {
				for p := range pairs {
					if strings.HasPrefix(key, evalsPrefix(p)) {
						h.Evals[key] = ev
					}
				}
			}
			f.Harbor = h
		}
	}
	return f, nil
}

func countOf(m map[Pair]bool) map[Pair]int {
	out := map[Pair]int{}
	for p := range m {
		out[p] = 1
	}
	return out
}

// evalsPrefix is the start of Harbor's JobStats.evals key for a pair:
// agent__model__ with the model's provider prefix dropped
// (AgentInfo.model_info.name), or agent__ without a model.
func evalsPrefix(p Pair) string {
	if p.Model == "" {
		return p.Agent + "__"
	}
	m := p.Model
	if i := strings.IndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	return p.Agent + "__" + m + "__"
}

// folderPair is the (agent, model) a trial folder's own lock.json, else
// config.json, names.
func folderPair(abs string) (Pair, bool) {
	if b, err := safefs.ReadFileCapped(filepath.Join(abs, "lock.json"), harbor.MaxDeclFileSize); err == nil {
		if l, err := harbor.DecodeTrialLock(b, ""); err == nil {
			return Pair{l.Agent.Name, l.Agent.ModelName}, true
		}
	}
	if b, err := safefs.ReadFileCapped(filepath.Join(abs, "config.json"), harbor.MaxDeclFileSize); err == nil {
		if c, err := harbor.DecodeTrialConfig(b, ""); err == nil {
			return Pair{c.Agent.Name, c.Agent.ModelName}, true
		}
	}
	return Pair{}, false
}

// jobAbove finds (and reads once) the nearest job folder above dir, within
// root.
func jobAbove(root, dir string, seen map[string]*job) (*job, error) {
	rel := filepath.ToSlash(filepath.Dir(filepath.FromSlash(dir)))
	for {
		if j, ok := seen[rel]; ok {
			return j, nil
		}
		abs := filepath.Join(root, filepath.FromSlash(rel))
		files := map[string][]byte{}
		isJob := false
		for _, name := range []string{"lock.json", "config.json", "result.json"} {
			b, err := safefs.ReadFileCapped(filepath.Join(abs, name), maxFactsFile)
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					continue
				}
				return nil, fmt.Errorf("%s: %w", filepath.Join(abs, name), err)
			}
			if k, ok := probe(b, name); ok && k == kindJob {
				files[name] = b
				if name != "result.json" {
					isJob = true
				}
			}
		}
		if isJob {
			j, err := readJob(abs, rel, files)
			if err != nil {
				return nil, err
			}
			seen[rel] = j
			return j, nil
		}
		if rel == "." || rel == "" {
			return nil, nil
		}
		rel = filepath.ToSlash(filepath.Dir(filepath.FromSlash(rel)))
	}
}

// plannedFor counts the job's planned trials of the given pairs, in all
// and by the job's own task name.
func (j *job) plannedFor(pairs map[Pair]bool) (int, string, map[string]int) {
	tasks := map[string]int{}
	if j.lock != nil {
		n := 0
		for _, t := range j.lock.Trials {
			if pairs[Pair{t.Agent.Name, t.Agent.ModelName}] {
				n++
				tasks[t.Task.Name]++
			}
		}
		return n, "lock.json", tasks
	}
	slots, sel, ok, err := j.configSlots()
	// A selection the trial folders settle is not listed by the job's
	// files alone (this reads no trial folders).
	if err != nil || !ok || sel.usesFolders {
		return -1, "config.json", nil
	}
	n := 0
	for _, s := range slots {
		if pairs[s.pair] {
			n++
			tasks[s.task]++
		}
	}
	return n, "config.json", tasks
}

// Differs compares the plan's trials with the job's planned ones as
// identities, not counts: the (task, agent, model) multiset of the job's
// declaration for the plan's pairs against the plan's, whose tasks are
// named as the job names them through a folder of each (its lock.json
// task, else its config.json task; a task without a readable folder keeps
// the plan's name). tasks yields the plan's tasks with their numbers of
// trials and up to a few attempt folders of each; it is read only when
// the job declares its trials. It returns "" when they are the same, else
// plan_differs_from_job's message; "" as well when the job's declaration
// does not list its trials (Planned < 0). The error is tasks'.
func (f *JobFacts) Differs(root string, total int, tasks func(fn func(task string, trials int, dirs []string) bool) error) (string, error) {
	if f == nil || f.Planned < 0 {
		return "", nil
	}
	plan := map[string]int{}
	err := tasks(func(task string, n int, dirs []string) bool {
		name := task
		for _, d := range dirs {
			if safefs.CheckRel(d) != nil {
				continue
			}
			if n, ok := folderTask(filepath.Join(root, filepath.FromSlash(d))); ok {
				name = n
				break
			}
		}
		plan[name] += n
		return true
	})
	if err != nil {
		return "", err
	}
	var lacks, extra []string
	for _, t := range slices.Sorted(mapKeys(f.tasks)) {
		if d := f.tasks[t] - plan[t]; d > 0 {
			lacks = append(lacks, fmt.Sprintf("%d of %q", d, t))
		}
	}
	for _, t := range slices.Sorted(mapKeys(plan)) {
		if d := plan[t] - f.tasks[t]; d > 0 {
			extra = append(extra, fmt.Sprintf("%d of %q", d, t))
		}
	}
	if len(lacks) == 0 && len(extra) == 0 {
		return "", nil
	}
	pairs := make([]string, len(f.Pairs))
	for i, p := range f.Pairs {
		pairs[i] = p.String()
	}
	var sb strings.Builder
	if total == f.Planned {
		fmt.Fprintf(&sb, "the plan lists %d trials, as many as the job (%s, its %s) planned for %s, but not the same ones",
			total, strings.Join(f.Jobs, ", "), f.Source, strings.Join(pairs, ", "))
	} else {
		fmt.Fprintf(&sb, "the plan lists %d trials but the job (%s, its %s) planned %d for %s",
			total, strings.Join(f.Jobs, ", "), f.Source, f.Planned, strings.Join(pairs, ", "))
	}
	if len(lacks) > 0 {
		sb.WriteString(": the plan lacks " + listCapped(lacks) + " planned")
	}
	if len(extra) > 0 {
		if len(lacks) > 0 {
			sb.WriteString(" and lists ")
		} else {
			sb.WriteString(": the plan lists ")
		}
		sb.WriteString(listCapped(extra) + " the job did not plan")
	}
	sb.WriteString(" (trials by task, as the job names them); plan init --root drafts every planned trial")
	return sb.String(), nil
}

// listCapped joins at most 8 items, saying how many more there are.
func listCapped(items []string) string {
	if len(items) > 8 {
		return strings.Join(items[:8], ", ") + fmt.Sprintf(" and %d more tasks", len(items)-8)
	}
	return strings.Join(items, ", ")
}

// folderTask is the task a trial folder's own lock.json, else
// config.json, names, as its job's declaration names it.
func folderTask(abs string) (string, bool) {
	if b, err := safefs.ReadFileCapped(filepath.Join(abs, "lock.json"), harbor.MaxDeclFileSize); err == nil {
		if l, err := harbor.DecodeTrialLock(b, ""); err == nil {
			return l.Task.Name, true
		}
	}
	if b, err := safefs.ReadFileCapped(filepath.Join(abs, "config.json"), harbor.MaxDeclFileSize); err == nil {
		if c, err := harbor.DecodeTrialConfig(b, ""); err == nil {
			return c.Task.Label(), true
		}
	}
	return "", false
}
