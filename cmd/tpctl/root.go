package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tuneplane/tpctl/internal/configfile"
	"github.com/tuneplane/tpctl/internal/supervise"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/producers"
)

// Output formats accepted by --output.
const (
	outputText   = "text"
	outputJSON   = "json"
	outputGitHub = "github"
)

// app is the state shared by every command of one invocation.
type app struct {
	io     *ui.Streams
	config *configfile.File

	output     string
	configFile string
	noColor    bool
	color      string
	quiet      bool

	// data is stdout even under --quiet: a command whose answer is the
	// output (report --out -) writes it here.
	data io.Writer

	// prog is the live progress of the running command, if any.
	prog     *ui.Progress
	stopProg func()

	// secrets is the registry of this invocation's secrets (secretgate.go),
	// passed to everything that prints, writes, uploads or signs.
	secrets *secrets

	// noPager is --no-pager; stopPager ends the pager page started.
	noPager   bool
	stopPager func()

	// registry is the producers tpctl reads (producers.go).
	registry *producers.Registry
}

// jsonOutput reports whether machine output was requested.
func (a *app) jsonOutput() bool { return a.output == outputJSON }

// githubOutput reports whether GitHub Actions annotations were requested,
// also by TUNEPLANE_OUTPUT when a usage error stopped tpctl before the
// config was applied; an explicit --output wins.
func (a *app) githubOutput(flags *pflag.FlagSet) bool {
	if a.output == outputGitHub {
		return true
	}
	if f := flags.Lookup("output"); f != nil && f.Changed {
		return false
	}
	return os.Getenv(envName("output")) == outputGitHub
}

// githubCommands lists the commands that speak --output github.
func githubCommands() string {
	names := slices.Sorted(maps.Keys(githubOutput))
	for i, n := range names {
		names[i] = "'" + n + "'"
	}
	return strings.Join(names, ", ")
}

// commands is every verb of tpctl. A new command is one file beside this
// one (its options, its newXCmd(a, runF) and its views) and one line here;
// a subcommand is one line in its group. runF nil is the real run; tests
// pass their own to check argv → options (TestNewCmd…).
func commands(a *app) []*cobra.Command {
	return []*cobra.Command{
		group(newPlanCmd(), newPlanCheckCmd(a, nil), newPlanInitCmd(a, nil), newPlanSetCmd(a, nil), newPlanPowerCmd(a, nil), newPlanLockCmd(a, nil)),
		newImportCmd(a, nil),
		group(newSnapshotCmd(), newSnapshotShowCmd(a, nil), newSnapshotVerifyCmd(a, nil)),
		newCompareCmd(a, nil),
		newReportCmd(a, nil),
		group(newAttestCmd(a, nil), newAttestKeygenCmd(a, nil), newAttestVerifyCmd(a, nil), newAttestPredicateCmd(a, nil)),
		newExportCmd(a, nil),
		newTrendCmd(a, nil),
		newGateCmd(a, nil),
		group(newDigestCmd(),
			newDigestKindCmd(a, nil, digestKindFile), newDigestKindCmd(a, nil, digestKindDir),
			newDigestKindCmd(a, nil, digestKindJSON), newDigestKindCmd(a, nil, digestKindHarborTask)),
		group(newEvalCmd(), newEvalCheckPlanCmd(a, nil), newEvalRunCmd(a, nil)),
		newUploadCmd(a, nil),
		group(newPreflightCmd(a, nil), newPreflightVerifyCmd(a, nil)),
		group(newExplainCmd(), newExplainOutcomesCmd(a, nil), newExplainStatisticsCmd(a, nil)),
		newFormatsCmd(a, nil),
		newSchemaCmd(a, nil),
		newVersionCmd(a, nil),
		newCompletionCmd(a, nil),
	}
}

// group attaches subcommands to their parent.
func group(parent *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	parent.AddCommand(subs...)
	return parent
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "tpctl",
		Short: "Import evaluation results into TunePlane with honest counts and protocol evidence",
		Long: `tpctl turns native evaluation outputs (Harbor job folders) into content-hashed,
locally saved snapshots with honest outcome counts and protocol digests, uploads
them to the TunePlane ingest API, and compares rounds only when their protocols match.

Exit status: 0 ok; 1 a finding (plan invalid, not ready, evaluation incomplete) or
other failure; 2 usage or unreadable input; 3 upload/transport failure;
130/143 interrupted by SIGINT/SIGTERM (a second signal exits at once,
without waiting for cleanup).`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.loadConfig(cmd)
		},
	}
	root.Version = currentVersion().String()
	root.SetVersionTemplate("{{.Version}}\n")
	pf := root.PersistentFlags()
	pf.StringVarP(&a.output, "output", "o", outputText, "output format: text, json, or github (GitHub Actions annotations; for the commands that report findings)")
	pf.StringVar(&a.configFile, "config", "", "config file (.yaml, .json or .toml); keys are flag names (default $TUNEPLANE_CONFIG)")
	pf.BoolVar(&a.noColor, "no-color", false, "disable colour even on a terminal (same as --color never)")
	pf.StringVar(&a.color, "color", ui.ColorAuto, "colour: auto (on a terminal, unless NO_COLOR; CLICOLOR_FORCE forces it), always (also into a pager or CI log) or never")
	pf.BoolVarP(&a.quiet, "quiet", "q", false, "errors only: no summaries, hints, warnings or progress; exit codes unchanged (--output json and github still print theirs)")
	pf.BoolVar(&a.noPager, "no-pager", false, "never send long text output through the pager ($TUNEPLANE_PAGER, else $PAGER, else less)")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(commands(a)...)
	finishTree(root)
	return root
}

// loadConfig applies precedence flag > TUNEPLANE_* env > config file >
// default (config.go) and checks the output format.
func (a *app) loadConfig(cmd *cobra.Command) error {
	cf, err := readConfig(cmd.Root(), a.configFile)
	if err != nil {
		return err
	}
	if err := applyConfig(cmd, cf); err != nil {
		return err
	}
	a.config = cf
	switch a.color {
	case ui.ColorAuto, ui.ColorAlways, ui.ColorNever:
	default:
		return usageErr(fmt.Errorf("unknown --color %q", a.color), "use --color auto, always or never")
	}
	if cmd.Flags().Changed("color") {
		a.io.SetColorMode(a.color)
	}
	if a.secrets == nil { // an app made by a unit test; runWith makes one
		a.secrets = &secrets{}
	}
	a.secrets.load(processEnviron(), cf, a.io.ErrOut, a.jsonOutput())
	if a.noColor {
		a.io.SetColorEnabled(false)
	}
	if a.defaultsToGitHub(cmd, cf) {
		a.output = outputGitHub
	}
	switch a.output {
	case outputText, outputJSON, outputGitHub:
	default:
		return usageErr(fmt.Errorf("unknown --output %q", a.output), "use --output text or --output json")
	}
	if a.output == outputGitHub && !githubOutput[cmd.CommandPath()] {
		// Given on the command line, an output this command cannot
		// speak must not be silently ignored. From TUNEPLANE_OUTPUT or
		// the config file it is a CI-wide setting meant for the checks
		// that speak it; other commands then print text.
		if cmd.Flags().Changed("output") {
			return usageErr(fmt.Errorf("--output github is only for the commands that report findings (%s), not '%s'", githubCommands(), cmd.CommandPath()),
				"use --output text or --output json")
		}
		a.output = outputText
	}
	if a.quiet {
		a.silence(cmd)
	}
	return nil
}

// defaultsToGitHub reports whether a command that finds problems runs in
// GitHub Actions (GITHUB_ACTIONS=true) with no output chosen by --output,
// TUNEPLANE_OUTPUT or the config file: it then annotates (golangci-lint's
// convention, docs/ci.md).
func (a *app) defaultsToGitHub(cmd *cobra.Command, cf *configfile.File) bool {
	if os.Getenv("GITHUB_ACTIONS") != "true" || !githubOutput[cmd.CommandPath()] {
		return false
	}
	if cmd.Flags().Changed("output") || os.Getenv(envName("output")) != "" {
		return false
	}
	_, set := cf.Lookup("output")
	return !set
}

// quietKeepsStdout are the commands whose stdout is their answer, not a
// summary: --quiet leaves it alone.
var quietKeepsStdout = map[string]bool{
	"tpctl digest file": true, "tpctl digest dir": true, "tpctl digest json": true, "tpctl digest harbor-task": true,
	"tpctl schema": true, "tpctl completion": true, "tpctl version": true, "tpctl formats": true,
	"tpctl explain outcomes": true, "tpctl explain statistics": true, "tpctl attest predicate": true,
}

// silence applies --quiet: text summaries, warnings, hints and progress
// go nowhere; the error itself still reaches stderr (runWith prints it),
// and machine output (json, github annotations) stays, as it was asked for.
func (a *app) silence(cmd *cobra.Command) {
	if a.output == outputText && !quietKeepsStdout[cmd.CommandPath()] {
		a.io.Out = io.Discard
		cmd.Root().SetOut(io.Discard)
	}
	a.io.ErrOut = io.Discard
	cmd.Root().SetErr(io.Discard)
}

// run executes tpctl with the process's arguments and returns the exit code.
func run() int {
	if len(os.Args) == 2 && os.Args[1] == supervise.Arg {
		return supervise.Run()
	}
	// This executable is tpctl: it may re-execute itself as the
	// supervisor that stops its children if it dies (internal/supervise).
	supervise.Enable()
	return runWith(context.Background(), ui.System(), os.Args[1:])
}

// runWith is run with explicit streams and arguments, for tests.
func runWith(parent context.Context, streams *ui.Streams, args []string) int {
	ctx, stop := context.WithCancelCause(parent)
	defer stop(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	finished := make(chan struct{})
	defer close(finished)
	go watchSignals(sigs, stop, finished, streams.ErrOut, os.Exit)

	// The outgoing-text gate (docs/redactors.md): whatever a command
	// prints, a known secret value or credential pattern quoted in it (a
	// result's task_name, an ATIF step source, a server's answer) is
	// masked on its way out.
	// Table cells and wrapped text are masked before they are cut or
	// folded to the terminal's width, with the same registry (a.secrets).
	sec := newSecrets(processEnviron())
	streams.Filter(sec.writer)
	// Errors go to the real stderr even when --quiet silences the rest.
	errOut := streams.ErrOut
	a := &app{io: streams, data: streams.Out, secrets: sec}
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	err := root.ExecuteContext(ctx)
	// A live progress line is erased first, so an error (or the
	// interruption) starts on a clean line: never "…35328/50000^Ctpctl: error".
	a.endProgress()
	// The pager holds the screen until the person quits it; an error is
	// printed after, on the terminal itself.
	a.endPager()
	if err != nil && errors.Is(err, context.Canceled) {
		if cause := context.Cause(ctx); cause != nil {
			var stopped *stoppedError
			if errors.As(err, &stopped) {
				// Its message already says what was interrupted and
				// what was kept; the signal still decides the code.
				stopped.err = fmt.Errorf("%w: %w", cause, stopped.err)
			} else {
				err = fmt.Errorf("%w: %w", cause, err)
			}
		}
	}
	if err != nil {
		printError(errOut, err, a.jsonOutput(), a.quiet)
		if a.githubOutput(root.PersistentFlags()) {
			var ce *cliError
			if !errors.As(err, &ce) || !ce.quiet {
				var hints []string
				if ce != nil {
					hints = ce.hints
				}
				writeErrorGitHub(a.secrets, a.data, errOut, err, hints)
			}
		}
	}
	return int(codeOf(err))
}

// watchSignals turns the first SIGINT/SIGTERM into a cancellation whose
// cause names the signal, so the command can clean up and exit 130/143.
// A command blocked where it cannot see the context (an open(2) of a named
// pipe nobody writes to, a hung network file system) would then never end,
// and tpctl, having caught the signal, could not be stopped short of
// SIGKILL: a second signal exits at once with the code of the first.
func watchSignals(sigs <-chan os.Signal, stop context.CancelCauseFunc, finished <-chan struct{}, errOut io.Writer, exit func(int)) {
	var first interrupted
	select {
	case s := <-sigs:
		first = interrupted{signal: signalName(s)}
		stop(first)
	case <-finished:
		return
	}
	select {
	case s := <-sigs:
		fmt.Fprintf(errOut, "tpctl: error: interrupted again by %s; exiting without waiting for cleanup\n", signalName(s))
		exit(int(codeOf(first)))
	case <-finished:
	}
}

func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}
