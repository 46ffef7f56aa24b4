package planfile

import (
	"bytes"
	"errors"
	"github.com/tuneplane/tpctl/internal/safefs"
	"hash/maphash"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tuneplane/tpctl/internal/jcs"
	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// MaxStreamHead caps the bytes of a plan outside its trials (settings,
// protocol, …) that Scan holds: everything but the trials is checked as a
// whole by Parse.
const MaxStreamHead = 1 << 20

// Streamed is a plan file that Scan has vouched for: Load would give it
// exactly Head's findings plus whatever Check finds on disk, so an import
// can read its trials one at a time instead of holding them. It keeps
// the file open; Close it.
type Streamed struct {
	f           *os.File
	start, end  int64 // the trials array's bytes
	trials      int
	fingerprint uint64          // of the decoded trials, to see the file change
	collisions  map[uint64]bool // folder fingerprints seen twice
	seed        maphash.Seed
	head        *Plan
	findings    []Finding
	canonHead   []byte

	// outOfOrder: the file does not list the trials in canonical order,
	// so WriteCanonical sorts them (sortrun.go) in scratch files under
	// scratchDir.
	outOfOrder bool
	scratchDir string
	scratches  []*scratch
}

// Head is the plan without its trials.
func (s *Streamed) Head() *Plan { return s.head }

// Trials is the number of trials.
func (s *Streamed) Trials() int { return s.trials }

// Findings are the findings Load gives that are not about folders on disk:
// only warnings (settings_incomplete, revision_unverified with
// AllowUnverifiedFormat), sorted, without line and column.
func (s *Streamed) Findings() []Finding { return s.findings }

// CanonicalSettings is the RFC 8785 form of the settings ({} when there
// are none), as plan.json holds them.
func (s *Streamed) CanonicalSettings() ([]byte, error) {
	if len(s.head.Settings) == 0 {
		return []byte("{}"), nil
	}
	return jcs.Marshal(s.head.Settings)
}

// Close closes the plan file and removes the scratch files of its sort.
func (s *Streamed) Close() error {
	for _, sc := range s.scratches {
		sc.close()
	}
	s.scratches = nil
	return s.f.Close()
}

// Scan reads the plan at path once, trial by trial, keeping only compact
// state (a 32-bit fingerprint per attempt folder), and reports whether it can
// vouch for it: Parse would find no error and no finding under /trials
// (but for a trial listed twice in a plan out of canonical order, which
// WriteCanonical finds: ErrDuplicateTrial), and the trials are in the one
// shape a streamed import handles, in any order. It declines (false)
// whenever it is not sure: a file over MaxPlanSize or not a regular file,
// any syntax or schema doubt, one trial twice in a row, attempts out of
// ascending retry order, a task
// holding a byte up to '#', a string with an escape, a number not written
// as a plain integer, a control character, a secret the scanner knows, a
// path rule, a duplicate folder, no trials, or a
// head over MaxStreamHead. The caller then loads the plan (Load), which
// gives the exact findings. opts.Strict and opts.AllowExecution decline.
func Scan(path string, opts Options) (*Streamed, bool) {
	if opts.Strict || opts.AllowExecution {
		return nil, false
	}
	f, err := safefs.OpenContext(opts.Context, path)
	if err != nil {
		return nil, false
	}
	s := &Streamed{f: f, seed: maphash.MakeSeed()}
	if !s.scan(opts) {
		f.Close()
		return nil, false
	}
	return s, true
}

func (s *Streamed) scan(opts Options) bool {
	fi, err := s.f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxPlanSize {
		return false
	}
	size := fi.Size()
	d := jsonscan.NewDecoder(io.LimitReader(s.f, size), jsonscan.Options{MaxDepth: MaxDepth})
	if k, err := d.Next(); err != nil || k != jsonscan.BeginObject {
		return false
	}
	seenTrials := false
	for {
		k, err := d.Next()
		if err != nil {
			return false
		}
		if k == jsonscan.EndObject {
			break
		}
		if string(d.Text()) != "trials" {
			k, err := d.Next()
			if err != nil || d.Skip(k) != nil {
				return false
			}
			continue
		}
		if seenTrials {
			return false
		}
		seenTrials = true
		if k, err := d.Next(); err != nil || k != jsonscan.BeginArray {
			return false
		}
		s.start = d.InputOffset() - 1
		if !s.scanTrials(d, opts) {
			return false
		}
		s.end = d.InputOffset()
	}
	if _, err := d.Next(); err != io.EOF || !seenTrials || s.trials == 0 {
		return false
	}
	return s.confirmDirs() && s.checkHead(size, opts)
}

// scanTrials checks every trial as the rules of Parse would, declining on
// anything they would report; the array's '[' was just read.
func (s *Streamed) scanTrials(d *jsonscan.Decoder, opts Options) bool {
	var t, prev Trial
	var fp maphash.Hash
	fp.SetSeed(s.seed)
	// Folders are kept as 32-bit fingerprints in 4,096 buckets by 12
	// more bits of the hash: 4 bytes an attempt. A repeated fingerprint
	// is confirmed by reading the folders again (confirmDirs).
	var dirs [dirBuckets][]uint32
	bad := false
	decline := func(trialHit) { bad = true }
	anyDir := func(int) bool { return true } // readTrial reads only strings
	for {
		ok, more, err := readTrial(d, &t, prev.Task)
		if err != nil || !ok {
			return false
		}
		if !more {
			break
		}
		if s.trials > 0 {
			if t.Task == prev.Task && t.Repeat == prev.Repeat {
				return false // duplicate_trial
			}
			if t.Task < prev.Task || t.Task == prev.Task && t.Repeat < prev.Repeat {
				s.outOfOrder = true
			}
		}
		// A task holding a byte up to '#' cannot be tallied as a stream
		// (snapshot's rule); Load's rules on the trial's text are the
		// same function as Load's.
		newTask := t.Task != prev.Task
		if newTask && strings.IndexFunc(t.Task, func(r rune) bool { return r <= '#' }) >= 0 {
			return false
		}
		if trialRules(&t, newTask, anyDir, opts.Scanner, decline); bad {
			return false
		}
		for _, a := range t.Attempts {
			b, fp := s.dirKey(a.Dir)
			dirs[b] = append(dirs[b], fp)
		}
		fingerprintTrial(&fp, &t)
		s.trials++
		prev.Task, prev.Repeat = t.Task, t.Repeat
	}
	s.fingerprint = fp.Sum64()
	for b := range dirs {
		slices.Sort(dirs[b])
		for i := 1; i < len(dirs[b]); i++ {
			if dirs[b][i] == dirs[b][i-1] {
				if s.collisions == nil {
					s.collisions = map[uint64]bool{}
				}
				s.collisions[uint64(b)<<32|uint64(dirs[b][i])] = true
			}
		}
		dirs[b] = nil
	}
	return true
}

// dirBuckets is the number of buckets of folder fingerprints.
const dirBuckets = 1 << 12

// dirKey is a folder's bucket and fingerprint.
func (s *Streamed) dirKey(dir string) (bucket int, fp uint32) {
	h := maphash.String(s.seed, dir)
	return int(h >> (64 - 12)), uint32(h)
}

// confirmDirs reads the trials again and compares exactly the folders
// whose fingerprints were seen twice: false when two are the same folder
// (duplicate_dir, which Load reports).
func (s *Streamed) confirmDirs() bool {
	if len(s.collisions) == 0 {
		return true
	}
	d := jsonscan.NewDecoder(io.NewSectionReader(s.f, s.start, s.end-s.start), jsonscan.Options{MaxDepth: MaxDepth})
	if k, err := d.Next(); err != nil || k != jsonscan.BeginArray {
		return false
	}
	seen := map[string]bool{}
	var t Trial
	for {
		ok, more, err := readTrial(d, &t, t.Task)
		if err != nil || !ok {
			return false
		}
		if !more {
			return true
		}
		for _, a := range t.Attempts {
			if b, fp := s.dirKey(a.Dir); s.collisions[uint64(b)<<32|uint64(fp)] {
				if seen[a.Dir] {
					return false
				}
				seen[a.Dir] = true
			}
		}
	}
}

// checkHead parses the plan without its trials, one stand-in trial in
// their place, with Parse itself: what it finds there is what Load finds.
func (s *Streamed) checkHead(size int64, opts Options) bool {
	if s.start+(size-s.end) > MaxStreamHead {
		return false
	}
	const standIn = `[{"task":"t","repeat":0,"attempts":[]}]`
	head := make([]byte, 0, s.start+(size-s.end)+int64(len(standIn)))
	head = head[:s.start]
	if _, err := s.f.ReadAt(head, 0); err != nil {
		return false
	}
	head = append(head, standIn...)
	tail := make([]byte, size-s.end)
	if _, err := s.f.ReadAt(tail, s.end); err != nil && !(errors.Is(err, io.EOF) && len(tail) == 0) {
		return false
	}
	head = append(head, tail...)
	p, fs := Parse(head, s.f.Name(), opts)
	if p == nil || HasErrors(fs) || len(p.Trials) != 1 {
		return false
	}
	for _, f := range fs {
		if f.Pointer == "/trials" || strings.HasPrefix(f.Pointer, "/trials/") {
			return false
		}
		f.Line, f.Column = 0, 0
		s.findings = append(s.findings, f)
	}
	p.Trials = []Trial{}
	canon, ok := p.appendCanonicalHead(nil)
	if !ok {
		return false
	}
	s.head, s.canonHead = p, canon
	return true
}

// fingerprintTrial folds a trial into h.
func fingerprintTrial(h *maphash.Hash, t *Trial) {
	h.WriteString(t.Task)
	h.WriteByte(0)
	var buf [24]byte
	b := strconv.AppendInt(buf[:0], int64(t.Repeat), 10)
	b = append(b, ':')
	h.Write(strconv.AppendInt(b, int64(len(t.Attempts)), 10))
	for _, a := range t.Attempts {
		b = append(strconv.AppendInt(buf[:0], int64(a.Retry), 10), ':')
		h.Write(b)
		h.WriteString(a.Dir)
		h.WriteByte(0)
	}
}

// ErrPlanChanged means the plan file changed between Scan and
// WriteCanonical; nothing of it should be used.
var ErrPlanChanged = errors.New("the plan file changed while it was read")

// WriteCanonical writes the plan's normalized canonical JSON (exactly the
// bytes of NormalizedJSON) to w, reading the trials from the file again;
// each Write holds whole trials, about 32 KiB. It fails with
// ErrPlanChanged when the trials read are not those Scan checked.
//
// each, when not nil, is handed every trial in canonical order with its
// index in the plan file (what a finding's pointer /trials/<i> names) as
// soon as its canonical JSON is made, before that is written: so the
// trials can be judged while plan.json is written, in one read. The
// trial is each's to keep; an error from each ends the writing. What
// each saw is the plan only if WriteCanonical returns nil.
//
// A plan out of canonical order is sorted on the way (sortrun.go): then
// it fails with ErrDuplicateTrial when a (task, repeat) is listed twice,
// which Scan does not see.
func (s *Streamed) WriteCanonical(w io.Writer, each func(t Trial, index int) error) error {
	if s.outOfOrder {
		return s.writeSorted(w, each)
	}
	d := jsonscan.NewDecoder(io.NewSectionReader(s.f, s.start, s.end-s.start), jsonscan.Options{MaxDepth: MaxDepth})
	if k, err := d.Next(); err != nil || k != jsonscan.BeginArray {
		return ErrPlanChanged
	}
	buf := append(make([]byte, 0, 40<<10), s.canonHead...)
	var t Trial
	var fp maphash.Hash
	fp.SetSeed(s.seed)
	n := 0
	for {
		ok, more, err := readTrial(d, &t, t.Task)
		if err != nil || !ok {
			return ErrPlanChanged
		}
		if !more {
			break
		}
		fingerprintTrial(&fp, &t)
		if n > 0 {
			buf = append(buf, ',')
		}
		n++
		if buf, ok = appendCanonicalTrial(buf, t.Task, t.Repeat, t.Attempts); !ok {
			return ErrPlanChanged
		}
		if each != nil {
			if err := each(Trial{Task: t.Task, Repeat: t.Repeat, Attempts: slices.Clone(t.Attempts)}, n-1); err != nil {
				return err
			}
		}
		if len(buf) >= 32<<10 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	if n != s.trials || fp.Sum64() != s.fingerprint {
		return ErrPlanChanged
	}
	buf, _ = s.head.appendCanonicalTail(buf)
	_, err := w.Write(buf)
	return err
}

// ReadCanonicalTrials calls each with every trial of a canonical plan
// (plan.json as WriteCanonical writes it), in order. The trial and its
// attempts are each's to keep.
func ReadCanonicalTrials(r io.Reader, each func(Trial) error) error {
	d := jsonscan.NewDecoder(r, jsonscan.Options{MaxDepth: MaxDepth})
	bad := errors.New("plan.json is not a canonical plan")
	if k, err := d.Next(); err != nil || k != jsonscan.BeginObject {
		return bad
	}
	for {
		k, err := d.Next()
		if err != nil {
			return err
		}
		if k == jsonscan.EndObject {
			return nil
		}
		if string(d.Text()) != "trials" {
			k, err := d.Next()
			if err != nil {
				return err
			}
			if err := d.Skip(k); err != nil {
				return err
			}
			continue
		}
		if k, err := d.Next(); err != nil || k != jsonscan.BeginArray {
			return bad
		}
		last := ""
		for {
			var t Trial
			ok, more, err := readTrial(d, &t, last)
			if err != nil {
				return err
			}
			if !ok {
				return bad
			}
			if !more {
				break
			}
			last = t.Task
			if err := each(t); err != nil {
				return err
			}
		}
	}
}

// readTrial reads the next element of a trials array into t (reusing its
// attempts): more is false at the closing bracket. ok is false when the
// element is not in the shape a streamed import handles: an object of
// task (a non-empty string without escapes), repeat and attempts (objects
// of retry and dir, retries ascending) and nothing else, each once, every
// number a plain integer of at most 1,000,000. lastTask is reused when
// the task is the same, so consecutive repeats share one string.
func readTrial(d *jsonscan.Decoder, t *Trial, lastTask string) (ok, more bool, err error) {
	k, err := d.Next()
	if err != nil || k == jsonscan.EndArray {
		return err == nil, false, err
	}
	if k != jsonscan.BeginObject {
		return false, true, nil
	}
	t.Attempts = t.Attempts[:0]
	var seen uint8
	for {
		if k, err = d.Next(); err != nil {
			return false, true, err
		}
		if k == jsonscan.EndObject {
			break
		}
		var bit uint8
		switch string(d.Text()) {
		case "task":
			bit = 1
		case "repeat":
			bit = 2
		case "attempts":
			bit = 4
		default:
			return false, true, nil
		}
		if seen&bit != 0 {
			return false, true, nil
		}
		seen |= bit
		if k, err = d.Next(); err != nil {
			return false, true, err
		}
		switch bit {
		case 1:
			body, ok := plainString(d, k)
			if !ok || len(body) == 0 {
				return false, true, nil
			}
			if string(body) == lastTask {
				t.Task = lastTask
			} else {
				t.Task = string(body)
			}
		case 2:
			if t.Repeat, ok = plainInt(d, k); !ok {
				return false, true, nil
			}
		case 4:
			if ok, err = readAttempts(d, k, t); !ok || err != nil {
				return false, true, err
			}
		}
	}
	return seen&3 == 3, true, nil
}

// readAttempts reads an attempts array whose first token k was just read.
func readAttempts(d *jsonscan.Decoder, k jsonscan.Kind, t *Trial) (bool, error) {
	if k != jsonscan.BeginArray {
		return false, nil
	}
	for {
		k, err := d.Next()
		if err != nil {
			return false, err
		}
		if k == jsonscan.EndArray {
			return true, nil
		}
		if k != jsonscan.BeginObject {
			return false, nil
		}
		var a Attempt
		var seen uint8
		for {
			if k, err = d.Next(); err != nil {
				return false, err
			}
			if k == jsonscan.EndObject {
				break
			}
			var bit uint8
			switch string(d.Text()) {
			case "retry":
				bit = 1
			case "dir":
				bit = 2
			default:
				return false, nil
			}
			if seen&bit != 0 {
				return false, nil
			}
			seen |= bit
			if k, err = d.Next(); err != nil {
				return false, err
			}
			var ok bool
			if bit == 1 {
				a.Retry, ok = plainInt(d, k)
			} else {
				var body []byte
				body, ok = plainString(d, k)
				a.Dir = string(body)
			}
			if !ok {
				return false, nil
			}
		}
		if seen != 3 || len(t.Attempts) > 0 && t.Attempts[len(t.Attempts)-1].Retry >= a.Retry {
			return false, nil
		}
		t.Attempts = append(t.Attempts, a)
	}
}

// plainString is the text of a string token with no escape and valid
// UTF-8 (valid until the next token).
func plainString(d *jsonscan.Decoder, k jsonscan.Kind) ([]byte, bool) {
	if k != jsonscan.String {
		return nil, false
	}
	raw := d.Raw()
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		return nil, false
	}
	return body, true
}

// plainInt is a number token written as a plain integer from 0 to
// 1,000,000 (the schema's range), without a leading zero.
func plainInt(d *jsonscan.Decoder, k jsonscan.Kind) (int, bool) {
	if k != jsonscan.Number {
		return 0, false
	}
	raw := d.Raw()
	if len(raw) == 0 || len(raw) > 7 || raw[0] == '0' && len(raw) > 1 {
		return 0, false
	}
	n := 0
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= 1_000_000
}

// DirChecker applies Check's filesystem rules to one attempt folder at a
// time, for a streamed import that runs them only on folders it could not
// read (the read itself refuses symlinks). Parents are cached as in Check.
type DirChecker struct{ w *walker }

// NewDirChecker checks folders under root, which must be a folder.
func NewDirChecker(root string) *DirChecker {
	return &DirChecker{w: &walker{root: root, prefixes: make(map[string]prefixState)}}
}

// Check returns the finding Check gives for the clean relative folder dir
// (its Pointer left for the caller), and whether there is one. A file
// locator ("path#fragment") is checked as the file it names.
func (c *DirChecker) Check(dir string) (Finding, bool) {
	rel, file := LocatorPath(dir)
	return c.w.check(rel, file)
}
