// Package harbor reads Harbor's native output formats (trial result.json of
// the validated revisions). It is a pure adapter: it decodes from an
// io.Reader and never judges outcomes; the outcome package does that.
package harbor
