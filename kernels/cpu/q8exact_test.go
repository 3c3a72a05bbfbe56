package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// The Q4_0 and Q8_0 matmuls must reproduce ggml's arithmetic bit for bit:
// each output is one chain over the blocks b of the row,
//
//	acc = fmaf(float32(isum_b), dw_b*dx_b, acc)
//
// starting from 0, where isum_b is the exact integer dot product of the
// weights' quants (Q4_0: nibble-8) with the activations' and dw_b*dx_b the
// float32 product of the two f16 scales; MatMulAcc then adds the chain to
// dst with one float32 addition.

// fmaExact returns a·b + c rounded once to float32 (round to nearest,
// ties to even).
func fmaExact(a, b, c float32) float32 {
	r := math.FMA(float64(a), float64(b), float64(c))
	f := float32(r)
	if float64(f) == r || math.IsInf(r, 0) || math.IsNaN(r) {
		return f
	}
	// Rounding through float64 can only go wrong when r lies exactly
	// halfway between two float32s: then decide on the exact value.
	g := math.Nextafter32(f, float32(math.Copysign(math.Inf(1), r-float64(f))))
	if (float64(f)+float64(g))/2 != r {
		return f
	}
	var x, y, z big.Float
	x.SetPrec(2048).SetFloat64(float64(a))
	y.SetPrec(2048).SetFloat64(float64(b))
	z.SetPrec(2048).SetFloat64(float64(c))
	x.Mul(&x, &y).Add(&x, &z)
	f, _ = x.Float32()
	return f
}

// chainRef is the reference dot product of one Q4_0 or Q8_0 weight row
// with activations in ggml Q8_0 blocks, the chain written out.
func chainRef(dt tensor.DType, w, act []byte, nb int) float32 {
	var acc float32
	for b := range nb {
		y := act[34*b : 34*b+34]
		var isum int32
		var dw float32
		if dt == tensor.Q4_0 {
			x := w[18*b : 18*b+18]
			dw = quant.FromF16(binary.LittleEndian.Uint16(x))
			for j := range 16 {
				isum += (int32(x[2+j]&15) - 8) * int32(int8(y[2+j]))
				isum += (int32(x[2+j]>>4) - 8) * int32(int8(y[18+j]))
			}
		} else {
			x := w[34*b : 34*b+34]
			dw = quant.FromF16(binary.LittleEndian.Uint16(x))
			for j := range 32 {
				isum += int32(int8(x[2+j])) * int32(int8(y[2+j]))
			}
		}
		s := dw * quant.FromF16(binary.LittleEndian.Uint16(y))
		acc = fmaExact(float32(isum), s, acc)
	}
	return acc
}

// exactWeights returns rows×cols of raw Q4_0 or Q8_0 data, block by block
// from several patterns: random quants under small, widely ranging,
// negative and zero scales, and extreme quants (Q8_0 ±127, Q4_0 nibbles 0
// and 15) that make the largest integer sums. The data starts at an odd
// address.
func exactWeights(r *rand.Rand, dt tensor.DType, rows, cols int) Matrix {
	nb := cols / 32
	bb := 18
	if dt == tensor.Q8_0 {
		bb = 34
	}
	buf := make([]byte, rows*nb*bb+2)
	data := buf[1 : 1+rows*nb*bb]
	for row := range rows {
		for b := range nb {
			blk := data[(row*nb+b)*bb : (row*nb+b+1)*bb]
			var d float32
			kind := (row*7 + b*3) % 6
			switch kind {
			case 0, 1:
				d = float32(r.NormFloat64() * 0.02)
			case 2:
				d = float32(math.Ldexp(1+r.Float64(), r.IntN(21)-10))
			case 3:
				d = 0
			case 4:
				d = -float32(math.Ldexp(1+r.Float64(), r.IntN(8)-12))
			case 5:
				d = float32(row%5+1) * 0.37
			}
			binary.LittleEndian.PutUint16(blk, quant.ToF16(d))
			q := blk[2:]
			for j := range q {
				q[j] = byte(r.Uint32())
			}
			if kind == 5 {
				// Extreme quants, one sign per block.
				v := byte(0x00) // Q4_0: nibbles 0 (-8)
				if dt == tensor.Q8_0 {
					v = 0x81 // -127
					if b%2 == 1 {
						v = 0x7f
					}
				} else if b%2 == 1 {
					v = 0xff // nibbles 15 (+7)
				}
				for j := range q {
					q[j] = v
				}
			}
		}
	}
	return Matrix{DType: dt, Rows: rows, Cols: cols, Data: data}
}

// exactActivations returns n tokens of cols values, block by block from
// several patterns: Gaussian, exact ties at .5 (amax 127 gives d = 1),
// blocks of equal values (the largest sums), widely ranging magnitudes,
// zeros and tiny values.
func exactActivations(r *rand.Rand, n, cols int) []float32 {
	x := make([]float32, n*cols+1)[1:]
	for t := range n {
		for b := range cols / 32 {
			blk := x[t*cols+32*b : t*cols+32*b+32]
			switch (t*5 + b) % 7 {
			case 0, 1:
				for i := range blk {
					blk[i] = float32(r.NormFloat64())
				}
			case 2:
				for i := range blk {
					blk[i] = float32(r.IntN(61)-30) + 0.5
				}
				blk[r.IntN(32)] = 127
			case 3:
				v := float32(1 + r.Float64())
				for i := range blk {
					blk[i] = v
				}
			case 4:
				s := math.Pow(10, float64(b%9-4))
				for i := range blk {
					blk[i] = float32(s * r.NormFloat64())
				}
			case 5:
				// zeros
			case 6:
				for i := range blk {
					blk[i] = float32(r.NormFloat64() * 1e-30)
				}
			}
		}
	}
	return x
}

// exactRef returns the reference outputs [n×rows] of w against x.
func exactRef(t *testing.T, w Matrix, x []float32, n int) []float32 {
	t.Helper()
	nb := w.Cols / 32
	rb := w.RowBytes()
	dot := quant.DotQ4_0Q8_0
	if w.DType == tensor.Q8_0 {
		dot = quant.DotQ8_0Q8_0
	}
	out := make([]float32, n*w.Rows)
	act := make([]byte, nb*34)
	for tok := range n {
		quant.QuantizeActivationQ8_0(act, x[tok*w.Cols:(tok+1)*w.Cols])
		for r := range w.Rows {
			row := w.Data[r*rb : (r+1)*rb]
			v := chainRef(w.DType, row, act, nb)
			if q := dot(row, act, w.Cols); math.Float32bits(q) != math.Float32bits(v) {
				t.Fatalf("token %d row %d: quant dot %v (%#x), written-out chain %v (%#x)", tok, r, q, math.Float32bits(q), v, math.Float32bits(v))
			}
			out[tok*w.Rows+r] = v
		}
	}
	return out
}

// checkExact compares got with want bit for bit.
func checkExact(t *testing.T, what string, got, want []float32, rows int) {
	t.Helper()
	bad := 0
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			if bad < 5 {
				t.Errorf("%s: out[%d] (token %d row %d) = %v (%#08x), want %v (%#08x)", what, i, i/rows, i%rows, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d outputs differ", what, bad, len(want))
	}
}

func TestMatMulQ8ExactChain(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	shapes := []struct{ rows, cols int }{
		{5, 32}, {17, 64}, {33, 96}, {3, 160}, {16, 288}, {67, 1184},
		{37, 2048}, {1, 2048}, {21, 5632},
	}
	// 3..8 tokens take the fused kernels (up to 4, up to 8), 9..16 the
	// tiles of one group, more several groups.
	ns := []int{1, 2, 3, 4, 5, 8, 9, 17, 64, 130}
	if testing.Short() {
		ns = []int{1, 3, 6, 17}
	}
	type pools struct {
		l Level
		p []*Pool
	}
	var ps []pools
	for _, l := range Levels() {
		k := Detect().Limit(l)
		p1, p2 := NewPoolKernels(1, k), NewPoolKernels(2, k)
		defer p1.Close()
		defer p2.Close()
		ps = append(ps, pools{l, []*Pool{p1, p2}})
	}
	for _, sh := range shapes {
		w4 := exactWeights(r, tensor.Q4_0, sh.rows, sh.cols)
		w8 := exactWeights(r, tensor.Q8_0, sh.rows+3, sh.cols)
		for _, n := range ns {
			x := exactActivations(r, n, sh.cols)
			want4 := exactRef(t, w4, x, n)
			want8 := exactRef(t, w8, x, n)
			res4 := make([]float32, len(want4))
			res8 := make([]float32, len(want8))
			for i := range res4 {
				res4[i] = float32(r.NormFloat64())
			}
			for i := range res8 {
				res8[i] = float32(r.NormFloat64() * 100)
			}
			for _, pl := range ps {
				for th, p := range pl.p {
					name := fmt.Sprintf("%s/t%d/%dx%d/n%d", pl.l, th+1, sh.rows, sh.cols, n)
					t.Run(name, func(t *testing.T) {
						for _, c := range []struct {
							w    Matrix
							want []float32
							res  []float32
						}{{w4, want4, res4}, {w8, want8, res8}} {
							dst, check := guarded(len(c.want), 0.25)
							if err := MatMul(p, dst, c.w, x, n); err != nil {
								t.Fatal(err)
							}
							check(t)
							checkExact(t, "MatMul "+c.w.DType.String(), dst, c.want, c.w.Rows)

							dst, check = guarded(len(c.want), 0)
							copy(dst, c.res)
							if err := MatMulAcc(p, dst, c.w, x, n); err != nil {
								t.Fatal(err)
							}
							check(t)
							sum := make([]float32, len(c.want))
							for i := range sum {
								sum[i] = c.res[i] + c.want[i]
							}
							checkExact(t, "MatMulAcc "+c.w.DType.String(), dst, sum, c.w.Rows)
						}
						d4, check4 := guarded(len(want4), 0.5)
						d8, check8 := guarded(len(want8), 0.5)
						if err := MatMulMulti(p, [][]float32{d8, d4}, []Matrix{w8, w4}, x, n); err != nil {
							t.Fatal(err)
						}
						check4(t)
						check8(t)
						checkExact(t, "MatMulMulti q4_0", d4, want4, w4.Rows)
						checkExact(t, "MatMulMulti q8_0", d8, want8, w8.Rows)
					})
				}
			}
		}
	}
}
