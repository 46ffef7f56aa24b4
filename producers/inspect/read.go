package inspect

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/tuneplane/tpctl/internal/jsonscan"
)

// Limits caps every read of a log. The zero value of a field means its
// default (DefaultLimits).
type Limits struct {
	// Member caps the decompressed bytes of one zip member of an .eval
	// (header.json, one sample, summaries.json, reductions.json); a member
	// that inflates past it (a zip bomb) is refused, naming it.
	Member int64
	// Document caps the bytes of a whole .json log (read as a stream).
	Document int64
	// Members caps how many members an .eval may hold.
	Members int
	// Nodes caps the JSON values built from one document (a header, one
	// sample without its events); skipped parts are not counted.
	Nodes int
}

// DefaultLimits are the caps used where a Limits field is zero. A sample
// with its events may be hundreds of megabytes; its events are skipped as
// they stream past, never built.
var DefaultLimits = Limits{
	Member:   1 << 30,
	Document: 8 << 30,
	Members:  1 << 20,
	Nodes:    1 << 22,
}

func (l Limits) withDefaults() Limits {
	if l.Member <= 0 {
		l.Member = DefaultLimits.Member
	}
	if l.Document <= 0 {
		l.Document = DefaultLimits.Document
	}
	if l.Members <= 0 {
		l.Members = DefaultLimits.Members
	}
	if l.Nodes <= 0 {
		l.Nodes = DefaultLimits.Nodes
	}
	return l
}

// The two log formats.
const (
	FormatEval = "eval" // zip archive
	FormatJSON = "json" // one JSON document
)

// Log is an Inspect log opened for reading: its header is read, its
// samples are read on demand (Samples, Sample).
type Log struct {
	Name   string // as given to Open, for messages
	Format string // FormatEval or FormatJSON
	Header Header

	lim  Limits
	src  io.ReaderAt
	size int64

	zip     *zip.Reader
	members map[string]*zip.File
	samples []string // sample members in name order (.eval)
}

// Open reads the header of the Inspect log in r (size bytes; name is for
// messages). The format is told by content: a zip archive is an .eval, a
// JSON object a .json log. A log of any format version but 2 is refused
// with a *VersionError; a member or document over its cap with a
// *TooLargeError; anything else unreadable with an *Error.
func Open(r io.ReaderAt, size int64, name string, lim Limits) (*Log, error) {
	l := &Log{Name: name, lim: lim.withDefaults(), src: r, size: size}
	var magic [4]byte
	n, _ := r.ReadAt(magic[:], 0)
	switch {
	case n == 4 && string(magic[:]) == "PK\x03\x04", n == 4 && string(magic[:]) == "PK\x05\x06":
		l.Format = FormatEval
		if err := l.openEval(); err != nil {
			return nil, err
		}
	default:
		l.Format = FormatJSON
		if size > l.lim.Document {
			return nil, &TooLargeError{Log: name, Limit: l.lim.Document}
		}
		if err := l.openJSON(); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func (l *Log) fail(member, pointer string, err error) error {
	var tl *TooLargeError
	var ve *VersionError
	if errors.As(err, &tl) || errors.As(err, &ve) {
		return err
	}
	if errors.Is(err, errBudget) {
		return &TooLargeError{Log: l.Name, Member: member, Limit: int64(l.lim.Nodes), What: "JSON values"}
	}
	return &Error{Log: l.Name, Member: member, Pointer: pointer, Err: err}
}

// capReader fails once more than limit bytes were read through it.
type capReader struct {
	r     io.Reader
	left  int64
	onErr func() error
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, c.onErr()
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, c.onErr()
	}
	return n, err
}

// Member names inside an .eval (Inspect's _recorders/eval.py).
const (
	memberHeader     = "header.json"
	memberStart      = "_journal/start.json"
	memberSummaries  = "summaries.json"
	memberReductions = "reductions.json"
	samplesDir       = "samples/"
)

func (l *Log) openEval() error {
	zr, err := zip.NewReader(l.src, l.size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return l.fail("", "", fmt.Errorf("not a readable zip archive: %w", err))
	}
	if err != nil {
		return l.fail("", "", fmt.Errorf("a member name escapes the archive: %w", err))
	}
	if len(zr.File) > l.lim.Members {
		return &TooLargeError{Log: l.Name, Limit: int64(l.lim.Members), What: "zip members"}
	}
	l.zip = zr
	l.members = make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		if _, dup := l.members[f.Name]; dup {
			return l.fail(f.Name, "", errors.New("the archive holds this member twice"))
		}
		l.members[f.Name] = f
		if strings.HasPrefix(f.Name, samplesDir) && strings.HasSuffix(f.Name, ".json") && !strings.Contains(f.Name[len(samplesDir):], "/") {
			l.samples = append(l.samples, f.Name)
		}
	}
	sort.Strings(l.samples)
	name := memberHeader
	if _, ok := l.members[name]; !ok {
		// A log still being written (or whose writer died) has no
		// header.json yet: Inspect reads its start from the journal.
		name = memberStart
		if _, ok := l.members[name]; !ok {
			return l.fail("", "", errors.New("neither header.json nor _journal/start.json is in the archive: not an Inspect .eval log"))
		}
	}
	root, err := l.readMember(name)
	if err != nil {
		return err
	}
	h, err := decodeHeader(root, l.Name, name)
	if err != nil {
		return err
	}
	if name == memberStart && h.Status == "" {
		h.Status = "started"
	}
	h.HeaderMember = name
	l.Header = *h
	return nil
}

// openMember opens a zip member for reading, capped.
func (l *Log) openMember(name string) (io.ReadCloser, error) {
	f, ok := l.members[name]
	if !ok {
		return nil, l.fail(name, "", errors.New("no such member in the archive"))
	}
	if f.UncompressedSize64 > uint64(l.lim.Member) {
		return nil, &TooLargeError{Log: l.Name, Member: name, Limit: l.lim.Member}
	}
	rc, err := f.Open()
	if err != nil {
		return nil, l.fail(name, "", err)
	}
	// The size the directory declares may lie: the cap is on the bytes
	// that actually inflate.
	cr := &capReader{r: rc, left: l.lim.Member, onErr: func() error {
		return &TooLargeError{Log: l.Name, Member: name, Limit: l.lim.Member}
	}}
	return struct {
		io.Reader
		io.Closer
	}{bufio.NewReaderSize(cr, 64<<10), rc}, nil
}

// readMember builds the whole JSON document of a member.
func (l *Log) readMember(name string) (*node, error) {
	rc, err := l.openMember(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	n, err := readDocument(rc, l.lim.Nodes)
	if err != nil {
		return nil, l.fail(name, "", err)
	}
	return n, nil
}

// openJSON reads the header members of a .json log in one streamed pass,
// skipping its samples.
func (l *Log) openJSON() error {
	d := l.jsonDecoder()
	k, err := d.Next()
	if err != nil {
		return l.fail("", "", fmt.Errorf("not JSON: %w", err))
	}
	if k != jsonscan.BeginObject {
		return l.fail("", "", errors.New("not an Inspect log: the document is not a JSON object"))
	}
	root := &node{kind: jsonscan.BeginObject}
	b := &budget{left: l.lim.Nodes}
	for {
		k, err := d.Next()
		if err != nil {
			return l.fail("", "", err)
		}
		if k == jsonscan.EndObject {
			break
		}
		key := d.String()
		vk, err := d.Next()
		if err != nil {
			return l.fail("", "/"+jsonscan.EscapePointer(key), err)
		}
		switch key {
		case "version", "status", "eval", "plan", "results", "stats", "error":
			v, err := build(d, vk, b)
			if err != nil {
				return l.fail("", "/"+key, err)
			}
			root.keys = append(root.keys, key)
			root.elems = append(root.elems, v)
		default: // samples, reductions, log_updates, …: read later or never
			if err := d.Skip(vk); err != nil {
				return l.fail("", "/"+jsonscan.EscapePointer(key), err)
			}
		}
	}
	if err := expectEnd(d); err != nil {
		return l.fail("", "", err)
	}
	h, err := decodeHeader(root, l.Name, "")
	if err != nil {
		return err
	}
	l.Header = *h
	return nil
}

func (l *Log) jsonDecoder() *jsonscan.Decoder {
	cr := &capReader{r: io.NewSectionReader(l.src, 0, l.size), left: l.lim.Document, onErr: func() error {
		return &TooLargeError{Log: l.Name, Limit: l.lim.Document}
	}}
	return jsonscan.NewDecoder(bufio.NewReaderSize(cr, 64<<10), scanOptions)
}

// SampleOptions selects what a sample read keeps beside its verdict's
// fields.
type SampleOptions struct {
	// Messages keeps the sample's messages and attachments (for
	// transcripts); they are skipped otherwise.
	Messages bool
}

// SampleRefs lists where the log's samples are, in the log's order
// (member names of an .eval; "/samples/N" pointers of a .json log are
// known only by reading, so a .json log returns nil).
func (l *Log) SampleRefs() []string {
	return append([]string(nil), l.samples...)
}

// Samples reads every sample of the log in turn and hands it to fn; an
// error from fn stops the walk and is returned. A sample that cannot be
// read stops the walk with its *Error (or *TooLargeError).
func (l *Log) Samples(opts SampleOptions, fn func(*Sample) error) error {
	if l.Format == FormatEval {
		for _, m := range l.samples {
			s, err := l.readEvalSample(m, opts)
			if err != nil {
				return err
			}
			if err := fn(s); err != nil {
				return err
			}
		}
		return nil
	}
	return l.jsonSamples(opts, fn)
}

// SampleAt reads the sample of an .eval stored in member ("samples/1_epoch_1.json").
func (l *Log) SampleAt(member string, opts SampleOptions) (*Sample, error) {
	if l.Format != FormatEval {
		return nil, l.fail("", "", errors.New("a .json log has no sample members"))
	}
	return l.readEvalSample(member, opts)
}

func (l *Log) readEvalSample(member string, opts SampleOptions) (*Sample, error) {
	rc, err := l.openMember(member)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	d := jsonscan.NewDecoder(rc, scanOptions)
	k, err := d.Next()
	if err != nil {
		return nil, l.fail(member, "", err)
	}
	s, ptr, err := decodeSample(d, k, opts, &budget{left: l.lim.Nodes})
	if err != nil {
		return nil, l.fail(member, ptr, err)
	}
	if err := expectEnd(d); err != nil {
		return nil, l.fail(member, "", err)
	}
	s.Member = member
	return s, nil
}

func (l *Log) jsonSamples(opts SampleOptions, fn func(*Sample) error) error {
	d := l.jsonDecoder()
	if _, err := d.Next(); err != nil { // the root object, checked by Open
		return l.fail("", "", err)
	}
	for {
		k, err := d.Next()
		if err != nil {
			return l.fail("", "", err)
		}
		if k == jsonscan.EndObject {
			return nil
		}
		key := d.String()
		vk, err := d.Next()
		if err != nil {
			return l.fail("", "/"+jsonscan.EscapePointer(key), err)
		}
		if key != "samples" || vk != jsonscan.BeginArray {
			if err := d.Skip(vk); err != nil {
				return l.fail("", "/"+jsonscan.EscapePointer(key), err)
			}
			continue
		}
		for i := 0; ; i++ {
			ek, err := d.Next()
			if err != nil {
				return l.fail("", "/samples/"+strconv.Itoa(i), err)
			}
			if ek == jsonscan.EndArray {
				break
			}
			at := "/samples/" + strconv.Itoa(i)
			s, ptr, err := decodeSample(d, ek, opts, &budget{left: l.lim.Nodes})
			if err != nil {
				return l.fail("", at+ptr, err)
			}
			s.Member = at
			if err := fn(s); err != nil {
				return err
			}
		}
	}
}

// Reductions reads the log's per-sample reduced scores (reductions.json of
// an .eval, "reductions" of a .json log): Inspect's own figures, never
// tpctl's verdicts. Nil when the log has none.
func (l *Log) Reductions() ([]Reduction, error) {
	var root *node
	if l.Format == FormatEval {
		if _, ok := l.members[memberReductions]; !ok {
			return nil, nil
		}
		n, err := l.readMember(memberReductions)
		if err != nil {
			return nil, err
		}
		root = n
	} else {
		d := l.jsonDecoder()
		if _, err := d.Next(); err != nil {
			return nil, l.fail("", "", err)
		}
		for {
			k, err := d.Next()
			if err != nil {
				return nil, l.fail("", "", err)
			}
			if k == jsonscan.EndObject {
				break
			}
			key := d.String()
			vk, err := d.Next()
			if err != nil {
				return nil, l.fail("", "", err)
			}
			if key != "reductions" {
				if err := d.Skip(vk); err != nil {
					return nil, l.fail("", "/"+jsonscan.EscapePointer(key), err)
				}
				continue
			}
			n, err := build(d, vk, &budget{left: l.lim.Nodes})
			if err != nil {
				return nil, l.fail("", "/reductions", err)
			}
			root = n
		}
	}
	return decodeReductions(root)
}

// readAll is used by tests and fuzzing: open and read every sample and
// the reductions.
func readAll(data []byte, lim Limits) (*Log, []*Sample, error) {
	l, err := Open(bytes.NewReader(data), int64(len(data)), "log", lim)
	if err != nil {
		return nil, nil, err
	}
	var out []*Sample
	err = l.Samples(SampleOptions{Messages: true}, func(s *Sample) error {
		out = append(out, s)
		return nil
	})
	if err != nil {
		return l, out, err
	}
	if _, err := l.Reductions(); err != nil {
		return l, out, err
	}
	return l, out, nil
}
