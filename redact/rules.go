package redact

import (
	"context"
	"fmt"
	"regexp"

	"github.com/tuneplane/tpctl/internal/safefs"
	"go.yaml.in/yaml/v3"
)

// MaxRulesFileSize caps a rules file (1 MiB).
const MaxRulesFileSize = 1 << 20

// Rule is one ordered regex → replacement rule. Replacement may use $1 or
// ${name} to refer to groups (Go regexp Expand syntax).
type Rule struct {
	Name        string
	Pattern     *regexp.Regexp
	Replacement string
}

type rules struct {
	spec  string
	rules []Rule
}

var _ Redactor = (*rules)(nil)

// RulesError locates a problem in a rules file.
type RulesError struct {
	File    string
	Line    int    // 1-based, 0 when unknown
	Pointer string // JSON pointer into the document, e.g. /rules/2/pattern
	Msg     string
}

func (e *RulesError) Error() string {
	loc := fmt.Sprintf("rules file %q", e.File)
	if e.Line > 0 {
		loc += fmt.Sprintf(" line %d", e.Line)
	}
	if e.Pointer != "" {
		loc += " " + e.Pointer
	}
	return loc + ": " + e.Msg
}

// LoadRules reads a rules file (YAML, or JSON, which is read as YAML):
//
//	rules:
//	  - name: internal host          # optional
//	    pattern: '[a-z0-9-]+\.corp\.example\.com'
//	    replacement: '[REDACTED:host]'
//
// Rules apply in order, each to the output of the one before. Every
// problem is reported with its line and JSON pointer.
func LoadRules(spec, file string) (Redactor, error) {
	b, err := safefs.ReadFileCapped(file, MaxRulesFileSize)
	if err != nil {
		return nil, fmt.Errorf("failed to read rules file %q for redactor %q: %w", file, spec, err)
	}
	rs, err := ParseRules(file, b)
	if err != nil {
		return nil, err
	}
	return &rules{spec: spec, rules: rs}, nil
}

// ParseRules parses the content of a rules file named file.
func ParseRules(file string, b []byte) ([]Rule, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, &RulesError{File: file, Msg: "not valid YAML or JSON: " + err.Error()}
	}
	if len(doc.Content) == 0 {
		return nil, &RulesError{File: file, Msg: "is empty; it needs a top-level \"rules\" list"}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &RulesError{File: file, Line: root.Line, Pointer: "/", Msg: "must be a mapping with a \"rules\" list"}
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "rules" {
			return nil, &RulesError{File: file, Line: k.Line, Pointer: "/" + k.Value, Msg: "unknown key; the only top-level key is \"rules\""}
		}
		list = v
	}
	if list == nil {
		return nil, &RulesError{File: file, Line: root.Line, Pointer: "/rules", Msg: "missing; list the rules under \"rules:\""}
	}
	if list.Kind != yaml.SequenceNode {
		return nil, &RulesError{File: file, Line: list.Line, Pointer: "/rules", Msg: "must be a list of {pattern, replacement} rules"}
	}
	if len(list.Content) == 0 {
		return nil, &RulesError{File: file, Line: list.Line, Pointer: "/rules", Msg: "is empty; a rules redactor without rules would redact nothing"}
	}
	var out []Rule
	for i, item := range list.Content {
		ptr := fmt.Sprintf("/rules/%d", i)
		if item.Kind != yaml.MappingNode {
			return nil, &RulesError{File: file, Line: item.Line, Pointer: ptr, Msg: "must be a mapping with pattern and replacement"}
		}
		var r Rule
		var havePattern, haveRepl bool
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], item.Content[j+1]
			kp := ptr + "/" + k.Value
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				return nil, &RulesError{File: file, Line: v.Line, Pointer: kp, Msg: "must be a string"}
			}
			switch k.Value {
			case "name":
				r.Name = v.Value
			case "pattern":
				if v.Value == "" {
					return nil, &RulesError{File: file, Line: v.Line, Pointer: kp, Msg: "is empty"}
				}
				re, err := regexp.Compile(v.Value)
				if err != nil {
					return nil, &RulesError{File: file, Line: v.Line, Pointer: kp, Msg: "invalid regular expression (Go RE2 syntax): " + err.Error()}
				}
				r.Pattern, havePattern = re, true
			case "replacement":
				r.Replacement, haveRepl = v.Value, true
			default:
				return nil, &RulesError{File: file, Line: k.Line, Pointer: kp, Msg: "unknown key; a rule has name, pattern and replacement"}
			}
		}
		if !havePattern {
			return nil, &RulesError{File: file, Line: item.Line, Pointer: ptr + "/pattern", Msg: "missing"}
		}
		if !haveRepl {
			return nil, &RulesError{File: file, Line: item.Line, Pointer: ptr + "/replacement", Msg: "missing; write replacement: \"\" to delete matches"}
		}
		out = append(out, r)
	}
	return out, nil
}

func (r *rules) Name() string { return r.spec }
func (r *rules) Close() error { return nil }

func (r *rules) Redact(ctx context.Context, s string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	for _, rule := range r.rules {
		s = rule.Pattern.ReplaceAllString(s, rule.Replacement)
	}
	return s, nil
}
