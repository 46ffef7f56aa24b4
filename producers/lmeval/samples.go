package lmeval

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// Caps on a samples file. A line holds one document with its prompt and
// responses (a long-context task's prompt is a few MiB); a file holds one
// task's documents, each once per filter.
const (
	MaxSampleLineBytes = 32 << 20
	MaxSamplesBytes    = 4 << 30
)

// Limits are the caps of one samples read; zero fields take the defaults.
type Limits struct {
	Line, File int64
}

func (l Limits) orDefault() Limits {
	if l.Line <= 0 {
		l.Line = MaxSampleLineBytes
	}
	if l.File <= 0 {
		l.File = MaxSamplesBytes
	}
	return l
}

// Sample is one line of a samples file: one document under one filter,
// as lm_eval/evaluator.py evaluate() builds it.
type Sample struct {
	// Line is the 1-based line number; Offset the byte offset of the line.
	Line   int
	Offset int64
	// SHA256 is the hex SHA-256 of the line's bytes (without its newline).
	SHA256 string
	DocID  int
	// Filter is the filter the record was scored under ("none" when the
	// line names none, as lm-eval's records before filters did not).
	Filter string
	// Metrics is the record's own list of metric names, nil in records
	// older than that field.
	Metrics []string
	// Values are the record's other top-level values, the metric values
	// among them, by key.
	Values map[string]Value
	// DocHash, PromptHash and TargetHash are lm-eval's hashes ("" when
	// absent).
	DocHash, PromptHash, TargetHash string
	// Arguments, Resps and FilteredResps are the bodies as read; nil
	// unless the read kept bodies.
	Arguments, Resps, FilteredResps any
	// Target is the record's target (kept with the bodies).
	Target string
}

// Value is one top-level value of a sample line: its JSON kind and, for a
// scalar, its text as written.
type Value struct {
	Kind jsonscan.Kind
	Raw  string
}

// LineError is a samples line tpctl cannot read.
type LineError struct {
	File string
	Line int
	// Pointer is the JSON pointer inside the line, "" for the line.
	Pointer string
	Err     error
}

func (e *LineError) Error() string {
	if e.Pointer != "" {
		return fmt.Sprintf("%s: line %d: %s: %v", e.File, e.Line, e.Pointer, e.Err)
	}
	return fmt.Sprintf("%s: line %d: %v", e.File, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// DuplicateError is a document listed twice under one filter.
type DuplicateError struct {
	File          string
	DocID         int
	Filter        string
	First, Second int // line numbers
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("%s: document %d (filter %s) is listed twice, on line %d and line %d: which one lm-eval scored is unknowable; remove one line or re-run the task",
		e.File, e.DocID, e.Filter, e.First, e.Second)
}

// SamplesSummary is what a whole read of a samples file found.
type SamplesSummary struct {
	File  string
	Lines int
	// Documents counts distinct document ids; Filters lists the filters in
	// the order first met.
	Documents int
	Filters   []string
	// TaskHash is lm-eval's task hash recomputed from the lines in order
	// (SHA-256 hex of every line's doc_hash+prompt_hash+target_hash, as
	// save_results_aggregated computes task_hashes), "" when a line lacks
	// one of the three.
	TaskHash string
}

// ReadSamples streams a samples file from r, line by line, calling visit
// (when not nil) for each record in file order. bodies keeps each line's
// arguments, resps, filtered_resps and target (for transcripts); without
// it they are skipped unread. A line over lim.Line, a file over lim.File,
// a line that is not one of lm-eval's records and a document listed twice
// under one filter are errors naming the line; an error visit returns
// stops the read and is returned as is. Blank lines are skipped.
func ReadSamples(r io.Reader, name string, lim Limits, bodies bool, visit func(*Sample) error) (*SamplesSummary, error) {
	lim = lim.orDefault()
	br := bufio.NewReaderSize(r, 64<<10)
	sum := &SamplesSummary{File: name}
	seen := map[docKey]int{}
	docs := map[int]struct{}{}
	var th hash.Hash = sha256.New()
	hashable := true
	var line []byte
	var off, total int64
	dec := jsonscan.NewBytes(nil, scanOptions)
	for n := 1; ; n++ {
		line = line[:0]
		start := off
		var rerr error
		for {
			chunk, err := br.ReadSlice('\n')
			total += int64(len(chunk))
			if total > lim.File {
				return sum, &TooLargeError{File: name, Limit: lim.File}
			}
			if int64(len(line)+len(chunk)) > lim.Line+1 { // +1: the newline
				return sum, &TooLargeError{File: name, Line: n, Limit: lim.Line}
			}
			line = append(line, chunk...)
			if err == bufio.ErrBufferFull {
				continue
			}
			rerr = err
			break
		}
		off = total
		if rerr != nil && rerr != io.EOF {
			return sum, &LineError{File: name, Line: n, Err: rerr}
		}
		body := bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(body)) > 0 {
			s, err := parseSample(dec, body, bodies)
			if err != nil {
				if rerr == io.EOF && !bytes.HasSuffix(line, []byte("\n")) {
					err = fmt.Errorf("%w (the last line has no newline: the file may have been cut short)", err)
				}
				var le *LineError
				if errors.As(err, &le) {
					le.File, le.Line = name, n
					return sum, le
				}
				return sum, &LineError{File: name, Line: n, Err: err}
			}
			s.Line, s.Offset = n, start
			sum.Lines++
			k := docKey{s.DocID, s.Filter}
			if first, dup := seen[k]; dup {
				return sum, &DuplicateError{File: name, DocID: s.DocID, Filter: s.Filter, First: first, Second: n}
			}
			seen[k] = n
			docs[s.DocID] = struct{}{}
			if !slices.Contains(sum.Filters, s.Filter) {
				sum.Filters = append(sum.Filters, s.Filter)
			}
			if s.DocHash == "" || s.PromptHash == "" || s.TargetHash == "" {
				hashable = false
			} else {
				th.Write([]byte(s.DocHash))
				th.Write([]byte(s.PromptHash))
				th.Write([]byte(s.TargetHash))
			}
			if visit != nil {
				if err := visit(s); err != nil {
					return sum, err
				}
			}
		}
		if rerr == io.EOF {
			break
		}
	}
	sum.Documents = len(docs)
	if hashable && sum.Lines > 0 {
		sum.TaskHash = hex.EncodeToString(th.Sum(nil))
	}
	return sum, nil
}

type docKey struct {
	doc    int
	filter string
}

// parseSample reads one line. Pointers in its errors are inside the line.
func parseSample(d *jsonscan.Decoder, line []byte, bodies bool) (*Sample, error) {
	d.Reset(line, scanOptions)
	sum := sha256.Sum256(line)
	s := &Sample{SHA256: hex.EncodeToString(sum[:]), DocID: -1}
	fail := func(ptr string, err error) error { return &LineError{Pointer: ptr, Err: err} }
	k, err := d.Next()
	if err != nil {
		return nil, jsonError(d, err)
	}
	if k != jsonscan.BeginObject {
		return nil, errors.New("not a JSON object: not one of lm-eval's sample records")
	}
	for {
		k, err := d.Next()
		if err != nil {
			return nil, jsonError(d, err)
		}
		if k == jsonscan.EndObject {
			break
		}
		key := d.String()
		ptr := "/" + jsonscan.EscapePointer(key)
		vk, err := d.Next()
		if err != nil {
			return nil, jsonError(d, err)
		}
		switch key {
		case "doc_id":
			if vk != jsonscan.Number {
				return nil, fail(ptr, errors.New("not a document id"))
			}
			id, ok := integer(Number(d.Raw()))
			if !ok {
				return nil, fail(ptr, fmt.Errorf("not a document id: %s", d.Raw()))
			}
			s.DocID = id
		case "filter":
			if vk != jsonscan.String {
				return nil, fail(ptr, errors.New("not a string"))
			}
			s.Filter = d.String()
		case "doc_hash", "prompt_hash", "target_hash":
			if vk != jsonscan.String {
				return nil, fail(ptr, errors.New("not a string"))
			}
			h := d.String()
			switch key {
			case "doc_hash":
				s.DocHash = h
			case "prompt_hash":
				s.PromptHash = h
			default:
				s.TargetHash = h
			}
		case "metrics":
			v, err := readValue(d, vk)
			if err != nil {
				return nil, jsonError(d, err)
			}
			list, ok := v.([]any)
			if !ok {
				return nil, fail(ptr, errors.New("not a list of metric names"))
			}
			s.Metrics = []string{}
			for i, m := range list {
				name, ok := m.(string)
				if !ok {
					return nil, fail(fmt.Sprintf("%s/%d", ptr, i), errors.New("not a metric name"))
				}
				s.Metrics = append(s.Metrics, name)
			}
		case "arguments", "resps", "filtered_resps", "target":
			if !bodies {
				if err := d.Skip(vk); err != nil {
					return nil, jsonError(d, err)
				}
				continue
			}
			v, err := readValue(d, vk)
			if err != nil {
				return nil, jsonError(d, err)
			}
			switch key {
			case "arguments":
				s.Arguments = v
			case "resps":
				s.Resps = v
			case "filtered_resps":
				s.FilteredResps = v
			default:
				s.Target = text(v)
			}
		case "doc":
			if err := d.Skip(vk); err != nil {
				return nil, jsonError(d, err)
			}
		default:
			val := Value{Kind: vk}
			switch vk {
			case jsonscan.String:
				val.Raw = d.String()
			case jsonscan.Number:
				val.Raw = string(d.Raw())
			case jsonscan.True:
				val.Raw = "true"
			case jsonscan.False:
				val.Raw = "false"
			case jsonscan.Null:
				val.Raw = "null"
			default:
				if err := d.Skip(vk); err != nil {
					return nil, jsonError(d, err)
				}
			}
			if s.Values == nil {
				s.Values = map[string]Value{}
			}
			s.Values[key] = val
		}
	}
	if off, more := d.Rest(); more {
		return nil, fmt.Errorf("data after the JSON object at byte %d", off)
	}
	if s.DocID < 0 {
		return nil, fail("/doc_id", errors.New("missing: not one of lm-eval's sample records"))
	}
	if s.Filter == "" {
		s.Filter = "none"
	}
	return s, nil
}
