package planfile

import (
	"encoding/json"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

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
// of the root object and holds an array (k, the token just read, opened
// it inside the root object).
func (d *decoder) wantsStream(key string, m map[string]any, k jsonscan.Kind) bool {
	if d.stream == nil || d.stream.started || k != jsonscan.BeginArray || d.sc.Depth() != 2 || key != "trials" {
		return false
	}
	_, dup := m[key]
	return !dup
}

// streamTrials reads the trials array just opened exactly as array()
// would, handing each element to take instead of keeping it. Trials in
// the exact shape the schema's fast path accepts are read straight into a
// Trial by fastTrial, without a tree; anything else is read again, from
// its first token, as a tree.
func (d *decoder) streamTrials() (any, error) {
	st := d.stream
	st.started = true
	for n := 0; ; n++ {
		d.path = append(d.path, pathElem{index: n, isIdx: true})
		before := d.sc.Mark()
		k, err := d.next()
		if err != nil {
			return nil, err
		}
		if k == jsonscan.EndArray {
			d.path = d.path[:len(d.path)-1]
			return streamedTrials{}, nil
		}
		if t, ok := d.fastTrial(k, st.lastTask); ok {
			st.lastTask = t.Task
			st.trials = append(st.trials, t)
			st.trialOK = append(st.trialOK, true)
		} else {
			if k == jsonscan.BeginObject { // fastTrial read on
				d.sc.Rewind(before)
				k, _ = d.sc.Next() // the same '{' again
			}
			v, err := d.value(k)
			if err != nil {
				return nil, err
			}
			st.take(d.path, n, v)
		}
		d.path = d.path[:len(d.path)-1]
	}
}

// fastTrial reads a trial whose first token k was just read when it has
// exactly the shape trialShapeOK accepts, spelled simply: members task (a
// non-empty string), repeat and optional attempts, each attempt exactly
// retry and dir; member names without escapes; indexes written as plain
// integers 0…1000000; no duplicate member. Such a trial has no schema
// error, no secret-named member and converts with every flag true, so
// nothing but the Trial needs keeping. Otherwise ok is false and the
// general path reads the trial again and reports whatever is wrong. task
// is reused when equal to lastTask (repeats of one task share the string).
func (d *decoder) fastTrial(k jsonscan.Kind, lastTask string) (t Trial, ok bool) {
	if k != jsonscan.BeginObject {
		return t, false
	}
	var hasTask, hasRepeat, hasAttempts bool
	for {
		k, err := d.sc.Next()
		if err != nil {
			return t, false
		}
		if k == jsonscan.EndObject {
			break
		}
		switch string(d.sc.Raw()) { // a member name
		case `"task"`:
			task, good := d.fastString()
			if hasTask || !good || len(task) == 0 {
				return t, false
			}
			hasTask = true
			if string(task) == lastTask {
				t.Task = lastTask
			} else {
				t.Task = string(task)
			}
		case `"repeat"`:
			n, good := d.fastIndex()
			if hasRepeat || !good {
				return t, false
			}
			hasRepeat, t.Repeat = true, n
		case `"attempts"`:
			if hasAttempts || !d.fastAttempts(&t) {
				return t, false
			}
			hasAttempts = true
		default:
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
	if k, err := d.sc.Next(); err != nil || k != jsonscan.BeginArray {
		return false
	}
	t.Attempts = make([]Attempt, 0, 1)
	for {
		k, err := d.sc.Next()
		if err != nil || k != jsonscan.BeginObject {
			return err == nil && k == jsonscan.EndArray
		}
		var a Attempt
		var hasRetry, hasDir bool
		for {
			k, err := d.sc.Next()
			if err != nil {
				return false
			}
			if k == jsonscan.EndObject {
				break
			}
			switch string(d.sc.Raw()) {
			case `"retry"`:
				n, good := d.fastIndex()
				if hasRetry || !good {
					return false
				}
				hasRetry, a.Retry = true, n
			case `"dir"`:
				dir, good := d.fastString()
				if hasDir || !good {
					return false
				}
				hasDir, a.Dir = true, string(dir)
			default:
				return false
			}
		}
		if !hasRetry || !hasDir {
			return false
		}
		t.Attempts = append(t.Attempts, a)
	}
}

// fastString reads a string value and returns its text, valid until the
// next token.
func (d *decoder) fastString() ([]byte, bool) {
	if k, err := d.sc.Next(); err != nil || k != jsonscan.String {
		return nil, false
	}
	return d.sc.Text(), true
}

// fastIndex reads an integer 0…1000000 written without sign, fraction or
// exponent (what smallIndex accepts, spelled canonically), as Scan does.
func (d *decoder) fastIndex() (int, bool) {
	k, err := d.sc.Next()
	if err != nil {
		return 0, false
	}
	return plainInt(d.sc, k)
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
