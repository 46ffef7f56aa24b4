package lmeval

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// SettingsInputs is what the settings digest of a task's plan covers, as
// canonical data: the task's config as lm-eval dumped it (prompt
// templates, generation kwargs, fewshot, filters, metric list, repeats,
// output type, the task version in metadata), n-shot, and the run's chat
// template and system instruction digests and fewshot_as_multiturn.
//
// Left out, because they are not the protocol: the config's metadata
// other than its version (lm-eval merges --model_args into it, so the
// model would enter the digest and no two models could be compared),
// task_alias and tag (display and registry names). The model, lm-eval's
// version, seeds and batch size are recorded elsewhere in the plan.
func SettingsInputs(res *Results, t *Task) map[string]any {
	cfg := map[string]any{}
	for k, v := range t.Config {
		switch k {
		case "metadata", "task_alias", "tag":
			continue
		}
		cfg[k] = v
	}
	if md := object(t.Config, "metadata"); md != nil {
		if v, ok := md["version"]; ok {
			cfg["metadata"] = map[string]any{"version": v}
		}
	}
	in := map[string]any{
		"producer":               "lm-eval",
		"task":                   t.Name,
		"version":                t.Version,
		"config":                 cfg,
		"chat_template_sha":      nullable(res.ChatTemplateSHA),
		"system_instruction_sha": nullable(res.SystemInstructionSHA),
		"fewshot_as_multiturn":   nil,
		"n_shot":                 nil,
	}
	if t.Config == nil {
		in["config"] = nil
	}
	if res.FewshotAsMultiturn != nil {
		in["fewshot_as_multiturn"] = *res.FewshotAsMultiturn
	}
	if t.NShot != nil {
		in["n_shot"] = *t.NShot
	}
	return in
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// SettingsDigest is the SHA-256 hex of SettingsInputs in canonical form.
func SettingsDigest(res *Results, t *Task) string {
	sum := sha256.Sum256(Canonical(SettingsInputs(res, t)))
	return hex.EncodeToString(sum[:])
}

// DatasetRule names how a dataset digest is proposed from lm-eval's files.
const DatasetRule = "lm-eval task_hashes[task]: SHA-256 over every sample record's doc_hash+prompt_hash+target_hash in order (evaluation_tracker.py save_results_aggregated)"

// DatasetProposal is the dataset digest proposed for a task, and where it
// came from.
type DatasetProposal struct {
	// Value is lm-eval's task hash, "" when the results file has none
	// (lm-eval ran without --log_samples): the plan's placeholder stays,
	// never invented.
	Value string
	Rule  string
	// Reproduced says whether the task's samples file, read whole,
	// reproduces Value; nil when not checked (no file read).
	Reproduced *bool
	// Note says in words what was found.
	Note string
}

// ProposeDataset proposes the dataset digest of t. sum, when not nil, is
// the whole read of the task's samples file, checked against lm-eval's
// hash (a file cut short or edited does not reproduce it).
func ProposeDataset(t *Task, sum *SamplesSummary) DatasetProposal {
	if t.TaskHash == "" {
		return DatasetProposal{Note: fmt.Sprintf("the results file has no task_hashes entry for %s (lm-eval writes them only with --log_samples): the dataset digest stays a placeholder", t.Name)}
	}
	p := DatasetProposal{Value: t.TaskHash, Rule: DatasetRule, Note: fmt.Sprintf("proposed from lm-eval's task_hashes[%s]", t.Name)}
	if sum != nil {
		ok := sum.TaskHash == t.TaskHash
		p.Reproduced = &ok
		if ok {
			p.Note += fmt.Sprintf("; reproduced from the %s lines of %s", thousands(sum.Lines), sum.File)
		} else {
			p.Note += fmt.Sprintf("; NOT reproduced from the %s lines of %s (the file was cut short or changed after lm-eval hashed it)", thousands(sum.Lines), sum.File)
		}
	}
	return p
}

// Revision is the producer revision the plan records: lm-eval's version
// and the git hash it reported ("0.4.13.dev0+4e7e0d4"), "" when neither.
func (r *Results) Revision() string {
	switch {
	case r.LMEvalVersion != "" && r.GitHash != "":
		return r.LMEvalVersion + "+" + r.GitHash
	case r.LMEvalVersion != "":
		return r.LMEvalVersion
	}
	return r.GitHash
}

// Checkpoint is the model lm-eval ran, proposed as the plan's checkpoint:
// model_name, pinned by config.model_sha (or model_revision) when the
// results carry one ("EleutherAI/pythia-160m@50f5…"). "" when the file
// names no model.
func (r *Results) Checkpoint() string {
	name := r.ModelName
	if name == "" {
		return ""
	}
	switch {
	case r.ModelSHA != "":
		return name + "@" + r.ModelSHA
	case r.ModelRevision != "":
		return name + "@" + r.ModelRevision
	}
	return name
}
