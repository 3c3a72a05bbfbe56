package cpu

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// TestIQ4_NLGemv checks the SIMD IQ4_NL matrix-vector kernels row by row
// against kernels/quant's dot products (ggml's x86 order for one token,
// its batched order for more), to the last bit:
// rows left over by the 4 streams, an odd number of blocks (the Go
// reference's last-block path), every index in every nibble and
// activations at ±127.
func TestIQ4_NLGemv(t *testing.T) {
	kind, _, _ := Detect().classify(tensor.IQ4_NL)
	if !Detect().hasKQuant(kind) {
		t.Skip("no SIMD IQ4_NL kernel on this machine/build")
	}
	for _, batch := range []bool{false, true} {
		kind, dot := wkIQ4NL, quant.DotIQ4_NLQ8_0
		if batch {
			kind, dot = wkIQ4NB, quant.DotIQ4_NLQ8_0Batch
		}
		t.Run(map[bool]string{false: "dot", true: "batch"}[batch], func(t *testing.T) { testIQ4_NLGemv(t, kind, dot) })
	}
}

func testIQ4_NLGemv(t *testing.T, kind wkind, dot quant.DotFunc) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, sh := range []struct{ rows, cols int }{{1, 64}, {4, 64}, {7, 288}, {13, 2048}, {9, 5632}, {8, 4096}} {
		w := randomMatrix(t, r, tensor.IQ4_NL, sh.rows, sh.cols)
		x := randRow(r, sh.cols, 1)
		if sh.rows == 8 {
			// Random index bytes after each scale; blocks at ±127.
			for i := 0; i < len(w.Data); i += 18 {
				for j := 2; j < 18; j++ {
					w.Data[i+j] = byte(r.Uint32())
				}
			}
			for i := range x {
				x[i] = float32(r.IntN(3)-1) * 1e4
			}
		}
		act := make([]byte, sh.cols/32*34)
		quant.QuantizeActivationQ8_0(act, x)
		for _, acc := range []bool{false, true} {
			dst, check := guarded(sh.rows, 0.5)
			Detect().kGemv(kind, w.Data, w.RowBytes(), act, sh.cols/32, dst, acc, nil)
			check(t)
			for i := range dst {
				want := dot(w.Row(i), act, sh.cols)
				if acc {
					want += 0.5
				}
				if math.Float32bits(dst[i]) != math.Float32bits(want) {
					t.Fatalf("%dx%d acc=%v: row %d = %v, want %v", sh.rows, sh.cols, acc, i, dst[i], want)
				}
			}
		}
	}
}

// TestIQ4_NLGemm checks the multi-token IQ4_NL kernel (strips of 16
// unpacked rows, 64 rows at a time, times 2 tokens, or 1 for the last)
// against quant.DotIQ4_NLQ8_0Batch for every (row, token), to the last
// bit: 1 to 9 tokens, row counts that are and are not multiples of 16
// and of 64, odd and even block counts, padded token and output strides,
// with and without accumulation. It also checks that the inputs tell
// ggml's batched order from its one-token order, so a kernel in the
// wrong order fails (as it does with the lanes' final sum or an FMA
// split into a multiply and an add).
func TestIQ4_NLGemm(t *testing.T) {
	k := Detect()
	if kind, _, _ := k.classify(tensor.IQ4_NL); !k.hasKQuant(kind) {
		t.Skip("no SIMD IQ4_NL kernel on this machine/build")
	}
	r := rand.New(rand.NewPCG(17, 18))
	differ := 0
	for _, sh := range []struct{ rows, cols int }{{4, 32}, {16, 96}, {7, 288}, {13, 2048}, {9, 544}, {8, 5632}, {83, 320}, {128, 64}} {
		w := randomMatrix(t, r, tensor.IQ4_NL, sh.rows, sh.cols)
		nb := sh.cols / 32
		lda, ldd := nb*34+6, sh.rows+3
		for n := 1; n <= 9; n++ {
			a := make([]byte, n*lda)
			for tok := range n {
				x := randRow(r, sh.cols, 1)
				if tok%3 == 2 {
					for i := range x {
						x[i] = float32(r.IntN(3)-1) * 1e4
					}
				}
				quant.QuantizeActivationQ8_0(a[tok*lda:], x)
			}
			for _, acc := range []bool{false, true} {
				dst, check := guarded(n*ldd, 0.5)
				k.iq4nlGemm(w.Data, w.RowBytes(), a, lda, nb, n, dst, ldd, sh.rows, acc, make([]byte, iq4nlScratch(sh.rows, nb)))
				check(t)
				for tok := range n {
					for i := range ldd {
						got := dst[tok*ldd+i]
						want := float32(0.5)
						if i < sh.rows {
							want = quant.DotIQ4_NLQ8_0Batch(w.Row(i), a[tok*lda:], sh.cols)
							if !acc && want != quant.DotIQ4_NLQ8_0(w.Row(i), a[tok*lda:], sh.cols) {
								differ++
							}
							if acc {
								want += 0.5
							}
						}
						if math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("%dx%d n=%d acc=%v: token %d row %d = %v, want %v", sh.rows, sh.cols, n, acc, tok, i, got, want)
						}
					}
				}
			}
		}
	}
	if differ == 0 {
		t.Fatal("no output tells the batched order from the one-token order")
	}
	t.Logf("%d outputs differ between the two orders", differ)
}

// BenchmarkIQ4NLGemm times iq4nlGemm as kRows runs it (one call for all
// the rows of a 2048×5632 matrix, 128 tokens), in the thread's CPU time.
func BenchmarkIQ4NLGemm(b *testing.B) {
	const rows, cols, n = 2048, 5632, 128
	k := Detect()
	r := rand.New(rand.NewPCG(1, 2))
	w := benchMatrix(b, tensor.IQ4_NL, rows, cols)
	nb, rb := cols/32, w.RowBytes()
	lda := nb * 34
	a := make([]byte, n*lda)
	for tok := range n {
		quant.QuantizeActivationQ8_0(a[tok*lda:], randRow(r, cols, 1))
	}
	dst := make([]float32, n*rows)
	scratch := make([]byte, iq4nlScratch(rows, nb))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0 := threadCPUTime()
	for b.Loop() {
		k.iq4nlGemm(w.Data, rb, a, lda, nb, n, dst, rows, rows, false, scratch)
	}
	if c0 >= 0 {
		flops := 2 * float64(n) * rows * cols
		b.ReportMetric(flops*float64(b.N)/float64(threadCPUTime()-c0), "cpu-GFLOP/s")
	}
}
