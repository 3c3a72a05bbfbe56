package quant

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weftrun/weft/tensor"
)

var dotTypes = []tensor.DType{
	tensor.F32, tensor.F16, tensor.BF16,
	tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.Q8_0,
	tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K,
}

func encode(t testing.TB, dt tensor.DType, x []float32) []byte {
	t.Helper()
	n, err := dt.RowBytes(len(x))
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, n)
	if err := Quantize(dt, b, x); err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t testing.TB, dt tensor.DType, b []byte, n int) []float32 {
	t.Helper()
	x := make([]float32, n)
	if err := Dequantize(dt, x, b); err != nil {
		t.Fatal(err)
	}
	return x
}

// TestDotMatchesDequantized checks every dot product against the float64
// dot product of the dequantized rows: they differ only by float32
// rounding in the accumulation.
func TestDotMatchesDequantized(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{256, 4096} {
		for _, dt := range dotTypes {
			for trial := range 4 {
				w := make([]float32, n)
				a := make([]float32, n)
				for i := range w {
					w[i] = float32(r.NormFloat64()) * float32(trial+1)
					a[i] = float32(r.NormFloat64()) + 0.3*float32(trial)
				}
				at := ActivationType(dt)
				wb, ab := encode(t, dt, w), encode(t, at, a)
				wd, ad := decode(t, dt, wb, n), decode(t, at, ab, n)
				var ref, mag float64
				for i := range wd {
					ref += float64(wd[i]) * float64(ad[i])
					mag += math.Abs(float64(wd[i]) * float64(ad[i]))
				}
				tol := 2e-6 * mag
				if at == tensor.Q8_1 {
					// The minimums multiply s = d·Σq, rounded to f16.
					for b := range n / qk {
						m := f16(wb[b*len(wb)/(n/qk)+2:])
						tol += math.Abs(float64(m)*float64(f16(ab[b*blockQ8_1+2:]))) / 2048
					}
				}
				got := Dot(dt, wb, ab, n)
				if diff := math.Abs(float64(got) - ref); diff > tol {
					t.Errorf("%s n=%d trial %d: Dot = %v, dequantized dot = %v (diff %g, Σ|wa| = %g)", dt, n, trial, got, ref, diff, mag)
				}
			}
		}
	}
}

// TestDotHandBuilt multiplies the hand-built weight blocks by hand-built
// activation blocks. All products and partial sums are exact in float32,
// so Dot must equal the exact dot product of the written-out values.
func TestDotHandBuilt(t *testing.T) {
	act := map[tensor.DType]handBlock{tensor.Q8_0: handQ8_0(), tensor.Q8_K: handQ8_K()}
	for _, mk := range handBlocks {
		w := mk()
		if _, ok := DotFor(w.dt); !ok || !w.dt.Quantized() {
			continue
		}
		a, ok := act[ActivationType(w.dt)]
		if !ok {
			continue // Q8_1: below
		}
		var want float64
		for i := range w.want {
			want += float64(w.want[i]) * float64(a.want[i])
		}
		got := Dot(w.dt, w.block, a.block, len(w.want))
		if float64(got) != want {
			t.Errorf("%s·%s = %v, want %v", w.dt, a.dt, got, want)
		}
	}
	// ggml's pairings for Q4_1 and Q5_1: Q8_1 carries s = d·Σq.
	q81 := handQ8_1()
	var sum int
	for _, v := range q81.want {
		sum += int(v / 2) // d = 2
	}
	le16(q81.block[2:], ToF16(float32(2*sum)))
	for _, tt := range []struct {
		w   handBlock
		dot func(w, a []byte, n int) float32
	}{{handQ4_1(), DotQ4_1Q8_1}, {handQ5_1(), DotQ5_1Q8_1}} {
		var want float64
		for i := range tt.w.want {
			want += float64(tt.w.want[i]) * float64(q81.want[i])
		}
		if got := tt.dot(tt.w.block, q81.block, 32); float64(got) != want {
			t.Errorf("%s·q8_1 = %v, want %v", tt.w.dt, got, want)
		}
	}
	// F16 weights against F32 and F16 activations.
	f := handF16()
	a32 := []float32{3, 0.5, -6, 1024}
	want := float32(1*3 + -2*0.5 + 0.333251953125*-6 + 1.0/(1<<24)*1024)
	if got := Dot(tensor.F16, f.block, tensor.F32ToBytes(a32), 4); got != want {
		t.Errorf("f16·f32 = %v, want %v", got, want)
	}
	a16 := encode(t, tensor.F16, a32)
	if got := DotF16F16(f.block, a16, 4); got != want {
		t.Errorf("f16·f16 = %v, want %v", got, want)
	}
}

func TestDotPanicsOnBadShapes(t *testing.T) {
	tests := []struct {
		name    string
		dt      tensor.DType
		w, a    int // bytes
		n       int
		message string
	}{
		{"unknown type", tensor.I32, 128, 128, 32, "no dot product"},
		{"partial block", tensor.Q4_0, 18, 34, 30, "block size"},
		{"short weights", tensor.Q4_0, 17, 34, 32, "need 18 bytes"},
		{"short activations", tensor.Q4_K, 144, 291, 256, "292 bytes of q8_k"},
		{"negative n", tensor.F32, 4, 4, -1, "-1 values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if !strings.Contains(msg, tt.message) {
					t.Errorf("panic %v, want a message containing %q", r, tt.message)
				}
			}()
			Dot(tt.dt, make([]byte, tt.w), make([]byte, tt.a), tt.n)
		})
	}
}

func TestQuantizeErrors(t *testing.T) {
	tests := []struct {
		name    string
		dt      tensor.DType
		n, b    int
		message string
	}{
		{"unsupported", tensor.I8, 32, 32, "unsupported type i8"},
		{"unknown", tensor.DType(99), 32, 32, "unsupported type dtype(99)"},
		{"partial block", tensor.Q8_0, 33, 34, "not a multiple of the block size 32"},
		{"short dst", tensor.Q6_K, 256, 209, "take 210 bytes, have 209"},
		{"long dst", tensor.F16, 3, 8, "take 6 bytes, have 8"},
	}
	for _, tt := range tests {
		err := Quantize(tt.dt, make([]byte, tt.b), make([]float32, tt.n))
		if err == nil || !strings.Contains(err.Error(), tt.message) || !strings.Contains(err.Error(), "quantize") {
			t.Errorf("%s: Quantize error %v, want one containing %q", tt.name, err, tt.message)
		}
		err = Dequantize(tt.dt, make([]float32, tt.n), make([]byte, tt.b))
		if err == nil || !strings.Contains(err.Error(), tt.message) || !strings.Contains(err.Error(), "dequantize") {
			t.Errorf("%s: Dequantize error %v, want one containing %q", tt.name, err, tt.message)
		}
	}
	if err := Quantize(tensor.Q4_0, nil, nil); err != nil {
		t.Errorf("empty row: %v", err)
	}
}

func TestActivationType(t *testing.T) {
	for _, tt := range []struct{ w, want tensor.DType }{
		{tensor.F32, tensor.F32}, {tensor.F16, tensor.F32}, {tensor.BF16, tensor.F32},
		{tensor.Q4_0, tensor.Q8_0}, {tensor.Q4_1, tensor.Q8_1}, {tensor.Q5_0, tensor.Q8_0},
		{tensor.Q5_1, tensor.Q8_1}, {tensor.Q8_0, tensor.Q8_0},
		{tensor.Q2_K, tensor.Q8_K}, {tensor.Q3_K, tensor.Q8_K}, {tensor.Q4_K, tensor.Q8_K},
		{tensor.Q5_K, tensor.Q8_K}, {tensor.Q6_K, tensor.Q8_K},
	} {
		if got := ActivationType(tt.w); got != tt.want {
			t.Errorf("ActivationType(%s) = %s, want %s", tt.w, got, tt.want)
		}
		if _, ok := DotFor(tt.w); !ok {
			t.Errorf("DotFor(%s) missing", tt.w)
		}
	}
	if _, ok := DotFor(tensor.Q8_K); ok {
		t.Error("DotFor(q8_k) should not exist: Q8_K is an activation type")
	}
}

// TestNoAllocations checks that the per-type row functions do not allocate.
func TestNoAllocations(t *testing.T) {
	const n = 512
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%17) - 8
	}
	for dt, f := range traits {
		b := encode(t, dt, x)
		y := make([]float32, n)
		if a := testing.AllocsPerRun(5, func() { f.Quantize(b, x) }); a != 0 {
			t.Errorf("quantize %s: %v allocations", dt, a)
		}
		if a := testing.AllocsPerRun(5, func() { f.Dequantize(y, b) }); a != 0 {
			t.Errorf("dequantize %s: %v allocations", dt, a)
		}
		if dot, ok := DotFor(dt); ok {
			act := encode(t, ActivationType(dt), x)
			if a := testing.AllocsPerRun(5, func() { dot(b, act, n) }); a != 0 {
				t.Errorf("dot %s: %v allocations", dt, a)
			}
		}
	}
}

func benchRows(b *testing.B, dt tensor.DType, n int) (w, act []byte) {
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return encode(b, dt, x), encode(b, ActivationType(dt), x)
}

// BenchmarkDot measures one 4096-value row; bytes are weight bytes.
func BenchmarkDot(b *testing.B) {
	const n = 4096
	for _, dt := range dotTypes {
		b.Run(dt.String(), func(b *testing.B) {
			w, act := benchRows(b, dt, n)
			dot, _ := DotFor(dt)
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				dot(w, act, n)
			}
		})
	}
}

// BenchmarkQuantize measures one 4096-value row; bytes are input bytes.
func BenchmarkQuantize(b *testing.B) {
	const n = 4096
	x := make([]float32, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for _, dt := range append(dotTypes, tensor.Q8_K) {
		b.Run(dt.String(), func(b *testing.B) {
			dst := encode(b, dt, x)
			b.SetBytes(4 * n)
			for b.Loop() {
				Quantize(dt, dst, x)
			}
		})
	}
}

// BenchmarkDequantize measures one 4096-value row; bytes are output bytes.
func BenchmarkDequantize(b *testing.B) {
	const n = 4096
	y := make([]float32, n)
	for _, dt := range dotTypes {
		b.Run(dt.String(), func(b *testing.B) {
			w, _ := benchRows(b, dt, n)
			b.SetBytes(4 * n)
			for b.Loop() {
				Dequantize(dt, y, w)
			}
		})
	}
}
