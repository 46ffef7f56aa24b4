// Package report shows saved rounds to a person: a self-contained HTML
// page for one round or for the comparison of two (the offline
// equivalent of the platform's Validation and Review pages), and the
// terminal views of tpctl snapshot show --trials and --trial.
//
// Loading (LoadRound) verifies the snapshot and reads it into memory;
// everything else is pure: it takes loaded rounds and writes to an
// io.Writer, and the same round always gives the same bytes. The page,
// its limits and its safety rules are documented in docs/report.md.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/transcript"
)

// StatusMissing is the state of a planned trial with no attempt. It is not
// an observation status: such a trial has no line in observations.jsonl
// but stays in the denominator.
const StatusMissing = snapshot.StatusMissing

// Statuses lists every state a planned trial can be in, in display order.
var Statuses = []string{snapshot.StatusSuccess, snapshot.StatusFailure, snapshot.StatusInfraError, snapshot.StatusUnscored, StatusMissing}

// Size limits of a report, stated on the page and in docs/report.md.
const (
	// MaxTrials is the largest plan an HTML report is written for. The
	// page draws only the visible rows, but the browser holds every trial
	// in memory. The terminal views have no such limit.
	MaxTrials = 200_000
	// MaxEmbeddedTrajectoryBytes caps the trajectory bodies embedded in one
	// page (each body is at most 1 MiB, SPEC §3). Bodies beyond it are
	// listed as not embedded, never silently dropped.
	MaxEmbeddedTrajectoryBytes = 64 << 20
)

// Round is one verified snapshot in memory.
type Round struct {
	Manifest *snapshot.Manifest
	// Statistics is the optional "statistics" member of snapshot.json
	// (task-clustered intervals, pass@k); nil when absent.
	Statistics *Statistics
	// Trials holds every planned trial in canonical (task, repeat) order,
	// missing ones included.
	Trials []Trial
	// Trajectories are the exported bodies in file order.
	Trajectories []Trajectory
	// Signature, when set, is the line the page shows for an attestation
	// the caller verified ("signed by keyid …, verified").
	Signature string
	// Dataset is which part of the dataset the rates stand on, when the
	// plan records it (snapshot.DatasetScope); nil otherwise.
	Dataset *snapshot.DatasetScope
}

// Trial is one planned trial and, unless it is missing, its observation.
type Trial struct {
	ID     string
	Task   string
	Repeat int
	// Status is an observation status or StatusMissing.
	Status string
	// Observation is nil for a missing trial.
	Observation *snapshot.Observation
}

// Trajectory is one exported body with the file it came from.
type Trajectory struct {
	File string `json:"file"`
	transcript.Trajectory
}

// Statistics is the optional "statistics" member of snapshot.json. Every
// member is optional, so a snapshot without it, or with only some of it,
// still renders.
type Statistics struct {
	Clusters                 *int                `json:"clusters"`
	SuccessRateSEClustered   *float64            `json:"success_rate_se_clustered"`
	SuccessRateCI95Clustered *[2]float64         `json:"success_rate_ci95_clustered"`
	SuccessRateNEff          *float64            `json:"success_rate_n_eff"`
	SuccessRateCI95Null      *NullReason         `json:"success_rate_ci95_clustered_null"`
	PassAtK                  map[string]*float64 `json:"pass_at_k"`
	PassHatK                 map[string]*float64 `json:"pass_hat_k"`
	// PassKTasks is tpctl-snapshot/2's, PassKTasksByK tpctl-snapshot/3's.
	PassKTasks    *PassKTasks            `json:"pass_k_tasks"`
	PassKTasksByK map[string]*PassKTasks `json:"pass_k_tasks_by_k"`
}

// PassKTasks is which tasks pass@k counted and why others were left out.
type PassKTasks struct {
	Counted        *int            `json:"counted"`
	LeftOut        *int            `json:"left_out"`
	LeftOutReasons json.RawMessage `json:"left_out_reasons"`
}

// NullReason is why an interval is null (stats.NullReason, read
// tolerantly).
type NullReason struct {
	Code    *string `json:"code"`
	Tasks   *int    `json:"tasks"`
	Message *string `json:"message"`
}

// Text is the reason in words: its message, or its code and G.
func (n *NullReason) Text() string {
	switch {
	case n.Message != nil:
		return *n.Message
	case n.Code != nil && n.Tasks != nil:
		return fmt.Sprintf("%s (%d tasks)", *n.Code, *n.Tasks)
	case n.Code != nil:
		return *n.Code
	}
	return "no reason given"
}

// LoadRound opens (verifies) the snapshot at dir and reads its plan,
// observations and trajectories. A snapshot that fails verification gives
// a *snapshot.VerifyError; a folder that is not a snapshot, an error for
// which snapshot.IsNotSnapshot is true.
func LoadRound(dir string) (*Round, error) {
	s, err := snapshot.Open(dir)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	m := s.Manifest()
	r := &Round{Manifest: m, Statistics: DecodeStatistics(s.ManifestJSON())}
	plan := s.Plan()
	r.Dataset = plan.DatasetScope()
	ids := plan.TrialIDs()
	r.Trials = make([]Trial, len(ids))
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		index[id] = i
		r.Trials[i] = Trial{ID: id, Status: StatusMissing}
	}
	for _, t := range plan.Trials {
		i := index[snapshot.TrialID(t.Task, t.Repeat)]
		r.Trials[i].Task, r.Trials[i].Repeat = t.Task, t.Repeat
	}
	for o, err := range s.Observations() {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		i, ok := index[o.TrialID]
		if !ok { // verification rules it out; a guard, not a path
			return nil, fmt.Errorf("%s: trial %q is not in the plan", dir, o.TrialID)
		}
		r.Trials[i].Status = o.Status
		r.Trials[i].Observation = &o
	}
	for tr, err := range s.Trajectories() {
		if err != nil {
			return nil, err
		}
		var t transcript.Trajectory
		if err := json.Unmarshal(tr.Data, &t); err != nil {
			return nil, fmt.Errorf("%s: %s is not a trajectory: %w", dir, tr.Name, err)
		}
		r.Trajectories = append(r.Trajectories, Trajectory{File: tr.Name, Trajectory: t})
	}
	return r, nil
}

// DecodeStatistics reads the optional "statistics" member of snapshot.json
// bytes tolerantly: nil when it is absent, null or not in a shape this
// version understands, never an error (the manifest itself was verified).
func DecodeStatistics(manifest []byte) *Statistics {
	var wrap struct {
		Statistics json.RawMessage `json:"statistics"`
	}
	if json.Unmarshal(manifest, &wrap) != nil {
		return nil
	}
	raw := bytes.TrimSpace(wrap.Statistics)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var s Statistics
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return &s
}

// Trial returns the trial with the given ID, or nil.
func (r *Round) Trial(id string) *Trial {
	for i := range r.Trials {
		if r.Trials[i].ID == id {
			return &r.Trials[i]
		}
	}
	return nil
}

// TrajectoriesOf returns the exported bodies of one trial, by attempt.
func (r *Round) TrajectoriesOf(id string) []*Trajectory {
	var out []*Trajectory
	for i := range r.Trajectories {
		if r.Trajectories[i].TrialID == id {
			out = append(out, &r.Trajectories[i])
		}
	}
	slices.SortStableFunc(out, func(a, b *Trajectory) int { return a.TrialAttempt - b.TrialAttempt })
	return out
}

// Filter selects trials; an empty field matches every trial.
type Filter struct {
	Statuses []string // each one of Statuses; a trial in any of them passes
	Reason   string   // a reason code, exact
	Task     string   // a task name, exact
}

// Empty reports whether f selects every trial.
func (f Filter) Empty() bool { return len(f.Statuses) == 0 && f.Reason == "" && f.Task == "" }

// UnknownValueError is a filter or trial ID that names nothing: a status
// or reason code tpctl does not have, or a task or trial the round does
// not have. Suggestions are the closest existing values.
type UnknownValueError struct {
	What        string // "status", "reason", "task", "trial"
	Value       string
	Where       string // e.g. "the outcome table", "round native:…"
	Suggestions []string
}

func (e *UnknownValueError) Error() string {
	return fmt.Sprintf("%s %q is not in %s", e.What, e.Value, e.Where)
}

// Unwrap is ErrNoTrial for an unknown trial.
func (e *UnknownValueError) Unwrap() error {
	if e.What == "trial" {
		return ErrNoTrial
	}
	return nil
}

// Check reports a filter value that can match nothing by construction: a
// status that is not one of Statuses, a reason that is not in the outcome
// table (reasons), a task the round does not have (when r is not nil).
func (f Filter) Check(r *Round, reasons []string) error {
	for _, s := range f.Statuses {
		if !slices.Contains(Statuses, s) {
			return &UnknownValueError{"status", s, "the trial states (" + strings.Join(Statuses, ", ") + ")", Closest(s, Statuses)}
		}
	}
	if f.Reason != "" && !slices.Contains(reasons, f.Reason) {
		return &UnknownValueError{"reason", f.Reason, "the outcome table (tpctl explain outcomes)", Closest(f.Reason, reasons)}
	}
	if f.Task != "" && r != nil {
		tasks := r.Tasks()
		if !slices.Contains(tasks, f.Task) {
			return &UnknownValueError{"task", f.Task, "round " + r.Manifest.RoundID, Closest(f.Task, tasks)}
		}
	}
	return nil
}

// Tasks returns the round's task names in canonical order, each once.
func (r *Round) Tasks() []string {
	var out []string
	for i := range r.Trials {
		if n := len(out); n == 0 || out[n-1] != r.Trials[i].Task {
			out = append(out, r.Trials[i].Task)
		}
	}
	return out
}

// Match reports whether t passes the filter.
func (f Filter) Match(t *Trial) bool {
	if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, t.Status) {
		return false
	}
	if f.Task != "" && t.Task != f.Task {
		return false
	}
	if f.Reason != "" && (t.Observation == nil || t.Observation.Reason != f.Reason) {
		return false
	}
	return true
}

// Closest returns up to three candidates a mistyped word probably meant,
// best first: one it is the last path segment of or a piece of
// ("hello-world" for "harbor/hello-world"), then those within a small edit
// distance, case-insensitively.
func Closest(word string, candidates []string) []string {
	type hit struct {
		name string
		d    int
	}
	var hits []hit
	lw := strings.ToLower(word)
	limit := max(2, len([]rune(word))/3)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		switch {
		case lw == "":
		case strings.HasSuffix(lc, "/"+lw) || strings.HasPrefix(lc, lw+"#"):
			hits = append(hits, hit{c, -2})
		case len(lw) >= 3 && strings.Contains(lc, lw):
			hits = append(hits, hit{c, -1})
		default:
			if d := editDistance(lw, lc, limit); d <= limit {
				hits = append(hits, hit{c, d})
			}
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.d - b.d })
	var out []string
	for _, h := range hits {
		if len(out) == 3 {
			break
		}
		out = append(out, h.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b by runes, or
// limit+1 once it must exceed limit (a plan has many tasks to try).
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
