package main

// page sends the rest of this command's standard output through the pager
// (ui.StartPager) when it is text for a person on a terminal: never under
// --output json or github, never with --no-pager or --quiet (whose
// silenced stdout the pager must not reopen), never into a pipe. A
// command calls it once its result is known, just before printing it, so
// an error found earlier is not shown inside a pager. runWith ends the
// pager before printing any error.
func (a *app) page() {
	if a.output != outputText || a.quiet || a.stopPager != nil {
		return
	}
	a.endProgress()
	a.stopPager = a.io.StartPager(a.noPager)
}

// endPager closes the pager's input and waits for the person to quit it.
func (a *app) endPager() {
	if a.stopPager == nil {
		return
	}
	a.stopPager()
	a.stopPager = nil
}
