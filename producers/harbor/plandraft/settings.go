package plandraft

import (
	"fmt"
	"slices"

	"github.com/tuneplane/tpctl/planfile"
)

// UnknownSetting is a settings category the job's files do not record,
// with a setting that would record it (a plan set pointer and example).
type UnknownSetting struct {
	Category, Pointer, Example string
}

// unknownExamples are the settings plan init suggests for a category a
// Harbor job does not record.
var unknownExamples = map[string][2]string{
	"generation":          {"/settings/temperature", "0.7"},
	"context":             {"/settings/context_window", "128000"},
	"repeats":             {"/settings/repeats", "1"},
	"runtime":             {"/settings/timeout_multiplier", "1"},
	"tool/network policy": {"/settings/network", "enabled"},
}

// completeSettings records what the job says of each settings category
// plan check looks for (planfile.SettingsCategories): the agent's
// generation arguments (its kwargs, e.g. temperature) are lifted into
// "generation" and the environment's network policy into "network", where
// the category's keys are; every category still missing is listed in
// d.Unknown, so plan init can say how to set it.
func completeSettings(p *planfile.Plan, d *Draft) {
	s := p.Settings
	has := func(cat string) bool {
		for _, c := range planfile.SettingsCategories {
			if c.Name == cat {
				return slices.ContainsFunc(c.Keys, func(k string) bool { _, ok := s[k]; return ok })
			}
		}
		return true
	}
	if !has("generation") {
		if gen := generationArgs(s); len(gen) > 0 {
			s["generation"] = gen
			d.Notes = append(d.Notes, fmt.Sprintf("settings.generation records the agent's generation arguments (%s) from its kwargs", joinKeys(gen)))
		}
	}
	if !has("tool/network policy") {
		if env, ok := s["environment"].(map[string]any); ok {
			if hosts, ok := env["extra_allowed_hosts"]; ok {
				s["network"] = map[string]any{"extra_allowed_hosts": hosts}
				d.Notes = append(d.Notes, "settings.network records the environment's extra_allowed_hosts (its network policy as the job states it)")
			}
		}
	}
	for _, c := range planfile.SettingsCategories {
		if !has(c.Name) {
			ex := unknownExamples[c.Name]
			d.Unknown = append(d.Unknown, UnknownSetting{Category: c.Name, Pointer: ex[0], Example: ex[1]})
		}
	}
}

// generationArgs are the agent kwargs that are generation settings
// (planfile's generation keys), by name.
func generationArgs(s map[string]any) map[string]any {
	cfg, _ := s["agent_config"].(map[string]any)
	kw, _ := cfg["kwargs"].(map[string]any)
	var keys []string
	for _, c := range planfile.SettingsCategories {
		if c.Name == "generation" {
			keys = c.Keys
		}
	}
	out := map[string]any{}
	for k, v := range kw {
		if slices.Contains(keys, k) && v != nil {
			out[k] = v
		}
	}
	return out
}

func joinKeys(m map[string]any) string {
	ks := slices.Sorted(mapKeys(m))
	out := ""
	for i, k := range ks {
		if i > 0 {
			out += ", "
		}
		out += k
	}
	return out
}
