package export

import (
	"sync/atomic"

	"github.com/tuneplane/tpctl/round"
)

// pipe runs a partitionWriter's trial on a goroutine of its own, so the
// rows are built, gated and handed to the encoders while the snapshot is
// still being read and verified on the caller's. Trials travel in
// batches through bounded channels (memory stays flat); the observations
// they point to are never changed once decoded, so they may cross.
//
// An error of the writer is sticky: it is returned from the next visit,
// which ends the reading early, and from wait, which is the one to
// trust. Every trial handed over before the reading ended is written
// (or failed) before wait returns, so which error an export reports does
// not depend on how far the goroutine had got.
type pipe struct {
	trial  func(round.TrialState) error
	batch  []round.TrialState
	full   chan []round.TrialState
	free   chan []round.TrialState
	done   chan struct{} // closed when the goroutine has returned
	failed atomic.Bool   // err is set
	err    error
	closed bool
}

// pipeBatch is how many trials travel together: one channel operation
// per batch rather than per trial.
const pipeBatch = 256

func startPipe(trial func(round.TrialState) error) *pipe {
	p := &pipe{trial: trial, batch: make([]round.TrialState, 0, pipeBatch),
		full: make(chan []round.TrialState, 4), free: make(chan []round.TrialState, 6), done: make(chan struct{})}
	go p.run()
	return p
}

func (p *pipe) run() {
	defer close(p.done)
	for b := range p.full {
		if p.err == nil {
			for _, t := range b {
				if err := p.trial(t); err != nil {
					p.err = err
					p.failed.Store(true)
					break
				}
			}
		}
		clear(b)
		select {
		case p.free <- b[:0]:
		default:
		}
	}
}

// visit is the snapshot.Visit: it queues t for the goroutine.
func (p *pipe) visit(t round.TrialState) error {
	if p.failed.Load() {
		return p.err
	}
	if p.batch = append(p.batch, t); len(p.batch) == cap(p.batch) {
		p.full <- p.batch
		select {
		case p.batch = <-p.free:
		default:
			p.batch = make([]round.TrialState, 0, pipeBatch)
		}
	}
	return nil
}

// wait hands over the trials left, waits until every one is written and
// returns the writer's error. It may be called more than once; visit
// must not be called after it.
func (p *pipe) wait() error {
	if !p.closed {
		p.closed = true
		if len(p.batch) > 0 {
			p.full <- p.batch
			p.batch = nil
		}
		close(p.full)
	}
	<-p.done
	return p.err
}
