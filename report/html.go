package report

import (
	"bufio"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/tuneplane/tpctl/internal/ui/digits"
	"html/template"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/compare"
	"github.com/tuneplane/tpctl/snapshot"
)

// PageFormat names the version of the page's layout and embedded data.
const PageFormat = "tpctl-report/1"

// Page constants, also stated on the page.
const (
	messagesPerPage = 50
	printMaxRows    = 5000
)

var (
	//go:embed page.tmpl
	pageTmpl string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string

	page = template.Must(template.New("page").Funcs(template.FuncMap{"n": thousands}).Parse(pageTmpl))
	// The policy allows exactly the page's own style and script, by hash:
	// no network fetch of any kind, and no inline handler (a planted
	// onerror attribute) could run even if text were ever parsed as markup.
	csp = "default-src 'none'; img-src 'none'; base-uri 'none'; form-action 'none'; style-src " + cspHash(pageCSS) + "; script-src " + cspHash(pageJS)
)

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// WriteRound writes the self-contained HTML report of one round.
func WriteRound(w io.Writer, r *Round) error {
	if err := fits(r); err != nil {
		return err
	}
	v := pageView{Title: "Round " + r.Manifest.Name}
	if err := v.add("round", "Round", r); err != nil {
		return err
	}
	return v.write(w)
}

// WriteComparison writes the self-contained HTML report comparing two
// rounds: res is compare.Rounds of the same two snapshots.
func WriteComparison(w io.Writer, base, cand *Round, res *compare.Result) error {
	if res.Base.RoundID != base.Manifest.RoundID || res.Candidate.RoundID != cand.Manifest.RoundID {
		return fmt.Errorf("the comparison is of rounds %s and %s, not of the loaded %s and %s",
			res.Base.RoundID, res.Candidate.RoundID, base.Manifest.RoundID, cand.Manifest.RoundID)
	}
	for _, r := range []*Round{base, cand} {
		if err := fits(r); err != nil {
			return err
		}
	}
	v := pageView{Title: "Compare " + roundTitle(base.Manifest) + " → " + roundTitle(cand.Manifest)}
	c, err := compareViewOf(res)
	if err != nil {
		return err
	}
	c.Tasks = taskPairsOf(base, cand)
	c.capLists()
	v.Compare = c
	for _, l := range [][]string{res.Transitions.FailureToSuccess, res.Transitions.SuccessToFailure, res.Transitions.NotComparable} {
		v.pairs = append(v.pairs, l...)
	}
	if err := v.add(compare.SideBase, "Base round", base); err != nil {
		return err
	}
	if err := v.add(compare.SideCandidate, "Candidate round", cand); err != nil {
		return err
	}
	return v.write(w)
}

// roundTitle names a round by its plan name and checkpoint.
func roundTitle(m *snapshot.Manifest) string {
	if m.Checkpoint.Ref == "" {
		return m.Name
	}
	return m.Name + " (" + m.Checkpoint.Ref + ")"
}

// taskPair is one row of the comparison's per-task table.
type taskPair struct {
	Task                 string
	Base, Cand           string // "success/scored"
	BaseRate, CandRate   string
	Delta                string
	Worse, Better        bool
	BaseHref, CandHref   template.URL
	baseValue, candValue *float64
}

// taskPairsOf is the per-task table of two rounds, the tasks that got
// worse first (by candidate − base rate), then the rest by task.
func taskPairsOf(base, cand *Round) []taskPair {
	b, _ := base.TaskRows("task")
	c, _ := cand.TaskRows("task")
	rows := map[string]*taskPair{}
	var order []string
	get := func(task string) *taskPair {
		if p, ok := rows[task]; ok {
			return p
		}
		p := &taskPair{Task: task, Base: "—", Cand: "—", BaseRate: "—", CandRate: "—", Delta: "—",
			BaseHref: filterHref(compare.SideBase, url.Values{"task": {task}}), CandHref: filterHref(compare.SideCandidate, url.Values{"task": {task}})}
		rows[task] = p
		order = append(order, task)
		return p
	}
	for _, t := range b {
		p := get(t.Task)
		p.Base, p.baseValue = fmt.Sprintf("%d/%d", t.Success, t.Scored), t.SuccessRate
		if t.SuccessRate != nil {
			p.BaseRate = pct(*t.SuccessRate)
		}
	}
	for _, t := range c {
		p := get(t.Task)
		p.Cand, p.candValue = fmt.Sprintf("%d/%d", t.Success, t.Scored), t.SuccessRate
		if t.SuccessRate != nil {
			p.CandRate = pct(*t.SuccessRate)
		}
	}
	delta := func(p *taskPair) float64 {
		if p.baseValue == nil || p.candValue == nil {
			return 0
		}
		return *p.candValue - *p.baseValue
	}
	out := make([]taskPair, 0, len(order))
	for _, task := range order {
		p := rows[task]
		if p.baseValue != nil && p.candValue != nil {
			d := delta(p)
			p.Delta = signed(d*100) + " pp"
			p.Worse, p.Better = d < 0, d > 0
		}
		out = append(out, *p)
	}
	slices.SortStableFunc(out, func(x, y taskPair) int {
		dx, dy := delta(&x), delta(&y)
		switch {
		case dx < dy:
			return -1
		case dx > dy:
			return 1
		}
		return strings.Compare(x.Task, y.Task)
	})
	return out
}

// fits refuses a round larger than one page is made for.
func fits(r *Round) error {
	if len(r.Trials) > MaxTrials {
		return tooMany(r.Manifest.RoundID, len(r.Trials))
	}
	return nil
}

// pageView is what the template renders; the trial data is written
// after it (pagedata.go).
type pageView struct {
	Title   string
	Compare *compareView
	Rounds  []roundView
	data    []*roundData
	// pairs are the comparison's transitions in the order listed, for the
	// side-by-side view's next/previous.
	pairs []string
}

// The template's fixed values.
func (pageView) Format() string      { return PageFormat }
func (pageView) CSP() string         { return csp }
func (pageView) CSS() template.CSS   { return template.CSS(pageCSS) }
func (pageView) Script() template.JS { return template.JS(pageJS) }
func (pageView) MaxTrials() string   { return thousands(MaxTrials) }
func (pageView) MaxBodiesMiB() int   { return MaxEmbeddedTrajectoryBytes >> 20 }
func (pageView) PageSize() int       { return messagesPerPage }

// write streams the page: the template's summary, then each round's
// data blocks straight from their stores, then the script. Nothing the
// size of the page is held in memory.
func (v *pageView) write(w io.Writer) error {
	defer func() {
		for _, d := range v.data {
			d.close()
		}
	}()
	ew := &errWriter{w: w}
	bw := bufio.NewWriterSize(ew, 64<<10)
	if err := page.Execute(bw, v); err != nil {
		if ew.err != nil {
			return ew.err // the writer's (a refused check, a full disk)
		}
		return fmt.Errorf("failed to render the report: %w", err)
	}
	j := &jsonWriter{w: bw}
	j.raw(`<script type="application/json" id="tp-data">{"format":`)
	j.str(PageFormat)
	j.raw(`,"page_size":` + strconv.Itoa(messagesPerPage) + `,"print_max":` + strconv.Itoa(printMaxRows) + `,"pairs":`)
	writeStrs(j, v.pairs)
	j.raw(`,"rounds":[`)
	for i, d := range v.data {
		if i > 0 {
			j.raw(",")
		}
		d.writeMain(j)
	}
	j.raw("]}</script>\n")
	// A secret check sees through the packed blocks (packed.writeTo).
	var plain func([]byte) error
	if pc, ok := w.(interface{ CheckPlain([]byte) error }); ok {
		plain = pc.CheckPlain
	}
	for _, d := range v.data {
		for _, blk := range []struct {
			id, typ string
			write   func(io.Writer) error
		}{
			{"tp-detail-", "application/x-gzip-base64-lines", func(w io.Writer) error { return d.details.writeTo(w, plain) }},
			{"tp-search-", "text/plain", d.search.writeTo},
			{"tp-traj-", "application/x-gzip-base64-lines", func(w io.Writer) error { return d.trajLines.writeTo(w, plain) }},
			{"tp-tsearch-", "text/plain", d.trajText.writeTo},
		} {
			j.raw(`<script type="` + blk.typ + `" id="` + blk.id + d.side + `">`)
			if j.err == nil {
				j.err = blk.write(bw)
			}
			j.raw("</script>\n")
		}
	}
	if j.err != nil {
		return j.err
	}
	if err := page.ExecuteTemplate(bw, "tail", v); err != nil {
		if ew.err != nil {
			return ew.err
		}
		return fmt.Errorf("failed to render the report: %w", err)
	}
	return bw.Flush()
}

// errWriter remembers the first error of the writer it wraps.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}

// roundView is one round's static summary.
type roundView struct {
	Side, Heading string
	M             *snapshot.Manifest
	Bar           []barSeg
	BarLabel      string
	Rates         []rateView
	// Over is which part of the dataset the rates stand on ("10 of 2,376
	// documents of the split"), "" when the plan does not record it.
	Over           string
	Stats          *statsView
	SharedVerifier int
	Reasons        []countRow
	Exceptions     []countRow
	NotEmbedded    int
	Signature      string
	Triage         []triageGroup
	// MoreGroups and MoreTrials are the failure groups (and their trials)
	// past the block's cap.
	MoreGroups, MoreTrials int
	Tasks                  int
	Flaky                  int
	AlwaysFail             int
	InfraProne             int
	LowCoverage            int
	Cost                   costView
	Bounds                 *boundsView
}

type barSeg struct {
	Status, Label, Glyph, Fill string
	Count                      int
	X, W, Share                string
	Href                       template.URL
}

type rateView struct {
	Name, Formula, Why string
	Defined            bool
	Value, CI          string
	Lo, Width, PointX  string
	// BoundsLo and BoundsW place the success rate's worst-to-best band
	// (Manski bounds); empty when every planned trial was scored.
	BoundsLo, BoundsW, BoundsText string
}

type countRow struct {
	Key, Status string
	Count       int
	Href        template.URL
}

type statsView struct {
	Clusters string
	SE, CI   string
	PassK    []passK
	Tasks    string
}

type passK struct{ K, At, Hat, Tasks string }

var glyphs = map[string]string{
	snapshot.StatusSuccess: "✓", snapshot.StatusFailure: "✗", snapshot.StatusInfraError: "⚠",
	snapshot.StatusUnscored: "?", StatusMissing: "∅",
}

// roundAcc gathers what the page shows of one round from its planned
// trials, one at a time in canonical order, and its bodies: the embedded
// data, the task table, the failures block and the reason counts. Its
// memory is the compact data (pagedata.go), not the observations.
type roundAcc struct {
	side    string
	data    *roundData
	tasks   snapshot.TaskTable
	triage  snapshot.Triage
	reasons map[[2]string]int
	budget  int
	// notEmbedded counts the bodies left out by the size limit.
	notEmbedded int
}

func newRoundAcc(side, roundID string) *roundAcc {
	return &roundAcc{side: side, data: newRoundData(side, roundID), reasons: map[[2]string]int{}, budget: MaxEmbeddedTrajectoryBytes,
		triage: snapshot.Triage{Examples: maxTriageExamples}}
}

// add counts the next planned trial (o nil when it is missing).
func (a *roundAcc) add(task string, repeat int, o *snapshot.Observation) error {
	status := StatusMissing
	if o != nil {
		status = o.Status
		a.reasons[[2]string{o.Reason, o.Status}]++
	}
	if err := a.tasks.AddObservation(task, status, o); err != nil {
		return err
	}
	a.triage.Add(snapshot.PlannedTrial{Task: task, Repeat: repeat, Observation: o})
	return a.data.addTrial(task, repeat, o)
}

// addBody adds one exported body, embedded while the page's budget lasts.
func (a *roundAcc) addBody(t *Trajectory) error {
	if a.data.trialOf == nil {
		a.data.indexTrials()
	}
	size := 0
	for _, msg := range t.Messages {
		size += len(msg.Content) + 200
	}
	embed := size <= a.budget
	if embed {
		a.budget -= size
	} else {
		a.notEmbedded++
	}
	return a.data.addTrajectory(t, embed)
}

// add puts one loaded round on the page.
func (v *pageView) add(side, heading string, r *Round) error {
	a := newRoundAcc(side, r.Manifest.RoundID)
	for i := range r.Trials {
		t := &r.Trials[i]
		if err := a.add(t.Task, t.Repeat, t.Observation); err != nil {
			return err
		}
	}
	for i := range r.Trajectories {
		if err := a.addBody(&r.Trajectories[i]); err != nil {
			return err
		}
	}
	v.addAcc(heading, r.Manifest, r.Statistics, r.Signature, r.Dataset, a)
	return nil
}

// addAcc puts a round gathered by a roundAcc on the page.
func (v *pageView) addAcc(heading string, m *snapshot.Manifest, st *Statistics, signature string, dataset *snapshot.DatasetScope, a *roundAcc) {
	side := a.side
	rv := roundView{Side: side, Heading: heading, M: m, SharedVerifier: m.SharedVerifier, Signature: signature, NotEmbedded: a.notEmbedded, Over: dataset.String()}
	c := m.Counts
	counts := []int{c.Success, c.Failure, c.InfraError, c.Unscored, c.Missing}
	x := 0.0
	var label []string
	for i, st := range Statuses {
		w := 0.0
		share := "—"
		if c.Expected > 0 {
			w = 1000 * float64(counts[i]) / float64(c.Expected)
			share = pct(float64(counts[i]) / float64(c.Expected))
		}
		rv.Bar = append(rv.Bar, barSeg{Status: st, Label: strings.ReplaceAll(st, "_", " "), Glyph: glyphs[st], Fill: "url(#pat-" + st + ")",
			Count: counts[i], X: num(x), W: num(w), Share: share})
		label = append(label, fmt.Sprintf("%s %d", st, counts[i]))
		x += w
	}
	rv.BarLabel = fmt.Sprintf("Stacked bar of %d planned trials: %s", c.Expected, strings.Join(label, ", "))
	rv.Rates = []rateView{
		rate("success rate", "success / (success + failure)", "no trial was scored: success + failure = 0", m.SuccessRate, m.SuccessRateCI95),
		rate("coverage", "(success + failure) / planned", "the plan has no trials", m.Coverage, m.CoverageCI95),
	}
	rv.Stats = statsViewOf(st)

	for _, k := range slices.SortedFunc(maps.Keys(a.reasons), func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) }) {
		rv.Reasons = append(rv.Reasons, countRow{Key: k[0], Status: k[1], Count: a.reasons[k],
			Href: filterHref(side, url.Values{"reason": {k[0]}, "status": {k[1]}})})
	}
	for _, k := range slices.Sorted(maps.Keys(m.ExceptionTypes)) {
		rv.Exceptions = append(rv.Exceptions, countRow{Key: k, Count: m.ExceptionTypes[k], Href: filterHref(side, url.Values{"exception": {k}})})
	}
	for i := range rv.Bar {
		rv.Bar[i].Href = filterHref(side, url.Values{"status": {rv.Bar[i].Status}})
	}

	rows := a.tasks.Rows()
	_ = snapshot.SortTasks(rows, "rate") // a known key
	a.data.tasks = rows
	rv.Triage, rv.MoreGroups, rv.MoreTrials = triageOf(side, &a.triage)
	for _, t := range rows {
		rv.Flaky, rv.AlwaysFail, rv.InfraProne = rv.Flaky+b2i(t.Flaky), rv.AlwaysFail+b2i(t.AlwaysFail), rv.InfraProne+b2i(t.InfraProne)
		rv.LowCoverage += b2i(t.LowCoverage)
	}
	rv.Tasks = len(rows)
	rv.Cost = costViewOf(a.data.costSum.Cost())
	rv.Bounds = boundsOf(c)
	if b := rv.Bounds; b != nil && b.NotScored > 0 {
		rv.Rates[0].BoundsLo, rv.Rates[0].BoundsW, rv.Rates[0].BoundsText = b.LoX, b.WidthX, b.Lo+"–"+b.Hi
	}
	v.Rounds = append(v.Rounds, rv)
	v.data = append(v.data, a.data)
}

// triageGroup is one line of the triage block: the non-success trials of
// one status, reason and exception type, with the first few as links.
type triageGroup struct {
	Status, Glyph, Reason, Exception string
	Count                            int
	Href                             template.URL
	Examples                         []triageExample
	// More is how many trials of the group are not listed.
	More int
}

type triageExample struct {
	ID, Detail string
	Href       template.URL
}

// maxTriageGroups and maxTriageExamples bound the triage block: the rest
// is one click away in the filtered list.
const (
	maxTriageGroups   = 8
	maxTriageExamples = 3
)

// triageOf is the failures block from the round's snapshot.Triage (the
// groups the terminal prints too): failures first, then infra errors,
// unscored and missing, the largest group first within a status; at most
// maxTriageGroups, and how many groups and trials were left out.
func triageOf(side string, t *snapshot.Triage) (out []triageGroup, moreGroups, moreTrials int) {
	for i, g := range t.Groups() {
		if i >= maxTriageGroups {
			moreGroups++
			moreTrials += g.Count
			continue
		}
		q := url.Values{}
		q.Set("status", g.Status)
		if g.Status != StatusMissing {
			q.Set("reason", g.Reason)
			q.Set("exception", g.ExceptionType)
		}
		tg := triageGroup{Status: g.Status, Glyph: glyphs[g.Status], Reason: g.Reason, Exception: g.ExceptionType, Count: g.Count,
			Href: filterHref(side, q), More: g.Count - len(g.Examples)}
		for _, e := range g.Examples {
			tg.Examples = append(tg.Examples, triageExample{ID: e.TrialID, Detail: e.Detail, Href: trialHref(side, e.TrialID)})
		}
		out = append(out, tg)
	}
	return out, moreGroups, moreTrials
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// filterHref is the page-internal link that shows one side's list
// filtered: #filter/SIDE?status=…&reason=…&exception=…&task=….
func filterHref(side string, q url.Values) template.URL {
	return template.URL("#filter/" + side + "?" + strings.ReplaceAll(q.Encode(), "+", "%20"))
}

func rate(name, formula, why string, v *float64, ci *[2]float64) rateView {
	r := rateView{Name: name, Formula: formula, Why: why}
	if v == nil {
		return r
	}
	r.Defined, r.Value = true, pct(*v)
	r.PointX = num(100*(*v) - 0.4)
	if ci != nil {
		r.CI = pct(ci[0]) + " – " + pct(ci[1])
		r.Lo, r.Width = num(100*ci[0]), num(100*(ci[1]-ci[0]))
	} else {
		r.CI = "not defined"
		r.Lo, r.Width = "0", "0"
	}
	return r
}

func statsViewOf(s *Statistics) *statsView {
	if s == nil {
		return nil
	}
	v := &statsView{}
	if s.Clusters != nil {
		v.Clusters = strconv.Itoa(*s.Clusters)
	}
	v.SE = optPP(s.SuccessRateSEClustered)
	switch {
	case s.SuccessRateCI95Null != nil:
		v.CI = "not given: " + s.SuccessRateCI95Null.Text()
	case s.SuccessRateCI95Clustered != nil && s.SuccessRateNEff != nil:
		v.CI = pct(s.SuccessRateCI95Clustered[0]) + " – " + pct(s.SuccessRateCI95Clustered[1]) +
			" (Wilson on " + strconv.FormatFloat(*s.SuccessRateNEff, 'f', 1, 64) + " effective trials, t(G−1))"
	case s.SuccessRateCI95Clustered != nil:
		v.CI = pct(s.SuccessRateCI95Clustered[0]) + " – " + pct(s.SuccessRateCI95Clustered[1]) + " (normal)"
	}
	ks := map[string]bool{}
	for k := range s.PassAtK {
		ks[k] = true
	}
	for k := range s.PassHatK {
		ks[k] = true
	}
	for _, k := range slices.SortedFunc(maps.Keys(ks), byNumber) {
		pk := passK{K: k, At: optPct(s.PassAtK[k]), Hat: optPct(s.PassHatK[k])}
		if t := s.PassKTasksByK[k]; t != nil {
			pk.Tasks = tasksText(t, "fewer than "+k+" scored repeats")
		}
		v.PassK = append(v.PassK, pk)
	}
	if t := s.PassKTasks; t != nil {
		v.Tasks = tasksText(t, "not every repeat scored")
	}
	return v
}

// tasksText says how many tasks pass@k counted, how many it left out
// (why, in words) and the reasons.
func tasksText(t *PassKTasks, why string) string {
	var parts []string
	if t.Counted != nil {
		parts = append(parts, strconv.Itoa(*t.Counted)+" counted")
	}
	if t.LeftOut != nil {
		parts = append(parts, strconv.Itoa(*t.LeftOut)+" left out ("+why+")")
	}
	var reasons map[string]int
	if json.Unmarshal(t.LeftOutReasons, &reasons) == nil && len(reasons) > 0 {
		for _, k := range slices.Sorted(maps.Keys(reasons)) {
			parts = append(parts, fmt.Sprintf("%s: %d", k, reasons[k]))
		}
	}
	return strings.Join(parts, "; ")
}

// byNumber orders "1", "2", "10" as numbers, then anything else as text.
func byNumber(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		return x - y
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// compareView is the static comparison section.
type compareView struct {
	Comparable                     bool
	Gate                           []gateRow
	Reasons                        []compare.Reason
	BaseCheckpoint, CandCheckpoint snapshot.Checkpoint
	Delta, McNemarP, Note          string
	Discordant                     compare.Discordant
	Paired                         *pairedView
	FailureToSuccess               []transition
	SuccessToFailure               []transition
	NotComparable                  []transition
	UnchangedSuccess               int
	UnchangedFailure               int
	Tasks                          []taskPair
	// The lists' full lengths, and how many each shows no row for (a
	// list is capped at maxListed; every transition is still one n/p away
	// in the side-by-side view, every task in the rounds' task tables).
	NF2S, NS2F, NNC, NTasks             int
	MoreF2S, MoreS2F, MoreNC, MoreTasks int
}

// maxListed caps each list of the comparison drawn as static rows.
const maxListed = 200

func (c *compareView) capLists() {
	c.NF2S, c.NS2F, c.NNC, c.NTasks = len(c.FailureToSuccess), len(c.SuccessToFailure), len(c.NotComparable), len(c.Tasks)
	capT := func(l []transition) ([]transition, int) {
		if len(l) <= maxListed {
			return l, 0
		}
		return l[:maxListed], len(l) - maxListed
	}
	c.FailureToSuccess, c.MoreF2S = capT(c.FailureToSuccess)
	c.SuccessToFailure, c.MoreS2F = capT(c.SuccessToFailure)
	c.NotComparable, c.MoreNC = capT(c.NotComparable)
	if len(c.Tasks) > maxListed {
		c.Tasks, c.MoreTasks = c.Tasks[:maxListed], len(c.Tasks)-maxListed
	}
}

type gateRow struct {
	Name, Base, Candidate string
	Pass                  bool
}

type transition struct {
	ID, Base, Candidate string
	BaseHref, CandHref  template.URL
	PairHref            template.URL
}

type pairedView struct{ Trials, Tasks, Delta, SE, CI, MDE string }

// paired is the optional "paired" member of compare's JSON; it is read
// through the JSON so that a Result without it still renders.
type paired struct {
	Trials      *int        `json:"trials"`
	Tasks       *int        `json:"tasks"`
	Delta       *float64    `json:"delta"`
	SEClustered *float64    `json:"se_clustered"`
	CI95        *[2]float64 `json:"ci95"`
	MDE80       *float64    `json:"mde80"`
	DF          *int        `json:"df"`
	NullReason  *NullReason `json:"null_reason"`
}

func compareViewOf(res *compare.Result) (*compareView, error) {
	b, bs := res.Base, res.Candidate
	failed := map[string]bool{}
	for _, r := range res.Reasons {
		failed[r.Code] = true
	}
	scored := func(c snapshot.Counts) string {
		return fmt.Sprintf("%d unscored, %d infra_error, %d missing", c.Unscored, c.InfraError, c.Missing)
	}
	cv := &compareView{
		Comparable: res.Comparable,
		Reasons:    res.Reasons,
		Gate: []gateRow{
			{"digest rules", b.Protocol.DigestRules, bs.Protocol.DigestRules, !failed[compare.ReasonRulesDiffer]},
			{"outcome rules", b.OutcomeRules, bs.OutcomeRules, !failed[compare.ReasonOutcomeRulesDiffer]},
			{"dataset digest", b.Protocol.DatasetDigest, bs.Protocol.DatasetDigest, !failed[compare.ReasonDatasetDiffers]},
			{"cohort digest", b.Protocol.CohortDigest, bs.Protocol.CohortDigest, !failed[compare.ReasonCohortDiffers]},
			{"verifier digest", b.Protocol.VerifierDigest, bs.Protocol.VerifierDigest, !failed[compare.ReasonVerifierDiffers]},
			{"settings digest", b.Protocol.SettingsDigest, bs.Protocol.SettingsDigest, !failed[compare.ReasonSettingsDiffers]},
			{"task content of matched trials", "task_checksum", "task_checksum", !failed[compare.ReasonTaskChecksumDiffers]},
			{"base fully scored", scored(b.Counts), "", !failed[compare.ReasonBaseIncomplete]},
			{"candidate fully scored", "", scored(bs.Counts), !failed[compare.ReasonCandidateIncomplete]},
		},
		BaseCheckpoint: b.Checkpoint, CandCheckpoint: bs.Checkpoint,
		Note:             res.Note,
		Discordant:       res.Discordant,
		UnchangedSuccess: res.Transitions.UnchangedSuccess,
		UnchangedFailure: res.Transitions.UnchangedFailure,
	}
	known := map[string]bool{}
	for _, c := range []string{compare.ReasonRulesDiffer, compare.ReasonOutcomeRulesDiffer, compare.ReasonDatasetDiffers, compare.ReasonCohortDiffers,
		compare.ReasonVerifierDiffers, compare.ReasonSettingsDiffers, compare.ReasonTaskChecksumDiffers, compare.ReasonBaseIncomplete, compare.ReasonCandidateIncomplete} {
		known[c] = true
	}
	// A condition this page has no row for still fails the gate visibly.
	for _, r := range res.Reasons {
		if !known[r.Code] {
			cv.Gate = append(cv.Gate, gateRow{Name: r.Code, Base: "", Candidate: "", Pass: false})
		}
	}
	if res.Delta != nil {
		cv.Delta = signed(*res.Delta * 100)
	}
	if res.McNemarP != nil {
		cv.McNemarP = strconv.FormatFloat(*res.McNemarP, 'g', 4, 64)
	}
	link := func(id string) transition {
		return transition{ID: id, BaseHref: trialHref(compare.SideBase, id), CandHref: trialHref(compare.SideCandidate, id), PairHref: trialHref("pair", id)}
	}
	for _, id := range res.Transitions.FailureToSuccess {
		cv.FailureToSuccess = append(cv.FailureToSuccess, link(id))
	}
	for _, id := range res.Transitions.SuccessToFailure {
		cv.SuccessToFailure = append(cv.SuccessToFailure, link(id))
	}
	for i, id := range res.Transitions.NotComparable {
		t := link(id)
		if i < len(res.Transitions.NotComparableDetail) {
			t.Base, t.Candidate = res.Transitions.NotComparableDetail[i].Base, res.Transitions.NotComparableDetail[i].Candidate
		}
		cv.NotComparable = append(cv.NotComparable, t)
	}

	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	cv.Paired = pairedOf(raw)
	return cv, nil
}

// pairedOf reads the optional "paired" member of compare's JSON; nil when
// it is absent or not in a shape this version understands.
func pairedOf(result []byte) *pairedView {
	var wrap struct {
		Paired *paired `json:"paired"`
	}
	if json.Unmarshal(result, &wrap) != nil || wrap.Paired == nil {
		return nil
	}
	p := wrap.Paired
	pv := &pairedView{Trials: optInt(p.Trials), Tasks: optInt(p.Tasks), Delta: "not defined", SE: optPP(p.SEClustered), CI: "not defined", MDE: optPP(p.MDE80)}
	if p.Delta != nil {
		pv.Delta = signed(*p.Delta*100) + " percentage points"
	}
	if p.CI95 != nil {
		pv.CI = signed(p.CI95[0]*100) + " to " + signed(p.CI95[1]*100) + " percentage points"
		if p.DF != nil {
			pv.CI += " (t, " + strconv.Itoa(*p.DF) + " df)"
		}
	}
	if p.NullReason != nil {
		pv.CI = "not given: " + p.NullReason.Text()
		pv.MDE = "not given"
	}
	return pv
}

// trialHref is the page-internal link to one trial of one side; the ID is
// escaped as one path segment ('#' and '/' included), and the page's
// script decodes it.
func trialHref(side, id string) template.URL {
	return template.URL("#" + side + "/" + url.PathEscape(id))
}

func pct(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }

func num(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

func signed(x float64) string {
	s := strconv.FormatFloat(x, 'f', 1, 64)
	if s == "-0.0" {
		s = "0.0"
	}
	if !strings.HasPrefix(s, "-") && s != "0.0" {
		s = "+" + s
	}
	return s
}

// optPP shows a rate difference or standard error in percentage points.
func optPP(v *float64) string {
	if v == nil {
		return "not defined"
	}
	return strconv.FormatFloat(100*(*v), 'f', 2, 64) + " percentage points"
}

func optPct(v *float64) string {
	if v == nil {
		return "not defined"
	}
	return pct(*v)
}

func optInt(v *int) string {
	if v == nil {
		return "not defined"
	}
	return strconv.Itoa(*v)
}

// thousands writes n with comma separators: 200,000.
func thousands(n int) string { return digits.Group(int64(n)) }
