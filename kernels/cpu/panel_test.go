package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// TestWidenTile checks the tile layout against its definition: element
// (r, i) of 12 rows at 96·(i/8) + 8r + i%8, zero past the rows and
// elements given.
func TestWidenTile(t *testing.T) {
	k := Detect()
	if !k.hasPanelGEMM() {
		t.Skip("no panel GEMM at this level")
	}
	r := newTestRand()
	for _, c := range []struct {
		dt   tensor.DType
		ft   floatType
		nrow int
		n    int
	}{
		{tensor.F32, ftF32, 12, 64}, {tensor.F16, ftF16, 12, 64}, {tensor.BF16, ftBF16, 12, 64},
		{tensor.F32, ftF32, 5, 37}, {tensor.F16, ftF16, 1, 15}, {tensor.BF16, ftBF16, 11, 513},
		{tensor.F16, ftF16, 0, 16}, {tensor.F16, ftF16, 12, 1},
	} {
		t.Run(fmt.Sprintf("%s/%dx%d", c.dt, c.nrow, c.n), func(t *testing.T) {
			const pad = 3 // rows longer than n, at odd addresses
			w := randomMatrix(t, r, c.dt, max(c.nrow, 1), c.n+pad)
			rb := w.RowBytes()
			want := make([]float32, c.n+pad)
			dst := make([]float32, tileLen(c.n)+8)
			for i := range dst {
				dst[i] = sentinel
			}
			k.widenTile(c.ft, dst[:tileLen(c.n)], w.Data, rb, c.nrow, c.n)
			for row := range 12 {
				if row < c.nrow {
					if err := DequantizeRow(want, w, row); err != nil {
						t.Fatal(err)
					}
				}
				for i := range (c.n + 15) / 16 * 16 {
					v := dst[96*(i/8)+8*row+i%8]
					exp := float32(0)
					if row < c.nrow && i < c.n {
						exp = want[i]
					}
					if v != exp && !(math.IsNaN(float64(v)) && math.IsNaN(float64(exp))) {
						t.Fatalf("row %d element %d: %v, want %v", row, i, v, exp)
					}
				}
			}
			for _, v := range dst[tileLen(c.n):] {
				if v != sentinel {
					t.Fatal("wrote past the tile")
				}
			}
		})
	}
}

// TestPanelTile checks one 12×32 tile, with and without a partial block of
// 16 and with the buffer added, against float64 sums.
func TestPanelTile(t *testing.T) {
	k := Detect()
	if !k.hasPanelGEMM() {
		t.Skip("no panel GEMM at this level")
	}
	r := newTestRand()
	for _, n := range []int{1, 15, 16, 17, 100, 512} {
		w := make([]float32, 12*n)
		xp := make([]float32, 32*n)
		for i := range w {
			w[i] = float32(r.NormFloat64())
		}
		for i := range xp {
			xp[i] = float32(r.NormFloat64())
		}
		tile := make([]float32, tileLen(n))
		k.widenTile(ftF32, tile, f32AsBytes(w), 4*n, 12, n)
		buf := make([]float32, tileBufLen)
		for i := range buf {
			buf[i] = float32(i%5) - 2
		}
		for _, add := range []bool{false, true} {
			got := append([]float32(nil), buf...)
			k.panelTile(tile, xp, n, got, add, nil)
			for row := range 12 {
				for tok := range 32 {
					var s, abs float64
					for i := range n {
						p := float64(w[row*n+i]) * float64(xp[32*i+tok])
						s += p
						abs += math.Abs(p)
					}
					if add {
						s += float64(buf[32*row+tok])
					}
					if d := math.Abs(float64(got[32*row+tok]) - s); d > 1e-5*abs+1e-6 {
						t.Fatalf("n=%d add=%v row %d token %d: %v, want %v", n, add, row, tok, got[32*row+tok], s)
					}
				}
			}
		}
	}
}

// TestWidenPanelTile checks the fused kernels bit for bit against
// widenTile followed by panelTile: the tile they leave and the sums, with
// and without the buffer added, for each weight type and several lengths.
// The weights are random bit patterns (NaNs and infinities included for
// F16 and BF16), so a row, element or token out of place shows.
func TestWidenPanelTile(t *testing.T) {
	k := Detect()
	if !k.hasPanelGEMM() {
		t.Skip("no panel GEMM at this level")
	}
	r := newTestRand()
	for _, ft := range []floatType{ftF32, ftF16, ftBF16} {
		for _, n := range []int{8, 16, 24, 200, 512} {
			t.Run(fmt.Sprintf("%d/%d", ft, n), func(t *testing.T) {
				es := ft.size()
				rb := n*es + 6*es // rows longer than n
				src := make([]byte, 12*rb)
				for i := range src {
					src[i] = byte(r.Uint32())
				}
				if ft == ftF32 {
					for i := 0; i < len(src); i += 4 {
						putF32(src[i:], float32(r.NormFloat64()))
					}
				}
				xp := make([]float32, 32*n)
				for i := range xp {
					xp[i] = float32(r.NormFloat64())
				}
				init := make([]float32, tileBufLen)
				for i := range init {
					init[i] = float32(r.NormFloat64())
				}
				for _, add := range []bool{false, true} {
					want := make([]float32, tileLen(n))
					wantBuf := append([]float32(nil), init...)
					k.widenTile(ft, want, src, rb, 12, n)
					k.panelTile(want, xp, n, wantBuf, add, nil)
					got := make([]float32, tileLen(n))
					gotBuf := append([]float32(nil), init...)
					k.widenPanelTile(ft, got, src, rb, xp, n, gotBuf, add, nil)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("tile element %d: %v, want %v", i, got[i], want[i])
						}
					}
					for i := range wantBuf {
						if math.Float32bits(gotBuf[i]) != math.Float32bits(wantBuf[i]) {
							t.Fatalf("add=%v row %d token %d: %v, want %v", add, i/32, i%32, gotBuf[i], wantBuf[i])
						}
					}
				}
			})
		}
	}
}

func putF32(b []byte, f float32) {
	u := math.Float32bits(f)
	b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}

// TestPackUnpanel checks packPanel and unpanel against their definitions,
// for token counts and lengths with and without whole groups of 16 (the
// transposing kernels) and tails (the gathering ones).
func TestPackUnpanel(t *testing.T) {
	k := Detect()
	if !k.hasPanelGEMM() {
		t.Skip("no panel GEMM at this level")
	}
	r := newTestRand()
	for _, ntok := range []int{32, 31, 7, 1} {
		for _, cols := range []int{1, 15, 16, 37, 64, 200} {
			x := make([]float32, ntok*cols)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			dst := make([]float32, 32*cols)
			for i := range dst {
				dst[i] = sentinel
			}
			k.packPanel(dst, x, cols, ntok)
			for c := range cols {
				for tok := range 32 {
					want := float32(0)
					if tok < ntok {
						want = x[tok*cols+c]
					}
					if got := dst[32*c+tok]; got != want {
						t.Fatalf("pack ntok=%d cols=%d: element %d token %d: %v, want %v", ntok, cols, c, tok, got, want)
					}
				}
			}
		}
		for _, rows := range []int{1, 12, 16, 40, 192} {
			for _, acc := range []bool{false, true} {
				const ldd = 211
				src := make([]float32, 32*rows)
				for i := range src {
					src[i] = float32(r.NormFloat64())
				}
				dst := make([]float32, 32*ldd)
				for i := range dst {
					dst[i] = float32(r.NormFloat64())
				}
				orig := append([]float32(nil), dst...)
				k.unpanel(dst, ldd, src, rows, ntok, acc)
				for tok := range 32 {
					for row := range ldd {
						want := orig[tok*ldd+row]
						if tok < ntok && row < rows {
							if acc {
								want += src[32*row+tok]
							} else {
								want = src[32*row+tok]
							}
						}
						if got := dst[tok*ldd+row]; got != want {
							t.Fatalf("unpanel ntok=%d rows=%d acc=%v: token %d row %d: %v, want %v", ntok, rows, acc, tok, row, got, want)
						}
					}
				}
			}
		}
	}
}
