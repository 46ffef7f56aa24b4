// Package ui is how tpctl speaks to people and to machines: the standard
// streams of one invocation, styles, the terminal's width, the one JSON
// writer, column layout, text helpers, GitHub Actions annotations, live
// progress and the pager. It imports no other tpctl package, so every
// floor above may use it; only cmd/tpctl and this package know lipgloss.
//
// Output rules (every command follows them; change them here only):
//
//   - Results go to stdout, everything else (progress, warnings about the
//     run, errors, hints) to stderr. A command that fails prints nothing
//     half-done on stdout.
//   - Text for people: untrusted text (names, IDs, paths, messages from
//     files tpctl did not write) passes Printable (or termsafe.Lines for
//     text of several lines) before it is printed, so an ESC sequence, a
//     CR or a bidi override cannot rewrite the screen. Styles are only
//     colour and weight, never meaning: the same words are there without
//     colour, and every style is closed before a line break.
//   - Colour only on a terminal, unless forced: NO_COLOR (non-empty),
//     TERM=dumb or --no-color turn it off; CLICOLOR_FORCE (non-empty, not
//     "0") turns it on into a pipe or a CI log (ColorFor also knows the
//     always/never modes of a --color flag).
//   - Text fits the terminal: Columns elides the columns that may be cut
//     (ElideStart: at their start), wraps a WrapLast column, and stacks
//     the rows below the width where that is not enough; sentences and
//     values that can run past it go through Wrap (breaks at spaces only;
//     a value of one word, an ID or digest, is better left whole).
//     The width is $COLUMNS when set, else the terminal's, else unlimited
//     (piped text stays whole for grep).
//   - Counts read as words: Plural ("1 trial", "2 trials") and Count
//     (thousands separated: "20,000") for counts of things; Size for bytes
//     (binary units, "6.5 KiB").
//   - Hints are commands that work when pasted: paths in them go through
//     Quote (POSIX shell quoting, only when needed).
//   - --output json: JSON writes every result; see its rule. Errors under
//     --output json are one exit_error object on stderr.
//   - --output github: Annotation lines on stdout (GitHub workflow
//     commands) and a markdown step summary appended to
//     $GITHUB_STEP_SUMMARY; a summary that cannot be written is a warning,
//     never a failure.
//   - Progress only on stderr, as a self-overwriting line on a terminal and
//     a plain line every 10 s elsewhere, never under --output json; it is
//     erased before any error is printed.
//   - Long text on a terminal goes through StartPager ($TUNEPLANE_PAGER,
//     else $PAGER, else less with LESS=FRX unless LESS is set); never when
//     stdout is not a terminal, under --output json or github, or with
//     --no-pager. A pager quit early is not an error.
package ui
