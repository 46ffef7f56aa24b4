package ui

import (
	"fmt"
	"github.com/tuneplane/tpctl/internal/ui/digits"
	"strings"

	"github.com/tuneplane/tpctl/internal/ui/termsafe"
)

// Printable is untrusted text made safe for a terminal on one line (see
// termsafe.Escape): control, bidi and invalid bytes written as Go escapes.
func Printable(s string) string { return termsafe.Escape(s) }

// PrintableLines is Printable for text of several lines: line feeds and
// tabs are kept (termsafe.Lines).
func PrintableLines(s string) string { return termsafe.Lines(s) }

// Cell is Printable for one table cell: line feeds and tabs escaped too.
func Cell(s string) string {
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(termsafe.Lines(s))
}

// Plural is n and the noun, with an "s" unless n is 1, n written with
// thousands separators: "1 trial", "20,000 trials".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return Count(int64(n)) + " " + noun + "s"
}

// Count is n with a comma between each group of three digits: "999",
// "1,000", "20,000" (digits.Group).
func Count(n int64) string { return digits.Group(n) }

// Size is a byte count in binary units: "512 B", "6.5 KiB", "1.2 MiB",
// "3.0 GiB".
func Size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Quote quotes s for a POSIX shell when it needs it, so a hint's command
// works when pasted: "out/round-1" stays as is, "my round" becomes
// 'my round', and a quote inside becomes '\”.
func Quote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+=:@%", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Command is a hint's command line: tpctl's words as given, each argument
// quoted by Quote. Command("snapshot", "verify", dir).
func Command(words ...string) string {
	parts := make([]string, 0, len(words)+1)
	parts = append(parts, "tpctl")
	for _, w := range words {
		parts = append(parts, Quote(w))
	}
	return strings.Join(parts, " ")
}
