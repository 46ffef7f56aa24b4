package planfile

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/internal/formats"
	"github.com/tuneplane/tpctl/internal/safefs"
	"github.com/tuneplane/tpctl/internal/ui/termsafe"
	"github.com/tuneplane/tpctl/redact"
)

// Parse decodes and checks a plan without touching the filesystem: strict
// syntax, the embedded schema and every semantic rule that needs no files.
// name is used only in messages. The plan is nil when data is not a JSON
// object; otherwise it holds every well-typed field even when there are
// findings, so callers can still count trials. Findings are sorted by
// pointer then code.
func Parse(data []byte, name string, opts Options) (*Plan, []Finding) {
	root, d, ok := decodePlan(data, opts.AllowExecution)
	if !ok {
		return nil, finish(data, d.found, opts)
	}
	found := d.found
	obj, isObj := root.(map[string]any)
	if !isObj {
		found = append(found, pending{Finding: Finding{
			Severity: SeverityError, Code: CodeSchema, Pointer: "",
			Message: fmt.Sprintf("%s holds a JSON %s, not an object", name, jsonTypeName(root)),
			Hint:    "an import plan is one JSON object; see docs/plan-format.md",
		}, off: 0})
		return nil, finish(data, found, opts)
	}
	// Secrets are looked for everywhere, execution included; the trials
	// were looked at as they were streamed.
	found = append(found, secretFields(obj)...)
	st := d.stream
	if st.started {
		found = append(found, st.found...)
	}
	if d.hasExec {
		// Eval plans (SPEC §8) carry an execution section whose rules live
		// with the evaluator; it is kept raw and kept out of the schema.
		delete(obj, "execution")
	}
	found = append(found, validateSchema(st.schemaView(obj))...)
	p, c := fromTree(obj)
	if st.started {
		p.Trials, c.trialOK, c.attempts = st.trials, st.trialOK, st.flags
	}
	if d.hasExec {
		p.Execution = json.RawMessage(d.execRaw)
	}
	found = append(found, c.rules(p, opts)...)
	return p, finish(data, found, opts)
}

// finish locates, de-duplicates, applies --strict and sorts.
func finish(data []byte, ps []pending, opts Options) []Finding {
	// A specific finding on a field (digest_format on a digest) makes the
	// generic schema finding on the same pointer redundant.
	specific := map[string]bool{}
	for _, p := range ps {
		if p.Code != CodeSchema {
			specific[p.Pointer] = true
		}
	}
	kept := ps[:0:0]
	for _, p := range ps {
		if p.Code == CodeSchema && specific[p.Pointer] {
			continue
		}
		kept = append(kept, p)
	}
	fs := place(data, kept)
	if opts.Strict {
		promote(fs)
	}
	SortFindings(fs)
	return capFindings(fs)
}

func promote(fs []Finding) {
	for i := range fs {
		if fs[i].Severity == SeverityWarning {
			fs[i].Severity = SeverityError
		}
	}
}

func jsonTypeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

// converted remembers which trials and attempts were well-typed, so that
// uniqueness rules only compare values the schema accepted.
type converted struct {
	trialOK []bool
	// attempts holds the per-attempt flags of the few trials whose
	// attempts are not all well-typed; absent means all are.
	attempts       map[int]attemptFlags
	hasSettings    bool
	hasCheckpoint  bool
	digestIsString map[string]bool
}

// attemptFlags says, per attempt, whether retry and dir were well-typed.
type attemptFlags struct {
	retryOK, dirOK []bool
}

func (c *converted) retryOK(i, j int) bool {
	f, ok := c.attempts[i]
	return !ok || f.retryOK[j]
}

func (c *converted) dirOK(i, j int) bool {
	f, ok := c.attempts[i]
	return !ok || f.dirOK[j]
}

// fromTree copies every well-typed field of the decoded object into a Plan.
// Wrong types are already schema findings and are skipped here.
func fromTree(obj map[string]any) (*Plan, *converted) {
	p := &Plan{}
	c := &converted{digestIsString: map[string]bool{}}
	if n, ok := asInt(obj["version"]); ok {
		p.Version = n
	}
	if m, ok := obj["source"].(map[string]any); ok {
		p.Source.Format, _ = m["format"].(string)
		p.Source.Revision, _ = m["revision"].(string)
	}
	p.Name, _ = obj["name"].(string)
	p.Split, _ = obj["split"].(string)
	p.Trainable, _ = obj["trainable"].(bool)
	if m, ok := obj["checkpoint"].(map[string]any); ok {
		c.hasCheckpoint = true
		p.Checkpoint.Ref, _ = m["ref"].(string)
		p.Checkpoint.ServedAs, _ = m["served_as"].(string)
	}
	if m, ok := obj["protocol"].(map[string]any); ok {
		p.Protocol.DatasetDigest, _ = m["dataset_digest"].(string)
		p.Protocol.VerifierDigest, _ = m["verifier_digest"].(string)
		p.Protocol.EnvironmentDigest, _ = m["environment_digest"].(string)
		p.Protocol.HarnessDigest, _ = m["harness_digest"].(string)
		for k, v := range m {
			_, c.digestIsString[k] = v.(string)
		}
	}
	if m, ok := obj["settings"].(map[string]any); ok {
		p.Settings = m
		c.hasSettings = true
	}
	trials, _ := obj["trials"].([]any)
	p.Trials = make([]Trial, 0, len(trials))
	c.trialOK = make([]bool, 0, len(trials))
	for i, tv := range trials {
		t, ok, flags := convertTrial(tv)
		p.Trials = append(p.Trials, t)
		c.trialOK = append(c.trialOK, ok)
		if flags != nil {
			if c.attempts == nil {
				c.attempts = map[int]attemptFlags{}
			}
			c.attempts[i] = *flags
		}
	}
	return p, c
}

// convertTrial copies the well-typed fields of one trial. ok says whether
// task and repeat were well-typed; flags is nil when every attempt's retry
// and dir were.
func convertTrial(tv any) (t Trial, ok bool, flags *attemptFlags) {
	tm, _ := tv.(map[string]any)
	task, okTask := tm["task"].(string)
	rep, okRep := asInt(tm["repeat"])
	t.Task, t.Repeat = task, rep
	ok = okTask && task != "" && okRep && rep >= 0
	atts, _ := tm["attempts"].([]any)
	t.Attempts = make([]Attempt, 0, len(atts))
	var f attemptFlags
	allOK := true
	for j, av := range atts {
		am, _ := av.(map[string]any)
		var a Attempt
		r, okR := asInt(am["retry"])
		dir, okD := am["dir"].(string)
		a.Retry, a.Dir = r, dir
		t.Attempts = append(t.Attempts, a)
		if good := okR && r >= 0 && okD; !good && allOK {
			allOK = false
			f.retryOK = make([]bool, len(atts))
			f.dirOK = make([]bool, len(atts))
			for k := 0; k < j; k++ {
				f.retryOK[k], f.dirOK[k] = true, true
			}
		}
		if !allOK {
			f.retryOK[j], f.dirOK[j] = okR && r >= 0, okD
		}
	}
	if !allOK {
		flags = &f
	}
	return t, ok, flags
}

// asInt accepts a JSON number with no fractional part ("2", "2.0", "2e0")
// in a range far beyond any plan's needs; the schema reports the rest.
func asInt(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := strconv.Atoi(string(n)); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1e9 {
		return 0, false
	}
	return int(f), true
}

func errAt(code, ptr, msg, hint string) pending {
	return pending{Finding: Finding{Severity: SeverityError, Code: code, Pointer: ptr, Message: msg, Hint: hint}, off: -1}
}

func warnAt(code, ptr, msg, hint string) pending {
	return pending{Finding: Finding{Severity: SeverityWarning, Code: code, Pointer: ptr, Message: msg, Hint: hint}, off: -1}
}

const digestHint = "compute it with 'tpctl digest file|dir|json|harbor-task PATH' and paste the 64-hex result"

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// rules applies the semantic rules of SPEC §1 that need no filesystem.
func (c *converted) rules(p *Plan, opts Options) []pending {
	var out []pending

	// Digests: lowercase 64-hex SHA-256, never a REPLACE_ placeholder.
	for _, d := range []struct{ name, val string }{
		{"dataset_digest", p.Protocol.DatasetDigest},
		{"verifier_digest", p.Protocol.VerifierDigest},
		{"environment_digest", p.Protocol.EnvironmentDigest},
		{"harness_digest", p.Protocol.HarnessDigest},
	} {
		ptr := "/protocol/" + d.name
		switch {
		case d.val == "":
			// Missing or wrong type: already a schema finding; an empty
			// string is reported here.
			if c.digestIsString[d.name] {
				out = append(out, errAt(CodeDigestFormat, ptr, "digest is empty", digestHint))
			}
		case strings.HasPrefix(d.val, "REPLACE_"):
			out = append(out, errAt(CodeDigestPlaceholder, ptr,
				fmt.Sprintf("%s is still the placeholder %q", d.name, clip(d.val)), digestHint))
		case !isLowerHex(d.val, 64):
			out = append(out, errAt(CodeDigestFormat, ptr, digestProblem(d.name, d.val), digestHint))
		}
	}

	// Other fields plan init leaves for a person (split).
	for _, f := range []struct{ ptr, val string }{
		{"/split", p.Split},
		{"/name", p.Name},
		{"/checkpoint/served_as", p.Checkpoint.ServedAs},
	} {
		if strings.HasPrefix(f.val, "REPLACE_") {
			out = append(out, errAt(CodePlaceholder, f.ptr,
				fmt.Sprintf("%s is still the placeholder %q", f.ptr[1:], clip(f.val)),
				"set it: tpctl plan set PLAN "+f.ptr+" VALUE"))
		}
	}

	// Identity text reaches terminals, logs and the platform: a control
	// or bidi character in it could forge output there (internal/termsafe).
	out = append(out, controlRules(p)...)
	out = append(out, secretValueRules(p, opts.Scanner)...)

	// Checkpoint: pinned by content.
	if !pinned(p.Checkpoint.Ref) {
		msg := fmt.Sprintf("checkpoint ref %q is not pinned by content", clip(p.Checkpoint.Ref))
		if p.Checkpoint.Ref == "" {
			msg = "checkpoint ref is missing, empty or not a string"
		}
		ptr := "/checkpoint/ref"
		if !c.hasCheckpoint {
			ptr, msg = "/checkpoint", "checkpoint is missing"
		}
		out = append(out, errAt(CodeCheckpointUnpinned, ptr, msg,
			"end the ref in @sha256:<64 hex> or @<40-hex revision>; branches, tags and 'latest' can move"))
	}

	// The producer's revision: one its wing was validated against. An
	// unknown format is the schema's finding; its revision is then checked
	// as Harbor's, the one format before there were producers.
	format := p.Source.Format
	if !formats.Known(format) {
		format = formats.HarborFormat
	}
	if rev := p.Source.Revision; rev != "" && !formats.Validated(format, rev) {
		f := errAt(CodeRevisionUnverified, "/source/revision",
			fmt.Sprintf("%s revision %q is not one tpctl was validated against", format, clip(rev)),
			"run 'tpctl formats' for the validated revisions, or pass --allow-unverified-format (the snapshot then records format_verified: false)")
		if opts.AllowUnverifiedFormat {
			f.Severity = SeverityWarning
		}
		out = append(out, f)
	}

	// Trials, retries and folders. Duplicates are found by stable sorts
	// of indexes rather than maps: the first of each group of equal keys
	// is the earliest in the file, as a map of first occurrences gives,
	// at a fraction of the memory (maps of 100,000 trials and folders
	// were about 10 MB while the plan file is still in memory).
	// The duplicate rules can fire once per trial: past the cap they only
	// count (a plan of a million copies of one trial builds no million
	// messages).
	capped := findingCounter{}
	tptr := func(i int) string { return "/trials/" + strconv.Itoa(i) }
	aptr := func(i, j int) string { return tptr(i) + "/attempts/" + strconv.Itoa(j) }
	trialIdx := make([]int32, 0, len(p.Trials))
	for i := range p.Trials {
		if c.trialOK[i] {
			trialIdx = append(trialIdx, int32(i))
		}
	}
	slices.SortStableFunc(trialIdx, func(x, y int32) int {
		a, b := &p.Trials[x], &p.Trials[y]
		return cmp.Or(cmp.Compare(a.Task, b.Task), cmp.Compare(a.Repeat, b.Repeat))
	})
	for k, first := 1, 0; k < len(trialIdx); k++ {
		if !sameTrial(&p.Trials[trialIdx[k]], &p.Trials[trialIdx[first]]) {
			first = k
			continue
		}
		i, f := int(trialIdx[k]), int(trialIdx[first])
		if !capped.room(SeverityError, CodeDuplicateTrial) {
			continue
		}
		out = append(out, errAt(CodeDuplicateTrial, tptr(i),
			fmt.Sprintf("trial %q is planned twice (first at /trials/%d)", p.Trials[i].ID(), f),
			"give each sample of a task its own repeat number; a re-execution of the same sample is a higher retry in one trial's attempts"))
	}

	type dirRef struct {
		clean string
		i, j  int32
	}
	dirs := make([]dirRef, 0, len(p.Trials))
	var seenRetry map[int]int // only for trials with many attempts
	for i, t := range p.Trials {
		trialRules(&p.Trials[i], true, func(j int) bool { return c.dirOK(i, j) }, opts.Scanner,
			func(h trialHit) { out = append(out, h.finding(&p.Trials[i], i, opts.Scanner)) })
		if len(t.Attempts) > 16 {
			if seenRetry == nil {
				seenRetry = map[int]int{}
			}
			clear(seenRetry)
		}
		for j, a := range t.Attempts {
			if !c.retryOK(i, j) {
				// Reported by the schema; not compared.
			} else if first, dup := c.firstRetry(t.Attempts, i, j, seenRetry); dup && capped.room(SeverityError, CodeDuplicateRetry) {
				out = append(out, errAt(CodeDuplicateRetry, aptr(i, j)+"/retry",
					fmt.Sprintf("retry %d appears twice in trial %q (first at %s/attempts/%d)", a.Retry, t.ID(), tptr(i), first),
					"number the attempts of one trial 0, 1, 2, …; the highest retry is the trial's result"))
			}
			if !c.dirOK(i, j) {
				continue
			}
			// Compare cleaned forms so a/b and a//b are one folder; the
			// unclean spelling is also reported above as path_unclean.
			if a.Dir != "" && !strings.HasPrefix(a.Dir, "/") {
				dirs = append(dirs, dirRef{path.Clean(a.Dir), int32(i), int32(j)})
			}
		}
	}
	slices.SortStableFunc(dirs, func(x, y dirRef) int { return strings.Compare(x.clean, y.clean) })
	for k, first := 1, 0; k < len(dirs); k++ {
		if dirs[k].clean != dirs[first].clean {
			first = k
			continue
		}
		d, f := dirs[k], dirs[first]
		if !capped.room(SeverityError, CodeDuplicateDir) {
			continue
		}
		out = append(out, errAt(CodeDuplicateDir, aptr(int(d.i), int(d.j))+"/dir",
			fmt.Sprintf("folder %q is already used at /trials/%d/attempts/%d/dir", p.Trials[d.i].Attempts[d.j].Dir, f.i, f.j),
			"each attempt has its own folder; only the plan says which trial a folder belongs to"))
	}

	out = append(out, capped.summaries()...)
	out = append(out, c.settingsRules(p)...)
	return out
}

func sameTrial(a, b *Trial) bool { return a.Task == b.Task && a.Repeat == b.Repeat }

// firstRetry reports whether attempt j of trial i repeats the retry of an
// earlier well-typed attempt, and the first such attempt. Trials have a
// few attempts, so they are compared directly; seen (cleared per trial by
// the caller) is used past 16.
func (c *converted) firstRetry(atts []Attempt, i, j int, seen map[int]int) (int, bool) {
	if len(atts) > 16 {
		first, dup := seen[atts[j].Retry]
		if !dup {
			seen[atts[j].Retry] = j
		}
		return first, dup
	}
	for k := 0; k < j; k++ {
		if c.retryOK(i, k) && atts[k].Retry == atts[j].Retry {
			return k, true
		}
	}
	return 0, false
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

func digestProblem(name, v string) string {
	lower := strings.ToLower(v)
	switch {
	case strings.HasPrefix(lower, "sha256:"):
		return fmt.Sprintf("%s %q has a prefix; give only the 64 lowercase hex characters", name, clip(v))
	case isLowerHex(lower, 64):
		return fmt.Sprintf("%s %q has uppercase letters; digests are lowercase hex", name, clip(v))
	case isLowerHex(lower, len(lower)):
		return fmt.Sprintf("%s %q has %d hex characters, not 64 (a SHA-256 digest)", name, clip(v), len(v))
	}
	return fmt.Sprintf("%s %q is not a SHA-256 digest (64 lowercase hex characters)", name, clip(v))
}

// pinned reports whether a checkpoint ref ends in @sha256:<64 hex> or
// @<40 hex>, the two content pins SPEC §1 accepts.
func pinned(ref string) bool {
	i := strings.LastIndexByte(ref, '@')
	if i <= 0 {
		return false
	}
	pin := ref[i+1:]
	if h, ok := strings.CutPrefix(pin, "sha256:"); ok {
		return isLowerHex(h, 64)
	}
	return isLowerHex(pin, 40)
}

func pathFinding(ptr, dir string, err error) pending {
	code := CodePathUnclean
	if pe, ok := err.(*safefs.PathError); ok {
		code = pe.Code
	}
	hint := map[string]string{
		CodePathAbsolute:  "give the folder relative to --root, e.g. jobs/<job>/<trial>",
		CodePathTraversal: "remove '..'; every folder must be inside --root",
		CodePathUnclean:   "write it with single forward slashes and no '.', empty or trailing segments",
	}[code]
	msg := err.Error()
	if code == CodePathUnclean && strings.Contains(dir, "\\") {
		msg = fmt.Sprintf("path %q contains a backslash; use forward slashes", dir)
	}
	return errAt(code, ptr, msg, hint)
}

// settingsCategory is one part of the evaluation settings the settings
// digest must cover (SPEC §1), with the keys that count for it. A key
// named like the category itself (e.g. "generation": {...}) also counts.
type settingsCategory struct {
	Name string
	Keys []string
}

// SettingsCategories lists the categories settings_incomplete checks and
// the top-level settings keys that satisfy each (docs/plan-format.md).
var SettingsCategories = []settingsCategory{
	{"generation", []string{"generation", "sampling", "temperature", "top_p", "top_k", "min_p", "seed", "max_tokens", "max_new_tokens", "max_output_tokens", "frequency_penalty", "presence_penalty", "repetition_penalty", "stop"}},
	{"context", []string{"context", "context_window", "context_length", "max_context_tokens", "max_input_tokens", "max_model_len", "truncation"}},
	{"repeats", []string{"repeats", "n_repeats", "n_attempts"}},
	{"runtime", []string{"runtime", "max_turns", "timeout_sec", "agent_timeout_sec", "verifier_timeout_sec", "timeout_multiplier", "environment", "environment_type"}},
	{"tool/network policy", []string{"tools", "tool_policy", "tool_choice", "network", "network_policy", "allow_internet"}},
}

func (c *converted) settingsRules(p *Plan) []pending {
	var missing []string
	for _, cat := range SettingsCategories {
		found := false
		for _, k := range cat.Keys {
			if _, ok := p.Settings[k]; ok {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, cat.Name)
		}
	}
	var out []pending
	if len(missing) > 0 {
		ptr := "/settings"
		if !c.hasSettings {
			ptr = ""
		}
		out = append(out, warnAt(CodeSettingsIncomplete, ptr,
			"settings do not record: "+strings.Join(missing, ", "),
			"add the missing settings so the settings digest covers them (keys per category: docs/plan-format.md)"))
	}
	// Numbers outside float64 cannot be canonicalised (RFC 8785) for the
	// settings digest.
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(ptr+"/"+escapePointer(k), x[k])
			}
		case []any:
			for i, e := range x {
				walk(ptr+"/"+strconv.Itoa(i), e)
			}
		case json.Number:
			if f, err := strconv.ParseFloat(string(x), 64); err != nil || math.IsInf(f, 0) {
				out = append(out, errAt(CodeSchema, ptr,
					fmt.Sprintf("number %s is out of range for a 64-bit float", clip(string(x))),
					"use a smaller number or a string"))
			}
		}
	}
	if c.hasSettings {
		walk("/settings", p.Settings)
	}
	return out
}

// trialRules are the rules on one trial's own text, stated once for Load
// (which reports every finding) and Scan (which declines a plan as soon
// as one would be reported): the task and each attempt's folder hold no
// control or bidi character (controlFinding) and no secret s knows
// (secretFinding), and each well-typed folder (dirOK) is a clean
// relative path inside the root (pathFinding). Each broken rule is
// reported as a trialHit, which finding turns into the finding (pointers
// are built only then). checkTask false skips the task (Scan, for the
// task of the trial before, which was checked).
func trialRules(t *Trial, checkTask bool, dirOK func(j int) bool, s *redact.Scanner, report func(trialHit)) {
	text := func(j int, v string) {
		if termsafe.Contains(v) {
			report(trialHit{rule: ruleControl, attempt: j})
		}
		if s != nil && v != "" && len(s.Scan("", v)) > 0 {
			report(trialHit{rule: ruleSecret, attempt: j})
		}
	}
	if checkTask {
		text(-1, t.Task)
	}
	for j, a := range t.Attempts {
		text(j, a.Dir)
		if dirOK(j) {
			if err := safefs.CheckRel(a.Dir); err != nil {
				report(trialHit{rule: rulePath, attempt: j, err: err})
			}
		}
	}
}

// trialHit is one rule of trialRules a trial breaks: in its task
// (attempt -1) or in an attempt's folder.
type trialHit struct {
	rule    int
	attempt int
	err     error // the path rule's
}

const (
	ruleControl = iota
	ruleSecret
	rulePath
)

// finding is the finding of h in trial t at index i.
func (h trialHit) finding(t *Trial, i int, s *redact.Scanner) pending {
	ptr, what, v := "/trials/"+strconv.Itoa(i)+"/task", "task", t.Task
	if h.attempt >= 0 {
		ptr, what, v = "/trials/"+strconv.Itoa(i)+"/attempts/"+strconv.Itoa(h.attempt)+"/dir", "dir", t.Attempts[h.attempt].Dir
	}
	switch h.rule {
	case ruleControl:
		return controlFinding(ptr, what, v)
	case ruleSecret:
		return secretFinding(s, ptr, v)
	}
	return pathFinding(ptr, v, h.err)
}

// controlRules refuses C0/C1 control characters, DEL, bidi formatting
// characters and invalid UTF-8 in the plan's name (tasks and dirs:
// trialRules).
func controlRules(p *Plan) []pending {
	if termsafe.Contains(p.Name) {
		return []pending{controlFinding("/name", "name", p.Name)}
	}
	return nil
}

// controlFinding is the finding of a control or bidi character in v.
func controlFinding(ptr, what, v string) pending {
	return errAt(CodeControlCharacter, ptr,
		fmt.Sprintf("%s %q holds a control or bidi character (or bytes that are not UTF-8)", what, clip(v)),
		"remove it: names, tasks and dirs are printed on terminals and sent to the platform, where such characters can forge or hide text")
}

// secretValueRules refuses identity fields that carry a secret the
// scanner knows (the job token, a *_KEY/*_TOKEN/*_PASSWORD… value of the
// environment, a credential pattern). These fields are saved and sent as
// they are, so they cannot be redacted; the message never holds the value.
func secretValueRules(p *Plan, s *redact.Scanner) []pending {
	if s == nil {
		return nil
	}
	var out []pending
	for _, f := range []struct{ ptr, v string }{
		{"/name", p.Name}, {"/source/revision", p.Source.Revision}, {"/split", p.Split},
		{"/checkpoint/ref", p.Checkpoint.Ref}, {"/checkpoint/served_as", p.Checkpoint.ServedAs},
	} {
		if f.v != "" && len(s.Scan("", f.v)) > 0 {
			out = append(out, secretFinding(s, f.ptr, f.v))
		}
	}
	return out
}

// secretFinding is the finding of a secret s found in the value v at ptr;
// its message never holds the value.
func secretFinding(s *redact.Scanner, ptr, v string) pending {
	var ie *redact.IdentityError
	if err := s.CheckIdentity("plan", ptr, v); !errors.As(err, &ie) {
		// Scan found it; CheckIdentity words it. Should they ever
		// disagree, the value is still refused.
		return errAt(CodeSecretValue, ptr, ptr+" carries a secret", secretHint)
	}
	return errAt(CodeSecretValue, ie.Field,
		fmt.Sprintf("%s carries a secret (%d match(es) of %s)", ie.Field, ie.Count, ie.Detector), secretHint)
}

const secretHint = "remove it: names, tasks, dirs and the checkpoint are saved and uploaded as they are, never redacted; credentials belong in the environment"
