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
// would, handing each element to take instead of keeping it.
func (d *decoder) streamTrials() (any, error) {
	st := d.stream
	st.started = true
	if err := d.elements(func(i int, v any) { st.take(d.path, i, v) }); err != nil {
		return nil, err
	}
	return streamedTrials{}, nil
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
