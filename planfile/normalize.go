package planfile

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/internal/jcs"
)

// Normalized returns a copy of the plan in its normalized form: defaults
// filled (settings {} and attempts [] instead of absent), trials sorted by
// (task, repeat) and each trial's attempts by retry. Call it only on a
// plan without errors. The import writes it as plan.json and hashes its
// canonical JSON (NormalizedJSON) into the round ID.
func (p *Plan) Normalized() *Plan {
	n := *p
	if n.Version == 0 {
		n.Version = 1
	}
	if n.Settings == nil {
		n.Settings = map[string]any{}
	}
	n.Trials = make([]Trial, len(p.Trials))
	for i, t := range p.Trials {
		t.Attempts = slices.Clone(t.Attempts)
		if t.Attempts == nil {
			t.Attempts = []Attempt{}
		}
		slices.SortStableFunc(t.Attempts, func(a, b Attempt) int { return cmp.Compare(a.Retry, b.Retry) })
		n.Trials[i] = t
	}
	slices.SortStableFunc(n.Trials, func(a, b Trial) int {
		return cmp.Or(cmp.Compare(a.Task, b.Task), cmp.Compare(a.Repeat, b.Repeat))
	})
	return &n
}

// NormalizedJSON returns the RFC 8785 canonical JSON of Normalized():
// members sorted, no white space, numbers in ECMAScript form. It is
// deterministic: the same plan content gives the same bytes on any
// machine, whatever the member order, spacing or trial order in the file.
// $schema is not part of it, and no path or time is added.
//
// The trials are written directly in canonical form, in sorted order,
// into one buffer: encoding the normalized copy with encoding/json and
// canonicalizing the result held the plan three times over (about 35 MB
// at 100,000 trials). Plans the direct path cannot write exactly as
// encoding/json + RFC 8785 would (invalid UTF-8, integers beyond 2^53)
// take that original path; TestNormalizedJSONPaths and FuzzParse check
// the two agree.
func (p *Plan) NormalizedJSON() ([]byte, error) {
	if b, ok, err := p.appendCanonical(nil); ok || err != nil {
		return b, err
	}
	return p.normalizedJSONSlow()
}

// normalizedJSONSlow is the reference: encoding/json, then RFC 8785.
func (p *Plan) normalizedJSONSlow() ([]byte, error) {
	b, err := json.Marshal(p.Normalized())
	if err != nil {
		return nil, fmt.Errorf("failed to encode normalized plan: %w", err)
	}
	c, err := jcs.Transform(b)
	if err != nil {
		return nil, fmt.Errorf("failed to canonicalize normalized plan: %w", err)
	}
	return c, nil
}

// maxExactInt is the largest integer RFC 8785 (IEEE 754 doubles) keeps
// exactly; beyond it the canonical form rounds.
const maxExactInt = 1 << 53

// appendCanonical appends the canonical form of Normalized() to b. ok is
// false (and b meaningless) when a value needs the slow path.
func (p *Plan) appendCanonical(b []byte) (_ []byte, ok bool, err error) {
	if b, ok = p.appendCanonicalHead(b); !ok {
		return nil, false, nil
	}
	order := make([]int32, len(p.Trials))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(x, y int32) int {
		a, c := &p.Trials[x], &p.Trials[y]
		return cmp.Or(cmp.Compare(a.Task, c.Task), cmp.Compare(a.Repeat, c.Repeat))
	})
	// Grow once to about the final size: a trial with one attempt takes
	// about 110 bytes.
	b = slices.Grow(b, 112*len(order)+64)
	var atts []Attempt
	for k, i := range order {
		t := &p.Trials[i]
		if k > 0 {
			b = append(b, ',')
		}
		atts = append(atts[:0], t.Attempts...)
		slices.SortStableFunc(atts, func(a, c Attempt) int { return cmp.Compare(a.Retry, c.Retry) })
		if b, ok = appendCanonicalTrial(b, t.Task, t.Repeat, atts); !ok {
			return nil, false, nil
		}
	}
	if b, ok = p.appendCanonicalTail(b); !ok {
		return nil, false, nil
	}
	return b, true, nil
}

// canonicalString appends s as RFC 8785 does; ok is false for invalid
// UTF-8, which only the slow path writes as encoding/json would.
func canonicalString(b []byte, s string) ([]byte, bool) {
	if !utf8.ValidString(s) {
		return b, false
	}
	return jcs.AppendString(b, s), true
}

// canonicalInt appends n; ok is false beyond what doubles hold exactly.
func canonicalInt(b []byte, n int) ([]byte, bool) {
	if n > maxExactInt || n < -maxExactInt {
		return b, false
	}
	return strconv.AppendInt(b, int64(n), 10), true
}

// appendCanonicalHead appends the canonical plan up to and including the
// opening bracket of its trials: every member sorts before "trials" but
// "version".
func (p *Plan) appendCanonicalHead(b []byte) (_ []byte, ok bool) {
	str := canonicalString
	var sub []byte // canonical settings / execution
	var err error
	// Members in RFC 8785 order (all names are ASCII, so byte order).
	b = append(b, `{"checkpoint":{"ref":`...)
	if b, ok = str(b, p.Checkpoint.Ref); !ok {
		return nil, false
	}
	if p.Checkpoint.ServedAs != "" {
		b = append(b, `,"served_as":`...)
		if b, ok = str(b, p.Checkpoint.ServedAs); !ok {
			return nil, false
		}
	}
	b = append(b, '}')
	if len(p.Execution) > 0 {
		if sub, err = jcs.Transform(p.Execution); err != nil {
			// The slow path gives the error as it reports it.
			return nil, false
		}
		b = append(b, `,"execution":`...)
		b = append(b, sub...)
	}
	b = append(b, `,"name":`...)
	if b, ok = str(b, p.Name); !ok {
		return nil, false
	}
	b = append(b, `,"protocol":{"dataset_digest":`...)
	for i, d := range []struct{ name, val string }{
		{"", p.Protocol.DatasetDigest},
		{`,"environment_digest":`, p.Protocol.EnvironmentDigest},
		{`,"harness_digest":`, p.Protocol.HarnessDigest},
		{`,"verifier_digest":`, p.Protocol.VerifierDigest},
	} {
		if i > 0 {
			b = append(b, d.name...)
		}
		if b, ok = str(b, d.val); !ok {
			return nil, false
		}
	}
	b = append(b, `},"settings":`...)
	if len(p.Settings) == 0 {
		b = append(b, "{}"...)
	} else {
		if sub, err = jcs.Marshal(p.Settings); err != nil {
			return nil, false
		}
		b = append(b, sub...)
	}
	b = append(b, `,"source":{"format":`...)
	if b, ok = str(b, p.Source.Format); !ok {
		return nil, false
	}
	b = append(b, `,"revision":`...)
	if b, ok = str(b, p.Source.Revision); !ok {
		return nil, false
	}
	b = append(b, `},"split":`...)
	if b, ok = str(b, p.Split); !ok {
		return nil, false
	}
	b = append(b, `,"trainable":`...)
	b = strconv.AppendBool(b, p.Trainable)
	return append(b, `,"trials":[`...), true
}

// appendCanonicalTrial appends one trial, its attempts already in
// ascending retry order.
func appendCanonicalTrial(b []byte, task string, repeat int, atts []Attempt) (_ []byte, ok bool) {
	b = append(b, `{"attempts":[`...)
	for j, a := range atts {
		if j > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"dir":`...)
		if b, ok = canonicalString(b, a.Dir); !ok {
			return nil, false
		}
		b = append(b, `,"retry":`...)
		if b, ok = canonicalInt(b, a.Retry); !ok {
			return nil, false
		}
		b = append(b, '}')
	}
	b = append(b, `],"repeat":`...)
	if b, ok = canonicalInt(b, repeat); !ok {
		return nil, false
	}
	b = append(b, `,"task":`...)
	if b, ok = canonicalString(b, task); !ok {
		return nil, false
	}
	return append(b, '}'), true
}

// appendCanonicalTail closes the trials and the plan.
func (p *Plan) appendCanonicalTail(b []byte) (_ []byte, ok bool) {
	version := p.Version
	if version == 0 {
		version = 1
	}
	b = append(b, `],"version":`...)
	if b, ok = canonicalInt(b, version); !ok {
		return nil, false
	}
	return append(b, '}'), true
}
