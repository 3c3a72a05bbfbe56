package scheduler

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftrun/weft/backend"
)

// idleSpin is how long a device goroutine polls for the next step before
// it parks; waits between the splits of one step are far shorter and are
// spent polling (yielding the processor between polls).
const idleSpin = 50 * time.Microsecond

// executor runs the splits of a plan placed on several devices: one
// long-lived goroutine per device after the first (the caller runs the
// first device's splits), each running its splits in order once the
// splits they read from are done. A step allocates nothing.
type executor struct {
	p        *Plan
	gen      atomic.Uint64   // the step being run
	finished []atomic.Uint64 // per split and micro-batch: the last step it finished
	devDone  []atomic.Uint64 // per device: the last step it finished
	wake     []chan struct{}
	sleeping []atomic.Bool
	closed   atomic.Bool
	wg       sync.WaitGroup

	// The current step's arguments, written before gen is advanced.
	ctx  context.Context
	subs []backend.Step // the step's micro-batches
	kv   *KV
	prof backend.Profiler

	errMu sync.Mutex
	err   error
	abort atomic.Bool
}

func newExecutor(p *Plan) *executor {
	e := &executor{p: p, finished: make([]atomic.Uint64, len(p.splits)*p.mb), devDone: make([]atomic.Uint64, len(p.backends)),
		wake: make([]chan struct{}, len(p.backends)), sleeping: make([]atomic.Bool, len(p.backends))}
	for d := 1; d < len(p.backends); d++ {
		e.wake[d] = make(chan struct{}, 1)
		e.wg.Add(1)
		go e.loop(d)
	}
	return e
}

// run executes one step, cut into micro-batches, over every device and
// waits for all of them.
func (e *executor) run(ctx context.Context, subs []backend.Step, kv *KV, prof backend.Profiler) error {
	e.ctx, e.subs, e.kv, e.prof = ctx, subs, kv, prof
	e.err = nil
	e.abort.Store(false)
	g := e.gen.Add(1)
	for d := 1; d < len(e.wake); d++ {
		if e.sleeping[d].CompareAndSwap(true, false) {
			e.wake[d] <- struct{}{}
		}
	}
	e.device(0, g)
	for d := 1; d < len(e.devDone); d++ {
		for i := 0; e.devDone[d].Load() != g; i++ {
			backoff(i)
		}
	}
	return e.err
}

// loop is device d's goroutine.
func (e *executor) loop(d int) {
	defer e.wg.Done()
	var last uint64
	for {
		start := time.Now()
		for i := 0; e.gen.Load() == last && !e.closed.Load(); i++ {
			if i%64 == 63 && time.Since(start) > idleSpin {
				e.sleeping[d].Store(true)
				if e.gen.Load() == last && !e.closed.Load() {
					<-e.wake[d]
				}
				e.sleeping[d].Store(false)
				start = time.Now()
			}
			backoff(i)
		}
		if e.closed.Load() {
			return
		}
		last = e.gen.Load()
		e.device(d, last)
	}
}

// device runs device d's splits of step g: each micro-batch in turn, its
// splits in order, so that a device hands a micro-batch on to the next
// layer group and starts the next one.
func (e *executor) device(d int, g uint64) {
	mb := e.p.mb
	for m := range e.subs {
		for si := range e.p.splits {
			s := &e.p.splits[si]
			if s.dev != d {
				continue
			}
			for _, dep := range s.deps {
				for i := 0; e.finished[dep*mb+m].Load() != g; i++ {
					backoff(i)
				}
			}
			if !e.abort.Load() {
				if err := s.runners[m].Run(e.ctx, &e.subs[m], e.kv.stores[d], e.prof); err != nil {
					e.errMu.Lock()
					if e.err == nil {
						e.err = err
					}
					e.errMu.Unlock()
					e.abort.Store(true)
				}
			}
			e.finished[si*mb+m].Store(g)
		}
	}
	e.devDone[d].Store(g)
}

// close stops the device goroutines.
func (e *executor) close() {
	e.closed.Store(true)
	for d := 1; d < len(e.wake); d++ {
		if e.sleeping[d].CompareAndSwap(true, false) {
			e.wake[d] <- struct{}{}
		}
	}
	e.wg.Wait()
}

// backoff waits a little in a polling loop: a few empty turns, then it
// yields the processor so that a device sharing it can finish.
func backoff(i int) {
	if i > 16 {
		runtime.Gosched()
	}
}
