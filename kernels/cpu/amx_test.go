package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// amxPi is the element order of a block of 32 in the AMX tiles: word j
// holds element amxPi(j).
func amxPi(j int) int {
	if j%8 < 4 {
		return 4*(j/8) + j%8
	}
	return 16 + 4*(j/8) + j%8 - 4
}

func bf16Value(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }

// TestAMXPackW checks the weight-tile layout and the split w = w1 + w2
// against their definitions.
func TestAMXPackW(t *testing.T) {
	k := Detect()
	if !k.hasAMX() {
		t.Skip("no AMX")
	}
	r := newTestRand()
	for _, c := range []struct {
		dt          tensor.DType
		ft          floatType
		nrow, n     int
		withSpecial bool
	}{
		{tensor.F16, ftF16, 16, 64, true}, {tensor.F16, ftF16, 5, 37, false}, {tensor.F16, ftF16, 0, 32, false},
		{tensor.BF16, ftBF16, 16, 96, true}, {tensor.BF16, ftBF16, 11, 7, false},
	} {
		t.Run(fmt.Sprintf("%s/%dx%d", c.dt, c.nrow, c.n), func(t *testing.T) {
			rows := max(c.nrow, 1)
			m := randomMatrix(t, r, c.dt, rows, c.n+3)
			rb := m.RowBytes()
			if c.withSpecial {
				// Infinities, NaNs, the extremes of the type.
				specials := map[tensor.DType][]uint16{
					tensor.F16:  {0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x7bff, 0xfbff, 0x0001, 0x8000, 0x0400},
					tensor.BF16: {0x7f80, 0xff80, 0x7fc0, 0x7f81, 0x7f7f, 0x0001, 0x8000},
				}[c.dt]
				for i, h := range specials {
					m.Data[i*2*7+rb] = byte(h)
					m.Data[i*2*7+rb+1] = byte(h >> 8)
				}
			}
			parts := amxParts(c.ft)
			dst := make([]uint16, amxWLen(c.ft, c.n)+8)
			for i := range dst {
				dst[i] = 0xdead
			}
			k.amxPackW(c.ft, dst[:amxWLen(c.ft, c.n)], m.Data, rb, c.nrow, c.n)
			want := make([]float32, c.n+3)
			for row := range 16 {
				if row < c.nrow {
					if err := DequantizeRow(want, m, row); err != nil {
						t.Fatal(err)
					}
				}
				for b := range (c.n + 31) / 32 {
					for j := range 32 {
						i := 32*b + amxPi(j)
						var ps [2]float64
						for p := range parts {
							ps[p] = bf16Value(dst[b*parts*512+p*512+row*32+j])
						}
						w := 0.0
						if row < c.nrow && i < c.n {
							w = float64(want[i])
						}
						switch {
						case math.IsNaN(w):
							if !math.IsNaN(ps[0]) || ps[1] != 0 {
								t.Fatalf("row %d element %d: NaN split into %v", row, i, ps)
							}
						case math.IsInf(w, 0):
							if ps[0] != w || ps[1] != 0 {
								t.Fatalf("row %d element %d: %v split into %v", row, i, w, ps)
							}
						default:
							if ps[0]+ps[1] != w || math.Abs(ps[1]) > math.Abs(w)/256 {
								t.Fatalf("row %d element %d: %v split into %v", row, i, w, ps)
							}
						}
					}
				}
			}
			for _, v := range dst[amxWLen(c.ft, c.n):] {
				if v != 0xdead {
					t.Fatal("wrote past the tiles")
				}
			}
		})
	}
}

// TestAMXPackX checks the activation-tile layout and the split x = x1 +
// x2 + x3 against their definitions, including values whose rounding
// would overflow.
func TestAMXPackX(t *testing.T) {
	k := Detect()
	if !k.hasAMX() {
		t.Skip("no AMX")
	}
	r := newTestRand()
	for _, c := range []struct{ ntok, n int }{{16, 64}, {3, 37}, {0, 32}, {16, 1}, {9, 100}} {
		t.Run(fmt.Sprintf("%dx%d", c.ntok, c.n), func(t *testing.T) {
			const ld = 101
			x := make([]float32, max(c.ntok, 1)*ld)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Exp(4*r.NormFloat64()))
			}
			specials := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
				math.MaxFloat32, -math.MaxFloat32, math.Float32frombits(0x7f7f8000), 1e-40, 0, float32(math.Copysign(0, -1)),
				math.Float32frombits(0x7fa00001)} // a signalling NaN
			for i, v := range specials {
				if i < len(x) {
					x[i] = v
				}
			}
			dst := make([]uint16, amxXLen(c.n)+8)
			for i := range dst {
				dst[i] = 0xdead
			}
			k.amxPackX(dst[:amxXLen(c.n)], x, ld, c.ntok, c.n)
			for tok := range 16 {
				for b := range (c.n + 31) / 32 {
					for kk := range 16 {
						for e := range 2 {
							i := 32*b + amxPi(2*kk+e)
							var ps [3]float64
							for p := range 3 {
								ps[p] = bf16Value(dst[b*1536+p*512+kk*32+2*tok+e])
							}
							v := 0.0
							if tok < c.ntok && i < c.n {
								v = float64(x[tok*ld+i])
							}
							switch {
							case math.IsNaN(v):
								if !math.IsNaN(ps[0]) || ps[1] != 0 || ps[2] != 0 {
									t.Fatalf("token %d element %d: NaN split into %v", tok, i, ps)
								}
							case math.IsInf(v, 0):
								if ps[0] != v || ps[1] != 0 || ps[2] != 0 {
									t.Fatalf("token %d element %d: %v split into %v", tok, i, v, ps)
								}
							case math.Abs(v) < 0x1p-126:
								// Subnormals: AMX reads them as zero anyway.
							default:
								// Rounding to nearest halves the parts' bounds, but
								// for values it would round to infinity, which are
								// truncated.
								b1, b2 := math.Abs(v)/256, math.Abs(v)/65536
								if math.Abs(v) >= 0x1.fep127 {
									b1, b2 = 2*b1, 2*b2
								}
								if ps[0]+ps[1]+ps[2] != v || math.Abs(ps[1]) > b1 || math.Abs(ps[2]) > b2 {
									t.Fatalf("token %d element %d: %v split into %v", tok, i, v, ps)
								}
							}
						}
					}
				}
			}
			for _, v := range dst[amxXLen(c.n):] {
				if v != 0xdead {
					t.Fatal("wrote past the tiles")
				}
			}
		})
	}
}

// TestAMXAccuracy compares the AMX GEMM's errors with those of the float32
// AVX-512 GEMM, against float64 sums: the split operands make it as
// accurate as float32 arithmetic.
func TestAMXAccuracy(t *testing.T) {
	k := Detect()
	if !k.hasAMX() {
		t.Skip("no AMX")
	}
	r := newTestRand()
	for _, dt := range []tensor.DType{tensor.F16, tensor.BF16} {
		const rows, cols, n = 96, 2048, 48
		w := randomMatrix(t, r, dt, rows, cols)
		x := make([]float32, n*cols)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		want := refMatMul(t, w, x, n)
		scale := absMatMul(t, w, x, n)
		worst := func(l Level) float64 {
			p := NewPoolKernels(2, Detect().Limit(l))
			defer p.Close()
			dst := make([]float32, n*rows)
			if err := MatMul(p, dst, w, x, n); err != nil {
				t.Fatal(err)
			}
			e := 0.0
			for i, v := range dst {
				e = max(e, math.Abs(float64(v)-want[i])/scale[i])
			}
			return e
		}
		amx, f32 := worst(AMX), worst(AVX512VNNI)
		t.Logf("%s: worst error / Σ|w·x|: AMX %.3g, AVX-512 %.3g", dt, amx, f32)
		if amx > 2*f32+1e-7 {
			t.Errorf("%s: AMX error %.3g, float32 GEMM %.3g", dt, amx, f32)
		}
	}
}
