package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/report"
	"github.com/tuneplane/tpctl/upload"
)

// argvCase is one row of a TestNewCmd… table: argv after "tpctl", the
// options the command resolves, or the start of its usage error (exit 2).
type argvCase[T any] struct {
	name    string
	argv    string
	want    *T
	wantErr string
}

// checkArgv runs every case through the whole command tree, with the
// command at path rebuilt around a runF that records its options instead
// of running, cli/cli style: flags, arguments, config and the root's
// persistent flags all apply as in a real run.
func checkArgv[T any](t *testing.T, path string, build func(*app, func(context.Context, *app, *T) error) *cobra.Command, cases []argvCase[T]) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TUNEPLANE_CONFIG", "")
			s, _, _, _ := ui.Test()
			a := &app{io: s}
			root := newRootCmd(a)
			words := strings.Fields(path)
			parent := root
			for _, w := range words[:len(words)-1] {
				parent = findSub(parent, w)
			}
			old := findSub(parent, words[len(words)-1])
			if old == nil {
				t.Fatalf("no command %q", path)
			}
			var got *T
			stub := build(a, func(_ context.Context, _ *app, o *T) error {
				got = o
				return nil
			})
			stub.Args = typedArgs(stub.Args)
			stub.GroupID = old.GroupID
			for _, sub := range old.Commands() {
				old.RemoveCommand(sub)
				stub.AddCommand(sub)
			}
			parent.RemoveCommand(old)
			parent.AddCommand(stub)
			root.SetArgs(strings.Fields(tt.argv))
			root.SetOut(s.Out)
			root.SetErr(s.ErrOut)
			err := root.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || codeOf(err) != exitUsage {
					t.Fatalf("err = %v (exit %d); want a usage error containing %q", err, codeOf(err), tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("options mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewCmdImport(t *testing.T) {
	checkArgv(t, "import", newImportCmd, []argvCase[importOptions]{
		{"all flags", "import --plan p.json --root r --out o --trace-limit 4 --redactor builtin:secrets --redactor rules:x.toml --upload --allow-unverified-format",
			&importOptions{Plan: "p.json", Root: "r", Out: "o", TraceLimit: 4, Redactors: []string{"builtin:secrets", "rules:x.toml"}, Upload: true, AllowUnverifiedFormat: true}, ""},
		{"defaults", "import --plan p --root r --out o", &importOptions{Plan: "p", Root: "r", Out: "o"}, ""},
		{"strict", "import --plan p --root r --out o --strict", &importOptions{Plan: "p", Root: "r", Out: "o", Strict: true}, ""},
		{"no arguments", "import x --plan p", nil, "which takes no arguments"},
	})
}

func TestNewCmdPlanCheck(t *testing.T) {
	checkArgv(t, "plan check", newPlanCheckCmd, []argvCase[planCheckOptions]{
		{"plan", "plan check p.json", &planCheckOptions{Plan: "p.json", Output: outputText}, ""},
		{"flags", "plan check p.json --root r --strict --allow-unverified-format -o json",
			&planCheckOptions{Plan: "p.json", Root: "r", Strict: true, AllowUnverifiedFormat: true, Output: outputJSON}, ""},
		{"no plan", "plan check", nil, "PLAN"},
	})
}

func TestNewCmdPlanInit(t *testing.T) {
	checkArgv(t, "plan init", newPlanInitCmd, []argvCase[planInitOptions]{
		{"root and out", "plan init --root jobs/a --out p.json", &planInitOptions{Root: "jobs/a", Out: "p.json"}, ""},
		{"stdout", "plan init --root jobs/a", &planInitOptions{Root: "jobs/a"}, ""},
		{"pair and split", "plan init --root jobs/a --agent terminus-2 --model gpt-5.4 --split heldout",
			&planInitOptions{Root: "jobs/a", Agent: "terminus-2", Model: "gpt-5.4", Split: "heldout"}, ""},
		{"argument", "plan init jobs/a", nil, "which takes no arguments"},
	})
}

func TestNewCmdPlanSet(t *testing.T) {
	checkArgv(t, "plan set", newPlanSetCmd, []argvCase[planSetOptions]{
		{"three arguments", "plan set p.json /split heldout", &planSetOptions{Plan: "p.json", Pointer: "/split", Value: "heldout"}, ""},
		{"two arguments", "plan set p.json /split", nil, "missing VALUE"},
	})
}

func TestNewCmdSnapshotShow(t *testing.T) {
	checkArgv(t, "snapshot show", newSnapshotShowCmd, []argvCase[snapshotShowOptions]{
		{"summary", "snapshot show d", &snapshotShowOptions{Dir: "d", Sort: "task"}, ""},
		{"trials filtered", "snapshot show d --trials --status failure --reason reward_failure --task t",
			&snapshotShowOptions{Dir: "d", Trials: true, Sort: "task", Filter: report.Filter{Statuses: []string{"failure"}, Reason: "reward_failure", Task: "t"}}, ""},
		{"statuses combine", "snapshot show d --status failure,missing --status unscored",
			&snapshotShowOptions{Dir: "d", Sort: "task", Filter: report.Filter{Statuses: []string{"failure", "missing", "unscored"}}}, ""},
		{"tasks sorted", "snapshot show d --tasks --sort rate", &snapshotShowOptions{Dir: "d", Tasks: true, Sort: "rate", SortSet: true}, ""},
		{"one trial", "snapshot show d --trial t#0", &snapshotShowOptions{Dir: "d", Trial: "t#0", Sort: "task"}, ""},
		{"no folder", "snapshot show", nil, "DIR"},
	})
}

func TestNewCmdSnapshotVerify(t *testing.T) {
	checkArgv(t, "snapshot verify", newSnapshotVerifyCmd, []argvCase[snapshotVerifyOptions]{
		{"folder", "snapshot verify d", &snapshotVerifyOptions{Dir: "d"}, ""},
		{"two folders", "snapshot verify a b", nil, "DIR"},
	})
}

func TestNewCmdReport(t *testing.T) {
	checkArgv(t, "report", newReportCmd, []argvCase[reportOptions]{
		{"one round", "report a --out a.html", &reportOptions{Dirs: []string{"a"}, Out: "a.html"}, ""},
		{"comparison", "report a b --out - --force", &reportOptions{Dirs: []string{"a", "b"}, Out: "-", Force: true}, ""},
		{"no out", "report a", nil, "--out is required"},
		{"three rounds", "report a b c --out x.html", nil, `unexpected argument "c" for 'tpctl report', which takes SNAPSHOT | BASE CANDIDATE`},
		{"no round", "report --out x.html", nil, "'tpctl report' is missing SNAPSHOT | BASE CANDIDATE"},
	})
}

func TestNewCmdDigest(t *testing.T) {
	for _, kind := range []string{digestKindFile, digestKindDir, digestKindJSON, digestKindHarborTask} {
		build := func(a *app, runF func(context.Context, *app, *digestOptions) error) *cobra.Command {
			return newDigestKindCmd(a, runF, kind)
		}
		base := digestOptions{Kind: kind, Path: "x"}
		switch kind {
		case digestKindJSON:
			base.MaxBytes = 64 << 20
		case digestKindHarborTask:
			base.Revision = "v0.22.0"
		}
		withJSON := base
		withJSON.JSON = true
		cases := []argvCase[digestOptions]{
			{kind, "digest " + kind + " x", &base, ""},
			{kind + " json", "digest " + kind + " x --output json", &withJSON, ""},
			{kind + " no path", "digest " + kind, nil, "PATH"},
		}
		if kind == digestKindDir {
			ex := base
			ex.Exclude = []string{".git", "a/b"}
			cases = append(cases, argvCase[digestOptions]{"dir exclude", "digest dir x --exclude .git --exclude a/b", &ex, ""})
		}
		set := base
		set.Set = "p.json:/protocol/verifier_digest"
		cases = append(cases, argvCase[digestOptions]{kind + " set", "digest " + kind + " x --set p.json:/protocol/verifier_digest", &set, ""})
		checkArgv(t, "digest "+kind, build, cases)
	}
}

func TestNewCmdEvalCheckPlan(t *testing.T) {
	checkArgv(t, "eval check-plan", newEvalCheckPlanCmd, []argvCase[evalCheckPlanOptions]{
		{"plan", "eval check-plan e.json", &evalCheckPlanOptions{Plan: "e.json"}, ""},
		{"no plan", "eval check-plan", nil, "PLAN"},
	})
}

func TestNewCmdEvalRun(t *testing.T) {
	checkArgv(t, "eval run", newEvalRunCmd, []argvCase[evalRunOptions]{
		{"all flags", "eval run e.json --out o --upload --allow-unverified-format --keep-going --trace-limit 2 --redactor builtin:secrets",
			&evalRunOptions{Plan: "e.json", Out: "o", Upload: true, AllowUnverifiedFormat: true, KeepGoing: true, TraceLimit: 2, Redactors: []string{"builtin:secrets"}}, ""},
		{"plan only", "eval run e.json", &evalRunOptions{Plan: "e.json"}, ""},
		{"no plan", "eval run --out o", nil, "PLAN"},
	})
}

func TestNewCmdUpload(t *testing.T) {
	checkArgv(t, "upload", newUploadCmd, []argvCase[uploadOptions]{
		{"defaults", "upload d", &uploadOptions{Dir: "d", Concurrency: upload.DefaultConcurrency}, ""},
		{"dry run", "upload d --dry-run --concurrency 4", &uploadOptions{Dir: "d", DryRun: true, Concurrency: 4}, ""},
		{"no folder", "upload", nil, "DIR"},
		{"not a number", "upload d --concurrency many", nil, "--concurrency"},
	})
}

func TestNewCmdPreflightVerify(t *testing.T) {
	checkArgv(t, "preflight verify-report", newPreflightVerifyCmd, []argvCase[preflightVerifyOptions]{
		{"report and job", "preflight verify-report r.json j.yaml", &preflightVerifyOptions{Report: "r.json", Job: "j.yaml"}, ""},
		{"job missing", "preflight verify-report r.json", nil, "JOB"},
	})
}

func TestNewCmdPreflightTimeout(t *testing.T) {
	build := func(a *app, runF func(context.Context, *app, *preflightOptions) error) *cobra.Command {
		return newPreflightCmd(a, func(ctx context.Context, a *app, o *preflightOptions) error {
			o.Now = nil // a function: not comparable
			return runF(ctx, a, o)
		})
	}
	checkArgv(t, "preflight", build, []argvCase[preflightOptions]{
		{"timeout", "preflight j.yaml --catalog c.yaml --source-timeout 90s", &preflightOptions{Job: "j.yaml", Catalog: "c.yaml", SourceTimeout: 90 * time.Second}, ""},
	})
}

func TestNewCmdExplain(t *testing.T) {
	checkArgv(t, "explain outcomes", newExplainOutcomesCmd, []argvCase[explainOptions]{
		{"outcomes", "explain outcomes", &explainOptions{}, ""},
		{"argument", "explain outcomes x", nil, "which takes no arguments"},
	})
	checkArgv(t, "explain statistics", newExplainStatisticsCmd, []argvCase[explainOptions]{
		{"statistics", "explain statistics -o json", &explainOptions{}, ""},
		{"argument", "explain statistics x", nil, "which takes no arguments"},
	})
}

func TestNewCmdFormats(t *testing.T) {
	checkArgv(t, "formats", newFormatsCmd, []argvCase[formatsOptions]{
		{"list", "formats", &formatsOptions{}, ""},
		{"argument", "formats harbor", nil, "which takes no arguments"},
	})
}

func TestNewCmdSchema(t *testing.T) {
	checkArgv(t, "schema", newSchemaCmd, []argvCase[schemaOptions]{
		{"list", "schema", &schemaOptions{}, ""},
		{"one", "schema snapshot", &schemaOptions{Name: "snapshot"}, ""},
		{"two", "schema a b", nil, "NAME"},
	})
}

func TestNewCmdVersion(t *testing.T) {
	checkArgv(t, "version", newVersionCmd, []argvCase[versionOptions]{
		{"version", "version", &versionOptions{}, ""},
		{"argument", "version x", nil, "which takes no arguments"},
	})
}

func TestNewCmdCompletion(t *testing.T) {
	checkArgv(t, "completion", newCompletionCmd, []argvCase[completionOptions]{
		{"bash", "completion bash", &completionOptions{Shell: "bash"}, ""},
		{"no shell", "completion", nil, "bash|zsh|fish|powershell"},
	})
}

func TestNewCmdExport(t *testing.T) {
	checkArgv(t, "export", newExportCmd, []argvCase[exportOptions]{
		{"default format", "export a b --out ds", &exportOptions{Snapshots: []string{"a", "b"}, Format: "parquet", Out: "ds"}, ""},
		{"csv", "export a --format csv --out ds", &exportOptions{Snapshots: []string{"a"}, Format: "csv", Out: "ds"}, ""},
		{"unknown format", "export a --format xlsx --out ds", nil, "xlsx"},
		{"no out", "export a", nil, "--out is required"},
		{"no snapshot", "export --out ds", nil, "SNAPSHOT"},
	})
}

func TestNewCmdTrend(t *testing.T) {
	checkArgv(t, "trend", newTrendCmd, []argvCase[trendOptions]{
		{"rounds", "trend a b c", &trendOptions{Snapshots: []string{"a", "b", "c"}, Order: "given"}, ""},
		{"page", "trend a b --order checkpoint --out t.html --force",
			&trendOptions{Snapshots: []string{"a", "b"}, Order: "checkpoint", Out: "t.html", Force: true}, ""},
		{"unknown order", "trend a --order date", nil, `--order "date"`},
		{"no snapshot", "trend", nil, "SNAPSHOT"},
	})
}

func TestNewCmdPlanPower(t *testing.T) {
	checkArgv(t, "plan power", newPlanPowerCmd, []argvCase[planPowerOptions]{
		{"defaults", "plan power --pilot p --policy g.yaml", &planPowerOptions{Pilot: "p", Policy: "g.yaml", Target: 0.8, Simulations: 400, Seed: 1,
			Tasks: []int{3, 5, 10, 20, 30, 50, 100, 200}, Repeats: []int{1, 2, 4, 8}}, ""},
		{"everything", "plan power --pilot p --baseline b --policy g.yaml --target 0.9 --simulations 50 --seed 9 --tasks 5,10 --repeats 2",
			&planPowerOptions{Pilot: "p", Baseline: "b", Policy: "g.yaml", Target: 0.9, Simulations: 50, Seed: 9, Tasks: []int{5, 10}, Repeats: []int{2}}, ""},
		{"no pilot", "plan power --policy g.yaml", nil, "--pilot is required"},
		{"no policy", "plan power --pilot p", nil, "--policy is required"},
	})
}

func TestNewCmdGate(t *testing.T) {
	checkArgv(t, "gate", newGateCmd, []argvCase[gateOptions]{
		{"candidate", "gate c --policy g.yaml", &gateOptions{Candidate: "c", Policy: "g.yaml"}, ""},
		{"baseline", "gate c --baseline b --policy g.yaml", &gateOptions{Candidate: "c", Baseline: "b", Policy: "g.yaml"}, ""},
		{"no policy", "gate c", nil, "--policy is required"},
		{"two candidates", "gate c d --policy g.yaml", nil, "CANDIDATE"},
		{"locked", "gate c --policy g.yaml --lock l --key k.pub --timestamp t.tsr --tsa-cert tsa.crt",
			&gateOptions{Candidate: "c", Policy: "g.yaml", Lock: "l", Key: "k.pub", Timestamp: "t.tsr", TSACert: "tsa.crt"}, ""},
		{"lock without key", "gate c --policy g.yaml --lock l", nil, "--lock needs --key"},
		{"key without lock", "gate c --policy g.yaml --key k", nil, "give --lock"},
		{"timestamp without cert", "gate c --policy g.yaml --lock l --key k --timestamp t", nil, "--timestamp and --tsa-cert go together"},
	})
}

func TestNewCmdPlanLock(t *testing.T) {
	checkArgv(t, "plan lock", newPlanLockCmd, []argvCase[planLockOptions]{
		{"all", "plan lock p.json --policy g.yaml --key k --out l --power pw.json", &planLockOptions{Plan: "p.json", Policy: "g.yaml", Key: "k", Out: "l", Power: "pw.json"}, ""},
		{"no policy", "plan lock p.json --key k --out l", nil, "--policy is required"},
		{"no key", "plan lock p.json --policy g.yaml --out l", nil, "--key is required"},
		{"no out", "plan lock p.json --policy g.yaml --key k", nil, "--out is required"},
		{"no plan", "plan lock --policy g.yaml --key k --out l", nil, "is missing PLAN"},
	})
}

// TestEveryCommandHasNewCmdTest: every command a person can run has its
// TestNewCmd… (a checkArgv call naming its path in a test file of this
// package), so "a new command is one file and one line" keeps its test.
func TestEveryCommandHasNewCmdTest(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	call := regexp.MustCompile(`checkArgv\(t, "([^"]+)"`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(b), -1) {
			checked[m[1]] = true // "digest " (built per kind) stands for its group
		}
	}
	s, _, _, _ := ui.Test()
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() || c.Hidden || c.Name() == "help" || !c.HasParent() {
			return
		}
		if c.HasSubCommands() && !c.HasAvailableLocalFlags() {
			return // a group (plan, snapshot, …): it only lists its subcommands
		}
		path := strings.TrimPrefix(c.CommandPath(), "tpctl ")
		if !checked[path] && !checked[strings.TrimSuffix(path, c.Name())] {
			t.Errorf("'tpctl %s' has no TestNewCmd… checking argv → options (checkArgv(t, %q, …))", path, path)
		}
	}
	walk(newRootCmd(&app{io: s}))
}
