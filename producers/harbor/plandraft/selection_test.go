package plandraft

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// configJob is the example's round-2 job (testdata/example/ROUNDS.md):
// Harbor 5f5618b8's own models wrote its config.json and result.json
// (make_job_files.py there), before Harbor wrote lock.json: one dataset,
// task_names hello-world and hello-alpine, n_attempts 4, one agent, 8
// trial folders, n_total_trials 8.
var configJob = filepath.Join("..", "..", "..", "testdata", "example", "jobs", "2026-04-15__09-00-00")

const namesLine = `            "task_names": [
                "hello-world",
                "hello-alpine"
            ],
            "exclude_task_names": null,
            "n_tasks": null`

// withSelection copies configJob with the dataset's selection lines
// replaced (as JobConfig.model_dump_json(indent=4) writes them), the
// folders of the tasks in drop removed (Harbor never made them) and
// result.json's n_total_trials set to total.
func withSelection(t *testing.T, selection string, drop []string, total int) string {
	t.Helper()
	job := copyJob(t, configJob)
	edit := func(file, old, new string) {
		p := filepath.Join(job, file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), old) {
			t.Fatalf("%s does not hold %q", file, old)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("config.json", namesLine, selection)
	edit("result.json", `"n_total_trials": 8,`, `"n_total_trials": `+strconv.Itoa(total)+`,`)
	for _, task := range drop {
		matches, _ := filepath.Glob(filepath.Join(job, task+"__*"))
		for _, m := range matches {
			if err := os.RemoveAll(m); err != nil {
				t.Fatal(err)
			}
		}
	}
	return job
}

func names(list ...string) string {
	if list == nil {
		return "null"
	}
	return "[\n                \"" + strings.Join(list, "\",\n                \"") + "\"\n            ]"
}

func selection(taskNames, exclude []string, nTasks string) string {
	return `            "task_names": ` + names(taskNames...) + `,
            "exclude_task_names": ` + names(exclude...) + `,
            "n_tasks": ` + nTasks
}

// TestConfigSelection (issue 31 part 3): a job without lock.json (Harbor
// before 2026-04-29) whose dataset selects tasks by glob, exclusion or
// n_tasks is drafted by Harbor's own rules (DatasetConfig._filter_task_ids:
// fnmatch task_names, less exclude_task_names, then the first n_tasks in
// the dataset's order), settled by the trial folders where only the
// dataset could tell; when result.json's n_total_trials disagrees the
// draft says so and never takes the larger set. The jobs are the
// example's, changed only in the fields Harbor's JobConfig and JobResult
// write for such a run.
func TestConfigSelection(t *testing.T) {
	for _, tt := range []struct {
		name   string
		job    func(t *testing.T) string
		trials int
		counts Counts
		warn   string // a warning the draft must give ("" none)
		note   string
		tasks  []string
	}{
		{
			// It used to be a literal task "hello-*" (exit 2: folders
			// Harbor did not plan).
			name: "glob",
			job: func(t *testing.T) string {
				return withSelection(t, selection([]string{"hello-*"}, nil, "null"), nil, 8)
			},
			trials: 8, counts: Counts{Finished: 8},
			warn:  `selects tasks by task_names patterns "hello-*"`,
			tasks: []string{"harbor/hello-alpine", "harbor/hello-world"},
		},
		{
			// n_tasks 2 of 3 named: it used to plan all 3 (4 phantom
			// missing trials; a complete job labelled degraded).
			name: "n_tasks",
			job: func(t *testing.T) string {
				return withSelection(t, selection([]string{"hello-world", "hello-alpine", "hello-bogus"}, nil, "2"), nil, 8)
			},
			trials: 8, counts: Counts{Finished: 8},
			note:  `n_tasks 2 of the 3 tasks config.json names, taken in the dataset's order; the trial folders show which: "hello-world", "hello-alpine"`,
			tasks: []string{"harbor/hello-alpine", "harbor/hello-world"},
		},
		{
			name: "exclude",
			job: func(t *testing.T) string {
				return withSelection(t, selection([]string{"hello-world", "hello-alpine"}, []string{"hello-alp*"}, "null"), []string{"hello-alpine"}, 4)
			},
			trials: 4, counts: Counts{Finished: 4},
			tasks: []string{"harbor/hello-world"},
		},
		{
			// A glob whose other task never started: Harbor counted 8,
			// tpctl can name 4 and never invents the rest.
			name: "glob, n_total_trials more",
			job: func(t *testing.T) string {
				return withSelection(t, selection([]string{"hello-*"}, nil, "null"), []string{"hello-alpine"}, 8)
			},
			trials: 4, counts: Counts{Finished: 4},
			warn:  "n_total_trials 8, more than the 4 trials tpctl can name from config.json and the trial folders; the draft lists those 4 and never invents the others",
			tasks: []string{"harbor/hello-world"},
		},
		{
			// A named task the dataset lacks: Harbor's filter drops it and
			// counts 8; the config's 12 would be the larger set.
			name: "named task Harbor dropped",
			job: func(t *testing.T) string {
				return withSelection(t, selection([]string{"hello-world", "hello-alpine", "hello-gone"}, nil, "null"), nil, 8)
			},
			trials: 8, counts: Counts{Finished: 8},
			warn:  `n_total_trials 8 but its config.json plans 12 trials; no trial of "hello-gone" started and Harbor's own count leaves no room for them, so the draft leaves them out`,
			tasks: []string{"harbor/hello-alpine", "harbor/hello-world"},
		},
		{
			// The unchanged job: the draft as before.
			name:   "literal names",
			job:    func(t *testing.T) string { return copyJob(t, configJob) },
			trials: 8, counts: Counts{Finished: 8},
			tasks: []string{"harbor/hello-alpine", "harbor/hello-world"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := FromJob(tt.job(t), Options{})
			if err != nil {
				t.Fatalf("FromJob: %v", err)
			}
			if len(d.Plan.Trials) != tt.trials || d.Counts != tt.counts {
				t.Errorf("%d trials, counts %+v; want %d, %+v", len(d.Plan.Trials), d.Counts, tt.trials, tt.counts)
			}
			var tasks []string
			for _, tr := range d.Plan.Trials {
				if len(tasks) == 0 || tasks[len(tasks)-1] != tr.Task {
					tasks = append(tasks, tr.Task)
				}
			}
			if strings.Join(tasks, " ") != strings.Join(tt.tasks, " ") {
				t.Errorf("tasks %v, want %v", tasks, tt.tasks)
			}
			// Every job before lock.json has no recorded Harbor version, so
			// no digest can be proposed for it (TestProposedDigests covers
			// those warnings).
			var ws []string
			for _, w := range d.Warnings {
				if !strings.HasPrefix(w, "no Harbor version is recorded") && !strings.Contains(w, "_digest is not proposed") {
					ws = append(ws, w)
				}
			}
			all := strings.Join(ws, "\n")
			if tt.warn == "" && all != "" {
				t.Errorf("warnings:\n%s\nwant none", all)
			}
			if tt.warn != "" && !strings.Contains(all, tt.warn) {
				t.Errorf("warnings:\n%s\nwant one containing %q", all, tt.warn)
			}
			if notes := strings.Join(d.Notes, "\n"); tt.note != "" && !strings.Contains(notes, tt.note) {
				t.Errorf("notes:\n%s\nwant one containing %q", notes, tt.note)
			}
		})
	}
}
