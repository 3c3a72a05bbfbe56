package cpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// bf16dpData returns rows×cols BF16 weights and n×cols bfloat16
// activations, normal values over a wide exponent range (so that the
// summation orders differ), each with an odd start for unaligned loads.
func bf16dpData(r *rand.Rand, rows, cols, n int) ([]byte, []uint16) {
	val := func() float32 { return float32(r.NormFloat64() * math.Exp2(float64(r.IntN(16)-8))) }
	wb := make([]byte, rows*cols*2+1)[1:]
	for i := range rows * cols {
		binary.LittleEndian.PutUint16(wb[2*i:], toBF16(val()))
	}
	x := make([]uint16, n*cols+1)[1:]
	for i := range x {
		x[i] = toBF16(val())
	}
	return wb, x
}

// TestBF16DPKernels checks the VDPBF16PS matrix-vector kernel and the
// 4-row tiles of every width against the Go references of ggml's orders,
// bit for bit. The data makes the orders differ: the test fails if the
// references sum the pairs in the other order, if the tiles' accumulators
// are split like the matrix-vector kernel's or reduced in another order.
func TestBF16DPKernels(t *testing.T) {
	k := Detect()
	if !k.hasBF16DP() {
		t.Skip("no AVX512_BF16 kernels (or AMX) on this CPU")
	}
	r := newTestRand()
	for _, cols := range []int{64, 128, 640, 2048} {
		const ldw = 4 // rows, with the row stride cols bytes longer than a row
		rb := 2*cols + 64
		w, x := bf16dpData(r, 4, rb/2, bf16dpMaxTokens)
		nb := cols / 64
		var got, want [8]float32
		k.bf16dpGemv4(w, rb, x, nb, &got)
		bf16dpGemv4Go(w, rb, x, nb, &want)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("gemv4 k=%d: y[%d] = %v, want %v", cols, i, got[i], want[i])
			}
		}
		ldx := rb // bytes per token
		for nt := 1; nt <= bf16dpMaxTokens; nt++ {
			for _, acc := range []bool{false, true} {
				const ldd = 7
				g := make([]float32, nt*ldd)
				wnt := make([]float32, nt*ldd)
				for i := range g {
					g[i] = float32(i)
					wnt[i] = float32(i)
				}
				k.bf16dpTile(nt, w, rb, x, ldx, cols/32, g, ldd, acc, nil, 0)
				bf16dpTileGo(nt, w, rb, x, ldx, cols/32, wnt, ldd, acc, nil, 0)
				for i := range g {
					if math.Float32bits(g[i]) != math.Float32bits(wnt[i]) {
						t.Fatalf("tile 4×%d k=%d acc=%v: dst[%d] = %v, want %v", nt, cols, acc, i, g[i], wnt[i])
					}
				}
				// The same reduction in three parts, the accumulators
				// kept in buf in between, must give the same bits.
				if nb := cols / 32; nb >= 3 && !acc {
					buf := make([]float32, 64*nt)
					p := make([]float32, nt*ldd)
					copy(p, g)
					a, b := nb/3, 2*nb/3
					k.bf16dpTile(nt, w, rb, x, ldx, a, nil, ldd, false, buf, bf16dpKeep)
					k.bf16dpTile(nt, w[64*a:], rb, x[32*a:], ldx, b-a, nil, ldd, false, buf, bf16dpResume|bf16dpKeep)
					k.bf16dpTile(nt, w[64*b:], rb, x[32*b:], ldx, nb-b, p, ldd, false, buf, bf16dpResume)
					for i := range p {
						if math.Float32bits(p[i]) != math.Float32bits(g[i]) {
							t.Fatalf("tile 4×%d k=%d in 3 parts: dst[%d] = %v, want %v", nt, cols, i, p[i], g[i])
						}
					}
				}
			}
		}
	}
}

// TestBF16DPOrders checks that the test data tells ggml's orders apart
// from their neighbours, so that the kernel tests can fail: the even pair
// first, one accumulator instead of two, and a plain left-to-right
// reduction each change most results.
func TestBF16DPOrders(t *testing.T) {
	r := newTestRand()
	const cols, rows = 2048, 64
	w, x := bf16dpData(r, rows, cols, 1)
	swapped, single, linear := 0, 0, 0
	for row := range rows {
		wr := w[2*row*cols : 2*(row+1)*cols]
		vec, gemm := bf16dpVecRef(wr, x), bf16dpGemmRef(wr, x)
		if vec != gemm {
			single++
		}
		var acc, sw [bf16dpLanes]float32
		for i := 0; i < cols; i += 32 {
			dpbf16Step(&acc, wr[2*i:], x[i:])
			for l := range sw {
				p0 := float32(bf16(binary.LittleEndian.Uint16(wr[2*i+4*l:])) * bf16(x[i+2*l]))
				p1 := float32(bf16(binary.LittleEndian.Uint16(wr[2*i+4*l+2:])) * bf16(x[i+2*l+1]))
				sw[l] = (sw[l] + p0) + p1
			}
		}
		if hsum16(&sw) != gemm {
			swapped++
		}
		var lin float32
		for _, v := range acc {
			lin += v
		}
		if lin != gemm {
			linear++
		}
	}
	if swapped < rows/2 || single < rows/2 || linear < rows/2 {
		t.Fatalf("of %d rows, only %d differ with the pairs swapped, %d with one accumulator, %d with a linear reduction", rows, swapped, single, linear)
	}
}

// TestBF16Row checks the activation rounding against GGML_FP32_TO_BF16
// (quant.ToBF16): ties, subnormals, infinities and NaNs included.
func TestBF16Row(t *testing.T) {
	r := newTestRand()
	src := make([]float32, 1000)
	for i := range src {
		switch i % 5 {
		case 0:
			src[i] = math.Float32frombits(r.Uint32()) // NaNs, subnormals, all
		case 1:
			src[i] = math.Float32frombits(r.Uint32()&^0xffff | 0x8000) // ties
		case 2:
			src[i] = math.Float32frombits(r.Uint32() & 0x807fffff) // subnormals
		default:
			src[i] = float32(r.NormFloat64())
		}
	}
	src[3], src[8], src[13] = float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(0x7f7fffff)
	for _, n := range []int{0, 1, 15, 16, 17, 64, 999, 1000} {
		dst := make([]uint16, n)
		Detect().toBF16Row(dst, src[:n])
		for i, v := range src[:n] {
			if want := toBF16(v); dst[i] != want {
				t.Fatalf("n=%d: %#x → %#x, want %#x", n, math.Float32bits(v), dst[i], want)
			}
		}
	}
}

// TestBF16DPMatMul runs MatMul on BF16 weights with the VDPBF16PS path and
// compares every output with ggml's order for its shape (bf16dpTileOrder):
// one token, several, rows not a multiple of 4, a reduction not a
// multiple of 32 or of 64, or longer than bf16dpKC (cut into parts), alone
// and fused with MatMulAcc, on 1 and 2 threads.
func TestBF16DPMatMul(t *testing.T) {
	k := Detect()
	if !k.hasBF16DP() {
		t.Skip("no AVX512_BF16 kernels (or AMX) on this CPU")
	}
	r := newTestRand()
	for _, sh := range []struct{ rows, cols int }{{64, 256}, {260, 96}, {37, 64}, {48, 520}, {8, 2048}, {130, 72}, {8, 4160}, {44, 5632}} {
		for _, n := range []int{1, 2, 7, 13} {
			wb, _ := bf16dpData(r, sh.rows, sh.cols, 0)
			w := Matrix{DType: tensor.BF16, Rows: sh.rows, Cols: sh.cols, Data: wb}
			x := make([]float32, n*sh.cols)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(16)-8)))
			}
			want := make([]float32, n*sh.rows)
			xb := make([]uint16, sh.cols)
			for tok := range n {
				toBF16RowGo(xb, x[tok*sh.cols:(tok+1)*sh.cols])
				for row := range sh.rows {
					wr := wb[2*row*sh.cols : 2*(row+1)*sh.cols]
					if n >= 2 && sh.cols%32 == 0 && sh.rows%4 == 0 { // tinyBLAS takes the matmul
						want[tok*sh.rows+row] = bf16dpGemmRef(wr, xb)
					} else {
						want[tok*sh.rows+row] = bf16dpVecRef(wr, xb)
					}
				}
			}
			for _, threads := range []int{1, 2} {
				p := NewPoolKernels(threads, k)
				got := make([]float32, n*sh.rows)
				if err := MatMul(p, got, w, x, n); err != nil {
					t.Fatal(err)
				}
				acc := make([]float32, n*sh.rows)
				for i := range acc {
					acc[i] = 1
				}
				if err := MatMulAcc(p, acc, w, x, n); err != nil {
					t.Fatal(err)
				}
				p.Close()
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%d×%d, %d tokens, %d threads: out[%d] = %v, want %v", sh.rows, sh.cols, n, threads, i, got[i], want[i])
					}
					if a := 1 + want[i]; math.Float32bits(acc[i]) != math.Float32bits(a) {
						t.Fatalf("%d×%d, %d tokens, %d threads, acc: out[%d] = %v, want %v", sh.rows, sh.cols, n, threads, i, acc[i], a)
					}
				}
			}
		}
	}
}
