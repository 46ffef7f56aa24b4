package inspect

import (
	"bytes"
	"errors"
	"fmt"
)

// EvalSetManifest is the eval-set.json Inspect's eval_set() writes in its
// log folder (EvalSet in src/inspect_ai/_eval/evalset.py): the set's id and
// every task × model it planned, whether or not a log for it exists yet.
type EvalSetManifest struct {
	EvalSetID string
	Tasks     []EvalSetTask
}

// EvalSetTask is one planned task × model of an eval set.
type EvalSetTask struct {
	Name     string
	TaskID   string
	TaskFile string
	Model    string
	Sequence int64
}

// ManifestName is the manifest's file name in an eval set's log folder.
const ManifestName = "eval-set.json"

// ReadManifest reads an eval-set.json document (data, already capped by
// the caller; name is for messages).
func ReadManifest(data []byte, name string) (*EvalSetManifest, error) {
	root, err := readDocument(bytes.NewReader(data), DefaultLimits.Nodes)
	if err != nil {
		return nil, &Error{Log: name, Err: err}
	}
	if !root.isObject() || !root.get("tasks").isArray() {
		return nil, &Error{Log: name, Err: errors.New("not an Inspect eval-set manifest: no tasks array")}
	}
	m := &EvalSetManifest{EvalSetID: root.get("eval_set_id").str()}
	for i, t := range root.get("tasks").items() {
		task := EvalSetTask{
			Name: t.get("name").str(), TaskID: t.get("task_id").str(),
			TaskFile: t.get("task_file").str(), Model: t.get("model").str(),
		}
		task.Sequence, _ = t.get("sequence").int()
		if task.TaskID == "" {
			return nil, &Error{Log: name, Pointer: fmt.Sprintf("/tasks/%d/task_id", i), Err: errors.New("a task with no task_id")}
		}
		m.Tasks = append(m.Tasks, task)
	}
	return m, nil
}

// Unlogged returns the manifest's tasks for which no log was found (logs
// are the headers of the logs in the folder): a planned task × model the
// set never wrote, whose samples are all missing.
func (m *EvalSetManifest) Unlogged(logs []*Header) []EvalSetTask {
	have := map[string]bool{}
	for _, h := range logs {
		if m.EvalSetID == "" || h.EvalSetID == "" || h.EvalSetID == m.EvalSetID {
			have[h.TaskID] = true
		}
	}
	var out []EvalSetTask
	for _, t := range m.Tasks {
		if !have[t.TaskID] {
			out = append(out, t)
		}
	}
	return out
}
