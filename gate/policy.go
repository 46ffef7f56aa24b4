package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/internal/suggest"
)

// Values of unscored_trials.
const (
	UnscoredAsFailed = "count_as_failed"
	UnscoredLeftOut  = "leave_out"
)

// Requirement values of the require rule.
const (
	RequireClean = "clean"
	RequireAny   = "any"
)

// Policy is a gate policy file (docs/ci.md). A nil pointer is a rule the
// file does not set.
type Policy struct {
	// Require is "clean" (every planned trial not quarantined is scored)
	// or "any"; "" when absent.
	Require string
	// MinSuccessRate is judged on the lower bound of the 95% interval.
	MinSuccessRate *float64
	// MaxInfraErrorRate caps infra_error / planned trials.
	MaxInfraErrorRate *float64
	// NonInferiorityMargin passes when the paired 95% lower bound of
	// candidate − baseline is at least −margin; it needs --baseline.
	NonInferiorityMargin *float64
	// AllowDegraded (baseline.allow_degraded) judges the baseline rule on
	// a pair compare calls not comparable because a round is degraded,
	// over the trials scored in both; false by default.
	AllowDegraded bool
	// UnscoredTrials says how min_success_rate treats planned trials that
	// are not scored (infra_error, unscored, missing) in a degraded round:
	// UnscoredAsFailed (the default, "" in a file that does not say)
	// judges the worst case, UnscoredLeftOut the rate over scored trials.
	UnscoredTrials string
	// MaxCostUSD caps the known spend of every attempt, retries included
	// (snapshot.Cost); most of it unknown is not enough evidence.
	MaxCostUSD *float64
	// Quarantine lists the tasks left out of every rule.
	Quarantine []string
}

// PolicyError is a policy file that cannot be used, at a line of it.
type PolicyError struct {
	File string
	Line int // 0 when not known
	Msg  string
	Hint string
}

func (e *PolicyError) Error() string {
	at := e.File
	if e.Line > 0 {
		at = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	s := fmt.Sprintf("policy %s: %s", at, e.Msg)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// MaxPolicySize caps the policy file: it is a few lines.
const MaxPolicySize = 1 << 20

var (
	topKeys      = []string{"require", "min_success_rate", "unscored_trials", "max_infra_error_rate", "max_cost_usd", "baseline", "quarantine"}
	baselineKeys = []string{"non_inferiority_margin", "allow_degraded"}
)

// LoadPolicy reads and strictly parses a policy file.
func LoadPolicy(path string) (*Policy, error) {
	b, err := safefs.ReadFileCapped(path, MaxPolicySize)
	if err != nil {
		return nil, &PolicyError{File: path, Msg: fmt.Sprintf("cannot be read: %v", err)}
	}
	return ParsePolicy(path, b)
}

// ParsePolicy strictly parses policy YAML (JSON is YAML too): every key
// known, each once, every value of its type and range, at least one rule.
func ParsePolicy(name string, data []byte) (*Policy, error) {
	fail := func(n *yaml.Node, hint, format string, args ...any) error {
		line := 0
		if n != nil {
			line = n.Line
		}
		return &PolicyError{File: name, Line: line, Msg: fmt.Sprintf(format, args...), Hint: hint}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, fail(nil, "start from: min_success_rate: 0.5", "is empty")
	} else if err != nil {
		return nil, fail(nil, "", "is not valid YAML: %v", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fail(&extra, "", "has more than one YAML document")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fail(&doc, "start from: min_success_rate: 0.5", "must be a mapping of rules")
	}
	p := &Policy{}
	seen := map[string]bool{}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if err := checkKey(k, topKeys, seen, "", fail); err != nil {
			return nil, err
		}
		var err error
		switch k.Value {
		case "require":
			if v.Kind != yaml.ScalarNode || (v.Value != RequireClean && v.Value != RequireAny) {
				return nil, fail(v, "", "require must be %q or %q", RequireClean, RequireAny)
			}
			p.Require = v.Value
		case "min_success_rate":
			p.MinSuccessRate, err = rate(v, k.Value, fail)
		case "unscored_trials":
			if v.Kind != yaml.ScalarNode || (v.Value != UnscoredAsFailed && v.Value != UnscoredLeftOut) {
				return nil, fail(v, "", "unscored_trials must be %q (judge min_success_rate on the worst case) or %q (on the scored trials only)", UnscoredAsFailed, UnscoredLeftOut)
			}
			p.UnscoredTrials = v.Value
		case "max_infra_error_rate":
			p.MaxInfraErrorRate, err = rate(v, k.Value, fail)
		case "max_cost_usd":
			p.MaxCostUSD, err = dollars(v, k.Value, fail)
		case "baseline":
			if v.Kind != yaml.MappingNode {
				return nil, fail(v, "", "baseline must be a mapping: baseline: {non_inferiority_margin: 0.05}")
			}
			bseen := map[string]bool{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				bk, bv := v.Content[j], v.Content[j+1]
				if err := checkKey(bk, baselineKeys, bseen, "baseline.", fail); err != nil {
					return nil, err
				}
				if bk.Value == "allow_degraded" {
					if bv.Kind != yaml.ScalarNode || bv.Tag != "!!bool" || bv.Decode(&p.AllowDegraded) != nil {
						return nil, fail(bv, "", "baseline.allow_degraded must be true or false, got %q", bv.Value)
					}
					continue
				}
				if p.NonInferiorityMargin, err = rate(bv, "baseline."+bk.Value, fail); err != nil {
					return nil, err
				}
			}
			if p.NonInferiorityMargin == nil {
				return nil, fail(v, "", "baseline sets no rule; give non_inferiority_margin or remove it")
			}
		case "quarantine":
			if v.Kind != yaml.SequenceNode {
				return nil, fail(v, "", "quarantine must be a list of task names: quarantine: [harbor/flaky-task]")
			}
			p.Quarantine = []string{}
			for _, e := range v.Content {
				if e.Kind != yaml.ScalarNode || e.Tag != "!!str" || e.Value == "" {
					return nil, fail(e, "", "quarantine entries must be task names")
				}
				if slices.Contains(p.Quarantine, e.Value) {
					return nil, fail(e, "", "task %q is quarantined twice", e.Value)
				}
				p.Quarantine = append(p.Quarantine, e.Value)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if p.Require == "" && p.MinSuccessRate == nil && p.MaxInfraErrorRate == nil && p.MaxCostUSD == nil && p.NonInferiorityMargin == nil {
		return nil, fail(root, "a gate without rules passes everything; set require, min_success_rate, max_infra_error_rate, max_cost_usd or baseline.non_inferiority_margin",
			"sets no rule")
	}
	return p, nil
}

func checkKey(k *yaml.Node, known []string, seen map[string]bool, prefix string, fail func(*yaml.Node, string, string, ...any) error) error {
	if k.Kind != yaml.ScalarNode {
		return fail(k, "", "keys must be plain names")
	}
	if !slices.Contains(known, k.Value) {
		hint := "known keys: " + prefix + strings.Join(known, ", "+prefix)
		if c := suggest.Closest(k.Value, known); len(c) > 0 {
			hint = fmt.Sprintf("did you mean %q?", prefix+c[0])
		}
		return fail(k, hint, "unknown key %q", prefix+k.Value)
	}
	if seen[k.Value] {
		return fail(k, "", "key %q is given twice", prefix+k.Value)
	}
	seen[k.Value] = true
	return nil
}

// dollars reads a finite amount of US dollars, zero or more.
func dollars(v *yaml.Node, key string, fail func(*yaml.Node, string, string, ...any) error) (*float64, error) {
	var x float64
	if v.Kind != yaml.ScalarNode || (v.Tag != "!!float" && v.Tag != "!!int") || v.Decode(&x) != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return nil, fail(v, "an amount of US dollars: max_cost_usd: 25", "%s must be a number of US dollars, 0 or more, got %q", key, v.Value)
	}
	return &x, nil
}

// rate reads a number in [0, 1].
func rate(v *yaml.Node, key string, fail func(*yaml.Node, string, string, ...any) error) (*float64, error) {
	var x float64
	if v.Kind != yaml.ScalarNode || (v.Tag != "!!float" && v.Tag != "!!int") || v.Decode(&x) != nil || math.IsNaN(x) || x < 0 || x > 1 {
		return nil, fail(v, "rates are fractions: 0.05 is 5%", "%s must be a number from 0 to 1, got %q", key, v.Value)
	}
	return &x, nil
}
