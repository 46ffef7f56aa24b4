package main

import (
	"fmt"
	"io"
	"time"

	"github.com/tuneplane/tpctl/evalrun"
	"github.com/tuneplane/tpctl/internal/ui"
	"github.com/tuneplane/tpctl/upload"
)

// progressNow is the clock of progress lines; tests replace it.
var progressNow = time.Now

// startProgress returns the reporter for a command's long work on stderr:
// a live line on a terminal, a line every 10 s elsewhere, nothing under
// --output json (stderr then carries only the exit_error object). runWith
// clears it before printing any error, so an error starts on its own line.
func (a *app) startProgress() *ui.Progress {
	a.endProgress()
	var w io.Writer = a.io.ErrOut
	if a.jsonOutput() {
		w = io.Discard
	}
	a.prog = ui.NewProgress(w, a.io.IsStderrTTY(), progressNow)
	a.stopProg = a.prog.Start(time.Second)
	return a.prog
}

// endProgress stops the ticker and erases the live line.
func (a *app) endProgress() {
	if a.prog == nil {
		return
	}
	a.stopProg()
	a.prog.Clear()
	a.prog = nil
}

// uploadProgress turns the upload's reports into the phases "verifying
// snapshot" and "uploading", counting only acknowledged bytes.
func uploadProgress(prog *ui.Progress) func(upload.Progress) {
	phase := ""
	return func(p upload.Progress) {
		if p.Phase != phase {
			phase = p.Phase
			if p.Phase == upload.PhaseUploading {
				prog.Phase(p.Phase, int64(p.Total), "requests")
			} else {
				prog.Phase(p.Phase, 0, "")
			}
		}
		if p.Phase != upload.PhaseUploading {
			return
		}
		if p.Retry > 0 {
			prog.Note(fmt.Sprintf("%s on %s, try %d in %s", p.RetryWhy, p.Kind, p.Retry, p.RetryIn.Round(100*time.Millisecond)))
			return
		}
		detail := ui.Size(p.Acked) + " acknowledged"
		if p.Conflicts > 0 {
			detail += ", " + ui.Plural(p.Conflicts, "conflict")
		}
		prog.Update(int64(p.Done), detail)
	}
}

// evalEvents prints each of evalrun's events as a line above the live
// line; when a trial starts the live timer restarts for that trial.
func evalEvents(prog *ui.Progress) func(evalrun.Event) {
	return func(e evalrun.Event) {
		prog.Println(evalEventLine(e))
		if e.Kind == evalrun.TrialStarted {
			prog.Phase(fmt.Sprintf("running [%d/%d] %s", e.Index+1, e.Total, ui.Printable(e.TrialID)), 0, "")
		}
	}
}

// evalEventLine is the line of one event of tpctl eval run.
func evalEventLine(e evalrun.Event) string {
	head := fmt.Sprintf("tpctl: [%d/%d] %s", e.Index+1, e.Total, ui.Printable(e.TrialID))
	switch e.Kind {
	case evalrun.TrialStarted:
		return fmt.Sprintf("%s: running %s (limit %s)", head, ui.Printable(e.Name), e.Limit)
	case evalrun.TrialFinished:
		return fmt.Sprintf("%s: finished in %.1fs: %s (%s)", head, e.Duration.Seconds(), e.Status, e.Reason)
	case evalrun.StragglersKilled:
		return head + ": leftover processes in Harbor's process group were killed"
	case evalrun.TrialFailed:
		return fmt.Sprintf("%s: %s: %s", head, e.Error.Type, ui.Printable(e.Error.Message))
	case evalrun.KeepingGoing:
		return head + " did not end scored; --keep-going: running the remaining trials"
	case evalrun.Stopping:
		return fmt.Sprintf("%s did not end scored; stopping: the remaining %s not run (--keep-going runs them)", head,
			map[bool]string{true: "trial is", false: ui.Count(int64(e.Remaining)) + " trials are"}[e.Remaining == 1])
	}
	return head
}
