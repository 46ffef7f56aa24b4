package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
	"github.com/tuneplane/tpctl/planfile"
)

// newPlanCmd is the group of tpctl plan check, plan init and plan set.
func newPlanCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Work with import plans (import-plan.json)",
		Long: `An import plan lists every trial that was meant to run, including trials that
never produced a folder: it is the denominator of every count tpctl reports.
The format is described in docs/plan-format.md and published as
schemas/import-plan.v1.json.`,
		Args: cobra.NoArgs,
	}
	return cmd
}

// planCheckOptions are the resolved inputs of `tpctl plan check`.
type planCheckOptions struct {
	Plan                  string
	Root                  string
	Strict                bool
	AllowUnverifiedFormat bool
	Output                string
}

// newPlanCheckCmd is tpctl plan check; runF nil is planCheckRun.
func newPlanCheckCmd(a *app, runF func(context.Context, *app, *planCheckOptions) error) *cobra.Command {
	if runF == nil {
		runF = planCheckRun
	}
	opts := &planCheckOptions{}
	cmd := &cobra.Command{
		Use:   "check PLAN",
		Short: "Validate an import plan: schema, digests, checkpoint, trials and folders",
		Long: `Check an import plan and report every problem at once, each with its JSON
pointer, file position, stable code and a hint. With --root, every component
of every attempt folder is lstat'ed: symlinks are refused and missing folders
are warnings (dir_missing). It works offline and never modifies anything.

Output: text (one line per finding), json (the documented contract:
{"valid","plan","trials","findings":[{"severity","code","pointer","message","hint"}]})
or github (GitHub Actions ::error/::warning annotations).

Exit status: 0 the plan is valid (warnings allowed unless --strict);
1 the plan has errors; 2 the plan cannot be read or a flag is wrong.`,
		Example: `  tpctl plan check testdata/example/import-plan.json --root testdata/example
  tpctl plan check testdata/example/import-plan.json --root testdata/example --output json
  tpctl plan check testdata/example/import-plan.json --root testdata/example --strict --output github`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Plan = args[0]
			opts.Output = a.output
			return runF(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Root, "root", "", "folder the plan's attempt dirs are relative to; enables the folder checks")
	f.BoolVar(&opts.Strict, "strict", false, "treat warnings as errors")
	f.BoolVar(&opts.AllowUnverifiedFormat, "allow-unverified-format", false, "accept a Harbor revision tpctl was not validated against (as a warning)")
	return cmd
}

func planCheckRun(ctx context.Context, a *app, opts *planCheckOptions) error {
	s := a.io
	if opts.Root != "" {
		fi, err := os.Stat(opts.Root)
		if err != nil {
			return inputErr(fmt.Errorf("cannot use --root %q: %w", opts.Root, err),
				"pass --root the folder the plan's dir paths are relative to")
		}
		if !fi.IsDir() {
			return inputErr(fmt.Errorf("--root %q is not a folder", opts.Root),
				"pass --root the folder the plan's dir paths are relative to")
		}
	}
	_, rep, err := planfile.Load(opts.Plan, planfile.Options{
		Context:               ctx,
		Root:                  opts.Root,
		Strict:                opts.Strict,
		AllowUnverifiedFormat: opts.AllowUnverifiedFormat,
		Scanner:               a.secrets.scanner(),
	})
	if err != nil {
		return inputErr(err, "check the PLAN path; 'tpctl plan init --root JOBDIR' drafts a plan from a Harbor job")
	}
	switch opts.Output {
	case outputJSON:
		err = writePlanJSON(s.Out, rep)
	case outputGitHub:
		err = writePlanGitHub(a.secrets, s.Out, s.ErrOut, "tpctl plan check", rep)
	default:
		a.page()
		err = writePlanText(s, a.secrets.mask, rep)
	}
	if err != nil {
		return fmt.Errorf("failed to write the report: %w", err)
	}
	if !rep.Valid {
		return silentFinding(errors.New("plan is invalid"))
	}
	return nil
}

func writePlanJSON(w io.Writer, rep *planfile.Report) error {
	return ui.JSON(w, struct {
		MessageType string `json:"message_type"`
		*planfile.Report
	}{"plan_check", rep})
}

// position renders "file:line:col" (or "file" when there is no position).
func position(file string, f planfile.Finding) string {
	if f.Line == 0 {
		return file
	}
	return fmt.Sprintf("%s:%d:%d", file, f.Line, f.Column)
}

func displayPointer(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func countSeverities(fs []planfile.Finding) (errs, warns int) {
	for _, f := range fs {
		if f.Severity == planfile.SeverityError {
			errs += f.Count()
		} else {
			warns += f.Count()
		}
	}
	return
}

func writePlanText(s *ui.Streams, mask func(string) string, rep *planfile.Report) error {
	st := s.Styles()
	var sb strings.Builder
	for _, f := range rep.Findings {
		sev := st.Warn.Render(f.Severity)
		if f.Severity == planfile.SeverityError {
			sev = st.Error.Render(f.Severity)
		}
		if f.More > 0 {
			// "… and N more": no place of its own.
			fmt.Fprintf(&sb, "%s: %s %s: %s\n", rep.Plan, sev, st.Bold.Render(f.Code), termsafe.Escape(f.Message))
		} else {
			fmt.Fprintf(&sb, "%s: %s %s %s: %s\n", position(rep.Plan, f), sev, st.Bold.Render(f.Code), termsafe.Escape(displayPointer(f.Pointer)), termsafe.Escape(f.Message))
		}
		if f.Hint != "" {
			fmt.Fprintf(&sb, "    %s\n", st.Faint.Render("hint: "+termsafe.Escape(f.Hint)))
		}
	}
	errs, warns := countSeverities(rep.Findings)
	summary := fmt.Sprintf("%s: %s, %s, %s", rep.Plan,
		map[bool]string{true: "valid", false: "invalid"}[rep.Valid],
		ui.Plural(rep.Trials, "trial"),
		ui.Plural(errs, "error")+", "+ui.Plural(warns, "warning"))
	if rep.Valid {
		summary = st.OK.Render(summary)
	} else {
		summary = st.Error.Render(summary)
	}
	sb.WriteString(summary + "\n")
	// Each finding still starts with its file:line:col; a long one
	// continues on indented lines.
	_, err := io.WriteString(s.Out, ui.Wrap(sb.String(), s.Width(), mask))
	return err
}

// planSetOptions are the resolved inputs of tpctl plan set.
type planSetOptions struct {
	Plan, Pointer, Value string
}

// newPlanSetCmd is tpctl plan set; runF nil is planSetRun.
func newPlanSetCmd(a *app, runF func(context.Context, *app, *planSetOptions) error) *cobra.Command {
	if runF == nil {
		runF = planSetRun
	}
	opts := &planSetOptions{}
	cmd := &cobra.Command{
		Use:   "set PLAN POINTER VALUE",
		Short: "Set one value of an import plan at a JSON pointer, checked against the schema",
		Long: `Set replaces the value at POINTER (RFC 6901, e.g. /split or
/protocol/verifier_digest) with VALUE, or adds it as a new member of an
existing object (a settings key, checkpoint.served_as). Every other byte of the
file is kept, so its formatting and member order stay as they were, and the
file is replaced atomically.

VALUE is one JSON value (4, true, {"a": 1}, "text"); where the plan holds a
string, bare text is that string. The result is checked against the plan
schema before anything is written: a wrong type or digest form, a member the
schema does not define, or a pointer into nothing is refused with exit status
2, naming the closest valid pointer. Findings elsewhere in the plan (other
placeholders) are left to 'tpctl plan check'.`,
		Example: `  tpctl plan set import-plan.json /split heldout
  tpctl plan set import-plan.json /checkpoint/ref hf://acme/coder-7b@3f0c9d2e5b7a41c8e6f2d9b0a1c3e5f7a9b1d3e5
  tpctl plan set import-plan.json /settings/max_tokens 4096`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Plan, opts.Pointer, opts.Value = args[0], args[1], args[2]
			return runF(cmd.Context(), a, opts)
		},
	}
	return cmd
}

func planSetRun(_ context.Context, a *app, o *planSetOptions) error {
	if err := setPlanValue(o.Plan, o.Pointer, []byte(o.Value)); err != nil {
		return err
	}
	fmt.Fprintf(a.io.ErrOut, "tpctl: set %s in %s\n", termsafe.Escape(o.Pointer), termsafe.Escape(o.Plan))
	return nil
}

// setPlanValue is plan set and digest --set: read, Set, write atomically.
func setPlanValue(plan, pointer string, value []byte) error {
	data, err := safefs.ReadFileCapped(plan, planfile.MaxPlanSize)
	if err != nil {
		return inputErr(fmt.Errorf("cannot read the plan: %w", err), "give the plan file 'tpctl plan init' wrote")
	}
	out, err := planfile.Set(data, pointer, value, planfile.Options{})
	if err != nil {
		var pe *planfile.PointerError
		var ve *planfile.ValueError
		switch {
		case errors.As(err, &pe):
			hint := "pointers are RFC 6901, e.g. /split, /protocol/dataset_digest, /settings/temperature"
			if pe.Closest != "" {
				hint = "did you mean " + pe.Closest + "?"
			}
			return usageErr(fmt.Errorf("%s: %w", plan, err), hint)
		case errors.As(err, &ve):
			return usageErr(fmt.Errorf("%s: %w", plan, err), "give a value of the type the plan format wants there (docs/plan-format.md)")
		}
		return inputErr(fmt.Errorf("%s: %w", plan, err))
	}
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(plan); err == nil {
		perm = fi.Mode().Perm()
	}
	// A snapshot's plan.json is never edited in place (it would break
	// the snapshot), nor a plan that is a link or not a regular file.
	if err := safefs.WriteBeside(plan, out, perm, true); err != nil {
		var inside *safefs.InsideSnapshotError
		var notRegular *safefs.NotRegularError
		if errors.As(err, &inside) || errors.As(err, &notRegular) {
			return err
		}
		return fmt.Errorf("failed to write %s: %w", plan, err)
	}
	return nil
}
