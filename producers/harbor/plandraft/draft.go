// Package plandraft drafts an import plan from a Harbor job folder: every
// trial the job planned (its lock.json, else its config.json), each
// finished or interrupted trial with the folder that holds it, each
// never-started one with no attempts. It reads Harbor's formats through
// the harbor package and writes the plan format of the planfile package;
// planfile itself knows nothing of Harbor.
package plandraft

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tuneplane/tpctl/internal/formats"
	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/planfile"
)

// DatasetRule names the rule that proposes the dataset digest from the
// task digests of a Harbor job lock (docs/digest-rules.md, "harbor-lock").
const DatasetRule = "tpctl-digest/1 harbor-lock"

// Options narrow and complete a draft.
type Options struct {
	// Agent and Model pick one (agent, model) pair of a job that ran
	// several; empty matches any.
	Agent, Model string
	// Split is written as the plan's split; empty leaves the placeholder.
	Split string
}

// Pair is an (agent, model) pair a job planned trials for.
type Pair struct {
	Agent string `json:"agent"`
	Model string `json:"model"`
}

func (p Pair) String() string {
	if p.Model == "" {
		return p.Agent + " (no model)"
	}
	return p.Agent + " with " + p.Model
}

// Flags are the plan init flags that pick this pair.
func (p Pair) Flags() string {
	if p.Model == "" {
		return "--agent " + shellQuote(p.Agent)
	}
	return "--agent " + shellQuote(p.Agent) + " --model " + shellQuote(p.Model)
}

// Counts say how the drafted trials stand on disk.
type Counts struct {
	Finished     int `json:"finished"`
	Interrupted  int `json:"interrupted"`
	NeverStarted int `json:"never_started"`
}

// Draft is a plan drafted from Harbor job folders, for review.
type Draft struct {
	Plan    *planfile.Plan
	Skipped []DraftSkip
	// Warnings are things a person must check by hand.
	Warnings []string
	// Notes say what was filled in from the job and how.
	Notes []string
	// Declared reports that the planned set came from the jobs' own
	// declaration (lock.json or config.json), not from trial folders.
	Declared bool
	// DatasetProposed reports that the plan's dataset_digest was proposed
	// from the job lock's task digests (DatasetRule).
	DatasetProposed bool
	// Proposed are the verifier, environment and harness digests proposed
	// from the job's files (JobRule), with the files each was read from.
	Proposed []Proposal
	// Unknown are the settings categories the job's files do not record,
	// with a setting that records each.
	Unknown []UnknownSetting
	Pair    Pair
	Counts  Counts
}

// PairsError is a job (or root) whose planned trials name several
// (agent, model) pairs: one plan names one checkpoint, so one is chosen.
type PairsError struct {
	Pairs  []Pair
	Counts []int
	// Filtered is true when --agent/--model were given but matched none
	// (NoMatch; Pairs then lists every pair) or several.
	Filtered, NoMatch bool
}

func (e *PairsError) Error() string {
	var sb strings.Builder
	if e.Filtered {
		sb.WriteString("--agent/--model match")
		if e.NoMatch {
			sb.WriteString(" no planned (agent, model) pair; the job planned:")
		} else {
			sb.WriteString(" several (agent, model) pairs; one plan names one checkpoint:")
		}
	} else {
		sb.WriteString("the job planned trials for several (agent, model) pairs; one plan names one checkpoint, so pick one:")
	}
	for i, p := range e.Pairs {
		fmt.Fprintf(&sb, "\n  %s: %d planned trials (%s)", p, e.Counts[i], p.Flags())
	}
	return sb.String()
}

// RevisionsError is a root holding jobs planned by different Harbor
// revisions; one plan names one.
type RevisionsError struct {
	Revisions []string // "v0.22.0 (jobs/a)" …
}

func (e *RevisionsError) Error() string {
	return "the jobs under --root were planned by different Harbor revisions; one plan names one, so give --root one of them:\n  " + strings.Join(e.Revisions, "\n  ")
}

// SettingsError is a setting that differs between the chosen trials, so
// no one settings object describes them.
type SettingsError struct {
	Field        string // JSON pointer into the drafted settings
	A, B         string // the two values, as JSON
	TrialA       string // where each was read
	TrialB       string
	Unrepeatable bool
}

func (e *SettingsError) Error() string {
	return fmt.Sprintf("settings differ between the chosen trials at %s: %s (%s) vs %s (%s); draft one plan per setting",
		e.Field, e.A, e.TrialA, e.B, e.TrialB)
}

// LockMismatchError is a trial folder whose own lock.json (or config.json)
// matches no trial the job lock planned.
type LockMismatchError struct {
	Dir     string // relative to --root
	File    string // the file read
	Pointer string // first member that differs from the nearest planned trial
	Reason  string
}

func (e *LockMismatchError) Error() string {
	s := fmt.Sprintf("%s: the trial does not match any trial its job planned", e.File)
	if e.Pointer != "" {
		s += " (first difference at " + e.Pointer + ")"
	}
	return s + ": " + e.Reason
}

// slot is one planned trial.
type slot struct {
	job      *job
	key      string // canonical identity among its job's planned trials
	pair     Pair
	task     string // the lock's (or config's) task name
	digest   string // TaskLock.digest without prefix, "" from a config
	settings map[string]any
	where    string // for settings errors
	folder   *trialDir
}

// FromJob drafts a plan from the Harbor job folder(s) under root.
func FromJob(root string, opts Options) (*Draft, error) {
	sc, err := scan(root)
	if err != nil {
		return nil, err
	}
	if len(sc.jobs) == 0 || !sc.anyDeclared() {
		d, err := draftLoose(root)
		if err != nil {
			return nil, err
		}
		d.Warnings = append(d.Warnings, "no Harbor job declaration (a job lock.json or config.json) was found under --root: the draft lists only the trial folders that have a result.json, so trials that were interrupted or never started are not in it; check the planned set by hand")
		if opts.Split != "" {
			d.Plan.Split = opts.Split
		}
		return d, nil
	}
	d := &Draft{Skipped: []DraftSkip{}, Declared: true}
	var slots []*slot
	for _, j := range sc.jobs {
		ss, err := j.plan(d)
		if err != nil {
			return nil, err
		}
		slots = append(slots, ss...)
	}
	for _, t := range sc.loose {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s is a trial folder outside every job folder; it is not in the draft", t.rel))
	}

	chosen, pair, err := choose(slots, opts)
	if err != nil {
		return nil, err
	}
	d.Pair = pair
	revision, err := revisionOf(sc.jobs, chosen, d)
	if err != nil {
		return nil, err
	}
	settings, err := settingsOf(chosen)
	if err != nil {
		return nil, err
	}

	p := &planfile.Plan{
		Version:    1,
		Source:     planfile.Source{Format: "harbor", Revision: revision},
		Name:       draftName(root, sc.jobs),
		Split:      cmp.Or(opts.Split, planfile.PlaceholderSplit),
		Checkpoint: planfile.Checkpoint{Ref: planfile.PlaceholderCheckpoint, ServedAs: pair.Model},
		Protocol: planfile.Protocol{
			DatasetDigest:     planfile.PlaceholderDataset,
			VerifierDigest:    planfile.PlaceholderVerifier,
			EnvironmentDigest: planfile.PlaceholderEnvironment,
			HarnessDigest:     planfile.PlaceholderHarness,
		},
		Settings: settings,
		Trials:   []planfile.Trial{},
	}
	names := taskNames(chosen, d)
	if dg, ok := datasetDigest(chosen, names); ok {
		p.Protocol.DatasetDigest = dg
		d.DatasetProposed = true
		d.Notes = append(d.Notes, fmt.Sprintf("dataset_digest %s was proposed from the job lock's task digests (%s, docs/digest-rules.md); confirm it is the dataset you mean", dg[:12]+"…", DatasetRule))
	}
	proposeDigests(root, chosen, p, d)
	p.Trials, d.Counts = numberTrials(chosen, names, root)
	repeats := 0
	perTask := map[string]int{}
	for _, t := range p.Trials {
		perTask[t.Task]++
		repeats = max(repeats, perTask[t.Task])
	}
	p.Settings["repeats"] = repeats
	completeSettings(p, d)
	d.Plan = p
	return d, nil
}

// choose keeps the slots of the one (agent, model) pair opts pick.
func choose(slots []*slot, opts Options) ([]*slot, Pair, error) {
	count := map[Pair]int{}
	for _, s := range slots {
		count[s.pair]++
	}
	all := sortedPairs(count)
	var match []Pair
	for _, p := range all {
		if (opts.Agent == "" || opts.Agent == p.Agent) && (opts.Model == "" || opts.Model == p.Model) {
			match = append(match, p)
		}
	}
	filtered := opts.Agent != "" || opts.Model != ""
	if len(match) != 1 {
		e := &PairsError{Filtered: filtered}
		list := match
		if len(match) == 0 {
			list = all
		}
		for _, p := range list {
			e.Pairs = append(e.Pairs, p)
			e.Counts = append(e.Counts, count[p])
		}
		e.NoMatch = len(match) == 0 && filtered
		return nil, Pair{}, e
	}
	var out []*slot
	for _, s := range slots {
		if s.pair == match[0] {
			out = append(out, s)
		}
	}
	return out, match[0], nil
}

func sortedPairs(m map[Pair]int) []Pair {
	ps := make([]Pair, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b Pair) int {
		return cmp.Or(strings.Compare(a.Agent, b.Agent), strings.Compare(a.Model, b.Model))
	})
	return ps
}

// revisionOf maps the Harbor that planned the chosen trials' jobs to a
// validated revision; jobs of different revisions are refused.
func revisionOf(jobs []*job, chosen []*slot, d *Draft) (string, error) {
	used := map[*job]bool{}
	for _, s := range chosen {
		used[s.job] = true
	}
	byRev := map[string][]string{}
	unknown := []string{}
	for _, j := range jobs {
		if !used[j] {
			continue
		}
		if j.lock == nil {
			unknown = append(unknown, j.label())
			continue
		}
		h := j.lock.Harbor
		label := cmp.Or(h.Version, h.GitCommitHash)
		if label == "" {
			unknown = append(unknown, j.label())
			continue
		}
		byRev[label] = append(byRev[label], j.rel)
	}
	if len(byRev) > 1 {
		e := &RevisionsError{}
		for _, r := range slices.Sorted(mapKeys(byRev)) {
			e.Revisions = append(e.Revisions, fmt.Sprintf("Harbor %s: %s", r, strings.Join(byRev[r], ", ")))
		}
		return "", e
	}
	if len(unknown) > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("no Harbor version is recorded for %s (it has no lock.json, which Harbor writes since 2026-04-29); set /source/revision by hand", strings.Join(unknown, ", ")))
	}
	for label := range byRev {
		for _, r := range formats.Harbor {
			if label == r.Commit || "v"+label == r.Name {
				d.Notes = append(d.Notes, fmt.Sprintf("source.revision is Harbor %s (%s), from the job lock", r.Name, r.Commit[:12]))
				return r.Commit, nil
			}
		}
		d.Warnings = append(d.Warnings, fmt.Sprintf("the job lock records Harbor %s, which tpctl was not validated against (tpctl formats); /source/revision is left a placeholder", label))
	}
	return planfile.PlaceholderRevision, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// settingsOf is the one settings object of the chosen trials, or a
// *SettingsError naming the first field that differs.
func settingsOf(chosen []*slot) (map[string]any, error) {
	var first *slot
	var firstJSON []byte
	for _, s := range chosen {
		b, err := canonicalJSON(s.settings)
		if err != nil {
			return nil, err
		}
		if first == nil {
			first, firstJSON = s, b
			continue
		}
		if string(b) != string(firstJSON) {
			ptr, a, bb := firstDiff("", first.settings, s.settings)
			return nil, &SettingsError{Field: "/settings" + ptr, A: a, B: bb, TrialA: first.where, TrialB: s.where}
		}
	}
	out := map[string]any{}
	if first != nil {
		for k, v := range first.settings {
			out[k] = v
		}
	}
	return out, nil
}

// firstDiff finds the first member (in key order) where a and b differ.
func firstDiff(ptr string, a, b any) (string, string, string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for _, k := range slices.Sorted(func(y func(string) bool) {
			for k := range keys {
				if !y(k) {
					return
				}
			}
		}) {
			x, _ := canonicalJSON(am[k])
			y, _ := canonicalJSON(bm[k])
			if string(x) != string(y) {
				return firstDiff(ptr+"/"+escapePointer(k), am[k], bm[k])
			}
		}
	}
	x, _ := canonicalJSON(a)
	y, _ := canonicalJSON(b)
	if a == nil {
		x = []byte("(absent)")
	}
	if b == nil {
		y = []byte("(absent)")
	}
	return ptr, string(x), string(y)
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func canonicalJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(b)
}

// taskNames gives each planned task the name the plan uses: the
// result.json task_name of a finished trial of that task when there is
// one (what the importer compares with), else the lock's task name.
func taskNames(chosen []*slot, d *Draft) map[string]string {
	names := map[string]string{}
	for _, s := range chosen {
		if s.folder == nil || s.folder.resultTask == "" {
			continue
		}
		if prev, ok := names[s.key]; ok && prev != s.folder.resultTask {
			d.Warnings = append(d.Warnings, fmt.Sprintf("trials of one planned task report two task names (%q and %q); the draft uses %q", prev, s.folder.resultTask, prev))
			continue
		}
		names[s.key] = s.folder.resultTask
	}
	for _, s := range chosen {
		if _, ok := names[s.key]; !ok {
			names[s.key] = s.task
		}
	}
	return names
}

// datasetDigest applies the harbor-lock rule: SHA-256 over one line
// "<task>\0<hex digest>\n" per distinct planned task, sorted by task.
func datasetDigest(chosen []*slot, names map[string]string) (string, bool) {
	digests := map[string]string{}
	for _, s := range chosen {
		if s.digest == "" {
			return "", false
		}
		n := names[s.key]
		if prev, ok := digests[n]; ok && prev != s.digest {
			return "", false
		}
		digests[n] = s.digest
	}
	if len(digests) == 0 {
		return "", false
	}
	return HarborLockDigest(digests), true
}

// HarborLockDigest is the harbor-lock rule of docs/digest-rules.md over
// task name → hex task digest (TaskLock.digest without "sha256:").
func HarborLockDigest(tasks map[string]string) string {
	h := sha256.New()
	for _, n := range slices.Sorted(mapKeys(tasks)) {
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write([]byte(tasks[n]))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// numberTrials lays the chosen slots out as plan trials: per task, the
// finished trials by (started_at, trial name), then the interrupted ones
// by trial name, then the never-started ones; repeats count from 0.
func numberTrials(chosen []*slot, names map[string]string, root string) ([]planfile.Trial, Counts) {
	rank := func(s *slot) int {
		switch {
		case s.folder == nil:
			return 2
		case s.folder.finished:
			return 0
		}
		return 1
	}
	sorted := slices.Clone(chosen)
	slices.SortStableFunc(sorted, func(a, b *slot) int {
		c := cmp.Or(strings.Compare(names[a.key], names[b.key]), cmp.Compare(rank(a), rank(b)))
		if c != 0 || a.folder == nil || b.folder == nil {
			return c
		}
		return cmp.Or(strings.Compare(a.folder.started, b.folder.started), strings.Compare(a.folder.name, b.folder.name), strings.Compare(a.folder.rel, b.folder.rel))
	})
	var out []planfile.Trial
	var n Counts
	repeat := map[string]int{}
	for _, s := range sorted {
		task := names[s.key]
		t := planfile.Trial{Task: task, Repeat: repeat[task], Attempts: []planfile.Attempt{}}
		repeat[task]++
		switch {
		case s.folder == nil:
			n.NeverStarted++
		default:
			// Harbor retries a trial inside the same folder (it deletes
			// the failed attempt first): one folder, retry 0.
			t.Attempts = append(t.Attempts, planfile.Attempt{Retry: 0, Dir: s.folder.rel})
			if s.folder.finished {
				n.Finished++
			} else {
				n.Interrupted++
			}
		}
		out = append(out, t)
	}
	if out == nil {
		out = []planfile.Trial{}
	}
	return out, n
}

func draftName(root string, jobs []*job) string {
	if len(jobs) == 1 && jobs[0].config != nil && jobs[0].config.JobName != "" {
		return jobs[0].config.JobName
	}
	return filepath.Base(filepath.Clean(root))
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@+=", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Placeholders lists the JSON pointers of p's values that are still
// REPLACE_… placeholders, in document order.
func Placeholders(p *planfile.Plan) []string {
	var out []string
	for _, f := range []struct{ ptr, val string }{
		{"/source/revision", p.Source.Revision},
		{"/split", p.Split},
		{"/checkpoint/ref", p.Checkpoint.Ref},
		{"/protocol/dataset_digest", p.Protocol.DatasetDigest},
		{"/protocol/verifier_digest", p.Protocol.VerifierDigest},
		{"/protocol/environment_digest", p.Protocol.EnvironmentDigest},
		{"/protocol/harness_digest", p.Protocol.HarnessDigest},
	} {
		if strings.HasPrefix(f.val, "REPLACE_") {
			out = append(out, f.ptr)
		}
	}
	return out
}
