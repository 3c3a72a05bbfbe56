package cpu

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Task is a unit of parallel work: Run processes items [lo, hi). Pass a
// pointer to a long-lived value (for example a field of a struct the caller
// keeps) so that dispatching it allocates nothing.
type Task interface {
	Run(lo, hi int)
}

// workerTask is a Task that wants to know which thread runs a range
// (0 for the caller, 1..n-1 for the workers), to use per-thread scratch.
type workerTask interface {
	runWorker(w, lo, hi int)
}

// funcTask adapts a function to Task.
type funcTask func(lo, hi int)

func (f funcTask) Run(lo, hi int) { f(lo, hi) }

// spinFor is how long an idle worker polls for the next dispatch before it
// parks. Between the ops of one decode step the gap is far shorter, so the
// workers answer within a cache-line transfer; when the engine is idle they
// park and cost nothing.
const spinFor = 100 * time.Microsecond

// Pool is a persistent set of worker goroutines that share index ranges of
// a Task. The calling goroutine works too, so a pool of n threads starts
// n-1 goroutines.
//
// Work is split into chunks that the threads claim from a shared counter,
// so a thread slowed by other load on the machine does less of the work.
// Idle workers spin briefly on the dispatch counter, then park on a
// channel; a dispatch allocates nothing.
//
// One dispatch runs at a time. A Run or Parallel call made while the pool
// is busy (from another goroutine, or from inside a task) runs inline on
// the calling goroutine instead of waiting, so nesting never deadlocks.
type Pool struct {
	k    Kernels
	n    int
	mu   sync.Mutex
	spin bool // workers spin before parking (false when GOMAXPROCS is 1)

	// Dispatch state, written only while seq is odd and no worker is
	// active (see dispatch).
	task    Task
	items   int
	chunk   int
	nchunks int32
	guided  bool               // chunk c is [bounds[c], bounds[c+1])
	bounds  [maxGuided + 1]int // of a guided dispatch

	_      [64]byte
	seq    atomic.Uint32 // even: published dispatch generation; odd: being written
	_      [60]byte
	next   atomic.Int32 // next chunk to claim
	_      [60]byte
	done   atomic.Int32 // chunks finished
	_      [60]byte
	active atomic.Int32 // workers looking at the dispatch state
	_      [60]byte
	closed atomic.Bool

	workers []*worker
	cpus    []int // the CPUs worker threads are pinned to (nil: any)

	// panicked holds the first panic of the current dispatch's chunks,
	// re-raised on the dispatching goroutine once every chunk is done.
	panicked atomic.Pointer[workerPanic]

	// mm holds MatMul's reusable state (task values, scratch buffers);
	// used only while mu is held.
	mm mmState

	// packs holds the weights PackWeight copied into strips, by the
	// address of their data (ifpack.go).
	packs sync.Map
	// q8s holds the Q8_0 prefill copies PackWeight made with a
	// WithRepack set, by the address of the original's data (repack.go).
	q8s sync.Map
}

type worker struct {
	sleeping atomic.Int32
	wake     chan struct{}
}

// NewPool starts a pool of n threads (n <= 0 means GOMAXPROCS) using the
// kernels Detect selects.
func NewPool(n int) *Pool { return NewPoolKernels(n, Detect()) }

// NewPoolKernels starts a pool of n threads (n <= 0 means GOMAXPROCS) that
// runs its kernels with the set k.
func NewPoolKernels(n int, k Kernels) *Pool { return NewPoolOn(n, k, nil) }

// NewPoolOn is NewPoolKernels with every worker thread pinned to the
// given CPUs (nil: not pinned), such as one NUMA node's; the caller's
// thread is left alone (see PinThread).
func NewPoolOn(n int, k Kernels, cpus []int) *Pool {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	p := &Pool{k: k, n: n, spin: runtime.GOMAXPROCS(0) > 1, cpus: cpus}
	for i := 1; i < n; i++ {
		w := &worker{wake: make(chan struct{}, 1)}
		p.workers = append(p.workers, w)
		go p.loop(w, i)
	}
	return p
}

// Threads returns the number of threads, the caller included; 1 for a nil
// pool.
func (p *Pool) Threads() int {
	if p == nil {
		return 1
	}
	return p.n
}

// Kernels returns the kernel set the pool's operations use; Detect() for a
// nil pool.
func (p *Pool) Kernels() Kernels {
	if p == nil {
		return detected
	}
	return p.k
}

// Close stops the workers. The pool must not be used afterwards.
func (p *Pool) Close() {
	if p == nil || p.closed.Load() {
		return
	}
	p.mu.Lock()
	p.closed.Store(true)
	p.seq.Add(2)
	for _, w := range p.workers {
		if w.sleeping.CompareAndSwap(1, 0) {
			w.wake <- struct{}{}
		}
	}
	p.workers = nil
	p.packs.Clear()
	p.mu.Unlock()
}

// Parallel calls fn over [0, n) split into ranges that are multiples of
// grain (except the last) and waits for all of them. A closure that
// captures variables is allocated by the caller; hot paths use Run with a
// long-lived Task instead.
func (p *Pool) Parallel(n, grain int, fn func(lo, hi int)) {
	p.Run(n, grain, funcTask(fn))
}

// Run calls t.Run over [0, n) split into ranges that are multiples of grain
// (except the last) and waits for all of them.
func (p *Pool) Run(n, grain int, t Task) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	units := (n + grain - 1) / grain
	th := p.Threads()
	if th <= 1 || units <= 1 || p.closed.Load() {
		t.Run(0, n)
		return
	}
	// Up to 4 chunks per thread: enough to even out a thread that the OS
	// or a neighbour slows down, few enough that claiming is cheap.
	nch := min(units, 4*th)
	per := (units + nch - 1) / nch
	nch = (units + per - 1) / per
	if !p.mu.TryLock() {
		t.Run(0, n)
		return
	}
	defer p.mu.Unlock() // also when dispatch re-raises a worker's panic
	p.dispatch(t, n, per*grain, nch, false)
}

// runLocked is Run for a caller that holds p.mu.
func (p *Pool) runLocked(n, grain int, t Task) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	units := (n + grain - 1) / grain
	if p.n <= 1 || units <= 1 || p.closed.Load() {
		t.Run(0, n)
		return
	}
	nch := min(units, 4*p.n)
	per := (units + nch - 1) / nch
	nch = (units + per - 1) / per
	p.dispatch(t, n, per*grain, nch, false)
}

// maxGuided bounds the chunks of a guided dispatch.
const maxGuided = 64

// runGuidedLocked is runLocked with chunks that shrink as the work runs
// out: each takes 1/(2·threads) of what is left, but at least minGrains
// grains. Long tasks (a prefill matmul) are then claimed in big pieces
// first and small ones last, so that the threads finish close together
// even when one of them is slowed; equal chunks leave one thread idle for
// half a chunk on average at the end. p.mu is held.
func (p *Pool) runGuidedLocked(n, grain, minGrains int, t Task) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	minGrains = max(minGrains, 1)
	units := (n + grain - 1) / grain
	if p.n <= 1 || units <= minGrains || p.closed.Load() {
		t.Run(0, n)
		return
	}
	nch, lo := 0, 0
	for lo < units && nch < maxGuided {
		size := max(minGrains, (units-lo+2*p.n-1)/(2*p.n))
		if nch == maxGuided-1 || units-lo < size+minGrains {
			size = units - lo // the rest, rather than a sliver after it
		}
		p.bounds[nch] = min(lo*grain, n)
		lo += size
		nch++
	}
	p.bounds[nch] = n
	p.dispatch(t, n, 0, nch, true)
}

// dispatch publishes one job and takes part in it; p.mu is held. With
// guided, chunk c is [p.bounds[c], p.bounds[c+1]), else chunks are chunk
// items long.
func (p *Pool) dispatch(t Task, items, chunk, nchunks int, guided bool) {
	s := p.seq.Load()
	p.seq.Store(s + 1) // odd: workers that look now back off
	for p.active.Load() != 0 {
		pause()
	}
	p.task, p.items, p.chunk, p.nchunks, p.guided = t, items, chunk, int32(nchunks), guided
	p.next.Store(0)
	p.done.Store(0)
	p.seq.Store(s + 2)
	for _, w := range p.workers {
		if w.sleeping.Load() != 0 && w.sleeping.CompareAndSwap(1, 0) {
			w.wake <- struct{}{}
		}
	}
	p.work(0)
	for i := 0; p.done.Load() != int32(nchunks); i++ {
		if i < 4096 {
			pause()
		} else {
			runtime.Gosched()
		}
	}
	if wp := p.panicked.Swap(nil); wp != nil {
		panic(wp)
	}
}

// workerPanic is a panic raised by a chunk of a dispatched task. It is
// re-raised on the goroutine that dispatched the task, after every chunk
// has finished, so that a caller that recovers (the backend's runner) gets
// it as an error and the pool stays usable.
type workerPanic struct {
	value  any
	thread int
}

// Cause returns the value the chunk panicked with.
func (w *workerPanic) Cause() any { return w.value }

func (w *workerPanic) String() string { return fmt.Sprintf("%v (pool thread %d)", w.value, w.thread) }

// runChunk runs one chunk, turning a panic into the dispatch's recorded
// panic.
func (p *Pool) runChunk(wt workerTask, w, lo, hi int) {
	defer func() {
		if v := recover(); v != nil {
			p.panicked.CompareAndSwap(nil, &workerPanic{value: v, thread: w})
		}
	}()
	if wt != nil {
		wt.runWorker(w, lo, hi)
	} else {
		p.task.Run(lo, hi)
	}
}

// work claims and runs chunks of the current dispatch until none is left.
func (p *Pool) work(w int) {
	wt, _ := p.task.(workerTask)
	for {
		c := p.next.Add(1) - 1
		if c >= p.nchunks {
			return
		}
		var lo, hi int
		if p.guided {
			lo, hi = p.bounds[c], p.bounds[c+1]
		} else {
			lo = int(c) * p.chunk
			hi = min(lo+p.chunk, p.items)
		}
		p.runChunk(wt, w, lo, hi)
		p.done.Add(1)
	}
}

// loop is a worker goroutine.
func (p *Pool) loop(w *worker, id int) {
	// A fault reading memory-mapped weights (a checkpoint truncated while
	// it runs) panics instead of crashing the process; runChunk recovers
	// it and the dispatcher reports it as an error.
	debug.SetPanicOnFault(true)
	if len(p.cpus) > 0 {
		PinThread(p.cpus) // best effort: an unpinned worker still computes
	}
	var last uint32
	for {
		s := p.wait(w, last)
		if p.closed.Load() {
			return
		}
		last = s
		// Announce ourselves, then check the dispatch is still the one we
		// saw: a dispatcher about to rewrite the state first makes seq odd,
		// then waits for active to drop to zero.
		p.active.Add(1)
		if p.seq.Load() == s {
			p.work(id)
		}
		p.active.Add(-1)
	}
}

// wait returns once a dispatch newer than last is published or the pool
// closes: it polls for spinFor, then parks until a dispatcher wakes it.
func (p *Pool) wait(w *worker, last uint32) uint32 {
	ready := func(s uint32) bool { return s != last && s&1 == 0 || p.closed.Load() }
	for {
		if p.spin {
			start := time.Now()
			for i := 1; ; i++ {
				if s := p.seq.Load(); ready(s) {
					return s
				}
				pause()
				if i%64 == 0 && time.Since(start) > spinFor {
					break
				}
			}
		}
		w.sleeping.Store(1)
		if s := p.seq.Load(); ready(s) {
			if !w.sleeping.CompareAndSwap(1, 0) {
				<-w.wake // a dispatcher already sent the token
			}
			return s
		}
		<-w.wake
	}
}
