package snapshot

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/tuneplane/tpctl/internal/safefs"
)

// observationsAhead reads observations.jsonl as ReadObservations does, but
// ahead of its consumer and on every core: one goroutine reads the file
// and cuts it into chunks of whole lines (with ReadObservations' own
// scanner, so line limits and line ends are exactly its), decoders on
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
}

// obsChunk is up to aheadBatch consecutive lines.
type obsChunk struct {
	buf     []byte // the lines, back to back
	ends    []int  // where each line ends in buf
	first   int    // line number of the first line, from 1
	obs     []Observation
	err     error         // the decode error that ends the chunk, with its line
	decoded chan struct{} // closed when obs and err are set
}

// aheadBatch is the number of lines in a chunk; aheadBytes ends a chunk
// early when its lines are long.
const (
	aheadBatch = 256
	aheadBytes = 256 << 10
)

// readObservationsAhead starts reading dir's observations.jsonl ahead;
// with a capture, the bytes read are hashed (and kept, for Open) as
// capture.readObservations does.
func readObservationsAhead(dir string, c *capture) *observationsAhead {
	workers := min(max(runtime.GOMAXPROCS(0), 1), 8)
	a := &observationsAhead{
		order: make(chan *obsChunk, 2*workers+2),
		free:  make(chan *obsChunk, 2*workers+4),
		done:  make(chan struct{}),
	}
	work := make(chan *obsChunk, 2*workers+2)
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
		var r io.Reader = f
		if c != nil {
			h = sha256.New()
			var w io.Writer = h
			if c.obs != nil {
				w = &teeTo{h, c.obs}
			}
			r = io.TeeReader(f, w)
		}
		a.err = a.cut(r, work)
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
				ch.decode(d)
				close(ch.decoded)
			}
		}()
	}
	return a
}

// cut scans r into chunks, sending each to the consumer's queue and then
// to the decoders; it returns what ends the file early, as
// readObservations words it, or errStopped after stop.
func (a *observationsAhead) cut(r io.Reader, work chan<- *obsChunk) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxObservationLine)
	line := 1
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
	for sc.Scan() {
		if ch == nil {
			select {
			case ch = <-a.free:
				ch.buf, ch.ends, ch.obs, ch.err = ch.buf[:0], ch.ends[:0], ch.obs[:0], nil
			default:
				ch = &obsChunk{ends: make([]int, 0, aheadBatch), obs: make([]Observation, 0, aheadBatch)}
			}
			ch.first, ch.decoded = line, make(chan struct{})
		}
		ch.buf = append(ch.buf, sc.Bytes()...)
		ch.ends = append(ch.ends, len(ch.buf))
		line++
		if (len(ch.ends) == aheadBatch || len(ch.buf) >= aheadBytes) && !send() {
			return errStopped
		}
	}
	if ch != nil && !send() {
		return errStopped
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", ObservationsFile, err)
	}
	return nil
}

// decode decodes the chunk's lines until the first that does not decode.
func (ch *obsChunk) decode(d *obsDecoder) {
	start := 0
	for i, end := range ch.ends {
		ch.obs = append(ch.obs, Observation{})
		if err := d.decode(ch.buf[start:end], &ch.obs[i]); err != nil {
			ch.obs = ch.obs[:i]
			ch.err = fmt.Errorf("%s:%d: %w", ObservationsFile, ch.first+i, err)
			return
		}
		start = end
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
