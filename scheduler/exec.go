package scheduler

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftrun/weft/backend"
)

// spinFor is how long a waiting device polls before it parks. Polling
// answers within a cache-line transfer when another device is about to
// finish (the devices of a tensor split reach each all-reduce at about
// the same time); parking leaves the processor to the devices that work,
// which matters when devices share cores with each other or with other
// programs. Waking a parked goroutine costs tens of microseconds.
const spinFor = 50 * time.Microsecond

// executor runs the splits of a plan placed on several devices: one
// long-lived goroutine per device after the first (the caller runs the
// first device's splits), each running its splits in order once the
// splits they read from are done. A step allocates nothing.
type executor struct {
	p        *Plan
	gen      atomic.Uint64   // the step being run
	finished []atomic.Uint64 // per split and micro-batch: the last step it finished
	devDone  []atomic.Uint64 // per device: the last step it finished
	wake     []chan struct{} // per device: a token when something it may wait for happened
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
	n := len(p.backends)
	e := &executor{p: p, finished: make([]atomic.Uint64, len(p.splits)*p.mb), devDone: make([]atomic.Uint64, n),
		wake: make([]chan struct{}, n), sleeping: make([]atomic.Bool, n)}
	for d := range e.wake {
		e.wake[d] = make(chan struct{}, 1)
	}
	for d := 1; d < n; d++ {
		e.wg.Add(1)
		go e.loop(d)
	}
	return e
}

// park blocks device d until notify, unless ready already holds after d
// announced itself (so no notification is lost).
func (e *executor) park(d int, ready func() bool) {
	e.sleeping[d].Store(true)
	if ready() {
		e.sleeping[d].Store(false)
		return
	}
	<-e.wake[d]
}

// notify wakes every parked device to look again.
func (e *executor) notify() {
	for d := range e.sleeping {
		if e.sleeping[d].Load() && e.sleeping[d].CompareAndSwap(true, false) {
			select {
			case e.wake[d] <- struct{}{}:
			default: // a token is already waiting: it wakes d just as well
			}
		}
	}
}

// run executes one step, cut into micro-batches, over every device and
// waits for all of them.
func (e *executor) run(ctx context.Context, subs []backend.Step, kv *KV, prof backend.Profiler) error {
	e.ctx, e.subs, e.kv, e.prof = ctx, subs, kv, prof
	e.err = nil
	e.abort.Store(false)
	g := e.gen.Add(1)
	e.notify()
	e.device(0, g)
	for d := 1; d < len(e.devDone); d++ {
		e.await(0, &e.devDone[d], g)
	}
	return e.err
}

// await makes device d wait until *v reaches g.
func (e *executor) await(d int, v *atomic.Uint64, g uint64) {
	if v.Load() == g {
		return
	}
	start := time.Now()
	for i := 1; v.Load() != g; i++ {
		if i%64 == 0 && time.Since(start) > spinFor {
			e.park(d, func() bool { return v.Load() == g })
			start = time.Now()
		}
	}
}

// loop is device d's goroutine.
func (e *executor) loop(d int) {
	defer e.wg.Done()
	if p, ok := e.p.backends[d].(interface{ PinThread() }); ok {
		p.PinThread() // a device on a NUMA node of its own computes there
	}
	var last uint64
	for {
		start := time.Now()
		for i := 1; e.gen.Load() == last && !e.closed.Load(); i++ {
			if i%64 == 0 && time.Since(start) > spinFor {
				e.park(d, func() bool { return e.gen.Load() != last || e.closed.Load() })
				start = time.Now()
			}
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
				e.await(d, &e.finished[dep*mb+m], g)
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
			e.notify()
		}
	}
	e.devDone[d].Store(g)
	e.notify()
}

// close stops the device goroutines.
func (e *executor) close() {
	e.closed.Store(true)
	e.notify()
	e.wg.Wait()
}
