package lmeval

import (
	"strings"
)

// lm-eval names its files after the run's date id,
// datetime.now().isoformat().replace(":", "-")
// (evaluation_tracker.py save_results_aggregated):
//
//	results_2026-11-30T10-00-00.123456.json
//	samples_<task>_2026-11-30T10-00-00.123456.jsonl
//
// (a --output_path ending in .json gives "<stem>_<date id>.json" instead of
// results_…). The task of a samples file is what lies between its first
// and its last underscore (utils.py get_file_task_name), so task names may
// hold underscores; the date id holds none.

// isDateID reports whether s has the form of lm-eval's date id:
// YYYY-MM-DDTHH-MM-SS with an optional fraction of digits.
func isDateID(s string) bool {
	const form = "dddd-dd-ddTdd-dd-dd"
	if len(s) < len(form) {
		return false
	}
	for i := 0; i < len(form); i++ {
		c := s[i]
		if form[i] == 'd' {
			if c < '0' || c > '9' {
				return false
			}
		} else if c != form[i] {
			return false
		}
	}
	rest := s[len(form):]
	if rest == "" {
		return true
	}
	if rest[0] != '.' || len(rest) == 1 {
		return false
	}
	for i := 1; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return false
		}
	}
	return true
}

// ResultsTimestamp returns the date id of a results file name
// ("results_<date id>.json", or "<stem>_<date id>.json"), or false.
func ResultsTimestamp(name string) (string, bool) {
	stem, ok := strings.CutSuffix(name, ".json")
	if !ok || strings.HasPrefix(name, "samples_") {
		return "", false
	}
	i := strings.LastIndexByte(stem, '_')
	if i < 0 || !isDateID(stem[i+1:]) {
		return "", false
	}
	return stem[i+1:], true
}

// SamplesName returns the task and date id of a samples file name
// ("samples_<task>_<date id>.jsonl"), or false.
func SamplesName(name string) (task, ts string, ok bool) {
	stem, ok := strings.CutSuffix(name, ".jsonl")
	if !ok {
		return "", "", false
	}
	rest, ok := strings.CutPrefix(stem, "samples_")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '_')
	if i <= 0 || !isDateID(rest[i+1:]) {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// SamplesFile is the name lm-eval gives task's samples file in the run of
// date id ts.
func SamplesFile(task, ts string) string { return "samples_" + task + "_" + ts + ".jsonl" }
