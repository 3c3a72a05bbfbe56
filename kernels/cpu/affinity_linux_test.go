package cpu

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPoolOnPinsWorkers: every worker of a pool made on CPU 0 runs on CPU
// 0 alone, as the kernel reports the thread's affinity.
func TestPoolOnPinsWorkers(t *testing.T) {
	p := NewPoolOn(3, Detect(), []int{0})
	defer p.Close()
	var mu sync.Mutex
	seen := map[int][]int{}
	var ran atomic.Bool
	p.Run(3000, 1, workerFunc(func(w, lo, hi int) {
		if w == 0 {
			// The caller's thread is not pinned: it waits for a worker to
			// take a chunk, so that the test cannot pass without one.
			for deadline := time.Now().Add(time.Second); !ran.Load() && time.Now().Before(deadline); {
				time.Sleep(100 * time.Microsecond)
			}
			return
		}
		ran.Store(true)
		cpus, err := ThreadCPUs()
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		seen[w] = cpus
		mu.Unlock()
	}))
	if len(seen) == 0 {
		t.Fatal("no worker ran a chunk")
	}
	for w, cpus := range seen {
		if !slices.Equal(cpus, []int{0}) {
			t.Errorf("worker %d runs on CPUs %v, want [0]", w, cpus)
		}
	}
}

// workerFunc adapts a function of (thread, lo, hi) to a Task that knows
// its thread.
type workerFunc func(w, lo, hi int)

func (f workerFunc) Run(lo, hi int)          { f(0, lo, hi) }
func (f workerFunc) runWorker(w, lo, hi int) { f(w, lo, hi) }
