package plandraft

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tuneplane/tpctl/digest"
	"github.com/tuneplane/tpctl/internal/formats"
	"github.com/tuneplane/tpctl/planfile"
)

// JobRule names the rule that proposes the verifier, environment and
// harness digests of a Harbor job (docs/digest-rules.md, "harbor-job").
const JobRule = "tpctl-digest/1 harbor-job"

// Proposal is one protocol digest a draft proposed, with the files it was
// computed from.
type Proposal struct {
	Pointer string
	Value   string
	Rule    string
	From    []string
}

// maxFromNamed bounds the files a note names; the rest are counted.
const maxFromNamed = 3

// proposeDigests proposes the verifier, environment and harness digests
// of the chosen trials from the job's own files (JobRule), when every one
// comes from a job lock: the task
// folders the job lock names, found under root (or above the job folder)
// and checked against the lock's task digest, the lock's Harbor commit
// and the trials' agent and environment settings. A digest whose inputs
// cannot all be read keeps its placeholder, and a warning says why and how
// to set it.
func proposeDigests(root string, chosen []*slot, p *planfile.Plan, d *Draft) {
	// Only a job lock names the task folders and the Harbor commit: a job
	// without one keeps the placeholders, whose commands say how to fill
	// them, without a warning for each.
	for _, s := range chosen {
		if s.job.lock == nil {
			return
		}
	}
	ctx := context.Background()
	tasks, why := taskFolders(root, chosen, p.Source.Revision)
	// A file is named relative to --root ("../../tasks/x/tests" for tasks
	// beside the job's folder), as the user gave it: the same words on
	// every machine.
	absRoot, _ := filepath.Abs(root)
	rel := func(dir string, sub string) string {
		abs, _ := filepath.Abs(filepath.Join(dir, sub))
		if r, err := filepath.Rel(absRoot, abs); err == nil {
			return filepath.ToSlash(r)
		}
		return filepath.ToSlash(abs)
	}
	from := func(sub string) []string {
		var out []string
		for _, name := range slices.Sorted(mapKeys(tasks)) {
			out = append(out, rel(tasks[name], sub))
		}
		return out
	}
	propose := func(ptr, field string, dg digest.Digest, files []string) {
		v := dg.String()
		switch ptr {
		case "/protocol/verifier_digest":
			p.Protocol.VerifierDigest = v
		case "/protocol/environment_digest":
			p.Protocol.EnvironmentDigest = v
		case "/protocol/harness_digest":
			p.Protocol.HarnessDigest = v
		}
		d.Proposed = append(d.Proposed, Proposal{Pointer: ptr, Value: v, Rule: JobRule, From: files})
		d.Notes = append(d.Notes, fmt.Sprintf("%s %s… proposed from %s (%s, docs/digest-rules.md); confirm it", field, v[:12], named(files), JobRule))
	}
	notProposed := func(field, reason, how string) {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s is not proposed: %s; %s", field, reason, how))
	}

	if why != "" {
		notProposed("verifier_digest", why, "run plan init where Harbor ran (task paths in the job lock are relative to it), or compute it by hand (docs/digest-rules.md, harbor-job)")
	} else if dg, err := digest.HarborVerifier(ctx, tasks); err != nil {
		notProposed("verifier_digest", err.Error(), "compute it by hand (docs/digest-rules.md, harbor-job)")
	} else {
		propose("/protocol/verifier_digest", "verifier_digest", dg, from("tests"))
	}

	envConfig, _ := json.Marshal(p.Settings["environment"])
	switch {
	case why != "":
		notProposed("environment_digest", why, "compute it by hand (docs/digest-rules.md, harbor-job)")
	default:
		if dg, err := digest.HarborEnvironment(ctx, tasks, envConfig); err != nil {
			notProposed("environment_digest", err.Error(), "compute it by hand from the tasks' environment definitions (docs/digest-rules.md, harbor-job)")
		} else {
			var files []string
			srcs := digest.HarborEnvironmentFiles(tasks)
			for _, name := range slices.Sorted(mapKeys(tasks)) {
				files = append(files, rel(tasks[name], srcs[name]))
			}
			propose("/protocol/environment_digest", "environment_digest", dg, append(lockFiles(chosen), files...))
		}
	}

	agent, _ := json.Marshal(map[string]any{"name": p.Settings["agent"], "agent_config": p.Settings["agent_config"]})
	commit := ""
	for _, r := range formats.Harbor {
		if r.Commit == p.Source.Revision {
			commit = r.Commit
		}
	}
	if commit == "" {
		notProposed("harness_digest", "the job lock records no Harbor revision tpctl knows", "set /source/revision, then compute it by hand (docs/digest-rules.md, harbor-job)")
	} else if dg, err := digest.HarborHarness(commit, agent); err != nil {
		notProposed("harness_digest", err.Error(), "compute it by hand (docs/digest-rules.md, harbor-job)")
	} else {
		propose("/protocol/harness_digest", "harness_digest", dg, lockFiles(chosen))
	}
}

// named lists files for a note: the first few, then how many more.
func named(files []string) string {
	if len(files) <= maxFromNamed {
		return strings.Join(files, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(files[:maxFromNamed], ", "), len(files)-maxFromNamed)
}

// lockFiles are the job locks the chosen trials come from.
func lockFiles(chosen []*slot) []string {
	var out []string
	for _, s := range chosen {
		f := filepath.ToSlash(filepath.Join(s.job.rel, "lock.json"))
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// taskFolders finds the folder of every chosen task from the path the job
// lock records for it, relative to root, to the folders above the job, or
// to the working directory, and checks it is the folder the job ran: its
// Harbor task digest must be the lock's. It returns the folders by task
// name, or why they cannot all be found.
func taskFolders(root string, chosen []*slot, revision string) (map[string]string, string) {
	rev, err := digest.LookupHarborRevision(revision)
	if err != nil {
		return nil, "the job's Harbor revision is not one whose task digest tpctl computes"
	}
	paths := map[string]string{}
	digests := map[string]string{}
	for _, s := range chosen {
		if s.job.lock == nil {
			return nil, fmt.Sprintf("%s has no lock.json naming the task folders", s.job.label())
		}
		for _, tl := range s.job.lock.Trials {
			if tl.Task.Name == s.task && tl.Task.Path != "" {
				paths[s.task] = tl.Task.Path
				digests[s.task] = strings.TrimPrefix(tl.Task.Digest, "sha256:")
			}
		}
		if paths[s.task] == "" {
			return nil, fmt.Sprintf("the job lock names no local folder for task %q (a registry or git task)", s.task)
		}
	}
	bases := []string{root}
	for _, s := range chosen {
		for dir, i := s.job.abs, 0; i < 3; i, dir = i+1, filepath.Dir(dir) {
			if !slices.Contains(bases, dir) {
				bases = append(bases, dir)
			}
		}
	}
	if wd, err := os.Getwd(); err == nil {
		bases = append(bases, wd)
	}
	out := map[string]string{}
	for _, name := range slices.Sorted(mapKeys(paths)) {
		p := filepath.FromSlash(paths[name])
		var cands []string
		if filepath.IsAbs(p) {
			cands = []string{p}
		} else {
			for _, b := range bases {
				cands = append(cands, filepath.Join(b, p))
			}
		}
		found := ""
		for _, c := range cands {
			if fi, err := os.Stat(c); err != nil || !fi.IsDir() {
				continue
			}
			dg, err := rev.Task(context.Background(), c)
			if err != nil || dg.String() != digests[name] {
				return nil, fmt.Sprintf("task folder %s is not the one the job ran (its Harbor task digest differs from the lock's)", c)
			}
			found = c
			break
		}
		if found == "" {
			return nil, fmt.Sprintf("task %q's folder %s (from the job lock) is not found under --root, above the job or in the working directory", name, paths[name])
		}
		out[name] = found
	}
	return out, ""
}
