package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// q8Block builds a Q8_0 block from its f16 scale bits and 32 quants.
func q8Block(d uint16, q []int8) []byte {
	b := make([]byte, blockQ8_0)
	binary.LittleEndian.PutUint16(b, d)
	for i, v := range q {
		b[2+i] = byte(v)
	}
	return b
}

// ggmlGridBlock is a block of llama.cpp's first-layer attention input for
// a random 1-layer Q4_0 model: an embedding row of Q4_0 weights after
// RMSNorm, so every value is k·g for an integer k in [-8, 7], g ≈ 0.24437.
var ggmlGridBlock = [32]uint32{
	0xbe7a3be0, 0xbe7a3be0, 0xbefa3be0, 0xbf3bace8, 0x3f3bace8, 0xbefa3be0, 0xbe7a3be0, 0xbe7a3be0,
	0x00000000, 0xbf7a3be0, 0xbf7a3be0, 0x3f3bace8, 0xbe7a3be0, 0x3f7a3be0, 0x3f7a3be0, 0x3f7a3be0,
	0xbefa3be0, 0xbf9c656c, 0xbfbbace8, 0x3e7a3be0, 0xbefa3be0, 0x00000000, 0xbf7a3be0, 0x3f7a3be0,
	0xbf7a3be0, 0x3f9c656c, 0xbfdaf464, 0xbf3bace8, 0xbfdaf464, 0xbefa3be0, 0xbfbbace8, 0xbffa3be0,
}

func TestQuantizeActivationQ8_0(t *testing.T) {
	grid := make([]float32, 32)
	for i, b := range ggmlGridBlock {
		grid[i] = math.Float32frombits(b)
	}
	ties := make([]float32, 32)
	copy(ties, []float32{127, -127, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2.49, 3})
	tiny := make([]float32, 32)
	copy(tiny, []float32{1e-30, -2.5e-31})
	denormal := make([]float32, 32)
	copy(denormal, []float32{1e-38, -1e-39})
	tests := []struct {
		name     string
		x        []float32
		act, ref []byte // QuantizeActivationQ8_0's and QuantizeRowQ8_0's blocks (nil: not checked)
	}{
		{
			// Bytes produced on x86 by llama.cpp's ggml (February 2025):
			// act by the CPU backend's quantize_row_q8_0 (AVX path), ref
			// by quantize_row_q8_0_ref. The values with k = ±4 sit at
			// x·127/amax = ±63.5: the runtime's 127/amax puts them just
			// above the half, the reference's 1/(amax/127) just below.
			name: "llama.cpp grid block",
			x:    grid,
			act: q8Block(0x23e2, []int8{-16, -16, -32, -48, 48, -32, -16, -16, 0, -64, -64, 48, -16, 64, 64, 64,
				-32, -79, -95, 16, -32, 0, -64, 64, -64, 79, -111, -48, -111, -32, -95, -127}),
			ref: q8Block(0x23e2, []int8{-16, -16, -32, -48, 48, -32, -16, -16, 0, -63, -63, 48, -16, 63, 63, 63,
				-32, -79, -95, 16, -32, 0, -63, 63, -63, 79, -111, -48, -111, -32, -95, -127}),
		},
		{
			// amax = 127: d = 1 (f16 0x3c00) and 127/amax = 1/d = 1, so the
			// halves are exact ties: to even here, away from zero in the
			// reference.
			name: "exact ties",
			x:    ties,
			act:  q8Block(0x3c00, []int8{127, -127, 0, 0, 2, -2, 2, -2, 2, 3}),
			ref:  q8Block(0x3c00, []int8{127, -127, 1, -1, 2, -2, 3, -3, 2, 3}),
		},
		{
			name: "zeros",
			x:    make([]float32, 32),
			act:  q8Block(0, nil),
			ref:  q8Block(0, nil),
		},
		{
			// d underflows the f16 range, 127/amax does not: the quants
			// are kept (they meet a zero scale in any dot product).
			// -2.5e-31·127/1e-30 = -31.75.
			name: "f16 scale underflow",
			x:    tiny,
			act:  q8Block(0, []int8{127, -32}),
			ref:  q8Block(0, []int8{127, -32}),
		},
		{
			// 127/amax overflows float32: zero quants, where ggml's
			// vector code would convert an infinity.
			name: "127/amax overflow",
			x:    denormal,
			act:  q8Block(0, nil),
		},
	}
	for _, tt := range tests {
		for _, q := range []struct {
			name string
			f    func([]byte, []float32)
			want []byte
		}{{"QuantizeActivationQ8_0", QuantizeActivationQ8_0, tt.act}, {"QuantizeRowQ8_0", QuantizeRowQ8_0, tt.ref}} {
			if q.want == nil {
				continue
			}
			got := make([]byte, blockQ8_0)
			q.f(got, tt.x)
			if string(got) != string(q.want) {
				t.Errorf("%s: %s =\n% x\nwant\n% x", tt.name, q.name, got, q.want)
			}
		}
	}
}

// TestQuantizeActivationQ8_0NearReference checks, on random and grid
// rows, that the activation quantizer keeps the reference's scales and
// moves a quant by at most one step, and only where x/d is within a
// rounding error of a half.
func TestQuantizeActivationQ8_0NearReference(t *testing.T) {
	const n = 4096
	r := rand.New(rand.NewPCG(13, 17))
	rows := testData(n)
	// Rows of dequantized Q4_0 weights: k·g per block, g random.
	grid := make([]float32, n)
	var g float32
	for i := range grid {
		if i%qk == 0 {
			g = 0.01 + r.Float32()
		}
		grid[i] = float32(r.IntN(16)-8) * g
	}
	rows["grid"] = grid
	for name, x := range rows {
		act := make([]byte, n/qk*blockQ8_0)
		ref := make([]byte, len(act))
		QuantizeActivationQ8_0(act, x)
		QuantizeRowQ8_0(ref, x)
		moved := 0
		for b := 0; b < len(act); b += blockQ8_0 {
			if act[b] != ref[b] || act[b+1] != ref[b+1] {
				t.Fatalf("%s: block %d: scale %02x%02x, reference %02x%02x", name, b/blockQ8_0, act[b+1], act[b], ref[b+1], ref[b])
			}
			var amax float64
			for _, v := range x[b/blockQ8_0*qk : b/blockQ8_0*qk+qk] {
				amax = math.Max(amax, math.Abs(float64(v)))
			}
			for j := range qk {
				qa, qr := int(int8(act[b+2+j])), int(int8(ref[b+2+j]))
				if qa == qr {
					continue
				}
				moved++
				exact := float64(x[b/blockQ8_0*qk+j]) * 127 / amax
				if qa-qr > 1 || qr-qa > 1 || math.Abs(math.Abs(exact-math.Trunc(exact))-0.5) > 1e-4 {
					t.Errorf("%s: block %d [%d]: x·127/amax = %v quantized to %d, reference %d", name, b/blockQ8_0, j, exact, qa, qr)
				}
			}
		}
		t.Logf("%s: %d of %d quants differ from the reference", name, moved, n)
		if name == "grid" && moved == 0 {
			t.Errorf("grid: no quant differs from the reference; the test lost its ties")
		}
	}
}

func TestQuantizeActivation(t *testing.T) {
	x := testData(512)["gauss"]
	// Blocks with amax = 127 (d = 1) and exact ties, where the two Q8_0
	// quantizers part.
	for i := 0; i < len(x); i += 4 {
		x[i] = float32(i%100-50) + 0.5
		if i%32 == 0 {
			x[i] = 127
		}
	}
	ref := make([]byte, 16*blockQ8_0)
	QuantizeRowQ8_0(ref, x)
	for _, tt := range []struct {
		dt   tensor.DType
		want func(dst []byte, src []float32)
	}{
		{tensor.Q8_0, QuantizeActivationQ8_0},
		{tensor.Q8_1, QuantizeActivationQ8_1},
		{tensor.Q8_K, QuantizeRowQ8_K},
		{tensor.F32, quantizeF32},
	} {
		n, _ := tt.dt.RowBytes(len(x))
		got, want := make([]byte, n), make([]byte, n)
		if err := QuantizeActivation(tt.dt, got, x); err != nil {
			t.Fatalf("%s: %v", tt.dt, err)
		}
		tt.want(want, x)
		if string(got) != string(want) {
			t.Errorf("%s: QuantizeActivation differs from the type's activation quantizer", tt.dt)
		}
		if tt.dt == tensor.Q8_0 && string(got) == string(ref) {
			t.Errorf("Q8_0: QuantizeActivation rounded the ties as the reference quantizer does")
		}
		if err := QuantizeActivation(tt.dt, got[:n-1], x); err == nil {
			t.Errorf("%s: a short dst was accepted", tt.dt)
		}
	}
	if err := QuantizeActivation(tensor.Q8_0, make([]byte, 34), make([]float32, 33)); err == nil {
		t.Error("Q8_0: 33 values were accepted")
	}
	if err := QuantizeActivation(tensor.I32, make([]byte, 128), make([]float32, 32)); err == nil {
		t.Error("I32: an unsupported type was accepted")
	}
}

// TestQuantizeActivationQ8_1 checks that Q8_1 activation blocks hold
// QuantizeActivationQ8_0's scale and quants, and s = d·Σq with d the
// float32 amax/127, rounded once to f16 (not the f16 d times Σq).
func TestQuantizeActivationQ8_1(t *testing.T) {
	x := testData(512)["gauss"]
	x[0] = 0.3 // a block whose f16 d differs from amax/127
	clear(x[32:64])
	nb := len(x) / qk
	q8 := make([]byte, nb*blockQ8_0)
	q81 := make([]byte, nb*blockQ8_1)
	QuantizeActivationQ8_0(q8, x)
	QuantizeActivationQ8_1(q81, x)
	for b := range nb {
		a, c := q8[b*blockQ8_0:(b+1)*blockQ8_0], q81[b*blockQ8_1:(b+1)*blockQ8_1]
		if string(a[:2]) != string(c[:2]) || string(a[2:]) != string(c[4:]) {
			t.Fatalf("block %d: d or quants differ from QuantizeActivationQ8_0's", b)
		}
		var amax float32
		for _, v := range x[b*qk : (b+1)*qk] {
			amax = max(amax, abs32(v))
		}
		var sum int32
		for _, q := range c[4:] {
			sum += int32(int8(q))
		}
		if got, want := f16(c[2:]), FromF16(ToF16(amax/127*float32(sum))); got != want {
			t.Errorf("block %d: s = %v, want %v", b, got, want)
		}
	}
}
