package planfile

import "encoding/json"

// trialStream converts the root object's "trials" array one element at a
// time while it is scanned, so that a 100,000-trial plan is held as Trial
// structs rather than as a generic tree of the whole document. For each
// element it does what Parse does to the tree: the secret-name rule, the
// schema fast-path test (trialShapeOK) and the conversion (convertTrial).
// Only the trees of trials the fast path cannot vouch for are kept, for
// the schema validator. FuzzParse checks the result against parsing the
// whole tree (parseTree).
type trialStream struct {
	started  bool
	trials   []Trial
	trialOK  []bool
	flags    map[int]attemptFlags
	doubtful map[int]any
	found    []pending // secret_field findings inside trials
	memo     map[string]bool
	lastTask string
}

// streamedTrials stands in the root object for the streamed array.
type streamedTrials struct{}

// decodePlan is decodeTree with the root object's trials streamed.
func decodePlan(data []byte, wantExec bool) (root any, d *decoder, ok bool) {
	return decode(data, wantExec, &trialStream{trials: []Trial{}, memo: map[string]bool{}})
}

// wantsStream reports whether the member being read is the first "trials"
// of the root object and holds an array.
func (d *decoder) wantsStream(key string, m map[string]any) bool {
	if d.stream == nil || d.stream.started || d.depth != 1 || key != "trials" {
		return false
	}
	if _, dup := m[key]; dup {
		return false
	}
	return d.i < len(d.data) && d.data[d.i] == '['
}

// streamTrials scans the trials array at the cursor exactly as array()
// would, handing each element to take instead of keeping it. Trials in
// the exact shape the schema's fast path accepts are read straight into a
// Trial by fastTrial, without a tree; anything else is read as a tree.
func (d *decoder) streamTrials() (any, error) {
	st := d.stream
	st.started = true
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer func() { d.depth-- }()
	d.i++ // [
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == ']' {
		d.i++
		return streamedTrials{}, nil
	}
	for n := 0; ; n++ {
		d.path = append(d.path, pathElem{index: n, isIdx: true})
		d.ws()
		if t, ok := d.fastTrial(st.lastTask); ok {
			st.lastTask = t.Task
			st.trials = append(st.trials, t)
			st.trialOK = append(st.trialOK, true)
		} else {
			v, err := d.value()
			if err != nil {
				return nil, err
			}
			st.take(d.path, n, v)
		}
		d.path = d.path[:len(d.path)-1]
		d.ws()
		if d.i < len(d.data) {
			switch d.data[d.i] {
			case ',':
				d.i++
				continue
			case ']':
				d.i++
				return streamedTrials{}, nil
			}
		}
		return nil, d.unexpected("after an array element (expected ',' or ']')")
	}
}

// fastTrial reads a trial at the cursor when it has exactly the shape
// trialShapeOK accepts, spelled simply: members task (a non-empty
// string), repeat and optional attempts, each attempt exactly retry and
// dir; strings without escapes or control characters; indexes written as
// plain integers 0…1000000; no duplicate member. Such a trial has no
// schema error, no secret-named member and converts with every flag true,
// so nothing but the Trial needs keeping. Otherwise the cursor is left
// where it was and ok is false: the general path then reads the same
// bytes and reports whatever is wrong. task is reused when equal to
// lastTask (repeats of one task share the string).
func (d *decoder) fastTrial(lastTask string) (t Trial, ok bool) {
	start := d.i
	defer func() {
		if !ok {
			d.i = start
		}
	}()
	if !d.fastByte('{') {
		return t, false
	}
	var hasTask, hasRepeat, hasAttempts bool
	for {
		key, good := d.fastRaw()
		if !good || !d.fastByte(':') {
			return t, false
		}
		switch string(key) {
		case "task":
			raw, good := d.fastRaw()
			if hasTask || !good || len(raw) == 0 {
				return t, false
			}
			hasTask = true
			if string(raw) == lastTask {
				t.Task = lastTask
			} else {
				t.Task = string(raw)
			}
		case "repeat":
			n, good := d.fastIndex()
			if hasRepeat || !good {
				return t, false
			}
			hasRepeat, t.Repeat = true, n
		case "attempts":
			if hasAttempts || !d.fastAttempts(&t) {
				return t, false
			}
			hasAttempts = true
		default:
			return t, false
		}
		if d.fastByte('}') {
			break
		}
		if !d.fastByte(',') {
			return t, false
		}
	}
	if !hasTask || !hasRepeat {
		return t, false
	}
	if !hasAttempts {
		t.Attempts = []Attempt{}
	}
	return t, true
}

func (d *decoder) fastAttempts(t *Trial) bool {
	if !d.fastByte('[') {
		return false
	}
	t.Attempts = make([]Attempt, 0, 1)
	if d.fastByte(']') {
		return true
	}
	for {
		if !d.fastByte('{') {
			return false
		}
		var a Attempt
		var hasRetry, hasDir bool
		for {
			key, good := d.fastRaw()
			if !good || !d.fastByte(':') {
				return false
			}
			switch string(key) {
			case "retry":
				n, good := d.fastIndex()
				if hasRetry || !good {
					return false
				}
				hasRetry, a.Retry = true, n
			case "dir":
				raw, good := d.fastRaw()
				if hasDir || !good {
					return false
				}
				hasDir, a.Dir = true, string(raw)
			default:
				return false
			}
			if d.fastByte('}') {
				break
			}
			if !d.fastByte(',') {
				return false
			}
		}
		if !hasRetry || !hasDir {
			return false
		}
		t.Attempts = append(t.Attempts, a)
		if d.fastByte(']') {
			return true
		}
		if !d.fastByte(',') {
			return false
		}
	}
}

// fastByte skips white space and consumes c if it comes next.
func (d *decoder) fastByte(c byte) bool {
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == c {
		d.i++
		return true
	}
	return false
}

// fastRaw reads a string without escapes or control characters and
// returns its bytes (a view of the input).
func (d *decoder) fastRaw() ([]byte, bool) {
	if !d.fastByte('"') {
		return nil, false
	}
	from := d.i
	for d.i < len(d.data) {
		switch c := d.data[d.i]; {
		case c == '"':
			d.i++
			return d.data[from : d.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		d.i++
	}
	return nil, false
}

// fastIndex reads an integer 0…1000000 written without sign, fraction or
// exponent (what smallIndex accepts, spelled canonically).
func (d *decoder) fastIndex() (int, bool) {
	d.ws()
	n, digits := 0, 0
	for d.i < len(d.data) && isDigit(d.data[d.i]) {
		if digits > 0 && n == 0 { // a leading zero: not JSON, let the scanner say so
			return 0, false
		}
		n = n*10 + int(d.data[d.i]-'0')
		d.i++
		if digits++; digits > 7 {
			return 0, false
		}
	}
	if digits == 0 || n > 1000000 {
		return 0, false
	}
	if d.i < len(d.data) {
		switch d.data[d.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	return n, true
}

func (st *trialStream) take(path []pathElem, i int, v any) {
	// path ends with the element's index: the pointer prefix /trials/i.
	st.found = append(st.found, secretFieldsUnder(path, v, st.memo)...)
	if !trialShapeOK(v) {
		if st.doubtful == nil {
			st.doubtful = map[int]any{}
		}
		st.doubtful[i] = v
	}
	t, ok, flags := convertTrial(v)
	// Consecutive trials usually share their task (repeats of one task):
	// share the string too.
	if t.Task == st.lastTask {
		t.Task = st.lastTask
	}
	st.lastTask = t.Task
	st.trials = append(st.trials, t)
	st.trialOK = append(st.trialOK, ok)
	if flags != nil {
		if st.flags == nil {
			st.flags = map[int]attemptFlags{}
		}
		st.flags[i] = *flags
	}
}

// validTrial is a trial the schema surely accepts. It stands in the
// schema's view for every streamed trial that passed trialShapeOK: the
// schema checks array items one by one ("items"), so such a trial yields
// no error wherever it stands, and keeping the doubtful trials at their
// own index keeps every pointer and message as the full tree gives them.
var validTrial = map[string]any{"task": "t", "repeat": json.Number("0")}

// schemaView returns the object the schema validator should see: obj
// itself, or a shallow copy with the streamed trials put back.
func (st *trialStream) schemaView(obj map[string]any) map[string]any {
	if st == nil || !st.started {
		return obj
	}
	view := make(map[string]any, len(obj))
	for k, v := range obj {
		view[k] = v
	}
	trials := []any{}
	if len(st.doubtful) > 0 {
		trials = make([]any, len(st.trials))
		for i := range trials {
			if v, ok := st.doubtful[i]; ok {
				trials[i] = v
			} else {
				trials[i] = validTrial
			}
		}
	}
	view["trials"] = trials
	return view
}
