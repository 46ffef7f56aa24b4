package digest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The digests plan init proposes for a Harbor job (docs/digest-rules.md,
// "Combining several digests" and "Proposed for a Harbor job"): each is
// the json digest of a manifest {"rules": "tpctl-digest/1", NAME: VALUE,
// …} that tpctl builds from the files themselves, so the value is the one
// a person would get by typing the manifest by hand.

// ManifestRules is the "rules" member of every manifest.
const ManifestRules = "tpctl-digest/1"

// Manifest returns the json digest of {"rules": "tpctl-digest/1"} with
// parts added as members. A part may not be named "rules".
func Manifest(parts map[string]string) (Digest, error) {
	if _, ok := parts["rules"]; ok {
		return Digest{}, errors.New(`a manifest part may not be named "rules"`)
	}
	m := map[string]string{"rules": ManifestRules}
	for k, v := range parts {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		return Digest{}, err
	}
	return JSON(b)
}

// HarborVerifier is the verifier digest of Harbor tasks, whose verifier
// is each task's tests/ folder: the manifest of the dir digest of
// TASKDIR/tests per task name (tasks maps a task name to its folder).
func HarborVerifier(ctx context.Context, tasks map[string]string) (Digest, error) {
	return perTask(ctx, tasks, "tests", nil)
}

// HarborEnvironment is the environment digest of a Harbor job: the
// manifest of the dir digest of each task's environment/ folder (its
// Dockerfile or compose file and what they copy) — for a task without
// one, the file digest of its task.toml, which then names the prebuilt
// image — and, as "config", the json digest of the environment
// configuration every planned trial ran with (the job lock's
// trials[].environment).
func HarborEnvironment(ctx context.Context, tasks map[string]string, config json.RawMessage) (Digest, error) {
	c, err := JSON(config)
	if err != nil {
		return Digest{}, fmt.Errorf("the environment configuration: %w", err)
	}
	return perTask(ctx, tasks, "environment", map[string]string{"config": c.String()})
}

// HarborEnvironmentFiles names, per task, what HarborEnvironment hashes
// for it: "environment" or "task.toml".
func HarborEnvironmentFiles(tasks map[string]string) map[string]string {
	out := map[string]string{}
	for name, dir := range tasks {
		out[name] = envSource(dir)
	}
	return out
}

// envSource is the folder or file of a task its environment digest
// covers: environment/ when the task has one, else task.toml.
func envSource(taskDir string) string {
	if fi, err := os.Lstat(filepath.Join(taskDir, "environment")); err == nil && fi.IsDir() {
		return "environment"
	}
	return "task.toml"
}

// HarborHarness is the harness digest of a Harbor job: the manifest of
// the Harbor commit that ran it ("harbor", 40 hex digits) and the json
// digest of the agent's configuration ("agent": the job lock's
// trials[].agent).
func HarborHarness(commit string, agent json.RawMessage) (Digest, error) {
	if len(commit) != 40 || strings.Trim(commit, "0123456789abcdef") != "" {
		return Digest{}, fmt.Errorf("Harbor commit %q is not 40 lowercase hex digits", commit)
	}
	a, err := JSON(agent)
	if err != nil {
		return Digest{}, fmt.Errorf("the agent configuration: %w", err)
	}
	return Manifest(map[string]string{"harbor": commit, "agent": a.String()})
}

// perTask is the manifest of the dir digest of each task's sub folder,
// with extra members; a task named like an extra member is refused.
func perTask(ctx context.Context, tasks map[string]string, sub string, extra map[string]string) (Digest, error) {
	if len(tasks) == 0 {
		return Digest{}, errors.New("no task folders")
	}
	parts := map[string]string{}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range tasks {
			if !yield(k) {
				return
			}
		}
	}) {
		if _, clash := extra[name]; clash || name == "rules" {
			return Digest{}, fmt.Errorf("task %q has the name of a manifest member", name)
		}
		var d Digest
		var err error
		if sub == "environment" && envSource(tasks[name]) == "task.toml" {
			d, err = FileContext(ctx, filepath.Join(tasks[name], "task.toml"))
		} else {
			d, err = DirContext(ctx, filepath.Join(tasks[name], sub), DirOptions{})
		}
		if err != nil {
			return Digest{}, fmt.Errorf("task %q: %w", name, err)
		}
		parts[name] = d.String()
	}
	for k, v := range extra {
		parts[k] = v
	}
	return Manifest(parts)
}
