package export

import "github.com/tuneplane/tpctl/snapshot"

// The four tables. Each struct is the one definition of its columns: the
// Parquet schema comes from the parquet tags, CSV and JSONL from the same
// fields in the same order (see table.go), and docs/export.md's column
// lists from the doc tags (TestDocsColumns keeps them in step). A pointer
// field is a nullable column; everything else is never null.

// RoundRow is one row per snapshot: rounds.<ext>.
type RoundRow struct {
	RoundID              string   `parquet:"round_id,dict" doc:"the round ID's hex digits (the snapshot's round_id without 'native:'); the partition folder's value"`
	ExportFormat         string   `parquet:"export_format" doc:"version of this layout: tpctl-export/1"`
	TpctlVersion         string   `parquet:"tpctl_version" doc:"version of the tpctl that wrote the export"`
	SnapshotFormat       string   `parquet:"snapshot_format" doc:"the snapshot's format (tpctl-snapshot/N)"`
	SnapshotSHA256       string   `parquet:"snapshot_sha256" doc:"SHA-256 of the snapshot's snapshot.json bytes"`
	Name                 string   `parquet:"name" doc:"the plan's name"`
	Split                string   `parquet:"split" doc:"the plan's split"`
	CheckpointRef        string   `parquet:"checkpoint_ref" doc:"checkpoint.ref"`
	CheckpointServedAs   string   `parquet:"checkpoint_served_as" doc:"checkpoint.served_as (a routing name only)"`
	SourceFormat         string   `parquet:"source_format" doc:"native format imported (harbor)"`
	HarborRevision       string   `parquet:"harbor_revision" doc:"source revision recorded in the plan"`
	SourceFormatVerified bool     `parquet:"source_format_verified" doc:"the revision is one tpctl was validated against"`
	DigestRules          string   `parquet:"digest_rules" doc:"protocol.digest_rules"`
	OutcomeRules         string   `parquet:"outcome_rules" doc:"outcome rules version that judged the trials"`
	DatasetDigest        string   `parquet:"dataset_digest" doc:"protocol.dataset_digest"`
	CohortDigest         string   `parquet:"cohort_digest" doc:"protocol.cohort_digest"`
	VerifierDigest       string   `parquet:"verifier_digest" doc:"protocol.verifier_digest"`
	SettingsDigest       string   `parquet:"settings_digest" doc:"protocol.settings_digest"`
	ProtocolKey          string   `parquet:"protocol_key" doc:"SHA-256 over digest rules, outcome rules and the four digests: rounds with equal keys share a protocol"`
	Label                string   `parquet:"label" doc:"clean (every planned trial scored) or degraded"`
	Expected             int64    `parquet:"expected" doc:"planned trials"`
	Success              int64    `parquet:"success" doc:"trials with status success"`
	Failure              int64    `parquet:"failure" doc:"trials with status failure"`
	InfraError           int64    `parquet:"infra_error" doc:"trials with status infra_error"`
	Unscored             int64    `parquet:"unscored" doc:"trials with status unscored"`
	Missing              int64    `parquet:"missing" doc:"planned trials with no attempt"`
	Scored               int64    `parquet:"scored" doc:"success + failure"`
	SuccessRate          *float64 `parquet:"success_rate,optional" doc:"success / scored; null when nothing is scored"`
	SuccessRateCI95Low   *float64 `parquet:"success_rate_ci95_low,optional" doc:"Wilson 95% interval, lower bound"`
	SuccessRateCI95High  *float64 `parquet:"success_rate_ci95_high,optional" doc:"Wilson 95% interval, upper bound"`
	Coverage             *float64 `parquet:"coverage,optional" doc:"scored / expected; null when nothing is planned"`
	CoverageCI95Low      *float64 `parquet:"coverage_ci95_low,optional" doc:"Wilson 95% interval of the coverage, lower bound"`
	CoverageCI95High     *float64 `parquet:"coverage_ci95_high,optional" doc:"Wilson 95% interval of the coverage, upper bound"`
	// Which part of the dataset the rates stand on (the plan's
	// settings.dataset, snapshot.DatasetScope); null when the plan does
	// not record it (a Harbor round).
	DatasetPlanned       *int64   `parquet:"dataset_planned_samples,optional" doc:"items the plan covers (settings.dataset.planned_samples: Inspect's samples, lm-eval's documents); null when the plan does not record it"`
	DatasetSize          *int64   `parquet:"dataset_samples,optional" doc:"size of the whole they were drawn from (settings.dataset.samples); null with dataset_planned_samples"`
	DatasetItem          *string  `parquet:"dataset_item,optional" doc:"the producer's word for one item (sample, document); null with dataset_planned_samples"`
	DatasetWhole         *string  `parquet:"dataset_whole,optional" doc:"the producer's word for the whole (dataset, split); null with dataset_planned_samples"`
	DatasetScope         *string  `parquet:"dataset_scope,optional" doc:"the scope in the words every view uses: '10 of 2,376 documents of the split', 'all 40 samples of the dataset'; null with dataset_planned_samples"`
	Clusters             *int64   `parquet:"clusters,optional" doc:"tasks with a scored trial (statistics.clusters); null for a tpctl-snapshot/1 round"`
	SESuccessClustered   *float64 `parquet:"success_rate_se_clustered,optional" doc:"task-clustered standard error; null when the snapshot has none"`
	CI95ClusteredLow     *float64 `parquet:"success_rate_ci95_clustered_low,optional" doc:"task-clustered 95% interval, lower bound; null when the snapshot has none"`
	CI95ClusteredHigh    *float64 `parquet:"success_rate_ci95_clustered_high,optional" doc:"task-clustered 95% interval, upper bound"`
	NEff                 *float64 `parquet:"success_rate_n_eff,optional" doc:"effective sample size of the clustered interval (statistics.success_rate_n_eff, tpctl-snapshot/3); null with the interval"`
	CI95ClusteredNull    *string  `parquet:"success_rate_ci95_clustered_null,optional" doc:"why the clustered interval is null (statistics.success_rate_ci95_clustered_null.code: too_few_tasks); null when there is one, or the snapshot gives no reason"`
	CI95ClusteredNullMsg *string  `parquet:"success_rate_ci95_clustered_null_message,optional" doc:"the same reason in words"`
	NullTasks            *int64   `parquet:"success_rate_ci95_clustered_null_tasks,optional" doc:"tasks the interval would rest on, with the reason"`
	NullMinTasks         *int64   `parquet:"success_rate_ci95_clustered_null_min_tasks,optional" doc:"the fewest tasks tpctl gives the interval for, with the reason"`
	PassKMax             *int64   `parquet:"pass_k_max,optional" doc:"largest k with pass@k / pass^k values; null when none"`
	PassAtKMax           *float64 `parquet:"pass_at_k_max,optional" doc:"pass@k at k = pass_k_max"`
	PassHatKMax          *float64 `parquet:"pass_hat_k_max,optional" doc:"pass^k at k = pass_k_max"`
	PassKTasksCounted    *int64   `parquet:"pass_k_tasks_counted,optional" doc:"tasks pass@k and pass^k average over"`
	PassKTasksLeftOut    *int64   `parquet:"pass_k_tasks_left_out,optional" doc:"planned tasks left out of them (the snapshot's left_out_reasons say why)"`
	SharedVerifier       int64    `parquet:"shared_verifier" doc:"trials whose verifier shared the agent's environment"`
	TrajectoriesCount    int64    `parquet:"trajectories_count" doc:"trajectories exported in the snapshot"`
	TrajectoriesTrunc    int64    `parquet:"trajectories_truncated" doc:"of those, cut to the size limits"`
	// What the round cost (snapshot.Cost): unknown is null, never 0.
	CostAttempts      int64    `parquet:"cost_attempts" doc:"every attempt of the round, retries included"`
	CostWithCost      int64    `parquet:"cost_attempts_with_cost" doc:"of those, the attempts that reported a cost"`
	CostUSDAll        *float64 `parquet:"cost_usd_all_attempts,optional" doc:"known cost of every attempt, retries included; null when no attempt reported one"`
	CostFinalAttempts int64    `parquet:"cost_final_attempts" doc:"deciding attempts (one per observed trial, its highest retry)"`
	CostFinalWithCost int64    `parquet:"cost_final_attempts_with_cost" doc:"of those, the attempts that reported a cost"`
	CostUSDFinal      *float64 `parquet:"cost_usd_final_attempts,optional" doc:"known cost of the deciding attempts; null when none reported one"`
	InputTokens       *int64   `parquet:"input_tokens,optional" doc:"input tokens summed over the attempts that reported them (cache included); null when none did"`
	CacheTokens       *int64   `parquet:"cache_tokens,optional" doc:"cache tokens summed likewise; null when none did"`
	OutputTokens      *int64   `parquet:"output_tokens,optional" doc:"output tokens summed likewise; null when none did"`
	AttemptsWithUsage int64    `parquet:"attempts_with_tokens" doc:"attempts that reported any token count"`
}

// TrialRow is one row per planned trial, missing ones included:
// trials.<ext>.
type TrialRow struct {
	RoundID                 string   `parquet:"round_id,dict" doc:"as in rounds"`
	TrialID                 string   `parquet:"trial_id" doc:"<task>#<repeat>"`
	Task                    string   `parquet:"task,dict" doc:"task name from the plan"`
	Repeat                  int64    `parquet:"repeat" doc:"repeat number from the plan"`
	Status                  string   `parquet:"status,dict" doc:"success, failure, infra_error, unscored, or missing (planned, never run)"`
	Reason                  *string  `parquet:"reason,optional,dict" doc:"stable reason code (tpctl explain outcomes); null when missing"`
	Reward                  *float64 `parquet:"reward,optional" doc:"reward when finite"`
	ExceptionType           *string  `parquet:"exception_type,optional,dict" doc:"Harbor's exception type"`
	Attempts                int64    `parquet:"attempts" doc:"attempts the plan lists (0 when missing)"`
	TrialAttempt            *int64   `parquet:"trial_attempt,optional" doc:"retry number of the current attempt; null when missing"`
	Trainable               bool     `parquet:"trainable" doc:"the observation may be used for training"`
	ResultSHA256            *string  `parquet:"result_sha256,optional" doc:"SHA-256 of the result.json judged"`
	TaskChecksum            *string  `parquet:"task_checksum,optional" doc:"Harbor's task checksum"`
	VerifierEnvironmentMode *string  `parquet:"verifier_environment_mode,optional,dict" doc:"Harbor's verifier environment mode"`
	TrajectoryExported      bool     `parquet:"trajectory_exported" doc:"a trajectory of this trial is in the snapshot"`
	// The current attempt's explanation; null when missing.
	Explanation
}

// Explanation is what a tpctl-snapshot/3 attempt says about its verdict
// beyond the round ID's members: the judge's detail, the phase timings,
// the token usage and the agent. Every column is null where the snapshot
// has the member absent or null (always, for a /1 or /2 snapshot). The
// trials table carries the current attempt's, the attempts table each
// attempt's own.
type Explanation struct {
	Detail           *string  `parquet:"detail,optional" doc:"the judge's explanation in one line (the exception's first line, the parse error, the deciding step), masked; null when absent"`
	EnvironmentSetup *float64 `parquet:"environment_setup_sec,optional" doc:"seconds setting up the environment; null when not recorded"`
	AgentSetup       *float64 `parquet:"agent_setup_sec,optional" doc:"seconds setting up the agent; null when not recorded"`
	AgentExecution   *float64 `parquet:"agent_execution_sec,optional" doc:"seconds the agent ran; null when not recorded"`
	Verifier         *float64 `parquet:"verifier_sec,optional" doc:"seconds the verifier ran; null when not recorded"`
	InputTokens      *int64   `parquet:"input_tokens,optional" doc:"input tokens the agent reported (cache included); null when not reported"`
	CacheTokens      *int64   `parquet:"cache_tokens,optional" doc:"of those, cache tokens; null when not reported"`
	OutputTokens     *int64   `parquet:"output_tokens,optional" doc:"output tokens; null when not reported"`
	CostUSD          *float64 `parquet:"cost_usd,optional" doc:"cost in US dollars the agent reported; null when not reported"`
	AgentName        *string  `parquet:"agent_name,optional,dict" doc:"the agent that ran the attempt; null when not recorded"`
	AgentModel       *string  `parquet:"agent_model,optional,dict" doc:"the model the agent used; null when not recorded"`
	VerifierSource   *string  `parquet:"verifier_source,optional,dict" doc:"the verifier's file its own words were read from (verifier/ctrf.json, verifier/test-stdout.txt, verifier/reward.json); null when none"`
	VerifierOutput   *string  `parquet:"verifier_output,optional" doc:"the verifier's own words: failed tests with their messages, or the last lines of its output, masked, at most 2 KiB; null when none"`
}

// explanationOf is the explanation columns of one attempt.
func explanationOf(a *snapshot.AttemptOutcome) Explanation {
	var e Explanation
	if a.Detail != "" {
		e.Detail = &a.Detail
	}
	if t := a.Timing; t != nil {
		e.EnvironmentSetup, e.AgentSetup, e.AgentExecution, e.Verifier = t.EnvironmentSetup, t.AgentSetup, t.AgentExecution, t.Verifier
	}
	if u := a.Usage; u != nil {
		e.InputTokens, e.CacheTokens, e.OutputTokens, e.CostUSD = u.InputTokens, u.CacheTokens, u.OutputTokens, u.CostUSD
	}
	if g := a.Agent; g != nil {
		e.AgentName, e.AgentModel = &g.Name, g.Model
	}
	if v := a.Verifier; v != nil {
		e.VerifierSource, e.VerifierOutput = &v.Source, &v.Text
	}
	return e
}

// AttemptRow is one row per attempt of an observed trial: attempts.<ext>.
type AttemptRow struct {
	RoundID       string   `parquet:"round_id,dict" doc:"as in rounds"`
	TrialID       string   `parquet:"trial_id" doc:"as in trials"`
	Task          string   `parquet:"task,dict" doc:"as in trials"`
	Repeat        int64    `parquet:"repeat" doc:"as in trials"`
	Retry         int64    `parquet:"retry" doc:"retry number, from 0"`
	Current       bool     `parquet:"current" doc:"this attempt is the trial's current one (its verdict is the trial's)"`
	Status        string   `parquet:"status,dict" doc:"success, failure, infra_error or unscored"`
	Reason        string   `parquet:"reason,dict" doc:"stable reason code"`
	Reward        *float64 `parquet:"reward,optional" doc:"reward when finite"`
	ExceptionType *string  `parquet:"exception_type,optional,dict" doc:"Harbor's exception type"`
	ResultSHA256  *string  `parquet:"result_sha256,optional" doc:"SHA-256 of the attempt's result.json"`
	Explanation
}

// TaskRow is one row per planned task: tasks.<ext>.
type TaskRow struct {
	RoundID         string   `parquet:"round_id,dict" doc:"as in rounds"`
	Task            string   `parquet:"task" doc:"task name"`
	Planned         int64    `parquet:"planned" doc:"planned repeats"`
	Success         int64    `parquet:"success" doc:"repeats with status success"`
	Failure         int64    `parquet:"failure" doc:"repeats with status failure"`
	InfraError      int64    `parquet:"infra_error" doc:"repeats with status infra_error"`
	Unscored        int64    `parquet:"unscored" doc:"repeats with status unscored"`
	Missing         int64    `parquet:"missing" doc:"planned repeats never run"`
	Scored          int64    `parquet:"scored" doc:"success + failure"`
	SuccessRate     *float64 `parquet:"success_rate,optional" doc:"success / scored; null when nothing is scored"`
	SuccessRateLow  *float64 `parquet:"success_rate_ci95_low,optional" doc:"Wilson 95% interval, lower bound"`
	SuccessRateHigh *float64 `parquet:"success_rate_ci95_high,optional" doc:"Wilson 95% interval, upper bound"`
	PassHatK        *float64 `parquet:"pass_hat_k,optional" doc:"pass^k at the round's k = pass_k_max, by the snapshot's rule (tpctl-snapshot/3: tasks with at least k scored repeats, using all of them; /2: tasks with every planned repeat scored), so its mean is pass_hat_k_max; null when the task is not counted"`
	Flaky           bool     `parquet:"flaky" doc:"some scored repeats succeed and some fail"`
	AlwaysFail      bool     `parquet:"always_fail" doc:"at least one repeat is scored and none succeeds"`
	InfraProne      bool     `parquet:"infra_prone" doc:"at least half of its planned repeats are infra_error (as tpctl snapshot show --tasks)"`
	LowCoverage     bool     `parquet:"low_coverage" doc:"at least half of its planned repeats are not scored (unscored or infra_error): a broken environment (as tpctl snapshot show --tasks)"`
	Attempts        int64    `parquet:"attempts" doc:"every attempt of its repeats, retries included"`
	WithCost        int64    `parquet:"attempts_with_cost" doc:"of those, the attempts that reported a cost"`
	CostUSD         *float64 `parquet:"cost_usd,optional" doc:"known cost of every attempt of the task; null when none reported one"`
}
