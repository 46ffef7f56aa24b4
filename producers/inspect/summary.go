package inspect

import (
	"fmt"
	"sort"
)

// Trial is one planned (sample, epoch) with its judgement.
type Trial struct {
	Planned
	// Sample is where the sample is in the log ("" when missing).
	Sample string
	// Judgement holds every attempt; a missing sample has one attempt,
	// Missing().
	Judgement Judgement
}

// Summary is a whole log read, planned and judged.
type Summary struct {
	Header *Header
	Plan   *Plan
	// Scorer is the primary scorer ("" when the log names none).
	Scorer string
	Trials []Trial
	// Unplanned are the samples the log holds outside its planned set,
	// by where they are in the log (never counted; warned about).
	Unplanned []string
	// Duplicates are samples held twice for one (sample, epoch) (the
	// first in the log's order is judged).
	Duplicates []string
	// Body and Differences set Inspect's own figures beside the body.
	Body        Body
	Differences []Difference
}

// Counts tallies the final verdicts.
func (s *Summary) Counts() map[Status]int {
	c := map[Status]int{}
	for _, t := range s.Trials {
		c[t.Judgement.Final().Status]++
	}
	return c
}

// Missing counts planned pairs with no sample.
func (s *Summary) Missing() int {
	n := 0
	for _, t := range s.Trials {
		if t.Sample == "" {
			n++
		}
	}
	return n
}

// Summarize reads every sample of l, drafts the planned set, chooses the
// primary scorer (scorer, or the only one) and judges every planned
// (sample, epoch).
func Summarize(l *Log, scorer string) (*Summary, error) {
	type held struct {
		sample *Sample
		at     string
	}
	bykey := map[string]held{}
	var order []Planned
	var sum Summary
	sum.Header = &l.Header
	var scoreNames []string
	seenName := map[string]bool{}
	err := l.Samples(SampleOptions{}, func(s *Sample) error {
		sum.Body.CountBody(s)
		p := Planned{ID: s.ID, Epoch: int(s.Epoch)}
		if _, dup := bykey[p.Key()]; dup {
			sum.Duplicates = append(sum.Duplicates, s.Member)
			return nil
		}
		bykey[p.Key()] = held{s, s.Member}
		order = append(order, p)
		for _, sc := range s.Scores {
			if !seenName[sc.Name] {
				seenName[sc.Name] = true
				scoreNames = append(scoreNames, sc.Name)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	plan, err := PlannedSet(l.Name, &l.Header, order)
	if err != nil {
		return nil, err
	}
	sum.Plan = plan
	sum.Body.Planned = len(plan.Trials)
	primary, err := PrimaryScorer(l.Name, ScorerNames(&l.Header, scoreNames), scorer)
	if err != nil {
		return nil, err
	}
	sum.Scorer = primary
	planned := map[string]bool{}
	for _, p := range plan.Trials {
		planned[p.Key()] = true
		t := Trial{Planned: p}
		if h, ok := bykey[p.Key()]; ok {
			t.Sample = h.at
			t.Judgement = Judge(h.sample, primary)
		} else {
			t.Judgement = Judgement{Attempts: []Verdict{Missing()}}
		}
		sum.Trials = append(sum.Trials, t)
	}
	for _, p := range order {
		if !planned[p.Key()] {
			sum.Unplanned = append(sum.Unplanned, fmt.Sprintf("%s (sample %s, epoch %d)", bykey[p.Key()].at, p.ID, p.Epoch))
		}
	}
	sort.Strings(sum.Unplanned)
	sum.Differences = CountsDiffer(&l.Header, sum.Body)
	return &sum, nil
}
