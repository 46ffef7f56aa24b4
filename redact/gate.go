package redact

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"unsafe"
)

// The outgoing-text gate (SPEC §4 as amended: every string that leaves the
// process). One Scanner knows the secret values and patterns; it is used
// three ways:
//
//   - identity fields (plan name, task, dir, exception type, evidence) are
//     never rewritten, so a secret in one refuses the command: CheckIdentity;
//   - whole outgoing payloads (snapshot files, upload request bodies) are
//     checked as a backstop: CheckPayload;
//   - free text quoted in messages, warnings and errors is masked where it
//     is printed: Mask and Writer.
//
// None of the errors holds the matching bytes.

// IdentityError reports a known secret in an identity field. Identity
// fields go to the snapshot and the platform as they are, so the command
// refuses rather than rewrite them.
type IdentityError struct {
	Where    string // e.g. `trial "t#0" retry 1 result.json` or "plan"
	Field    string // e.g. "exception_info.exception_type", "/trials/3/task"
	Detector string // "env:NAME" or "pattern:<kind>"
	Count    int
}

func (e *IdentityError) Error() string {
	return fmt.Sprintf("secret scan: %s field %s carries a secret (%d match(es) of %s); identity fields are saved and sent as they are, "+
		"never redacted, so nothing was written or sent — remove the secret from the source and run again", e.Where, e.Field, e.Count, e.Detector)
}

// PayloadError reports a known secret in a payload about to be written or
// sent: a snapshot file, or an upload request (also of a snapshot saved
// long ago, or edited since).
type PayloadError struct {
	Where    string // e.g. "observations.jsonl line 3" or "upload request observations (trials a#0…b#3)"
	Field    string // the JSON pointer of the field that carries it, when known (CheckJSON)
	Detector string
	Count    int
}

func (e *PayloadError) Error() string {
	where := e.Where
	if e.Field != "" {
		where += " field " + e.Field
	}
	return fmt.Sprintf("secret scan: %s carries a secret (%d match(es) of %s); it was not written, signed or sent — "+
		"find where the secret entered (the plan, a result.json, an ATIF file) and remove it", where, e.Count, e.Detector)
}

// CheckIdentity returns an *IdentityError for the first detector that
// matches value, or nil. A nil Scanner checks nothing.
func (s *Scanner) CheckIdentity(where, field, value string) error {
	if s == nil || value == "" {
		return nil
	}
	if h := s.Scan(field, value); len(h) > 0 {
		return &IdentityError{Where: where, Field: field, Detector: h[0].Detector, Count: h[0].Count}
	}
	return nil
}

// CheckPayload returns a *PayloadError for the first detector that matches
// data, or nil. A nil Scanner checks nothing.
func (s *Scanner) CheckPayload(where string, data []byte) error {
	if s == nil || len(data) == 0 {
		return nil
	}
	// The scan only reads the text and keeps nothing of it, so the bytes
	// are viewed as a string without a copy: plan.json of a large plan is
	// tens of MiB, and the import keeps a memory bound.
	if h := s.Scan(where, unsafe.String(unsafe.SliceData(data), len(data))); len(h) > 0 {
		return &PayloadError{Where: where, Detector: h[0].Detector, Count: h[0].Count}
	}
	return nil
}

// Mask returns text with every form of every known secret value replaced
// by [REDACTED:env:NAME] and every credential pattern by
// [REDACTED:<kind>], also where the text shows them only once decoded
// (decode.go: escaped once or twice, \u escapes, HTML references, the
// JSON-pointer form) or folded by a line break: then the whole encoded
// form, line break included, is replaced. Text without a match is
// returned unchanged (and cheaply). A nil Scanner masks nothing.
func (s *Scanner) Mask(text string) string {
	if s == nil {
		return text
	}
	text = s.maskPlain(text)
	// Each round masks what the decoded views show; a replacement may
	// change what decodes, so look again, a bounded number of times.
	for range MaxDecodeDepth + 1 {
		spans := s.decodedSpans(text)
		if len(spans) == 0 {
			break
		}
		text = replaceSpans(text, spans)
	}
	return text
}

// maskPlain masks the matches in text as it is.
func (s *Scanner) maskPlain(text string) string {
	for _, v := range s.values {
		for _, f := range v.forms {
			if strings.Contains(text, f) {
				text = strings.ReplaceAll(text, f, "[REDACTED:"+v.detector+"]")
			}
		}
	}
	for _, p := range s.patterns {
		if !p.d.candidate(text) {
			continue
		}
		spans := p.find(text)
		if len(spans) == 0 {
			continue
		}
		var b strings.Builder
		last := 0
		for _, sp := range spans {
			b.WriteString(text[last:sp[0]])
			b.WriteString("[REDACTED:" + p.kind + "]")
			last = sp[1]
		}
		b.WriteString(text[last:])
		text = b.String()
	}
	return text
}

// maskSpan is a part of a text to replace by label.
type maskSpan struct {
	start, end int
	label      string
}

// decodedSpans finds the matches in text's decoded and line-joined views,
// as spans of text.
func (s *Scanner) decodedSpans(text string) []maskSpan {
	var views []view
	if decodable(text) {
		views = decodedViews(text, true)
	}
	for _, v := range append([]view{{text: text}}, views...) {
		if j, ok := joined(v); ok {
			views = append(views, j)
		}
	}
	var spans []maskSpan
	for _, v := range views {
		for _, val := range s.values {
			for _, f := range val.forms {
				for off := 0; ; {
					i := strings.Index(v.text[off:], f)
					if i < 0 {
						break
					}
					a, b := v.span(off+i, off+i+len(f))
					spans = append(spans, maskSpan{a, b, "[REDACTED:" + val.detector + "]"})
					off += i + len(f)
				}
			}
		}
		for _, p := range s.patterns {
			if !p.d.candidate(v.text) {
				continue
			}
			for _, sp := range p.find(v.text) {
				a, b := v.span(sp[0], sp[1])
				spans = append(spans, maskSpan{a, b, "[REDACTED:" + p.kind + "]"})
			}
		}
	}
	return spans
}

// replaceSpans replaces each span of text by its label; overlapping spans
// are merged and take the label of the one that starts first.
func replaceSpans(text string, spans []maskSpan) string {
	slices.SortStableFunc(spans, func(a, b maskSpan) int { return cmp.Compare(a.start, b.start) })
	var b strings.Builder
	last := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].start < cur.end; i++ {
			cur.end = max(cur.end, spans[i].end)
		}
		b.WriteString(text[last:cur.start])
		b.WriteString(cur.label)
		last = cur.end
	}
	b.WriteString(text[last:])
	return b.String()
}

// Writer returns a writer that masks (see Mask) each Write before passing
// it to w. tpctl prints each message with one Write, so a secret quoted in
// a message is never split between two calls; long listings are buffered
// in whole lines (ui.LineBuffer), never cut at a fixed size. A nil
// Scanner returns w.
func (s *Scanner) Writer(w io.Writer) io.Writer {
	if s == nil || (len(s.values) == 0 && len(s.patterns) == 0) {
		return w
	}
	return &maskWriter{s: s, w: w}
}

type maskWriter struct {
	s *Scanner
	w io.Writer
}

func (m *maskWriter) Write(p []byte) (int, error) {
	out := m.s.Mask(string(p))
	if _, err := io.WriteString(m.w, out); err != nil {
		return 0, err
	}
	// The caller wrote all of p, even when masking changed its length.
	return len(p), nil
}

// Fd is the descriptor of the wrapped writer when it has one (a terminal's
// width is asked of it), else ^uintptr(0), which no terminal has.
func (m *maskWriter) Fd() uintptr {
	if f, ok := m.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// Clip returns text masked (see Mask) and then cut to at most n runes,
// the cut marked with "…". Every place tpctl shortens untrusted text
// uses it: cut first, a secret would pass in a part no gate recognises
// (issue 35: snapshot show --trials printed 17 characters of a job
// token). n < 1 keeps the whole masked text. A nil Scanner only cuts.
func (s *Scanner) Clip(text string, n int) string {
	return Clip(s.Mask, text, n)
}

// Clip is Scanner.Clip for a mask given as a function (the views of
// cmd/tpctl get the invocation's mask so); a nil mask only cuts.
func Clip(mask func(string) string, text string, n int) string {
	if mask != nil {
		text = mask(text)
	}
	if n < 1 || len(text) <= n {
		return text
	}
	i, count := 0, 0
	for j := range text {
		if count == n-1 {
			i = j
		}
		count++
	}
	if count <= n {
		return text
	}
	return text[:i] + "…"
}
