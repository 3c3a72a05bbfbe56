package cpu

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftrun/weft/tensor"
)

// countTask counts how often each item is visited.
type countTask struct {
	hits  []atomic.Int32
	grain int
	bad   atomic.Int32
}

func (t *countTask) Run(lo, hi int) {
	if lo%t.grain != 0 || lo >= hi {
		t.bad.Add(1)
	}
	for i := lo; i < hi; i++ {
		t.hits[i].Add(1)
	}
}

func TestPoolCoversEveryItemOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		p := NewPool(threads)
		for _, n := range []int{0, 1, 2, 7, 64, 1000, 4097} {
			for _, grain := range []int{1, 3, 16, 5000} {
				task := &countTask{hits: make([]atomic.Int32, n), grain: grain}
				for rep := range 3 {
					p.Run(n, grain, task)
					for i := range task.hits {
						if got := task.hits[i].Load(); got != int32(rep+1) {
							t.Fatalf("threads %d n %d grain %d: item %d visited %d times after %d runs", threads, n, grain, i, got, rep+1)
						}
					}
				}
				if task.bad.Load() != 0 {
					t.Fatalf("threads %d n %d grain %d: a range was empty or not a multiple of the grain", threads, n, grain)
				}
			}
		}
		p.Close()
	}
}

// rangeTask records the ranges it is given.
type rangeTask struct {
	mu     sync.Mutex
	ranges [][2]int
}

func (t *rangeTask) Run(lo, hi int) {
	t.mu.Lock()
	t.ranges = append(t.ranges, [2]int{lo, hi})
	t.mu.Unlock()
}

// TestPoolGuided checks the shrinking chunks of a guided dispatch: they
// cover every item once, are multiples of the grain, are no smaller than
// the minimum (but for a whole job that is) and come largest first.
func TestPoolGuided(t *testing.T) {
	for _, threads := range []int{1, 2, 3} {
		p := NewPool(threads)
		for _, c := range []struct{ n, grain, min int }{
			{1, 1, 1}, {100, 1, 1}, {2048, 12, 4}, {5632, 12, 4}, {7, 4, 12}, {100000, 1, 1}, {1000, 3, 2},
		} {
			task := &rangeTask{}
			p.mu.Lock()
			p.runGuidedLocked(c.n, c.grain, c.min, task)
			p.mu.Unlock()
			seen := make([]int, c.n)
			for _, r := range task.ranges {
				if r[0]%c.grain != 0 || r[0] >= r[1] {
					t.Fatalf("threads %d %+v: range %v", threads, c, r)
				}
				if r[1] != c.n && r[1]-r[0] < c.min*c.grain {
					t.Fatalf("threads %d %+v: range %v below the minimum", threads, c, r)
				}
				for i := r[0]; i < r[1]; i++ {
					seen[i]++
				}
			}
			for i, v := range seen {
				if v != 1 {
					t.Fatalf("threads %d %+v: item %d visited %d times", threads, c, i, v)
				}
			}
			if threads > 1 && c.n >= 2048 {
				// In claiming order (by start), sizes never grow but
				// for the last chunk, which takes a remainder.
				sort.Slice(task.ranges, func(i, j int) bool { return task.ranges[i][0] < task.ranges[j][0] })
				rs := task.ranges
				for i := 1; i+1 < len(rs); i++ {
					if rs[i][1]-rs[i][0] > rs[i-1][1]-rs[i-1][0] {
						t.Fatalf("threads %d %+v: chunk %d (%v) larger than chunk %d (%v)", threads, c, i, rs[i], i-1, rs[i-1])
					}
				}
				if len(rs) < 2*threads {
					t.Fatalf("threads %d %+v: only %d chunks", threads, c, len(rs))
				}
			}
		}
		p.Close()
	}
}

func TestPoolNilAndClosed(t *testing.T) {
	var p *Pool
	if p.Threads() != 1 {
		t.Fatalf("nil pool: %d threads", p.Threads())
	}
	sum := 0
	p.Parallel(10, 1, func(lo, hi int) { sum += hi - lo })
	if sum != 10 {
		t.Fatalf("nil pool ran %d items", sum)
	}
	q := NewPool(2)
	q.Close()
	q.Close() // twice is fine
	sum = 0
	q.Parallel(10, 1, func(lo, hi int) { sum += hi - lo })
	if sum != 10 {
		t.Fatalf("closed pool ran %d items", sum)
	}
}

// TestPoolNested checks that a task may use the pool it runs on: the
// inner call runs inline instead of deadlocking.
func TestPoolNested(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	var total atomic.Int64
	done := make(chan struct{})
	go func() {
		p.Parallel(8, 1, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				p.Parallel(100, 10, func(lo, hi int) { total.Add(int64(hi - lo)) })
			}
		})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("nested Parallel deadlocked")
	}
	if total.Load() != 800 {
		t.Fatalf("nested runs covered %d items, want 800", total.Load())
	}
}

// TestPoolConcurrentCallers runs matmuls and plain tasks from several
// goroutines on one pool (run it with -race).
func TestPoolConcurrentCallers(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			task := &countTask{hits: make([]atomic.Int32, 333), grain: 1}
			for range 50 {
				p.Run(333, 1, task)
			}
			for i := range task.hits {
				if task.hits[i].Load() != 50 {
					t.Errorf("goroutine %d: item %d visited %d times", g, i, task.hits[i].Load())
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestPoolParksAndWakes leaves the workers idle long enough to park, then
// checks that a dispatch still reaches them.
func TestPoolParksAndWakes(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	time.Sleep(3 * spinFor)
	for range 3 {
		task := &countTask{hits: make([]atomic.Int32, 64), grain: 1}
		p.Run(64, 1, task)
		for i := range task.hits {
			if task.hits[i].Load() != 1 {
				t.Fatalf("item %d visited %d times", i, task.hits[i].Load())
			}
		}
		time.Sleep(2 * spinFor)
	}
}

// TestNoAllocations checks the hot paths allocate nothing once the pool's
// buffers have grown.
func TestNoAllocations(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	r := newTestRand()
	x := randRow(r, 20*512, 1)
	var nop nopTask
	for _, dt := range matmulTypes {
		w := randomMatrix(t, r, dt, 64, 512)
		w2 := randomMatrix(t, r, dt, 32, 512)
		dst := make([]float32, 20*64)
		dst2 := make([]float32, 20*32)
		ws := []Matrix{w, w2}
		ds := [][]float32{dst, dst2}
		for _, n := range []int{1, 4, 20} { // 20: the prefill GEMMs
			check := func(name string, f func()) {
				f() // grow the buffers
				if a := testing.AllocsPerRun(20, f); a != 0 {
					t.Errorf("%s %s n=%d: %v allocations per call", name, dt, n, a)
				}
			}
			check("MatMul", func() { MatMul(p, dst, w, x, n) })
			check("MatMulAcc", func() { MatMulAcc(p, dst, w, x, n) })
			check("MatMulMulti", func() { MatMulMulti(p, ds, ws, x, n) })
		}
	}
	sc := make([]float32, 100)
	kv := &KV{K: [][]float32{randRow(r, 100*4*16, 1)}, V: [][]float32{randRow(r, 100*4*16, 1)}, Len: []int{100}}
	q, out := randRow(r, 8*16, 1), make([]float32, 8*16)
	for name, f := range map[string]func(){
		"Run":     func() { p.Run(100, 1, nop) },
		"Softmax": func() { Softmax(sc) },
		"RMSNorm": func() { RMSNorm(sc, sc, sc, 1e-5) },
		"SwiGLU":  func() { SwiGLU(sc, sc, sc) },
		"Attend": func() {
			Attend(out, q, kv, AttendParams{Heads: 8, KVHeads: 4, HeadDim: 16, Scale: 0.25, N: 100}, sc)
		},
	} {
		if a := testing.AllocsPerRun(20, f); a != 0 {
			t.Errorf("%s: %v allocations per call", name, a)
		}
	}
}

// TestKernelScratchNoAllocations checks that the kernels which prepare
// their activations in scratch (Inferflow's formats, one token and
// several, at the AVX-512 VNNI and AVX2 levels; Q2_K and Q3_K's regrouped
// Q8_K activations; the other K-quants and IQ4_NL beside them) take it
// from the pool's threads and allocate nothing per MatMul once it has
// grown. The matrices are large enough for both threads to get rows.
// Calls that find the pool busy, and run on private buffers, give the
// same bits.
func TestKernelScratchNoAllocations(t *testing.T) {
	types := []tensor.DType{
		tensor.Q6_B64T1, tensor.Q5_B64T1, tensor.Q4_B32T1, tensor.Q4_B64T1,
		tensor.Q3H_B64T1, tensor.Q3_B32T1, tensor.Q2_B32T1,
		tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.IQ4_NL,
	}
	const rows, cols = 264, 1024 // 264: rows left over by 16-row blocks
	r := newTestRand()
	x := randRow(r, 20*cols, 1)
	dst := make([]float32, 20*rows)
	busy := [2][]float32{make([]float32, 20*rows), make([]float32, 20*rows)}
	ran := false
	for _, l := range []Level{AVX512VNNI, AVX2} {
		k := Detect().Limit(l)
		if k.Level() != l {
			continue
		}
		ran = true
		p := NewPoolKernels(2, k)
		for _, dt := range types {
			w := randomMatrix(t, r, dt, rows, cols)
			ws := []Matrix{w}
			if wp := randomMatrix(t, r, dt, rows, cols); (dt == tensor.Q4_B64T1 || dt == tensor.Q3H_B64T1) && k.hasIfPack() {
				p.PackWeight(wp) // in strips, as a model's load leaves them
				ws = append(ws, wp)
			}
			for i, w := range ws {
				// 1: matrix-vector; 3: groups of two and an odd token;
				// 8, 20: the multi-token kernels' groups.
				for _, n := range []int{1, 3, 8, 20} {
					f := func() {
						if err := MatMul(p, dst, w, x, n); err != nil {
							t.Fatal(err)
						}
					}
					for range 3 {
						f() // grow every thread's scratch
					}
					if a := testing.AllocsPerRun(10, f); a != 0 {
						t.Errorf("%s %s (strips: %v) n=%d: %v allocations per MatMul", l, dt, i == 1, n, a)
					}
					// Two MatMuls at once inside a dispatch: the pool is
					// busy, each runs on its own buffers.
					p.Parallel(2, 1, func(lo, hi int) {
						for c := lo; c < hi; c++ {
							if err := MatMul(p, busy[c], w, x, n); err != nil {
								t.Error(err)
							}
						}
					})
					for c := range busy {
						for j, v := range dst[:n*rows] {
							if math.Float32bits(busy[c][j]) != math.Float32bits(v) {
								t.Fatalf("%s %s (strips: %v) n=%d: busy pool out[%d] = %v, want %v", l, dt, i == 1, n, j, busy[c][j], v)
							}
						}
					}
				}
			}
		}
		p.Close()
	}
	if !ran {
		t.Skip("no AVX2 on this machine")
	}
}

// TestPoolPanic: a panic in a chunk run by a worker reaches the
// dispatching goroutine, after every chunk has finished, and the pool
// keeps working.
func TestPoolPanic(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	for _, where := range []int{0, 999} { // the caller's first chunk, a late chunk
		var recovered any
		func() {
			defer func() { recovered = recover() }()
			p.Parallel(1000, 1, func(lo, hi int) {
				if lo <= where && where < hi {
					panic("boom")
				}
			})
		}()
		if recovered == nil || !strings.Contains(fmt.Sprint(recovered), "boom") {
			t.Fatalf("panic at item %d: recovered %v, want boom", where, recovered)
		}
		var sum atomic.Int64
		p.Parallel(1000, 1, func(lo, hi int) { sum.Add(int64(hi - lo)) })
		if sum.Load() != 1000 {
			t.Fatalf("after a panic the pool covered %d of 1000 items", sum.Load())
		}
	}
}
