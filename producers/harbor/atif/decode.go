package atif

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/internal/jsonscan"
	"github.com/tuneplane/tpctl/internal/safefs"
)

// errTooLarge is returned by cappedReader once more than the cap was read.
var errTooLarge = errors.New("input over the size cap")

// cappedReader fails instead of returning bytes past max, so a file that
// grows after its stat, or a pipe, cannot make the decoder read without end.
type cappedReader struct {
	r   io.Reader
	n   int64
	max int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.n > c.max {
		return 0, errTooLarge
	}
	if rem := c.max + 1 - c.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		return n, errTooLarge
	}
	return n, err
}

// OpenFile opens a trajectory file for Decode: it refuses known non-ATIF
// names (CheckName), symlinks and special files, and files whose stat size
// is over the cap, all before reading a byte.
func OpenFile(path string, opts Options) (*os.File, error) {
	opts = opts.withDefaults()
	if err := CheckName(path); err != nil {
		return nil, err
	}
	// Symlinks and special files are refused with a *safefs.PathError.
	f, err := safefs.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.Size() > opts.MaxSize {
		f.Close()
		return nil, &LimitError{What: "bytes", Limit: opts.MaxSize, Size: fi.Size()}
	}
	return f, nil
}

// DecodeFile opens path with OpenFile and decodes it with Decode. Errors
// name the file.
func DecodeFile(path string, opts Options, onStep func(*Step) error) (*Trajectory, error) {
	f, err := OpenFile(path, opts)
	if err != nil {
		return nil, fmt.Errorf("trajectory %q: %w", path, err)
	}
	defer f.Close()
	t, err := Decode(f, opts, onStep)
	if err != nil {
		return nil, fmt.Errorf("trajectory %q: %w", path, err)
	}
	return t, nil
}

// Decode reads one ATIF document from r. If onStep is non-nil it is called
// with every step in order and Trajectory.Steps stays empty, so memory is
// bounded by one step; an error from onStep stops decoding and is returned
// as is. Decode reads at most opts.MaxSize bytes.
//
// Errors: *UnsupportedFormatError (not ATIF v1.x), *LimitError (a bound was
// hit), *SyntaxError (malformed JSON or a wrong type), or onStep's error.
func Decode(r io.Reader, opts Options, onStep func(*Step) error) (*Trajectory, error) {
	opts = opts.withDefaults()
	cr := &cappedReader{r: r, max: opts.MaxSize}
	d := &decoder{
		sc:      jsonscan.NewDecoder(cr, jsonscan.Options{}),
		cr:      cr,
		opts:    opts,
		t:       &Trajectory{},
		onStep:  onStep,
		topKeys: map[string]bool{},
	}
	if err := d.root(); err != nil {
		return nil, err
	}
	return d.t, nil
}

type decoder struct {
	sc      *jsonscan.Decoder
	cr      *cappedReader
	opts    Options
	t       *Trajectory
	onStep  func(*Step) error
	path    []string
	topKeys map[string]bool
	depth   int // open containers, counted by token
	seen    map[string]bool
	buf     bytes.Buffer
	enc     *json.Encoder // writes strings into buf
	skim    bool          // the current step's text is not decoded
}

func (d *decoder) pointer() string {
	if len(d.path) == 0 {
		return ""
	}
	var b []byte
	for _, p := range d.path {
		b = jsonscan.AppendPointer(b, p)
	}
	return string(b)
}

func (d *decoder) errorf(format string, args ...any) error {
	return &SyntaxError{Pointer: d.pointer(), Offset: d.sc.InputOffset(), Msg: fmt.Sprintf(format, args...)}
}

// next reads one token, tracking depth and turning scanner failures into
// located errors.
func (d *decoder) next() (jsonscan.Kind, error) {
	k, err := d.sc.Next()
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return k, &LimitError{What: "bytes", Limit: d.opts.MaxSize}
		}
		if err == io.EOF {
			return k, &SyntaxError{Pointer: d.pointer(), Offset: d.cr.n, Msg: "unexpected end of file", Err: io.ErrUnexpectedEOF}
		}
		return k, &SyntaxError{Pointer: d.pointer(), Offset: d.sc.InputOffset(), Msg: "invalid JSON", Err: err}
	}
	switch k {
	case jsonscan.BeginObject, jsonscan.BeginArray:
		d.depth++
		if d.depth > d.opts.MaxDepth {
			return k, &LimitError{What: "nesting levels", Limit: int64(d.opts.MaxDepth), At: d.pointer()}
		}
	case jsonscan.EndObject, jsonscan.EndArray:
		d.depth--
	}
	return k, nil
}

func kind(k jsonscan.Kind) string {
	switch k {
	case jsonscan.Null:
		return "null"
	case jsonscan.True, jsonscan.False:
		return "a boolean"
	case jsonscan.Number:
		return "a number"
	case jsonscan.String:
		return "a string"
	case jsonscan.BeginObject:
		return "an object"
	case jsonscan.BeginArray:
		return "an array"
	}
	return "unexpected token"
}

// skipFrom consumes the rest of a value whose first token is k. It builds
// nothing but still checks the depth bound.
func (d *decoder) skipFrom(k jsonscan.Kind) error {
	if k != jsonscan.BeginObject && k != jsonscan.BeginArray {
		return nil
	}
	base := d.depth - 1
	for d.depth > base {
		if _, err := d.next(); err != nil {
			return err
		}
	}
	return nil
}

// captureFrom writes the compact JSON of a value whose first token is k
// into d.buf. It walks tokens iteratively, so nesting costs no stack.
func (d *decoder) captureFrom(k jsonscan.Kind) error {
	type frame struct {
		obj bool
		n   int
	}
	var stack []frame
	for {
		if k == jsonscan.EndObject || k == jsonscan.EndArray {
			stack = stack[:len(stack)-1]
			if k == jsonscan.EndObject {
				d.buf.WriteByte('}')
			} else {
				d.buf.WriteByte(']')
			}
		} else {
			if len(stack) > 0 {
				top := &stack[len(stack)-1]
				switch {
				case top.obj && top.n%2 == 1:
					d.buf.WriteByte(':')
				case top.n > 0:
					d.buf.WriteByte(',')
				}
				top.n++
			}
			switch k {
			case jsonscan.BeginObject:
				stack = append(stack, frame{obj: true})
				d.buf.WriteByte('{')
			case jsonscan.BeginArray:
				stack = append(stack, frame{})
				d.buf.WriteByte('[')
			case jsonscan.String:
				d.writeString()
			case jsonscan.Number:
				d.buf.Write(d.sc.Raw())
			case jsonscan.True:
				d.buf.WriteString("true")
			case jsonscan.False:
				d.buf.WriteString("false")
			case jsonscan.Null:
				d.buf.WriteString("null")
			}
		}
		if len(stack) == 0 {
			return nil
		}
		var err error
		if k, err = d.next(); err != nil {
			return err
		}
	}
}

// writeString writes the last string token as encoding/json writes its
// value without HTML escaping: the source text itself when that is the
// same, else re-encoded.
func (d *decoder) writeString() {
	if d.sc.Verbatim() {
		d.buf.Write(d.sc.Raw())
		return
	}
	if d.enc == nil {
		d.enc = json.NewEncoder(&d.buf)
		d.enc.SetEscapeHTML(false)
	}
	_ = d.enc.Encode(d.sc.String()) // a string always encodes
	d.buf.Truncate(d.buf.Len() - 1)
}

// object reads an object whose '{' was k, calling field for each key with
// the key pushed on the path. A null k is accepted when nullable.
func (d *decoder) object(k jsonscan.Kind, what string, nullable bool, field func(key string) error) (bool, error) {
	if k == jsonscan.Null && nullable {
		return false, nil
	}
	if k != jsonscan.BeginObject {
		return false, d.errorf("%s must be an object, got %s", what, kind(k))
	}
	for d.sc.More() {
		if _, err := d.next(); err != nil {
			return true, err
		}
		key := d.key()
		d.path = append(d.path, key)
		err := field(key)
		d.path = d.path[:len(d.path)-1]
		if err != nil {
			return true, err
		}
	}
	_, err := d.next() // '}'
	return true, err
}

// nextObject reads the next value as an object (see object).
func (d *decoder) nextObject(what string, nullable bool, field func(key string) error) (bool, error) {
	k, err := d.next()
	if err != nil {
		return false, err
	}
	return d.object(k, what, nullable, field)
}

// nextArray reads the next value as an array (see array).
func (d *decoder) nextArray(what string, nullable bool, elem func(i int) error) error {
	k, err := d.next()
	if err != nil {
		return err
	}
	return d.array(k, what, nullable, elem)
}

// extraOrUnknown handles a key no case of a member switch took: "extra",
// free-form in every ATIF object, is skipped; anything else is unknown.
func (d *decoder) extraOrUnknown(key string) error {
	if key == "extra" {
		return d.skip()
	}
	return d.unknown()
}

// schemaKeys are the keys the walker knows; key returns these strings
// instead of allocating new ones.
var schemaKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"schema_version", "session_id", "trajectory_id", "notes",
		"continued_trajectory_ref", "extra", "final_metrics", "agent", "subagent_trajectories",
		"steps", "name", "version", "model_name", "tool_definitions", "step_id", "timestamp",
		"source", "reasoning_content", "message", "is_copied_context", "reasoning_effort",
		"llm_call_count", "tool_calls", "observation", "metrics", "tool_call_id",
		"function_name", "arguments", "results", "source_call_id", "content",
		"subagent_trajectory_ref", "trajectory_path", "prompt_tokens", "completion_tokens",
		"cached_tokens", "cost_usd", "prompt_token_ids", "completion_token_ids", "logprobs",
		"duration_ms", "type", "text", "media_type", "path"} {
		m[k] = k
	}
	return m
}()

// key is the text of the object key just read.
func (d *decoder) key() string {
	b := d.sc.Text()
	if k, ok := schemaKeys[string(b)]; ok {
		return k
	}
	return string(b)
}

// array reads an array whose '[' was k, calling elem with the index pushed
// on the path. A null k is accepted when nullable.
func (d *decoder) array(k jsonscan.Kind, what string, nullable bool, elem func(i int) error) error {
	if k == jsonscan.Null && nullable {
		return nil
	}
	if k != jsonscan.BeginArray {
		return d.errorf("%s must be an array, got %s", what, kind(k))
	}
	for i := 0; d.sc.More(); i++ {
		d.path = append(d.path, strconv.Itoa(i))
		err := elem(i)
		d.path = d.path[:len(d.path)-1]
		if err != nil {
			return err
		}
	}
	_, err := d.next() // ']'
	return err
}

// unknown counts and skips a key outside the schema.
func (d *decoder) unknown() error {
	d.t.UnknownFields++
	if len(d.t.UnknownFieldPaths) < 16 {
		var b strings.Builder
		for _, p := range d.path {
			b.WriteByte('/')
			if _, err := strconv.Atoi(p); err == nil {
				b.WriteByte('*')
			} else {
				b.WriteString(jsonscan.EscapePointer(p))
			}
		}
		if d.seen == nil {
			d.seen = map[string]bool{}
		}
		if s := b.String(); !d.seen[s] {
			d.seen[s] = true
			d.t.UnknownFieldPaths = append(d.t.UnknownFieldPaths, s)
		}
	}
	return d.skip()
}

func (d *decoder) skip() error {
	k, err := d.next()
	if err != nil {
		return err
	}
	return d.skipFrom(k)
}

// text is the last string token's text, or in a skimmed step Skimmed when
// it is not empty.
func (d *decoder) text() string {
	if d.skim && !d.sc.Empty() {
		return Skimmed
	}
	return d.sc.String()
}

// scalar reads the next value: a string gives its text (see text), and
// its kind is returned for the caller to take or refuse (null gives "").
func (d *decoder) scalar() (string, jsonscan.Kind, error) {
	k, err := d.next()
	if err != nil || k != jsonscan.String {
		return "", k, err
	}
	return d.text(), k, nil
}

// str reads a string (null gives ""); in a skimmed step see text.
func (d *decoder) str() (string, error) {
	s, k, err := d.scalar()
	if err != nil || k == jsonscan.String || k == jsonscan.Null {
		return s, err
	}
	return "", d.errorf("must be a string, got %s", kind(k))
}

// exactStr is str that decodes the text even in a skimmed step, for the
// values that are checked.
func (d *decoder) exactStr() (string, error) {
	skim := d.skim
	d.skim = false
	s, err := d.str()
	d.skim = skim
	return s, err
}

// optStr reads a string or null.
func (d *decoder) optStr() (*string, error) {
	s, k, err := d.scalar()
	switch {
	case err != nil || k == jsonscan.Null:
		return nil, err
	case k == jsonscan.String:
		return &s, nil
	}
	return nil, d.errorf("must be a string, got %s", kind(k))
}

// scalarText reads a string or number as text (agent.version is sometimes
// written as a number by hand-made files).
func (d *decoder) scalarText() (string, error) {
	s, k, err := d.scalar()
	switch {
	case err != nil || k == jsonscan.String || k == jsonscan.Null:
		return s, err
	case k == jsonscan.Number:
		return string(d.sc.Raw()), nil
	}
	return "", d.errorf("must be a string, got %s", kind(k))
}

func (d *decoder) intFrom(k jsonscan.Kind) (*int64, error) {
	switch k {
	case jsonscan.Null:
		return nil, nil
	case jsonscan.Number:
		v := string(d.sc.Raw())
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			// Some writers emit 12.0; accept integral floats.
			f, ferr := strconv.ParseFloat(v, 64)
			if ferr != nil || f != float64(int64(f)) {
				return nil, d.errorf("must be an integer, got %s", v)
			}
			n = int64(f)
		}
		return &n, nil
	}
	return nil, d.errorf("must be an integer, got %s", kind(k))
}

func (d *decoder) optInt() (*int64, error) {
	k, err := d.next()
	if err != nil {
		return nil, err
	}
	return d.intFrom(k)
}

func (d *decoder) boolean() (bool, error) {
	k, err := d.next()
	if err != nil {
		return false, err
	}
	switch k {
	case jsonscan.True:
		return true, nil
	case jsonscan.False, jsonscan.Null:
		return false, nil
	}
	return false, d.errorf("must be a boolean, got %s", kind(k))
}

// content reads ATIF message/content: a string or (v1.6+) an array of
// content parts. Text parts are joined with "\n"; images become markers.
func (d *decoder) content() (string, error) {
	s, k, err := d.scalar()
	if err != nil || k == jsonscan.String || k == jsonscan.Null {
		return s, err
	}
	var b strings.Builder
	n := 0
	err = d.array(k, "content", false, func(int) error {
		var typ, text, media string
		_, err := d.nextObject("content part", false, func(key string) error {
			var err error
			switch key {
			case "type":
				typ, err = d.exactStr()
			case "text":
				text, err = d.str()
			case "source":
				_, err = d.nextObject("image source", true, func(key string) error {
					switch key {
					case "media_type":
						var err error
						media, err = d.str()
						return err
					case "path":
						return d.skip()
					}
					return d.unknown()
				})
			default:
				err = d.unknown()
			}
			return err
		})
		if err != nil {
			return err
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		n++
		switch typ {
		case "text":
			b.WriteString(text)
		case "image":
			b.WriteString(ImageMarker(media))
		default:
			return d.errorf("content part type must be \"text\" or \"image\", got %q", typ)
		}
		return nil
	})
	return b.String(), err
}

func (d *decoder) root() error {
	k, err := d.next()
	if err != nil {
		if se := (*SyntaxError)(nil); errors.As(err, &se) && errors.Is(se.Err, io.ErrUnexpectedEOF) && d.cr.n == 0 {
			return &SyntaxError{Msg: "file is empty"}
		}
		return err
	}
	if k == jsonscan.BeginArray {
		return &UnsupportedFormatError{Format: "JSON array (an agent's native event list, e.g. OpenHands)", Reason: nativeReason}
	}
	sawSteps := false
	_, err = d.object(k, "the trajectory", false, func(key string) error {
		if len(d.topKeys) < 64 {
			d.topKeys[key] = true
		}
		var err error
		t := d.t
		switch key {
		case "schema_version":
			t.SchemaVersion, err = d.str()
		case "session_id":
			t.SessionID, err = d.str()
		case "trajectory_id":
			t.TrajectoryID, err = d.str()
		case "notes":
			t.Notes, err = d.str()
		case "continued_trajectory_ref":
			t.ContinuedTrajectoryRef, err = d.str()
		case "extra", "final_metrics":
			err = d.skip()
		case "agent":
			err = d.agent()
		case "subagent_trajectories":
			err = d.nextArray("subagent_trajectories", true, func(int) error {
				t.EmbeddedSubagents++
				return d.skip()
			})
		case "steps":
			sawSteps = true
			err = d.nextArray("steps", false, func(i int) error { return d.step() })
		default:
			err = d.unknown()
		}
		return err
	})
	if err != nil {
		// A foreign document fails on its own fields (e.g. mini-swe-agent's
		// "messages"): name the format rather than the type error.
		if u := classify(d.topKeys, false); u != nil && d.t.SchemaVersion == "" {
			return u
		}
		return err
	}
	// Another value after the first means JSON Lines, never ATIF.
	multi := false
	if k, err := d.sc.Next(); err != io.EOF {
		if err != nil {
			if errors.Is(err, errTooLarge) {
				return &LimitError{What: "bytes", Limit: d.opts.MaxSize}
			}
			return &SyntaxError{Offset: d.sc.InputOffset(), Msg: "unexpected data after the trajectory object", Err: err}
		}
		if k != jsonscan.BeginObject {
			return &SyntaxError{Offset: d.sc.InputOffset(), Msg: "unexpected data after the trajectory object"}
		}
		multi = true
	}
	if d.t.SchemaVersion == "" || multi {
		if u := classify(d.topKeys, multi); u != nil {
			return u
		}
	}
	switch {
	case d.t.SchemaVersion == "":
		if !sawSteps {
			return &UnsupportedFormatError{Format: "unknown JSON", Reason: "no schema_version and no steps; " + useATIF}
		}
		return &SyntaxError{Pointer: "/schema_version", Offset: d.cr.n, Msg: "missing; tpctl reads " + supportedList() + " and needs the version stated"}
	case !versionSupported(d.t.SchemaVersion):
		return &UnsupportedFormatError{Format: strconv.Quote(d.t.SchemaVersion),
			Reason: "unknown schema_version; tpctl reads " + strings.Join(SupportedVersions, ", ")}
	case !sawSteps:
		return &SyntaxError{Pointer: "/steps", Offset: d.cr.n, Msg: "missing; an ATIF trajectory needs at least one step"}
	case d.t.StepCount == 0:
		return &SyntaxError{Pointer: "/steps", Offset: d.cr.n, Msg: "is empty; an ATIF trajectory needs at least one step"}
	}
	return nil
}

func (d *decoder) agent() error {
	a := &d.t.Agent
	_, err := d.nextObject("agent", true, func(key string) error {
		var err error
		switch key {
		case "name":
			a.Name, err = d.str()
		case "version":
			a.Version, err = d.scalarText()
		case "model_name":
			a.ModelName, err = d.str()
		case "tool_definitions":
			err = d.skip()
		default:
			err = d.extraOrUnknown(key)
		}
		return err
	})
	return err
}

func (d *decoder) step() error {
	if d.t.StepCount >= d.opts.MaxSteps {
		return &LimitError{What: "steps", Limit: int64(d.opts.MaxSteps), At: "/steps"}
	}
	d.t.StepCount++
	d.skim = d.opts.Skim != nil && d.opts.Skim()
	defer func() { d.skim = false }()
	s := &Step{Skimmed: d.skim}
	_, err := d.nextObject("a step", false, func(key string) error {
		var err error
		switch key {
		case "step_id":
			var n *int64
			if n, err = d.optInt(); n != nil {
				s.StepID = *n
			}
		case "timestamp":
			s.Timestamp, err = d.str()
		case "source":
			if s.Source, err = d.exactStr(); err == nil {
				switch s.Source {
				case "system", "user", "agent":
				default:
					err = d.errorf("must be \"system\", \"user\" or \"agent\", got %q", s.Source)
				}
			}
		case "model_name":
			s.ModelName, err = d.str()
		case "reasoning_content":
			s.ReasoningContent, err = d.str()
		case "message":
			s.Message, err = d.content()
		case "is_copied_context":
			s.IsCopiedContext, err = d.boolean()
		case "reasoning_effort", "llm_call_count", "extra":
			err = d.skip()
		case "tool_calls":
			err = d.toolCalls(s)
		case "observation":
			err = d.observation(s)
		case "metrics":
			err = d.metrics(s)
		default:
			err = d.unknown()
		}
		return err
	})
	if err != nil {
		return err
	}
	if s.Source == "" {
		return d.errorf("step has no source; it must be \"system\", \"user\" or \"agent\"")
	}
	if d.onStep != nil {
		return d.onStep(s)
	}
	d.t.Steps = append(d.t.Steps, s)
	return nil
}

func (d *decoder) toolCalls(s *Step) error {
	return d.nextArray("tool_calls", true, func(int) error {
		var tc ToolCall
		_, err := d.nextObject("a tool call", false, func(key string) error {
			var err error
			switch key {
			case "tool_call_id":
				tc.ID, err = d.str()
			case "function_name":
				tc.FunctionName, err = d.str()
			case "arguments":
				var ak jsonscan.Kind
				if ak, err = d.next(); err != nil {
					return err
				}
				if ak == jsonscan.String {
					// Harbor wants an object, but some writers send the
					// provider's JSON-encoded string; keep it as text.
					tc.Arguments = d.text()
					return nil
				}
				if d.skim {
					// Any value but a string captures as non-empty text.
					tc.Arguments = Skimmed
					return d.skipFrom(ak)
				}
				d.buf.Reset()
				if err = d.captureFrom(ak); err == nil {
					tc.Arguments = d.buf.String()
				}
			default:
				err = d.extraOrUnknown(key)
			}
			return err
		})
		s.ToolCalls = append(s.ToolCalls, tc)
		return err
	})
}

func (d *decoder) observation(s *Step) error {
	_, err := d.nextObject("observation", true, func(key string) error {
		if key != "results" {
			return d.unknown()
		}
		if s.Observation == nil {
			s.Observation = []ObservationResult{}
		}
		return d.nextArray("results", true, func(int) error {
			var r ObservationResult
			_, err := d.nextObject("an observation result", false, func(key string) error {
				var err error
				switch key {
				case "source_call_id":
					r.SourceCallID, err = d.optStr()
				case "content":
					r.Content, err = d.content()
				case "subagent_trajectory_ref":
					err = d.subagentRefs(&r)
				default:
					err = d.extraOrUnknown(key)
				}
				return err
			})
			s.Observation = append(s.Observation, r)
			return err
		})
	})
	return err
}

func (d *decoder) subagentRefs(r *ObservationResult) error {
	return d.nextArray("subagent_trajectory_ref", true, func(int) error {
		var ref SubagentRef
		_, err := d.nextObject("a subagent reference", false, func(key string) error {
			var err error
			switch key {
			case "session_id":
				ref.SessionID, err = d.str()
			case "trajectory_id":
				ref.TrajectoryID, err = d.str()
			case "trajectory_path":
				ref.TrajectoryPath, err = d.str()
			default:
				err = d.extraOrUnknown(key)
			}
			return err
		})
		r.SubagentRefs = append(r.SubagentRefs, ref)
		return err
	})
}

func (d *decoder) metrics(s *Step) error {
	m := &Metrics{}
	present, err := d.nextObject("metrics", true, func(key string) error {
		var err error
		switch key {
		case "prompt_tokens":
			m.PromptTokens, err = d.optInt()
		case "completion_tokens":
			m.CompletionTokens, err = d.optInt()
		case "cached_tokens":
			m.CachedTokens, err = d.optInt()
		case "cost_usd", "prompt_token_ids", "completion_token_ids", "logprobs":
			err = d.skip()
		case "extra":
			_, err = d.nextObject("metrics extra", true, func(key string) error {
				if key != "duration_ms" {
					return d.skip()
				}
				vk, err := d.next()
				if err != nil {
					return err
				}
				if vk != jsonscan.Number {
					return d.skipFrom(vk) // free-form extra: ignore, never fail
				}
				if n, err := d.intFrom(vk); err == nil && n != nil && *n >= 0 {
					m.DurationMS = n
				}
				return nil
			})
		default:
			err = d.unknown()
		}
		return err
	})
	if present {
		s.Metrics = m
	}
	return err
}
