package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/internal/configfile"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
	"github.com/tuneplane/tpctl/planfile"
	"github.com/tuneplane/tpctl/preflight"
	"github.com/tuneplane/tpctl/snapshot"
)

// --output github speaks GitHub Actions workflow commands: one ::error or
// ::warning annotation per problem on stdout, and, when the runner sets
// GITHUB_STEP_SUMMARY, a markdown summary appended to that file.

// githubOutput lists the commands that find problems and so speak
// --output github. Other commands refuse it on the command line.
var githubOutput = map[string]bool{
	"tpctl plan check":              true,
	"tpctl eval check-plan":         true,
	"tpctl import":                  true,
	"tpctl snapshot verify":         true,
	"tpctl preflight":               true,
	"tpctl preflight verify-report": true,
	"tpctl compare":                 true,
	"tpctl eval run":                true,
	"tpctl upload":                  true,
	"tpctl gate":                    true,
}

// annotation is one workflow command (ui.Annotation).
type annotation struct {
	level        string // error, warning or notice
	file         string
	line, column int
	title        string
	message      string
}

// format is the workflow command with known secrets masked before its
// escaping: a password holding % would otherwise pass the output filter
// as %25 (the filter knows the raw and JSON forms of a value, not this
// one).
func (an annotation) format(sec *secrets) string {
	return ui.Annotation{Level: an.level, File: an.file, Line: an.line, Column: an.column, Title: an.title, Message: an.message}.
		Format(sec.mask)
}

// appendStepSummary appends markdown to $GITHUB_STEP_SUMMARY when the
// runner set it. A summary that cannot be written must not turn a passing
// check into a failure, so the error is only reported. The summary is a
// file that leaves the machine and never passes the stdout filter: known
// secrets are masked here (and in mdCell, before its escaping).
func (s *secrets) appendStepSummary(errOut io.Writer, md string) {
	md = s.mask(md)
	if err := ui.AppendStepSummary(os.Getenv(ui.StepSummaryEnv), md); err != nil {
		fmt.Fprintf(errOut, "tpctl: warning: failed to append the step summary to GITHUB_STEP_SUMMARY: %v\n", err)
	}
}

// mdCell makes text safe inside a markdown table cell, known secrets
// masked first.
func (s *secrets) mdCell(text string) string { return ui.MarkdownCell(s.mask(text)) }

// mdCode is s as inline code, safe in a table cell; secrets are masked
// before ` becomes '.
func (s *secrets) mdCode(text string) string { return ui.MarkdownCode(s.mask(text)) }

// writePlanGitHub annotates each plan finding at its file position and
// summarises the report. command names the check in the summary.
func writePlanGitHub(sec *secrets, w, errOut io.Writer, command string, rep *planfile.Report) error {
	var sb strings.Builder
	for _, f := range rep.Findings {
		msg := fmt.Sprintf("%s: %s", termsafe.Escape(displayPointer(f.Pointer)), termsafe.Escape(f.Message))
		if f.Hint != "" {
			msg += " (hint: " + f.Hint + ")"
		}
		sb.WriteString(annotation{level: f.Severity, file: rep.Plan, line: f.Line, column: f.Column, title: f.Code, message: msg}.format(sec))
	}
	errs, warns := countSeverities(rep.Findings)
	verdict := map[bool]string{true: "valid", false: "invalid"}[rep.Valid]
	fmt.Fprintf(&sb, "%s: %s, %s, %s, %s\n", rep.Plan, verdict,
		ui.Plural(rep.Trials, "trial"), ui.Plural(errs, "error"), ui.Plural(warns, "warning"))
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return err
	}
	var md strings.Builder
	icon := map[bool]string{true: "✅", false: "❌"}[rep.Valid]
	fmt.Fprintf(&md, "### %s %s %s: %s\n\n%s, %s, %s.\n\n", icon, command, sec.mdCode(rep.Plan), verdict,
		ui.Plural(rep.Trials, "trial"), ui.Plural(errs, "error"), ui.Plural(warns, "warning"))
	if len(rep.Findings) > 0 {
		md.WriteString("| severity | code | where | message | hint |\n|---|---|---|---|---|\n")
		for _, f := range rep.Findings {
			fmt.Fprintf(&md, "| %s | %s | %s | %s | %s |\n", f.Severity, sec.mdCode(f.Code),
				sec.mdCode(position(rep.Plan, f)+" "+displayPointer(f.Pointer)), sec.mdCell(f.Message), sec.mdCell(f.Hint))
		}
		md.WriteString("\n")
	}
	sec.appendStepSummary(errOut, md.String())
	return nil
}

// writeVerifyGitHub annotates each problem of a snapshot verification.
func writeVerifyGitHub(a *app, dir string, rep *snapshot.VerifyReport) error {
	var sb strings.Builder
	var md strings.Builder
	if rep.OK {
		fmt.Fprintf(&sb, "%s: every file matches and the round ID recomputes to %s\n", dir, rep.RoundID)
		fmt.Fprintf(&md, "### ✅ tpctl snapshot verify %s: intact\n\nRound %s.\n\n", a.secrets.mdCode(dir), a.secrets.mdCode(rep.RoundID))
	} else {
		fmt.Fprintf(&md, "### ❌ tpctl snapshot verify %s: %s\n\n| code | file | message |\n|---|---|---|\n", a.secrets.mdCode(dir), ui.Plural(len(rep.Problems), "problem"))
	}
	for _, p := range rep.Problems {
		file := dir
		if p.File != "" {
			file = filepath.Join(dir, p.File)
		}
		sb.WriteString(annotation{level: "error", file: file, title: p.Code, message: p.Message}.format(a.secrets))
		fmt.Fprintf(&md, "| %s | %s | %s |\n", a.secrets.mdCode(p.Code), a.secrets.mdCode(p.File), a.secrets.mdCell(p.Message))
	}
	if _, err := io.WriteString(a.io.Out, sb.String()); err != nil {
		return err
	}
	a.secrets.appendStepSummary(a.io.ErrOut, md.String()+"\n")
	return nil
}

// writePreflightGitHub annotates failed checks as errors and unchecked
// ones as warnings (unchecked is never a pass).
func writePreflightGitHub(a *app, rep *preflight.Report, job, catalog string) error {
	var sb strings.Builder
	var md strings.Builder
	verdict := map[bool]string{true: "✅ ready", false: "❌ not ready"}[rep.Ready]
	s := rep.Summary
	fmt.Fprintf(&md, "### tpctl preflight %s: %s\n\n%d pass, %d fail, %d unchecked (unchecked items were not checked; they are not passes).\n\n| check | status | reason |\n|---|---|---|\n",
		a.secrets.mdCode(job), verdict, s.Pass, s.Fail, s.Unchecked)
	for _, c := range rep.Checks {
		fmt.Fprintf(&md, "| %s | %s | %s |\n", a.secrets.mdCode(c.ID), c.Status, a.secrets.mdCell(c.Reason))
		level := ""
		switch c.Status {
		case preflight.StatusFail:
			level = "error"
		case preflight.StatusUnchecked:
			level = "warning"
		default:
			continue
		}
		an := annotation{level: level, file: job, title: "preflight " + c.ID, message: fmt.Sprintf("%s: %s: %s", c.Field, c.Status, c.Reason)}
		if len(c.Problems) > 0 {
			p := c.Problems[0]
			if p.In == "catalog" {
				an.file = catalog
			}
			an.line, an.column = p.Line, p.Column
		}
		sb.WriteString(an.format(a.secrets))
	}
	fmt.Fprintf(&sb, "%s: %s: %d pass, %d fail, %d unchecked\n", job, map[bool]string{true: "ready", false: "not ready"}[rep.Ready], s.Pass, s.Fail, s.Unchecked)
	if _, err := io.WriteString(a.io.Out, sb.String()); err != nil {
		return err
	}
	a.secrets.appendStepSummary(a.io.ErrOut, md.String()+"\n")
	return nil
}

// writeCompareGitHub annotates each reason two rounds are not comparable,
// or notes the delta when they are.
func writeCompareGitHub(a *app, base, cand string, res *compare.Result) error {
	var sb strings.Builder
	var md strings.Builder
	if res.Comparable {
		delta := "n/a"
		if res.Delta != nil {
			delta = fmt.Sprintf("%+.1f percentage points", *res.Delta*100)
		}
		sb.WriteString(annotation{level: "notice", title: "tpctl compare", message: fmt.Sprintf("%s vs %s: comparable; success-rate delta %s (not a significance claim)", base, cand, delta)}.format(a.secrets))
		fmt.Fprintf(&md, "### ✅ tpctl compare %s %s: comparable\n\nSuccess-rate delta (candidate − base): %s. %s\n\n", a.secrets.mdCode(base), a.secrets.mdCode(cand), delta, a.secrets.mdCell(res.Note))
	} else {
		fmt.Fprintf(&md, "### ❌ tpctl compare %s %s: not comparable\n\n| reason | message |\n|---|---|\n", a.secrets.mdCode(base), a.secrets.mdCode(cand))
		for _, r := range res.Reasons {
			sb.WriteString(annotation{level: "error", title: "compare " + r.Code, message: r.Message}.format(a.secrets))
			fmt.Fprintf(&md, "| %s | %s |\n", a.secrets.mdCode(r.Code), a.secrets.mdCell(r.Message))
		}
		md.WriteString("\n")
	}
	if _, err := io.WriteString(a.io.Out, sb.String()); err != nil {
		return err
	}
	a.secrets.appendStepSummary(a.io.ErrOut, md.String())
	return nil
}

// writeErrorGitHub annotates a failure the command did not report itself
// (unreadable input, a usage error), at its file when one is known.
func writeErrorGitHub(sec *secrets, w, errOut io.Writer, err error, hints []string) {
	an := annotation{level: "error", title: fmt.Sprintf("tpctl (exit %d)", codeOf(err)), message: err.Error()}
	if len(hints) > 0 {
		an.message += " (hint: " + strings.Join(hints, "; ") + ")"
	}
	var ce *configfile.Error
	var de *preflight.DecodeError
	switch {
	case errors.As(err, &ce):
		an.file, an.line, an.column = ce.Path, ce.Line, ce.Column
	case errors.As(err, &de):
		an.file = de.File
		if len(de.Problems) > 0 {
			an.line, an.column = de.Problems[0].Line, de.Problems[0].Column
		}
	}
	fmt.Fprint(w, an.format(sec))
	sec.appendStepSummary(errOut, fmt.Sprintf("### ❌ tpctl failed (exit %d)\n\n%s\n\n", codeOf(err), sec.mdCell(err.Error())))
}
