package planfile

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"io"
	"os"
	"runtime"
	"slices"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// A plan whose trials are not in canonical (task, repeat) order is
// streamed too (issue 36): WriteCanonical sorts its trials with a bounded
// external merge sort. Trials are read from the file in runs of at most
// sortRunBytes, each run sorted in memory and written to a scratch file
// as records (its sort key, its index in the file, its canonical JSON);
// the runs are then merged, and each trial's canonical JSON is written in
// order, handed with its index in the file to WriteCanonical's each.
// Memory is one run while the runs are built, then one read buffer per
// run and the heap of the merge, whatever the number of trials: a million
// trials (about 130 MB of records) are 33 runs.

// sortRunBytes bounds the records of one run held in memory. A variable
// so tests can make many runs of a small plan.
var sortRunBytes = 4 << 20

// runReadBuffer is the read buffer of each run during the merge.
const runReadBuffer = 32 << 10

// ErrDuplicateTrial means WriteCanonical met a (task, repeat) twice in a
// plan whose trials are not in canonical order (Scan cannot see that
// without holding every trial): Load reports it as duplicate_trial, so
// nothing of the plan should be used.
var ErrDuplicateTrial = errors.New("the plan lists a trial twice")

// SortIn sets the folder of the scratch files WriteCanonical sorts a plan
// out of canonical order in (about two thirds of the plan's size; the
// system's temporary folder when unset). Each file is removed at once
// where an open file can be, else when the Streamed is closed.
func (s *Streamed) SortIn(dir string) { s.scratchDir = dir }

// InOrder reports whether the file lists the trials in canonical order.
func (s *Streamed) InOrder() bool { return !s.outOfOrder }

// scratch is a file for a sort's runs, removed at once where an
// open file can be (nothing to clean up after a crash), else by close.
type scratch struct {
	f    *os.File
	path string // when it could not be removed while open
}

func (s *Streamed) newScratch() (*scratch, error) {
	f, err := os.CreateTemp(s.scratchDir, ".tpctl-plan-sort-*")
	if err != nil {
		return nil, err
	}
	sc := &scratch{f: f}
	if runtime.GOOS == "windows" || os.Remove(f.Name()) != nil {
		sc.path = f.Name()
	}
	s.scratches = append(s.scratches, sc)
	return sc, nil
}

func (sc *scratch) close() {
	sc.f.Close()
	if sc.path != "" {
		os.Remove(sc.path)
	}
}

// runEntry is one trial's record in the run being built: buf[off:end]
// holds its task, then (from body) its canonical JSON.
type runEntry struct {
	off, body, end uint32
	repeat, index  uint32
}

// writeSorted is WriteCanonical for a plan out of canonical order.
func (s *Streamed) writeSorted(w io.Writer, each func(Trial, int) error) error {
	d := jsonscan.NewDecoder(io.NewSectionReader(s.f, s.start, s.end-s.start), jsonscan.Options{MaxDepth: MaxDepth})
	if k, err := d.Next(); err != nil || k != jsonscan.BeginArray {
		return ErrPlanChanged
	}
	var (
		buf    = make([]byte, 0, sortRunBytes+4<<10)
		ents   []runEntry
		runs   *scratch
		rw     *bufio.Writer
		ends   []int64 // where each run ends in runs
		at     int64
		t      Trial
		fp     maphash.Hash
		n      int
		varint [4 * binary.MaxVarintLen64]byte
	)
	fp.SetSeed(s.seed)
	less := func(a, b runEntry) int {
		return cmp.Or(bytes.Compare(buf[a.off:a.body], buf[b.off:b.body]), cmp.Compare(a.repeat, b.repeat))
	}
	// spill sorts the run in memory and appends it to the runs file.
	spill := func() error {
		slices.SortFunc(ents, less)
		if runs == nil {
			sc, err := s.newScratch()
			if err != nil {
				return err
			}
			runs, rw = sc, bufio.NewWriterSize(sc.f, 64<<10)
		}
		for _, e := range ents {
			v := binary.AppendUvarint(varint[:0], uint64(e.body-e.off))
			v = binary.AppendUvarint(v, uint64(e.repeat))
			v = binary.AppendUvarint(v, uint64(e.index))
			v = binary.AppendUvarint(v, uint64(e.end-e.body))
			if _, err := rw.Write(v); err != nil {
				return err
			}
			if _, err := rw.Write(buf[e.off:e.end]); err != nil {
				return err
			}
			at += int64(len(v)) + int64(e.end-e.off)
		}
		if err := rw.Flush(); err != nil {
			return err
		}
		ends = append(ends, at)
		buf, ents = buf[:0], ents[:0]
		return nil
	}
	for {
		ok, more, err := readTrial(d, &t, t.Task)
		if err != nil || !ok {
			return ErrPlanChanged
		}
		if !more {
			break
		}
		fingerprintTrial(&fp, &t)
		if len(buf) >= sortRunBytes {
			if err := spill(); err != nil {
				return err
			}
		}
		e := runEntry{off: uint32(len(buf)), repeat: uint32(t.Repeat), index: uint32(n)}
		buf = append(buf, t.Task...)
		e.body = uint32(len(buf))
		if buf, ok = appendCanonicalTrial(buf, t.Task, t.Repeat, t.Attempts); !ok {
			return ErrPlanChanged
		}
		e.end = uint32(len(buf))
		ents = append(ents, e)
		n++
	}
	if n != s.trials || fp.Sum64() != s.fingerprint {
		return ErrPlanChanged
	}
	// The merge runs while the import judges the trials it hands out,
	// under the import's small heap: a lone run stays in memory at its
	// own size, and when there are others it is spilled too, so the
	// merge holds only one read buffer per run (runReadBuffer).
	m := &merge{}
	if len(ends) == 0 {
		slices.SortFunc(ents, less)
		m.cursors = append(m.cursors, &cursor{mem: slices.Clone(ents), buf: bytes.Clone(buf)})
	} else if len(ents) > 0 {
		if err := spill(); err != nil {
			return err
		}
	}
	buf, ents, rw = nil, nil, nil
	var from int64
	for _, end := range ends {
		m.cursors = append(m.cursors, &cursor{r: bufio.NewReaderSize(io.NewSectionReader(runs.f, from, end-from), runReadBuffer)})
		from = end
	}
	return m.write(w, s, each)
}

// cursor reads one sorted run: from memory (mem over buf) or from a
// section of the runs file.
type cursor struct {
	mem []runEntry
	buf []byte
	r   *bufio.Reader
	rec []byte

	task, body    []byte
	repeat, index int
}

// next moves to the run's next record; false at its end.
func (c *cursor) next() (bool, error) {
	if c.r == nil {
		if len(c.mem) == 0 {
			return false, nil
		}
		e := c.mem[0]
		c.mem = c.mem[1:]
		c.task, c.body = c.buf[e.off:e.body], c.buf[e.body:e.end]
		c.repeat, c.index = int(e.repeat), int(e.index)
		return true, nil
	}
	taskLen, err := binary.ReadUvarint(c.r)
	if err == io.EOF {
		return false, nil
	}
	var fields [3]uint64
	for i := range fields {
		if err == nil {
			fields[i], err = binary.ReadUvarint(c.r)
		}
	}
	if err != nil || taskLen+fields[2] > MaxPlanSize {
		return false, errors.New("a scratch file of the plan's sort is damaged")
	}
	c.rec = slices.Grow(c.rec[:0], int(taskLen+fields[2]))[:taskLen+fields[2]]
	if _, err := io.ReadFull(c.r, c.rec); err != nil {
		return false, errors.New("a scratch file of the plan's sort is damaged")
	}
	c.task, c.body = c.rec[:taskLen], c.rec[taskLen:]
	c.repeat, c.index = int(fields[0]), int(fields[1])
	return true, nil
}

// merge is a heap of the runs' cursors by their current trial.
type merge struct{ cursors []*cursor }

func (m *merge) Len() int { return len(m.cursors) }
func (m *merge) Less(i, j int) bool {
	a, b := m.cursors[i], m.cursors[j]
	return cmp.Or(bytes.Compare(a.task, b.task), cmp.Compare(a.repeat, b.repeat)) < 0
}
func (m *merge) Swap(i, j int) { m.cursors[i], m.cursors[j] = m.cursors[j], m.cursors[i] }
func (m *merge) Push(x any)    { m.cursors = append(m.cursors, x.(*cursor)) }
func (m *merge) Pop() any {
	c := m.cursors[len(m.cursors)-1]
	m.cursors = m.cursors[:len(m.cursors)-1]
	return c
}

// write merges the runs into the canonical plan, as WriteCanonical
// writes it (whole trials per Write, about 32 KiB each), handing each
// trial with its index in the file to each (when not nil), decoded from
// the very bytes written.
func (m *merge) write(w io.Writer, s *Streamed, each func(Trial, int) error) error {
	live := m.cursors[:0]
	for _, c := range m.cursors {
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			live = append(live, c)
		}
	}
	m.cursors = live
	heap.Init(m)
	out := append(make([]byte, 0, 40<<10), s.canonHead...)
	var prevTask []byte
	prevRepeat, n := -1, 0
	for m.Len() > 0 {
		c := m.cursors[0]
		if n > 0 && c.repeat == prevRepeat && bytes.Equal(c.task, prevTask) {
			return ErrDuplicateTrial
		}
		prevTask, prevRepeat = append(prevTask[:0], c.task...), c.repeat
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = append(out, c.body...)
		if each != nil {
			t, err := decodeCanonicalTrial(c.body)
			if err != nil {
				return err
			}
			if err := each(t, c.index); err != nil {
				return err
			}
		}
		if len(out) >= 32<<10 {
			if _, err := w.Write(out); err != nil {
				return err
			}
			out = out[:0]
		}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(m, 0)
		} else {
			heap.Pop(m)
		}
	}
	if n != s.trials {
		return ErrPlanChanged
	}
	out, _ = s.head.appendCanonicalTail(out)
	_, err := w.Write(out)
	return err
}

// decodeCanonicalTrial decodes one trial's canonical JSON, as a run
// record holds it (appendCanonicalTrial's bytes).
func decodeCanonicalTrial(b []byte) (Trial, error) {
	var t Trial
	ok, more, err := readTrial(jsonscan.NewBytes(b, jsonscan.Options{MaxDepth: MaxDepth}), &t, "")
	if err != nil || !ok || !more {
		return Trial{}, errors.New("a scratch file of the plan's sort is damaged")
	}
	return t, nil
}
