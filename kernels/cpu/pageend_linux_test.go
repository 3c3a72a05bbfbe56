//go:build linux

package cpu

import (
	"math"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// TestMatMulPageEnd runs every weight type's matmul, at every kernel level
// this machine has, with the weights ending exactly at the end of a page
// whose next page is unreadable, as a tensor at the end of a memory-mapped
// file may: a kernel that loads past its last block faults. The results
// must equal the same product on an ordinary copy of the weights, bit for
// bit, for one token (the matrix-vector kernels) and several (the tiles:
// 4 and 9, and 17 and 33 for the 8- and 16-token groups).
func TestMatMulPageEnd(t *testing.T) {
	page := syscall.Getpagesize()
	r := rand.New(rand.NewPCG(31, 32))
	types := []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.Q4_0, tensor.Q8_0,
		tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.IQ4_NL,
		tensor.Q8_B32T2, tensor.Q6_B64T1, tensor.Q5_B64T1, tensor.Q4_B32T1, tensor.Q4_B64T1,
		tensor.Q3H_B64T1, tensor.Q3_B32T1, tensor.Q2_B32T1, tensor.Q5_0, tensor.Q4_1, tensor.Q5_1}
	const cols = 512
	for i := range 2 * len(types) {
		// 12 rows end in a 4-row kernel; 13 in the rows left over.
		dt, rows := types[i/2], 12+i%2
		if !SupportsMatMul(dt) {
			t.Errorf("%s: no matmul", dt)
			continue
		}
		w := randomMatrix(t, r, dt, rows, cols)
		size := len(w.Data)
		npages := (size+page-1)/page + 1
		mem, err := syscall.Mmap(-1, 0, npages*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Munmap(mem)
		if err := syscall.Mprotect(mem[(npages-1)*page:], syscall.PROT_NONE); err != nil {
			t.Fatal(err)
		}
		end := (npages - 1) * page
		edge := w
		edge.Data = mem[end-size : end : end]
		copy(edge.Data, w.Data)
		for _, level := range Levels() {
			pool := NewPoolKernels(1, Detect().Limit(level))
			for _, n := range []int{1, 4, 9, 17, 33} {
				x := randRow(r, n*cols, 1)
				want, got := make([]float32, n*rows), make([]float32, n*rows)
				if err := MatMul(pool, want, w, x, n); err != nil {
					t.Fatalf("%s at %s, %d tokens: %v", dt, level, n, err)
				}
				if err := MatMul(pool, got, edge, x, n); err != nil {
					t.Fatalf("%s at %s, %d tokens, at a page end: %v", dt, level, n, err)
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s %d rows at %s, %d tokens: [%d] = %v at a page end, %v elsewhere", dt, rows, level, n, i, got[i], want[i])
					}
				}
			}
			pool.Close()
		}
	}
}
