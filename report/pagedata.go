package report

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/snapshot"
	"github.com/tuneplane/tpctl/transcript"
)

// The page embeds each round's trials compactly, so that a 100,000-trial
// page is interactive in a few seconds and is written with flat memory
// (docs/report.md, "At scale"):
//
//   - the main data (script #tp-data) holds one array per trial field
//     (columns), text as indexes into one string table, parsed at load;
//   - each trial's evidence and attempt history is one JSON line in
//     #tp-detail-SIDE, parsed only when the trial is opened;
//   - the text the search looks in is one lowercased JSON string per trial,
//     a line each, in #tp-search-SIDE, read at the first search;
//   - each exported body is one JSON line in #tp-traj-SIDE, its message
//     text one line in #tp-tsearch-SIDE.
//
// Every block is JSON or JSON lines as encoding/json writes them, with <,
// >, &, U+2028 and U+2029 escaped, so no value can close its element.

// statusIndex is a status's index in Statuses (the page's status column).
var statusIndex = map[string]uint8{}

func init() {
	for i, s := range Statuses {
		statusIndex[s] = uint8(i)
	}
}

// trial flags (the "flags" column).
const (
	flagShared    = 1 << iota // verifier_environment_mode: shared
	flagTrainable             // trainable
)

// chunks is an append-only byte store: in memory up to spillAt bytes,
// then in a temporary file, so that a page's largest blocks do not stay
// in memory until the page is written. Close removes the file.
type chunks struct {
	mem  []byte
	file *os.File
	bw   *bufio.Writer
	err  error
}

const spillAt = 4 << 20

func (c *chunks) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.bw == nil && len(c.mem)+len(p) > spillAt {
		c.file, c.err = os.CreateTemp("", "tpctl-report-block-*")
		if c.err != nil {
			return 0, fmt.Errorf("failed to create a temporary file for the report: %w", c.err)
		}
		c.bw = bufio.NewWriterSize(c.file, 256<<10)
		_, c.err = c.bw.Write(c.mem)
		c.mem = nil
	}
	if c.bw != nil {
		if c.err == nil {
			_, c.err = c.bw.Write(p)
		}
		return len(p), c.err
	}
	c.mem = append(c.mem, p...)
	return len(p), nil
}

func (c *chunks) WriteString(s string) (int, error) { return c.Write([]byte(s)) }

func (c *chunks) WriteByte(b byte) error {
	_, err := c.Write([]byte{b})
	return err
}

func (c *chunks) writeTo(w io.Writer) error {
	if c.err != nil {
		return c.err
	}
	if c.bw == nil {
		_, err := w.Write(c.mem)
		return err
	}
	if err := c.bw.Flush(); err != nil {
		return err
	}
	if _, err := c.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.CopyBuffer(onlyWriter{w}, onlyReader{c.file}, make([]byte, 256<<10))
	if _, serr := c.file.Seek(0, io.SeekEnd); err == nil {
		err = serr
	}
	return err
}

// Close removes the temporary file, if any.
func (c *chunks) Close() {
	if c.file != nil {
		c.file.Close()
		os.Remove(c.file.Name())
		c.file, c.bw = nil, nil
	}
}

// packed is a block of JSON lines stored compressed: lines are gathered
// into blocks of packLines, each gzip-compressed (level 6, no name or
// time, so the same lines give the same bytes) and written as one line of
// base64. The page's script inflates one block when it needs a line of
// it (DecompressionStream). A secret check cannot see through the
// compression, so writeTo hands each block's plain lines to it as well.
type packed struct {
	plain bytes.Buffer
	lines int
	// blocks is the number of blocks written.
	blocks int
	out    chunks
	zw     *gzip.Writer
	zbuf   bytes.Buffer
}

const packLines = 1024

func (p *packed) add(line []byte) {
	p.plain.Write(line)
	p.plain.WriteByte('\n')
	if p.lines++; p.lines == packLines {
		p.flush()
	}
}

// flush ends the current block.
func (p *packed) flush() {
	if p.lines == 0 {
		return
	}
	p.zbuf.Reset()
	if p.zw == nil {
		p.zw, _ = gzip.NewWriterLevel(&p.zbuf, 6)
	} else {
		p.zw.Reset(&p.zbuf)
	}
	p.zw.Write(p.plain.Bytes()) // into memory: no error
	p.zw.Close()
	enc := make([]byte, base64.StdEncoding.EncodedLen(p.zbuf.Len())+1)
	base64.StdEncoding.Encode(enc, p.zbuf.Bytes())
	enc[len(enc)-1] = '\n'
	p.out.Write(enc)
	p.plain.Reset()
	p.lines = 0
	p.blocks++
}

// writeTo writes the blocks, one base64 line each; plain, when not nil,
// gets each block's lines as they will read once inflated.
func (p *packed) writeTo(w io.Writer, plain func([]byte) error) error {
	p.flush()
	if plain == nil {
		return p.out.writeTo(w)
	}
	return p.out.writeTo(&unpacker{w: w, plain: plain})
}

// unpacker passes the base64 lines through to w and their inflated text
// to plain.
type unpacker struct {
	w       io.Writer
	plain   func([]byte) error
	pending []byte
}

func (u *unpacker) Write(b []byte) (int, error) {
	if _, err := u.w.Write(b); err != nil {
		return 0, err
	}
	u.pending = append(u.pending, b...)
	for {
		i := bytes.IndexByte(u.pending, '\n')
		if i < 0 {
			return len(b), nil
		}
		raw := make([]byte, base64.StdEncoding.DecodedLen(i))
		n, err := base64.StdEncoding.Decode(raw, u.pending[:i])
		if err != nil {
			return 0, err
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw[:n]))
		if err != nil {
			return 0, err
		}
		text, err := io.ReadAll(zr)
		if err != nil {
			return 0, err
		}
		if err := u.plain(text); err != nil {
			return 0, err
		}
		u.pending = u.pending[:copy(u.pending, u.pending[i+1:])]
	}
}

// roundData is one round's embedded data, built one planned trial at a
// time in canonical order.
type roundData struct {
	side, roundID string

	strIndex map[string]int32
	strs     []string

	task, repeat, reason, exc, detail, attempts []int32
	status, flags                               []uint8
	reward, dur, cost                           []float64 // NaN: null
	tokens                                      []int64   // -1: null

	details   packed // one JSON line per trial (null for a missing one)
	search    chunks // one lowercased line per trial (searchText)
	trajLines packed // one JSON line per body
	trajText  chunks // one lowercased line per body (searchText)

	trajMeta []trajMeta
	// trialOf maps a trial ID to its index, for the bodies; only filled
	// while bodies are added (a few).
	trialOf map[string]int

	tasks   []snapshot.TaskSummary
	costSum snapshot.CostSum
	scratch []byte
}

type trajMeta struct {
	File, TrialID string
	Trial         int // index of the trial, -1 when not in the plan
	Attempt       int
	Embedded      bool
	Kept, Total   int
	Truncated     bool
	Complete      bool
	Policy        string
}

func newRoundData(side, roundID string) *roundData {
	return &roundData{side: side, roundID: roundID, strIndex: map[string]int32{}}
}

// str interns s in the string table.
func (d *roundData) str(s string) int32 {
	if i, ok := d.strIndex[s]; ok {
		return i
	}
	i := int32(len(d.strs))
	d.strIndex[s] = i
	d.strs = append(d.strs, s)
	return i
}

func (d *roundData) optStr(s *string) int32 {
	if s == nil {
		return -1
	}
	return d.str(*s)
}

// detailLine is one trial's line of #tp-detail-SIDE.
type detailLine struct {
	TrialAttempt int                       `json:"trial_attempt"`
	Evidence     *snapshot.Evidence        `json:"evidence"`
	History      []snapshot.AttemptOutcome `json:"history"`
}

// addTrial adds the next planned trial (o nil when it is missing).
func (d *roundData) addTrial(task string, repeat int, o *snapshot.Observation) error {
	status := StatusMissing
	if o != nil {
		status = o.Status
	}
	d.task = append(d.task, d.str(task))
	d.repeat = append(d.repeat, int32(repeat))
	d.status = append(d.status, statusIndex[status])
	var fl uint8
	reason, exc, detail, attempts := int32(-1), int32(-1), int32(-1), int32(0)
	reward, dur, cost, tokens := math.NaN(), math.NaN(), math.NaN(), int64(-1)
	if o != nil {
		reason, exc, attempts = d.str(o.Reason), d.optStr(o.ExceptionType), int32(o.Attempts)
		if o.Reward != nil {
			reward = *o.Reward
		}
		if n := len(o.AttemptOutcomes); n > 0 && o.AttemptOutcomes[n-1].Detail != "" {
			detail = d.str(o.AttemptOutcomes[n-1].Detail)
		}
		if m := o.Evidence.VerifierEnvironmentMode; m != nil && *m == "shared" {
			fl |= flagShared
		}
		if o.Trainable {
			fl |= flagTrainable
		}
		var cs snapshot.CostSum
		cs.Add(o)
		c := cs.Cost()
		if s := c.Phases.Seconds(); s != nil {
			dur = *s
		}
		if c.USDAllAttempts != nil {
			cost = *c.USDAllAttempts
		}
		if c.InputTokens != nil || c.OutputTokens != nil {
			tokens = 0
			if c.InputTokens != nil {
				tokens += *c.InputTokens
			}
			if c.OutputTokens != nil {
				tokens += *c.OutputTokens
			}
		}
		d.costSum.Add(o)
	}
	d.reason = append(d.reason, reason)
	d.exc = append(d.exc, exc)
	d.detail = append(d.detail, detail)
	d.attempts = append(d.attempts, attempts)
	d.flags = append(d.flags, fl)
	d.reward = append(d.reward, reward)
	d.dur = append(d.dur, dur)
	d.cost = append(d.cost, cost)
	d.tokens = append(d.tokens, tokens)

	// The detail line.
	if o == nil {
		d.details.add([]byte("null"))
	} else {
		b, err := json.Marshal(detailLine{o.TrialAttempt, &o.Evidence, o.AttemptOutcomes})
		if err != nil {
			return err
		}
		d.details.add(b)
	}

	// The search line: what the search box looks in, lowercased, fields
	// apart by a tab, line breaks made spaces (the line is the trial's).
	id := snapshot.TrialID(task, repeat)
	s := d.scratch[:0]
	s = appendSearch(s, id)
	s = appendSearch(s, status)
	if o != nil {
		s = appendSearch(s, o.Reason)
		if o.ExceptionType != nil {
			s = appendSearch(s, *o.ExceptionType)
		}
		if o.Evidence.ResultSHA256 != nil {
			s = appendSearch(s, *o.Evidence.ResultSHA256)
		}
		for i := range o.AttemptOutcomes {
			a := &o.AttemptOutcomes[i]
			s = appendSearch(s, a.Reason)
			if a.ExceptionType != nil {
				s = appendSearch(s, *a.ExceptionType)
			}
			s = appendSearch(s, a.Detail)
		}
	}
	d.scratch = s
	d.search.Write(append(s, '\n'))
	return nil
}

// appendSearch appends one field of a search line and a tab, as
// searchText writes it.
func appendSearch(dst []byte, s string) []byte {
	if s == "" {
		return dst
	}
	return append(searchText(dst, s), '\t')
}

// searchText appends s as the search blocks hold it (the page's script
// treats what is typed the same way): lowercased; a control character
// (line breaks and tabs included) and U+2028, U+2029 as a space; invalid UTF-8 as U+FFFD;
// and, so that no text can close the script element that holds it
// ("</script") or open a comment there ("<!--"), '<' as U+E000 U+E001, '>'
// as U+E000 U+E002 and U+E000 itself as U+E000 U+E000. The blocks are raw text, read by the
// script as they are, with no parsing.
func searchText(dst []byte, s string) []byte {
	for _, r := range strings.ToLower(s) {
		switch {
		case r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029':
			dst = append(dst, ' ')
		case r == '<':
			dst = append(dst, "\ue000\ue001"...)
		case r == '>':
			dst = append(dst, "\ue000\ue002"...)
		case r == '\ue000':
			dst = append(dst, "\ue000\ue000"...)
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

// addTrajectory adds one exported body; embed says whether its messages
// are in the page.
func (d *roundData) addTrajectory(t *Trajectory, embed bool) error {
	m := trajMeta{File: t.File, TrialID: t.TrialID, Trial: -1, Attempt: t.TrialAttempt, Embedded: embed,
		Kept: len(t.Messages), Total: t.TotalMessages, Truncated: t.Truncated, Complete: t.Complete, Policy: t.CapturePolicy}
	if i, ok := d.trialOf[t.TrialID]; ok {
		m.Trial = i
	}
	d.trajMeta = append(d.trajMeta, m)
	var msgs []transcript.Message
	if embed {
		msgs = t.Messages
	}
	if msgs == nil {
		msgs = []transcript.Message{}
	}
	b, err := json.Marshal(struct {
		Messages []transcript.Message `json:"messages"`
	}{msgs})
	if err != nil {
		return err
	}
	d.trajLines.add(b)
	d.trajLines.flush() // a block per body: one body is read at a time
	s := d.scratch[:0]
	for _, msg := range msgs {
		s = appendSearch(s, msg.Content)
		if msg.ToolName != nil {
			s = appendSearch(s, *msg.ToolName)
		}
	}
	d.scratch = s[:0]
	d.trajText.Write(append(s, '\n'))
	return nil
}

// close removes the temporary files of the data's blocks.
func (d *roundData) close() {
	for _, c := range []*chunks{&d.details.out, &d.search, &d.trajLines.out, &d.trajText} {
		c.Close()
	}
}

// indexTrials fills trialOf, for bodies added after the trials.
func (d *roundData) indexTrials() {
	d.trialOf = make(map[string]int, len(d.task))
	for i := range d.task {
		d.trialOf[snapshot.TrialID(d.strs[d.task[i]], int(d.repeat[i]))] = i
	}
}

// appendJSONText appends s as the content of a JSON string (no quotes),
// escaped as encoding/json escapes it for HTML: ", \, control
// characters, <, >, &, U+2028 and U+2029; invalid UTF-8 becomes U+FFFD.
func appendJSONText(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

// jsonWriter writes the main data by hand, column by column.
type jsonWriter struct {
	w   *bufio.Writer
	buf []byte
	err error
}

func (j *jsonWriter) raw(s string) {
	if j.err == nil {
		_, j.err = j.w.WriteString(s)
	}
}

func (j *jsonWriter) flush() {
	if j.err == nil {
		_, j.err = j.w.Write(j.buf)
	}
	j.buf = j.buf[:0]
}

func (j *jsonWriter) str(s string) {
	j.buf = append(j.buf, '"')
	j.buf = appendJSONText(j.buf, []byte(s))
	j.buf = append(j.buf, '"')
	j.flush()
}

func (j *jsonWriter) key(k string) {
	j.buf = append(j.buf, '"')
	j.buf = append(j.buf, k...)
	j.buf = append(j.buf, '"', ':')
	j.flush()
}

func (j *jsonWriter) value(v any) {
	b, err := json.Marshal(v)
	if err != nil && j.err == nil {
		j.err = err
	}
	j.buf = append(j.buf, b...)
	j.flush()
}

func writeInts[T int32 | uint8 | int64](j *jsonWriter, xs []T) {
	j.buf = append(j.buf, '[')
	for i, x := range xs {
		if i > 0 {
			j.buf = append(j.buf, ',')
		}
		j.buf = strconv.AppendInt(j.buf, int64(x), 10)
		if len(j.buf) > 32<<10 {
			j.buf = append(j.buf, '\n') // short lines: see CheckWindow
			j.flush()
		}
	}
	j.buf = append(j.buf, ']')
	j.flush()
}

// writeFloats writes NaN as null and others in the shortest form that
// reads back the same.
func writeFloats(j *jsonWriter, xs []float64) {
	j.buf = append(j.buf, '[')
	for i, x := range xs {
		if i > 0 {
			j.buf = append(j.buf, ',')
		}
		if math.IsNaN(x) {
			j.buf = append(j.buf, "null"...)
		} else {
			j.buf = strconv.AppendFloat(j.buf, x, 'g', -1, 64)
		}
		if len(j.buf) > 32<<10 {
			j.buf = append(j.buf, '\n') // short lines: see CheckWindow
			j.flush()
		}
	}
	j.buf = append(j.buf, ']')
	j.flush()
}

func writeStrs(j *jsonWriter, xs []string) {
	j.raw("[")
	for i, s := range xs {
		switch {
		case i > 0 && i%256 == 0:
			j.raw(",\n")
		case i > 0:
			j.raw(",")
		}
		j.str(s)
	}
	j.raw("]")
}

// writeMain writes the round's object of the main data.
func (d *roundData) writeMain(j *jsonWriter) {
	t := d.tasks
	names := make([]int32, len(t))
	for i := range t {
		names[i] = d.str(t[i].Task) // interned before the table is written
	}
	j.raw("{")
	j.key("side")
	j.str(d.side)
	j.raw(",")
	j.key("round_id")
	j.str(d.roundID)
	j.raw(",")
	j.key("n")
	j.value(len(d.task))
	j.raw(`,"pack_lines":` + strconv.Itoa(packLines))
	j.raw(",")
	j.key("strings")
	writeStrs(j, d.strs)
	for _, c := range []struct {
		name string
		xs   []int32
	}{{"task", d.task}, {"repeat", d.repeat}, {"reason", d.reason}, {"exception", d.exc}, {"detail", d.detail}, {"attempts", d.attempts}} {
		j.raw(",\n")
		j.key(c.name)
		writeInts(j, c.xs)
	}
	j.raw(",")
	j.key("status")
	writeInts(j, d.status)
	j.raw(",")
	j.key("flags")
	writeInts(j, d.flags)
	j.raw(",")
	j.key("reward")
	writeFloats(j, d.reward)
	j.raw(",")
	j.key("duration")
	writeFloats(j, d.dur)
	j.raw(",")
	j.key("cost")
	writeFloats(j, d.cost)
	j.raw(",")
	j.key("tokens")
	writeInts(j, d.tokens)

	// The bodies' metadata; their messages are lines of #tp-traj-SIDE.
	j.raw(`,"trajectories":[`)
	for i, m := range d.trajMeta {
		if i > 0 {
			j.raw(",\n")
		}
		j.value(struct {
			File          string `json:"file"`
			TrialID       string `json:"trial_id"`
			Trial         int    `json:"trial"`
			TrialAttempt  int    `json:"trial_attempt"`
			Embedded      bool   `json:"embedded"`
			Kept          int    `json:"kept"`
			TotalMessages int    `json:"total_messages"`
			Truncated     bool   `json:"truncated"`
			Complete      bool   `json:"complete"`
			CapturePolicy string `json:"capture_policy"`
		}{m.File, m.TrialID, m.Trial, m.Attempt, m.Embedded, m.Kept, m.Total, m.Truncated, m.Complete, m.Policy})
	}
	j.raw("]")

	// The task table, as columns too.
	col := func(name string, f func(r *snapshot.TaskSummary) float64) {
		xs := make([]float64, len(t))
		for i := range t {
			xs[i] = f(&t[i])
		}
		j.raw(",\n")
		j.key(name)
		writeFloats(j, xs)
	}
	j.raw(`,"tasks":{`)
	j.key("task")
	writeInts(j, names)
	opt := func(v *float64) float64 {
		if v == nil {
			return math.NaN()
		}
		return *v
	}
	col("planned", func(r *snapshot.TaskSummary) float64 { return float64(r.Planned) })
	col("scored", func(r *snapshot.TaskSummary) float64 { return float64(r.Scored) })
	col("success", func(r *snapshot.TaskSummary) float64 { return float64(r.Success) })
	col("failure", func(r *snapshot.TaskSummary) float64 { return float64(r.Failure) })
	col("infra_error", func(r *snapshot.TaskSummary) float64 { return float64(r.InfraError) })
	col("unscored", func(r *snapshot.TaskSummary) float64 { return float64(r.Unscored) })
	col("missing", func(r *snapshot.TaskSummary) float64 { return float64(r.Missing) })
	col("success_rate", func(r *snapshot.TaskSummary) float64 { return opt(r.SuccessRate) })
	col("pass_hat_k", func(r *snapshot.TaskSummary) float64 { return opt(r.PassHatK) })
	col("attempts", func(r *snapshot.TaskSummary) float64 { return float64(r.Attempts) })
	col("with_cost", func(r *snapshot.TaskSummary) float64 { return float64(r.WithCost) })
	col("cost_usd", func(r *snapshot.TaskSummary) float64 { return opt(r.CostUSD) })
	col("duration_sec", func(r *snapshot.TaskSummary) float64 { return opt(r.DurationSec) })
	col("flags", func(r *snapshot.TaskSummary) float64 {
		return float64(b2i(r.Flaky) | b2i(r.AlwaysFail)<<1 | b2i(r.InfraProne)<<2 | b2i(r.LowCoverage)<<3)
	})
	j.raw("}}")
}
