package inspect

import (
	"fmt"
	"strconv"
)

// Body is what tpctl counted in a log's body, to set beside Inspect's own
// figures.
type Body struct {
	// Planned is the planned (sample, epoch) count.
	Planned int
	// Present is the samples the log holds (planned or not).
	Present int
	// Scored counts, per scorer name, the samples whose score
	// value_to_float converts to a number (not NaN): what Inspect calls a
	// scored sample.
	Scored map[string]int
	// Unscored counts, per scorer name, the samples with that scorer's
	// score but no number (Score.unscored, or not convertible).
	Unscored map[string]int
}

// CountBody counts samples for Body's per-scorer figures.
func (b *Body) CountBody(s *Sample) {
	b.Present++
	if b.Scored == nil {
		b.Scored, b.Unscored = map[string]int{}, map[string]int{}
	}
	for _, sc := range s.Scores {
		f, ok := valueToFloat(sc.value)
		if ok && f == f { // not NaN
			b.Scored[sc.Name]++
		} else {
			b.Unscored[sc.Name]++
		}
	}
}

// Difference is one of Inspect's figures that the log's body does not
// bear out.
type Difference struct {
	// Field is the header field (results.completed_samples,
	// results.scores[match].scored_samples).
	Field string `json:"field"`
	// Inspect is the header's figure; Body is what the body holds.
	Inspect int64 `json:"inspect"`
	Body    int64 `json:"log_body"`
	// Why words the difference.
	Why string `json:"why"`
}

func (d Difference) String() string {
	return d.Field + " says " + strconv.FormatInt(d.Inspect, 10) + ", the log holds " + strconv.FormatInt(d.Body, 10) + ": " + d.Why
}

// CodeCountsDiffer is the warning code for a header whose figures differ
// from the log's body: the import never believes the header.
const CodeCountsDiffer = "producer_counts_differ"

// CountsDiffer sets Inspect's own figures (results.total_samples,
// completed_samples, each score's scored and unscored counts) beside the
// body's and returns every one that differs. A log with no results block
// has nothing to compare.
func CountsDiffer(h *Header, b Body) []Difference {
	r := h.Results
	if r == nil {
		return nil
	}
	var out []Difference
	if r.TotalSamples != int64(b.Planned) {
		out = append(out, Difference{"results.total_samples", r.TotalSamples, int64(b.Planned),
			"Inspect's total differs from the planned (sample, epoch) pairs (eval.dataset.sample_ids × epochs)"})
	}
	if r.CompletedSamples != int64(b.Present) {
		why := "Inspect counts completions the log holds no sample for"
		if r.CompletedSamples < int64(b.Present) {
			why = "the log holds samples Inspect did not count as completed (errored samples drop out of its count)"
		}
		out = append(out, Difference{"results.completed_samples", r.CompletedSamples, int64(b.Present), why})
	}
	if h.Epochs > 1 {
		// Inspect's per-score counts are over reduced samples (one per
		// sample across epochs); the body's are per (sample, epoch).
		return out
	}
	for _, s := range r.Scores {
		name := s.Scorer
		if name == "" {
			name = s.Name
		}
		if s.Scored != nil && *s.Scored != int64(b.Scored[name]) {
			out = append(out, Difference{fmt.Sprintf("results.scores[%s].scored_samples", s.Name), *s.Scored, int64(b.Scored[name]),
				"the samples holding a number for this scorer differ from Inspect's scored count"})
		}
		if s.Unscored != nil && *s.Unscored != int64(b.Unscored[name]) {
			out = append(out, Difference{fmt.Sprintf("results.scores[%s].unscored_samples", s.Name), *s.Unscored, int64(b.Unscored[name]),
				"the samples holding no number for this scorer differ from Inspect's unscored count"})
		}
	}
	return out
}
