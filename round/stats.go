package round

import (
	"fmt"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/stats"
)

// Summary is a round's numbers over a subset of its tasks, computed as the
// manifest's are (for every task, they are the manifest's).
type Summary struct {
	Counts snapshot.Counts `json:"counts"`
	Tasks  int             `json:"tasks"`
	Label  string          `json:"label"`
	// SuccessRate is success / scored with its Wilson interval.
	SuccessRate     *float64    `json:"success_rate"`
	SuccessRateCI95 *[2]float64 `json:"success_rate_ci95"`
	// SuccessRateCI95Clustered is the task-clustered interval; nil when
	// the statistics have none.
	SuccessRateCI95Clustered *[2]float64 `json:"success_rate_ci95_clustered"`
	// SuccessRateCI95ClusteredNull says why SuccessRateCI95Clustered is
	// nil (too few tasks, naming how many and the minimum).
	SuccessRateCI95ClusteredNull *stats.NullReason `json:"success_rate_ci95_clustered_null,omitempty"`
	SuccessRateSEClustered       *float64          `json:"success_rate_se_clustered"`
	Coverage                     *float64          `json:"coverage"`
	CoverageCI95                 *[2]float64       `json:"coverage_ci95"`
	// InfraErrorRate is infra_error / expected; nil when nothing is planned.
	InfraErrorRate *float64 `json:"infra_error_rate"`
	// SuccessRateBounds are the worst and best case of the success rate
	// over every planned trial (Manski bounds); nil when nothing is
	// planned.
	SuccessRateBounds *snapshot.RateBounds `json:"success_rate_bounds"`
	// WorstCaseCI95Clustered is the task-clustered interval of the worst
	// case (every planned trial not scored counted as failed), what a
	// gate judges a degraded round's min_success_rate on; equal to
	// SuccessRateCI95Clustered on a clean round, nil below five tasks
	// (WorstCaseCI95ClusteredNull says why).
	WorstCaseCI95Clustered     *[2]float64       `json:"worst_case_ci95_clustered"`
	WorstCaseCI95ClusteredNull *stats.NullReason `json:"worst_case_ci95_clustered_null,omitempty"`
}

// Summarize computes the Summary over the tasks for which skip is false
// (every task when skip is nil).
func (r *Round) Summarize(skip func(task string) bool) Summary {
	var s Summary
	var tasks []snapshot.TaskCounts
	for i, t := range r.Trials {
		if skip != nil && skip(t.Task) {
			continue
		}
		if i == 0 || t.Task != r.Trials[i-1].Task || len(tasks) == 0 {
			tasks = append(tasks, snapshot.TaskCounts{Task: t.Task})
		}
		tc := &tasks[len(tasks)-1]
		tc.Planned++
		s.Counts.Expected++
		if t.Status != StatusMissing {
			tc.Seen++
		}
		switch t.Status {
		case snapshot.StatusSuccess:
			tc.Success++
			s.Counts.Success++
		case snapshot.StatusFailure:
			tc.Failure++
			s.Counts.Failure++
		case snapshot.StatusInfraError:
			tc.InfraError++
			s.Counts.InfraError++
		case snapshot.StatusUnscored:
			s.Counts.Unscored++
		default:
			s.Counts.Missing++
		}
	}
	s.Tasks = len(tasks)
	c := s.Counts
	s.SuccessRate, s.SuccessRateCI95 = snapshot.Rate(c.Success, c.Scored())
	s.Coverage, s.CoverageCI95 = snapshot.Rate(c.Scored(), c.Expected)
	if c.Expected > 0 {
		v := float64(c.InfraError) / float64(c.Expected)
		s.InfraErrorRate = &v
	}
	s.Label = snapshot.LabelDegraded
	if c.Expected > 0 && c.Scored() == c.Expected {
		s.Label = snapshot.LabelClean
	}
	st := snapshot.StatisticsOfTasks(tasks)
	s.SuccessRateCI95Clustered, s.SuccessRateSEClustered = st.SuccessRateCI95Clustered, st.SuccessRateSEClustered
	s.SuccessRateCI95ClusteredNull = st.SuccessRateCI95ClusteredNull
	s.SuccessRateBounds = snapshot.BoundsOf(c)
	if s.Label == snapshot.LabelClean {
		s.WorstCaseCI95Clustered, s.WorstCaseCI95ClusteredNull = st.SuccessRateCI95Clustered, st.SuccessRateCI95ClusteredNull
	} else if c.Expected > 0 {
		wst := snapshot.StatisticsOfTasks(snapshot.WorstCaseTasks(tasks))
		s.WorstCaseCI95Clustered, s.WorstCaseCI95ClusteredNull = wst.SuccessRateCI95Clustered, wst.SuccessRateCI95ClusteredNull
	}
	return s
}

// Difference is one protocol field two rounds do not share.
type Difference struct {
	Field     string `json:"field"`
	Base      string `json:"base"`
	Candidate string `json:"candidate"`
}

func (d Difference) String() string {
	return fmt.Sprintf("%s differs: %s vs %s", d.Field, d.Base, d.Candidate)
}

// ProtocolDifferences lists the protocol fields (digest rules, outcome
// rules, the dataset, cohort, verifier and settings digests) in which two
// manifests differ, in that order.
func ProtocolDifferences(a, b *snapshot.Manifest) []Difference {
	var out []Difference
	add := func(field, x, y string) {
		if x != y {
			out = append(out, Difference{field, x, y})
		}
	}
	add("digest_rules", a.Protocol.DigestRules, b.Protocol.DigestRules)
	add("outcome_rules", a.OutcomeRules, b.OutcomeRules)
	add("dataset_digest", a.Protocol.DatasetDigest, b.Protocol.DatasetDigest)
	add("cohort_digest", a.Protocol.CohortDigest, b.Protocol.CohortDigest)
	add("verifier_digest", a.Protocol.VerifierDigest, b.Protocol.VerifierDigest)
	add("settings_digest", a.Protocol.SettingsDigest, b.Protocol.SettingsDigest)
	return out
}

// TaskChange is one task's successes among its trials scored in both
// rounds.
type TaskChange struct {
	Task string `json:"task"`
	// Matched counts the task's trials scored in both rounds.
	Matched     int `json:"matched"`
	BaseSuccess int `json:"base_success"`
	CandSuccess int `json:"candidate_success"`
}

// Pairing is the paired comparison of two rounds of one protocol.
type Pairing struct {
	// Differences are the protocol fields that differ; when there are any,
	// nothing else is filled.
	Differences []Difference `json:"differences"`
	// ChecksumDiffers lists trials scored in both rounds whose Harbor task
	// checksum differs or is recorded on one side only: then the rounds
	// ran different task content and Paired is nil.
	ChecksumDiffers []string `json:"checksum_differs"`
	// Paired is compare's paired difference over the trials scored in both
	// rounds; nil when not comparable or nothing is matched.
	Paired *compare.Paired `json:"paired"`
	// Regressed are the tasks with fewer successes in the candidate among
	// matched trials, in canonical order.
	Regressed []TaskChange `json:"regressed"`
}

// Comparable reports whether a paired difference could be computed.
func (p *Pairing) Comparable() bool { return len(p.Differences) == 0 && len(p.ChecksumDiffers) == 0 }

// Pair matches base and cand trial by trial (they share one plan when
// their protocols are equal) over the tasks skip leaves in.
func Pair(base, cand *Round, skip func(task string) bool) *Pairing {
	p := &Pairing{Differences: ProtocolDifferences(base.Manifest, cand.Manifest), ChecksumDiffers: []string{}, Regressed: []TaskChange{}}
	if len(p.Differences) > 0 {
		return p
	}
	if len(base.Trials) != len(cand.Trials) {
		// Equal cohort digests are equal trial lists; this only guards
		// against a snapshot edited in between.
		p.Differences = append(p.Differences, Difference{"trials", fmt.Sprint(len(base.Trials)), fmt.Sprint(len(cand.Trials))})
		return p
	}
	var pairs []stats.Cluster
	var changes []TaskChange
	for i, b := range base.Trials {
		c := cand.Trials[i]
		if b.Task != c.Task || b.Repeat != c.Repeat {
			p.Differences = append(p.Differences, Difference{"trials", b.ID(), c.ID()})
			return p
		}
		if skip != nil && skip(b.Task) {
			continue
		}
		if !scored(b.Status) || !scored(c.Status) {
			continue
		}
		if (b.TaskChecksum != nil || c.TaskChecksum != nil) && (b.TaskChecksum == nil || c.TaskChecksum == nil || *b.TaskChecksum != *c.TaskChecksum) {
			p.ChecksumDiffers = append(p.ChecksumDiffers, b.ID())
		}
		if len(changes) == 0 || changes[len(changes)-1].Task != b.Task {
			changes = append(changes, TaskChange{Task: b.Task})
			pairs = append(pairs, stats.Cluster{})
		}
		tc, pc := &changes[len(changes)-1], &pairs[len(pairs)-1]
		bs, cs := b.Status == snapshot.StatusSuccess, c.Status == snapshot.StatusSuccess
		tc.Matched++
		pc.Trials++
		if bs {
			tc.BaseSuccess++
			pc.Sum--
		}
		if cs {
			tc.CandSuccess++
			pc.Sum++
		}
	}
	if len(p.ChecksumDiffers) > 0 {
		return p
	}
	p.Paired = compare.PairedOf(pairs)
	for _, tc := range changes {
		if tc.CandSuccess < tc.BaseSuccess {
			p.Regressed = append(p.Regressed, tc)
		}
	}
	return p
}

func scored(status string) bool {
	return status == snapshot.StatusSuccess || status == snapshot.StatusFailure
}
