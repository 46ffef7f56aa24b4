package snapshot

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// observationsAhead reads observations.jsonl as ReadObservations does, but
// ahead of its consumer and on every core: one goroutine reads the file
// in blocks and cuts them into chunks of whole lines (by ReadObservations'
// own line rules, so line limits and line ends are exactly its), decoders on
// other goroutines decode chunks side by side, and each hands the
// observations over in file order. Decoding is most of what verify
// spends; a bounded number of chunks is in flight, so memory stays flat.
type observationsAhead struct {
	order chan *obsChunk // chunks in file order, as they are cut
	free  chan *obsChunk // chunks each is done with, for reuse
	done  chan struct{}  // closed by stop
	wg    sync.WaitGroup // the reader and the decoders
	// err ends the file: opening or scanning it failed. Read once order
	// is closed.
	err error
	// whole is called by each when every line was decoded and handed
	// over without an error (the capture's digest is then complete).
	whole func()
	// preimage, when set before each, is given each chunk's lines of the
	// round preimage (appendRoundAttempts of its observations, built by
	// the decoders side by side) before its observations are handed
	// over: the one consumer then only hashes them (tally.prehashed).
	preimage func([]byte)
}

// obsChunk is whole consecutive lines, read straight into buf.
type obsChunk struct {
	buf     []byte // the bytes read, lines and their line ends
	spans   []span // each line in buf, without its line end
	first   int    // line number of the first line, from 1
	obs     []Observation
	pre     []byte        // appendRoundAttempts of obs, in order
	arena   obsArena      // the blocks obs point into, under reuse
	err     error         // the decode error that ends the chunk, with its line
	decoded chan struct{} // closed when obs and err are set
}

// span is where a line lies in its chunk's buf.
type span struct{ start, end int }

// aheadBytes is how much is read into a chunk at a time (a line longer
// than that makes its chunk longer); aheadBatch is a capacity hint for
// the lines of one chunk.
// aheadChunks is how many chunks may be queued (1.5 MiB), a bound that
// does not grow with the file. More does not read faster, and export's
// heap limit (cmd/tpctl) makes the collector pay for every MiB held.
const (
	aheadBatch  = 256
	aheadBytes  = 256 << 10
	aheadChunks = 6
)

// readObservationsAhead starts reading dir's observations.jsonl ahead;
// with a capture, the bytes read are hashed (and kept, for Open) as
// capture.readObservations does.
//
// Unless the capture has a Visit (which may keep the observations it is
// handed), what each hands over is valid only until fn returns: the
// members that are pointers or slices point into the arena of their
// chunk, and the trial ID and result digests view the chunk's bytes
// (obsDecoder.view), both of which the chunk's next lines write over.
func readObservationsAhead(dir string, c *capture) *observationsAhead {
	reuse := c == nil || c.visit == nil
	workers := min(max(runtime.GOMAXPROCS(0), 1), 8)
	a := &observationsAhead{
		order: make(chan *obsChunk, aheadChunks),
		free:  make(chan *obsChunk, aheadChunks+2),
		done:  make(chan struct{}),
	}
	work := make(chan *obsChunk, aheadChunks)
	var h hash.Hash
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer close(work)
		defer close(a.order)
		f, err := safefs.OpenRegular(filepath.Join(dir, ObservationsFile))
		if err != nil {
			a.err = err
			return
		}
		defer f.Close()
		var w io.Writer = io.Discard
		if c != nil {
			h = sha256.New()
			w = h
			if c.obs != nil {
				w = &teeTo{h, c.obs}
			}
		}
		a.err = a.cut(f, w, work)
	}()
	if c != nil {
		a.whole = func() { c.obsSum = hex.EncodeToString(h.Sum(nil)) }
	}
	for range workers {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			d := newObsDecoder()
			for ch := range work {
				select {
				case <-a.done:
					return
				default:
				}
				if reuse {
					d.obsArena = ch.arena
					d.reuse = true
					d.reset()
				}
				ch.decode(d)
				if reuse {
					ch.arena = d.obsArena
				}
				close(ch.decoded)
			}
		}()
	}
	return a
}

// cut reads r in blocks straight into chunks of whole lines, writing
// every byte read to w (the capture's hash) as it comes, and sends each
// chunk to the consumer's queue and then to the decoders; it returns
// what ends the file early, as readObservations words it, or errStopped
// after stop.
//
// The lines are bufio.Scanner's with ScanLines and a MaxObservationLine
// buffer, which readObservations uses: a CR before the newline is
// dropped, a last line without a newline counts, and a line whose bytes
// before its newline reach MaxObservationLine ends the file with
// bufio.ErrTooLong after the lines before it. A read error ends the file
// after the bytes read before it, taken as a last line as the scanner
// takes them. TestObservationsAheadLines checks the two agree. Reading
// blocks rather than lines saves the scanner's copy of every byte.
func (a *observationsAhead) cut(r io.Reader, w io.Writer, work chan<- *obsChunk) error {
	line := 1
	var carry []byte // the start of a line not yet ended, from the last block
	var ch *obsChunk
	send := func() bool {
		select {
		case a.order <- ch:
		case <-a.done:
			return false
		}
		// The decoders take every chunk queued: the consumer waits for
		// each in order.
		select {
		case work <- ch:
		case <-a.done:
			return false
		}
		ch = nil
		return true
	}
	var readErr error
	for readErr == nil {
		if ch == nil {
			select {
			case ch = <-a.free:
				ch.buf, ch.spans, ch.obs, ch.pre, ch.err = ch.buf[:0], ch.spans[:0], ch.obs[:0], ch.pre[:0], nil
			default:
				ch = &obsChunk{spans: make([]span, 0, aheadBatch), obs: make([]Observation, 0, aheadBatch)}
			}
			ch.first, ch.decoded = line, make(chan struct{})
			ch.buf = append(ch.buf, carry...)
			carry = carry[:0]
		}
		// Read a block after what the chunk holds.
		from := len(ch.buf)
		ch.buf = slices.Grow(ch.buf, aheadBytes)
		for len(ch.buf) < from+aheadBytes && readErr == nil {
			n, err := r.Read(ch.buf[len(ch.buf):cap(ch.buf)])
			if n > 0 {
				if _, werr := w.Write(ch.buf[len(ch.buf) : len(ch.buf)+n]); werr != nil && err == nil {
					err = werr
				}
				ch.buf = ch.buf[:len(ch.buf)+n]
			}
			if err != nil {
				readErr = err
			}
		}
		// Cut the lines that ended (the chunk holds none yet: it is sent
		// as soon as it does); a read error ends the last one.
		start := 0
		for {
			i := bytes.IndexByte(ch.buf[start:], '\n')
			if i < 0 {
				break
			}
			if i >= MaxObservationLine {
				return a.tooLong(ch, send)
			}
			end := start + i
			ch.spans = append(ch.spans, span{start, dropCR(ch.buf, start, end)})
			start = end + 1
			line++
		}
		rest := ch.buf[start:]
		if len(rest) >= MaxObservationLine {
			return a.tooLong(ch, send)
		}
		if readErr != nil {
			if len(rest) > 0 {
				ch.spans = append(ch.spans, span{start, dropCR(ch.buf, start, len(ch.buf))})
			}
			break
		}
		if len(ch.spans) == 0 {
			continue // a line longer than a block: read on into the chunk
		}
		carry = append(carry, rest...)
		ch.buf = ch.buf[:start]
		if !send() {
			return errStopped
		}
	}
	if ch != nil && len(ch.spans) > 0 && !send() {
		return errStopped
	}
	if readErr != io.EOF {
		return fmt.Errorf("%s: %w", ObservationsFile, readErr)
	}
	return nil
}

// dropCR is the end of the line buf[start:end] without a final CR, as
// bufio.ScanLines drops it.
func dropCR(buf []byte, start, end int) int {
	if end > start && buf[end-1] == '\r' {
		return end - 1
	}
	return end
}

// tooLong sends the lines of ch before the one that is too long and
// returns the scanner's error for it.
func (a *observationsAhead) tooLong(ch *obsChunk, send func() bool) error {
	if len(ch.spans) > 0 && !send() {
		return errStopped
	}
	return fmt.Errorf("%s: %w", ObservationsFile, bufio.ErrTooLong)
}

// decode decodes the chunk's lines until the first that does not decode.
func (ch *obsChunk) decode(d *obsDecoder) {
	for i, s := range ch.spans {
		ch.obs = append(ch.obs, Observation{})
		if err := d.decode(ch.buf[s.start:s.end], &ch.obs[i]); err != nil {
			ch.obs = ch.obs[:i]
			ch.err = fmt.Errorf("%s:%d: %w", ObservationsFile, ch.first+i, err)
			return
		}
		ch.pre = appendRoundAttempts(ch.pre, &ch.obs[i])
	}
}

var errStopped = errors.New("stopped")

// each calls fn for every observation in file order and returns what
// ReadObservations(dir, fn) would: fn's error prefixed with its line (one
// observation per line), or the error that ended the file.
func (a *observationsAhead) each(fn func(Observation) error) error {
	line := 0
	for ch := range a.order {
		select {
		case <-ch.decoded:
		case <-a.done:
			return errStopped
		}
		if a.preimage != nil {
			a.preimage(ch.pre)
		}
		for _, o := range ch.obs {
			line++
			if err := fn(o); err != nil {
				return fmt.Errorf("%s:%d: %w", ObservationsFile, line, err)
			}
		}
		if ch.err != nil {
			return ch.err
		}
		select {
		case a.free <- ch:
		default:
		}
	}
	if a.err == nil && a.whole != nil {
		a.whole()
	}
	return a.err
}

// stop ends the reading early, if it has not ended, and waits for it.
func (a *observationsAhead) stop() {
	close(a.done)
	a.wg.Wait()
}
