package inspect

// The protocol evidence an Inspect log offers, as canonical data: plain
// Go values (map[string]any, []any, json.Number, string, bool, nil) that
// the caller hashes in RFC 8785 form (package digest). A field the log
// does not write is null, so two logs differ in a digest only where they
// differ in a setting.

// SettingsInputs are the inputs of the settings digest: the generate
// config (the model's and the plan's), epochs and their reducer, the
// limits, the sandbox, the solver and its arguments, the plan's steps (each
// solver's name and parameters), the scorers with their options, and the
// task's arguments and version.
func SettingsInputs(h *Header) map[string]any {
	ev, cfg := h.eval, h.eval.get("config")
	limits := map[string]any{}
	for _, k := range []string{"limit", "sample_id", "message_limit", "token_limit", "token_limit_type", "turn_limit", "time_limit", "working_limit", "cost_limit"} {
		limits[k] = cfg.get(k).plain()
	}
	var steps []any
	for _, s := range h.plan.get("steps").items() {
		steps = append(steps, map[string]any{"solver": s.get("solver").plain(), "params": s.get("params").plain()})
	}
	var scorers []any
	for _, s := range ev.get("scorers").items() {
		scorers = append(scorers, map[string]any{"name": s.get("name").plain(), "options": s.get("options").plain()})
	}
	return map[string]any{
		"model_generate_config": ev.get("model_generate_config").plain(),
		"plan_config":           h.plan.get("config").plain(),
		"epochs":                int64ToNumber(int64(h.Epochs)),
		"epochs_reducer":        cfg.get("epochs_reducer").plain(),
		"score_on_error":        cfg.get("score_on_error").plain(),
		"retry_on_error":        cfg.get("retry_on_error").plain(),
		"limits":                limits,
		"sandbox":               ev.get("sandbox").plain(),
		"solver":                ev.get("solver").plain(),
		"solver_args":           ev.get("solver_args").plain(),
		"plan_steps":            steps,
		"plan_finish":           h.plan.get("finish").plain(),
		"scorers":               scorers,
		"task_args":             ev.get("task_args").plain(),
		"task_version":          ev.get("task_version").plain(),
	}
}

// DatasetInputs are the inputs of the proposed dataset digest: the
// dataset's name and location and the planned sample ids (integers as
// numbers, strings as strings, in the plan's order). It is proposed, never
// certified: the log names the dataset, it does not hold it.
func DatasetInputs(h *Header, p *Plan) map[string]any {
	return map[string]any{
		"name":       nullIfEmpty(h.Dataset.Name),
		"location":   nullIfEmpty(h.Dataset.Location),
		"sample_ids": idValues(p.SampleIDs),
	}
}

// CohortInputs are the planned sample set as data (ids and epochs): two
// logs over different samples have different cohorts and are never
// compared.
func CohortInputs(p *Plan) map[string]any {
	return map[string]any{
		"sample_ids": idValues(p.SampleIDs),
		"epochs":     int64ToNumber(int64(p.Epochs)),
	}
}

func idValues(ids []SampleID) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		if id.Number {
			out[i] = jsonNumber(id.Text)
		} else {
			out[i] = id.Text
		}
	}
	return out
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
