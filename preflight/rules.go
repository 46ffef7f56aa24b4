package preflight

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func (c *checker) paramsCheck() (ch Check) {
	ch = Check{ID: CheckParams, Field: "/params"}
	if c.recipe == nil {
		ch.Status, ch.Reason = StatusUnchecked, "the recipe is not in the catalog, so its params schema is unknown"
		return ch
	}
	sp := recipePtr(c.recipeIdx) + "/params_schema"
	if c.recipe.ParamsSchema == nil {
		ch.Status, ch.Reason = StatusUnchecked, fmt.Sprintf("catalog entry %s has no params_schema; /params was not checked", recipePtr(c.recipeIdx))
		return ch
	}
	// The schema comes from a file tpctl does not control; a library
	// panic on it must become a failed check, not a crash.
	defer func() {
		if p := recover(); p != nil {
			ch = Check{ID: CheckParams, Status: StatusFail, Field: "/params",
				Reason:   fmt.Sprintf("the params schema at catalog %s could not be used: %v", sp, p),
				Problems: []Problem{{In: "catalog", Pointer: sp, Message: fmt.Sprint(p)}}}
		}
	}()
	comp := jsonschema.NewCompiler()
	comp.UseLoader(refuseLoader{})
	url := "https://catalog.tpctl.invalid" + sp + ".json"
	var sch *jsonschema.Schema
	err := comp.AddResource(url, c.recipe.ParamsSchema)
	if err == nil {
		sch, err = comp.Compile(url)
	}
	if err != nil {
		ch.Status = StatusFail
		ch.Reason = fmt.Sprintf("the params schema at catalog %s does not compile, so /params cannot be checked: %v", sp, err)
		ch.Problems = []Problem{{In: "catalog", Pointer: sp, Message: err.Error()}}
		return ch
	}
	params := any(c.job.Params)
	if c.job.Params == nil {
		params = map[string]any{}
	}
	if err := sch.Validate(params); err != nil {
		ch.Status = StatusFail
		ch.Problems = violations(err, "job", "/params")
		first := "invalid"
		if len(ch.Problems) > 0 {
			first = ch.Problems[0].String()
			ch.Field = ch.Problems[0].Pointer
		}
		ch.Reason = fmt.Sprintf("%d violation(s) of the recipe's params schema (%s): %s", len(ch.Problems), sp, first)
		return ch
	}
	ch.Status = StatusPass
	ch.Reason = fmt.Sprintf("/params satisfies the recipe's params schema (catalog %s)", sp)
	return ch
}

// configChecks evaluates every effective-config rule of the recipe, one
// check per rule. A rule that does not compile, errors or yields a
// non-boolean fails: it never counts as a pass.
func (c *checker) configChecks() []Check {
	if c.recipe == nil {
		return []Check{{ID: CheckConfig, Status: StatusUnchecked, Field: "/config",
			Reason: "the recipe is not in the catalog, so its effective-config rules are unknown"}}
	}
	if len(c.recipe.Rules) == 0 {
		return []Check{{ID: CheckConfig, Status: StatusUnchecked, Field: "/config",
			Reason: fmt.Sprintf("framework %q of recipe %s has no static rules in the catalog (%s/rules); /config was not checked",
				c.recipe.Framework, c.recipe.Name, recipePtr(c.recipeIdx))}}
	}
	env := map[string]any{
		"params": plain(mapOrEmpty(c.job.Params)),
		"config": plain(mapOrEmpty(c.job.Config)),
		"resources": map[string]any{
			"cluster":       c.job.Resources.Cluster,
			"nodes":         c.job.Resources.Nodes,
			"gpus_per_node": c.job.Resources.GPUsPerNode,
			"gpu_type":      c.job.Resources.GPUType,
		},
	}
	seen := map[string]int{}
	out := make([]Check, 0, len(c.recipe.Rules))
	for j, rule := range c.recipe.Rules {
		id := CheckConfigRulePrefix + rule.Name
		if n := seen[rule.Name]; n > 0 {
			id += "#" + strconv.Itoa(n+1)
		}
		seen[rule.Name]++
		out = append(out, evalRule(id, rule, recipePtr(c.recipeIdx)+"/rules/"+strconv.Itoa(j), env))
	}
	return out
}

func mapOrEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func evalRule(id string, rule Rule, rp string, env map[string]any) (ch Check) {
	ch = Check{ID: id, Field: "/config"}
	defer func() {
		if p := recover(); p != nil {
			ch.Status = StatusFail
			ch.Reason = fmt.Sprintf("rule %q (catalog %s/expr) could not be evaluated: %v", rule.Name, rp, p)
			ch.Problems = []Problem{{In: "catalog", Pointer: rp + "/expr", Message: fmt.Sprint(p)}}
		}
	}()
	prog, err := expr.Compile(rule.Expr, expr.Env(env), expr.AsBool(), expr.DisableBuiltin("now"))
	if err != nil {
		ch.Status = StatusFail
		ch.Reason = fmt.Sprintf("rule %q (catalog %s/expr) does not compile: %s", rule.Name, rp, oneLine(err.Error()))
		ch.Problems = []Problem{{In: "catalog", Pointer: rp + "/expr", Message: oneLine(err.Error())}}
		return ch
	}
	fields := referencedFields(prog.Node())
	if len(fields) > 0 {
		ch.Field = fields[0]
	}
	res, err := expr.Run(prog, env)
	if err != nil {
		ch.Status = StatusFail
		ch.Reason = fmt.Sprintf("rule %q (catalog %s/expr) could not be evaluated on %s: %s", rule.Name, rp, fieldList(fields), oneLine(err.Error()))
		ch.Problems = fieldProblems(fields, "read by rule "+strconv.Quote(rule.Name)+", which could not be evaluated")
		return ch
	}
	ok, isBool := res.(bool)
	switch {
	case !isBool:
		ch.Status = StatusFail
		ch.Reason = fmt.Sprintf("rule %q (catalog %s/expr) returned %T, not a boolean", rule.Name, rp, res)
	case ok:
		ch.Status = StatusPass
		ch.Reason = fmt.Sprintf("rule %q holds on %s: %s", rule.Name, fieldList(fields), rule.Expr)
	default:
		ch.Status = StatusFail
		msg := rule.Message
		if msg == "" {
			msg = "the rule is false: " + rule.Expr
		}
		ch.Reason = fmt.Sprintf("rule %q fails on %s: %s", rule.Name, fieldList(fields), msg)
		ch.Problems = fieldProblems(fields, "read by rule "+strconv.Quote(rule.Name)+", which is false")
	}
	return ch
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func fieldList(fields []string) string {
	if len(fields) == 0 {
		return "constants"
	}
	return strings.Join(fields, ", ")
}

func fieldProblems(fields []string, msg string) []Problem {
	out := make([]Problem, 0, len(fields))
	for _, f := range fields {
		out = append(out, Problem{In: "job", Pointer: f, Message: msg})
	}
	return out
}

// referencedFields lists the job fields a rule reads, as JSON pointers
// ("/config/micro_batch_size"), so a failing rule names exact fields.
// Only the longest constant member chains from params, config and
// resources are listed.
func referencedFields(root ast.Node) []string {
	v := &fieldCollector{set: map[string]bool{}}
	ast.Walk(&root, v)
	all := slices.Sorted(maps.Keys(v.set))
	var out []string
	for i, p := range all {
		// Drop a chain that is a prefix of the next one (config vs config/x).
		if i+1 < len(all) && strings.HasPrefix(all[i+1], p+"/") {
			continue
		}
		out = append(out, p)
	}
	return out
}

type fieldCollector struct{ set map[string]bool }

func (f *fieldCollector) Visit(n *ast.Node) {
	if p, ok := memberPath(*n); ok {
		f.set[p] = true
	}
}

func memberPath(n ast.Node) (string, bool) {
	switch m := n.(type) {
	case *ast.IdentifierNode:
		switch m.Value {
		case "params", "config", "resources":
			return "/" + m.Value, true
		}
	case *ast.MemberNode:
		base, ok := memberPath(m.Node)
		if !ok {
			return "", false
		}
		switch p := m.Property.(type) {
		case *ast.StringNode:
			return base + "/" + escapePointer(p.Value), true
		case *ast.IntegerNode:
			return base + "/" + strconv.Itoa(p.Value), true
		}
		return base, true
	}
	return "", false
}

// plain converts decoded values for expressions: json.Number becomes int
// when it is an integer and float64 otherwise, so rules can do arithmetic.
func plain(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = plain(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = plain(e)
		}
		return s
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return string(x)
	}
	return v
}
