package producers_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tuneplane/tpctl/attempt"
	"github.com/tuneplane/tpctl/outcome"
	"github.com/tuneplane/tpctl/producers"
	"github.com/tuneplane/tpctl/transcript"
)

// fake is a producer of format f that detects when detect is true.
type fake struct {
	f      string
	detect bool
	rules  []outcome.Rule
}

func (p fake) Format() string { return p.f }
func (p fake) Name() string   { return "Fake " + p.f }
func (p fake) Outcomes() outcome.Table {
	return outcome.Table{Producer: p.f, Version: p.f + "/1", Rules: p.rules}
}
func (p fake) Detect(string) bool { return p.detect }
func (fake) Draft(context.Context, string, producers.DraftOptions) (*producers.Draft, error) {
	return nil, nil
}
func (fake) ReadAttempt(producers.Files, string) attempt.Attempt { return attempt.Attempt{} }
func (fake) Transcript(string, string) ([]transcript.Part, []producers.Note, error) {
	return nil, nil, nil
}
func (fake) CheckJob(string, producers.PlannedSet) (*producers.JobCheck, error) { return nil, nil }

func TestRegistry(t *testing.T) {
	a := fake{f: "a", rules: []outcome.Rule{{Reason: "x"}, {Reason: "result_missing"}, {Reason: "x"}}}
	b := fake{f: "b", detect: true, rules: []outcome.Rule{{Reason: "result_missing"}, {Reason: "y"}}}
	c := fake{f: "c", detect: true}
	r, err := producers.NewRegistry(a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Formats(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Formats = %v", got)
	}
	if got := r.Reasons(); !slices.Equal(got, []string{"x", "result_missing", "y"}) {
		t.Errorf("Reasons = %v, want each code once in registry and table order", got)
	}
	if p, err := r.For("b"); err != nil || p.Format() != "b" {
		t.Errorf("For(b) = %v, %v", p, err)
	}
	var ue *producers.UnknownFormatError
	if _, err := r.For("zz"); !errors.As(err, &ue) || ue.Error() != `no producer reads source format "zz" (tpctl reads a, b, c)` {
		t.Errorf("For(zz) error = %v", err)
	}
	var found []string
	for _, p := range r.Detect("/anywhere") {
		found = append(found, p.Format())
	}
	if !slices.Equal(found, []string{"b", "c"}) {
		t.Errorf("Detect = %v, want b, c in registry order", found)
	}
	if _, err := producers.NewRegistry(a, fake{f: "a"}); err == nil {
		t.Error("two producers of one format were accepted")
	}
	if _, err := producers.NewRegistry(fake{}); err == nil {
		t.Error("a producer without a format was accepted")
	}
	var none *producers.Registry
	if _, err := none.For("harbor"); err == nil {
		t.Error("a nil registry gave a producer")
	}
}
