package cpu

import (
	"runtime"
	"sync"
)

// Pool is a persistent set of worker goroutines. Work is split into
// contiguous index ranges, one per worker; the calling goroutine takes the
// first range itself.
type Pool struct {
	n    int
	jobs []chan job
	wg   sync.WaitGroup
}

type job struct {
	fn     func(lo, hi int)
	lo, hi int
}

// NewPool starts a pool of n workers (n <= 0 means GOMAXPROCS).
func NewPool(n int) *Pool {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	p := &Pool{n: n}
	for i := 1; i < n; i++ {
		ch := make(chan job, 1)
		p.jobs = append(p.jobs, ch)
		go func() {
			for j := range ch {
				j.fn(j.lo, j.hi)
				p.wg.Done()
			}
		}()
	}
	return p
}

// Threads returns the number of workers, the caller included.
func (p *Pool) Threads() int {
	if p == nil {
		return 1
	}
	return p.n
}

// Close stops the workers.
func (p *Pool) Close() {
	if p == nil {
		return
	}
	for _, ch := range p.jobs {
		close(ch)
	}
	p.jobs = nil
}

// Parallel calls fn over [0, n) split into at most Threads() ranges, each a
// multiple of grain (except the last), and waits for all of them.
func (p *Pool) Parallel(n, grain int, fn func(lo, hi int)) {
	if grain < 1 {
		grain = 1
	}
	t := p.Threads()
	chunks := (n + grain - 1) / grain
	if t > chunks {
		t = chunks
	}
	if t <= 1 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	per := (chunks + t - 1) / t * grain
	p.wg.Add(t - 1)
	for w := 1; w < t; w++ {
		lo := w * per
		hi := min(lo+per, n)
		if lo >= hi {
			p.wg.Done()
			continue
		}
		p.jobs[w-1] <- job{fn, lo, hi}
	}
	fn(0, min(per, n))
	p.wg.Wait()
}
