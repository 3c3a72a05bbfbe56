package cpudev

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
)

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func act2(name string, rows, cols int, data []float32) *tensor.Tensor {
	return tensor.FromF32(name, data, rows, cols)
}

func near(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) < len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > tol*(1+math.Abs(float64(want[i]))) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// run executes op name on the given inputs with defaults for missing attrs.
// kvStep is a step with the KV cache its attention writes to.
type kvStep struct {
	backend.Step
	kv *KVCache
}

func run(t *testing.T, reg *ops.Registry, name string, step *kvStep, attrs ops.Attrs, outs []*tensor.Tensor, in ...*tensor.Tensor) {
	t.Helper()
	d, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("no op %s", name)
	}
	full := ops.Attrs{}
	for _, ad := range d.Attrs {
		if ad.Default != nil {
			v, err := ops.Coerce(ad, ad.Default)
			if err != nil {
				t.Fatal(err)
			}
			full[ad.Name] = v
		}
	}
	for k, v := range attrs {
		full[k] = v
	}
	pool := cpu.NewPool(2)
	defer pool.Close()
	var st *backend.Step
	var kv *KVCache
	if step != nil {
		st, kv = &step.Step, step.kv
	}
	k, ok := KernelFor(d)
	if !ok {
		t.Fatalf("no CPU kernel for %s", name)
	}
	if err := k(&Call{Name: name, In: in, Out: outs, Attrs: full, Step: st, KV: kv, Pool: pool}); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func TestElementwiseOps(t *testing.T) {
	reg := ops.Builtins()
	r := rand.New(rand.NewPCG(1, 2))
	const rows, cols = 3, 7
	a, b := randVec(r, rows*cols), randVec(r, rows*cols)
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	gtanh := func(x float64) float64 { return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))) }
	for _, tc := range []struct {
		op    string
		two   bool
		want  func(x, y float64) float64
		attrs ops.Attrs
	}{
		{"silu", false, func(x, _ float64) float64 { return x * sig(x) }, nil},
		{"gelu", false, func(x, _ float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }, nil},
		{"gelu_tanh", false, func(x, _ float64) float64 {
			return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
		}, nil},
		{"relu", false, func(x, _ float64) float64 { return math.Max(0, x) }, nil},
		{"add", true, func(x, y float64) float64 { return x + y }, nil},
		{"mul", true, func(x, y float64) float64 { return x * y }, nil},
		{"swiglu", true, func(x, y float64) float64 { return x * sig(x) * y }, nil},
		{"geglu", true, func(x, y float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) * y }, nil},
		{"geglu", true, func(x, y float64) float64 { return gtanh(x) * y }, ops.Attrs{"gelu": "tanh"}},
		{"scale", false, func(x, _ float64) float64 { return x * -2.5 }, ops.Attrs{"by": -2.5}},
		{"clamp", false, func(x, _ float64) float64 { return math.Min(math.Max(x, -0.5), 0.5) }, ops.Attrs{"limit": 0.5}},
		{"clamp", false, func(x, _ float64) float64 { return x }, ops.Attrs{"limit": 0.0}},
	} {
		t.Run(fmt.Sprint(tc.op, tc.attrs), func(t *testing.T) {
			out := tensor.NewF32("out", rows, cols)
			ins := []*tensor.Tensor{act2("a", rows, cols, a)}
			if tc.two {
				ins = append(ins, act2("b", rows, cols, b))
			}
			run(t, reg, tc.op, nil, tc.attrs, []*tensor.Tensor{out}, ins...)
			want := make([]float32, rows*cols)
			for i := range want {
				want[i] = float32(tc.want(float64(a[i]), float64(b[i])))
			}
			near(t, tc.op, out.F32(), want, 1e-5)
		})
	}
	t.Run("add-broadcast", func(t *testing.T) {
		out := tensor.NewF32("out", rows, cols)
		run(t, reg, "add", nil, nil, []*tensor.Tensor{out}, act2("a", rows, cols, a), tensor.FromF32("b", b[:cols], cols))
		want := make([]float32, rows*cols)
		for i := range want {
			want[i] = a[i] + b[i%cols]
		}
		near(t, "add", out.F32(), want, 1e-6)
	})
}

func TestSoftmax(t *testing.T) {
	x := []float32{1, 2, 3, 1000, 1000}
	out := tensor.NewF32("out", 1, 5)
	run(t, ops.Builtins(), "softmax", nil, nil, []*tensor.Tensor{out}, act2("x", 1, 5, x))
	// e^(x-max) normalised; the two 1000s share almost all the mass.
	near(t, "softmax", out.F32(), []float32{0, 0, 0, 0.5, 0.5}, 1e-6)
}

func TestNorms(t *testing.T) {
	reg := ops.Builtins()
	r := rand.New(rand.NewPCG(3, 4))
	const rows, d = 2, 16
	x, w, b := randVec(r, rows*d), randVec(r, d), randVec(r, d)
	eps := 1e-5
	out := tensor.NewF32("out", rows, d)
	run(t, reg, "rms_norm", nil, ops.Attrs{"eps": eps}, []*tensor.Tensor{out}, act2("x", rows, d, x), tensor.FromF32("w", w, d))
	want := make([]float32, rows*d)
	for row := 0; row < rows; row++ {
		var ss float64
		for j := 0; j < d; j++ {
			ss += float64(x[row*d+j]) * float64(x[row*d+j])
		}
		s := 1 / math.Sqrt(ss/d+eps)
		for j := 0; j < d; j++ {
			want[row*d+j] = float32(float64(x[row*d+j]) * s * float64(w[j]))
		}
	}
	near(t, "rms_norm", out.F32(), want, 1e-5)

	run(t, reg, "layer_norm", nil, ops.Attrs{"eps": eps}, []*tensor.Tensor{out}, act2("x", rows, d, x), tensor.FromF32("w", w, d), tensor.FromF32("b", b, d))
	for row := 0; row < rows; row++ {
		var mean, vr float64
		for j := 0; j < d; j++ {
			mean += float64(x[row*d+j]) / d
		}
		for j := 0; j < d; j++ {
			dv := float64(x[row*d+j]) - mean
			vr += dv * dv / d
		}
		for j := 0; j < d; j++ {
			want[row*d+j] = float32((float64(x[row*d+j])-mean)/math.Sqrt(vr+eps)*float64(w[j]) + float64(b[j]))
		}
	}
	near(t, "layer_norm", out.F32(), want, 1e-5)
}

// TestGroupedNorms: with groups=G each of a row's G slices is normalised
// on its own (per-head QK-norm), by a per-group or a shared weight.
func TestGroupedNorms(t *testing.T) {
	reg := ops.Builtins()
	r := rand.New(rand.NewPCG(13, 14))
	const rows, g, hd = 3, 4, 8
	const d = g * hd
	x, wAll, wShared, b := randVec(r, rows*d), randVec(r, d), randVec(r, hd), randVec(r, d)
	eps := 1e-6
	for _, tc := range []struct {
		op     string
		w      *tensor.Tensor
		weight func(j int) float64
	}{
		{"rms_norm", tensor.FromF32("w", wAll, g, hd), func(j int) float64 { return float64(wAll[j]) }},
		{"rms_norm", tensor.FromF32("w", wShared, hd), func(j int) float64 { return float64(wShared[j%hd]) }},
		{"layer_norm", tensor.FromF32("w", wAll, d), func(j int) float64 { return float64(wAll[j]) }},
	} {
		out := tensor.NewF32("out", rows, d)
		ins := []*tensor.Tensor{act2("x", rows, d, x), tc.w}
		if tc.op == "layer_norm" {
			ins = append(ins, tensor.FromF32("b", b, d))
		}
		run(t, reg, tc.op, nil, ops.Attrs{"eps": eps, "groups": int64(g)}, []*tensor.Tensor{out}, ins...)
		want := make([]float32, rows*d)
		for row := 0; row < rows; row++ {
			for h := 0; h < g; h++ {
				seg := x[row*d+h*hd : row*d+(h+1)*hd]
				var mean, ss float64
				if tc.op == "layer_norm" {
					for _, v := range seg {
						mean += float64(v) / hd
					}
				}
				for _, v := range seg {
					ss += (float64(v) - mean) * (float64(v) - mean) / hd
				}
				for j, v := range seg {
					k := h*hd + j
					y := (float64(v) - mean) / math.Sqrt(ss+eps) * tc.weight(k)
					if tc.op == "layer_norm" {
						y += float64(b[k])
					}
					want[row*d+k] = float32(y)
				}
			}
		}
		near(t, fmt.Sprint(tc.op, tc.w.Shape), out.F32(), want, 1e-5)
	}
}

func TestLinear(t *testing.T) {
	reg := ops.Builtins()
	r := rand.New(rand.NewPCG(5, 6))
	const n, in, outN = 3, 8, 5
	x, w, b, res := randVec(r, n*in), randVec(r, outN*in), randVec(r, outN), randVec(r, n*outN)
	want := make([]float32, n*outN)
	for t0 := 0; t0 < n; t0++ {
		for o := 0; o < outN; o++ {
			var s float64
			for i := 0; i < in; i++ {
				s += float64(x[t0*in+i]) * float64(w[o*in+i])
			}
			want[t0*outN+o] = float32(s) + b[o]
		}
	}
	out := tensor.NewF32("out", n, outN)
	run(t, reg, "linear", nil, nil, []*tensor.Tensor{out}, act2("x", n, in, x), tensor.FromF32("w", w, outN, in), tensor.FromF32("b", b, outN))
	near(t, "linear", out.F32(), want, 1e-5)
	// with a residual epilogue
	run(t, reg, "linear", nil, nil, []*tensor.Tensor{out}, act2("x", n, in, x), tensor.FromF32("w", w, outN, in), tensor.FromF32("b", b, outN), act2("r", n, outN, res))
	for i := range want {
		want[i] += res[i]
	}
	near(t, "linear+residual", out.F32(), want, 1e-5)
}

func TestEmbeddingAndTake(t *testing.T) {
	reg := ops.Builtins()
	table := []float32{0, 1, 10, 11, 20, 21}
	ids := tensor.Tensor{Name: "ids", DType: tensor.I32, Shape: []int{3}, Data: make([]byte, 12)}
	copy(tensor.BytesToI32(ids.Data), []int32{2, 0, 2})
	out := tensor.NewF32("out", 3, 2)
	run(t, reg, "embedding", nil, nil, []*tensor.Tensor{out}, tensor.FromF32("table", table, 3, 2), &ids)
	near(t, "embedding", out.F32(), []float32{20, 21, 0, 1, 20, 21}, 0)
	v := tensor.NewF32("v", 2)
	run(t, reg, "take", nil, ops.Attrs{"index": int64(1)}, []*tensor.Tensor{v}, tensor.FromF32("table", table, 3, 2))
	near(t, "take", v.F32(), []float32{10, 11}, 0)
}

func TestRoPE(t *testing.T) {
	reg := ops.Builtins()
	r := rand.New(rand.NewPCG(7, 8))
	const heads, hd = 2, 8
	x := randVec(r, heads*hd)
	pos := tensor.Tensor{Name: "pos", DType: tensor.I32, Shape: []int{1}, Data: make([]byte, 4)}
	tensor.BytesToI32(pos.Data)[0] = 5
	base := 10000.0
	for _, pairing := range []string{"adjacent", "rotate_half"} {
		out := tensor.NewF32("out", 1, heads*hd)
		run(t, reg, "rope", nil, ops.Attrs{"heads": int64(heads), "pairing": pairing}, []*tensor.Tensor{out}, act2("x", 1, heads*hd, x), &pos)
		want := make([]float32, heads*hd)
		for h := 0; h < heads; h++ {
			for j := 0; j < hd/2; j++ {
				a, b := h*hd+2*j, h*hd+2*j+1
				if pairing == "rotate_half" {
					a, b = h*hd+j, h*hd+j+hd/2
				}
				th := 5 * math.Pow(base, -2*float64(j)/hd)
				want[a] = float32(float64(x[a])*math.Cos(th) - float64(x[b])*math.Sin(th))
				want[b] = float32(float64(x[a])*math.Sin(th) + float64(x[b])*math.Cos(th))
			}
		}
		near(t, "rope "+pairing, out.F32(), want, 1e-5)
	}
}

func TestSplitAndSinusoidal(t *testing.T) {
	reg := ops.Builtins()
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	a, b := tensor.NewF32("a", 2, 2), tensor.NewF32("b", 2, 3)
	run(t, reg, "split", nil, ops.Attrs{"sizes": []int64{2, 3}}, []*tensor.Tensor{a, b}, act2("x", 2, 5, x))
	near(t, "split a", a.F32(), []float32{1, 2, 6, 7}, 0)
	near(t, "split b", b.F32(), []float32{3, 4, 5, 8, 9, 10}, 0)

	pos := tensor.Tensor{Name: "pos", DType: tensor.I32, Shape: []int{1}, Data: make([]byte, 4)}
	tensor.BytesToI32(pos.Data)[0] = 3
	out := tensor.NewF32("pe", 1, 4)
	run(t, reg, "sinusoidal", nil, ops.Attrs{"dim": int64(4)}, []*tensor.Tensor{out}, &pos)
	near(t, "sinusoidal", out.F32(), []float32{float32(math.Sin(3)), float32(math.Cos(3)), float32(math.Sin(3 / 100.0)), float32(math.Cos(3 / 100.0))}, 1e-6)
}

// TestAttention checks causal GQA attention over two sequences batched in
// one step against softmax(q·kᵀ/√d)·v written out here, with and without
// ALiBi.
func TestAttention(t *testing.T) {
	reg := ops.Builtins()
	r := rand.New(rand.NewPCG(9, 10))
	const heads, kvh, hd = 4, 2, 4
	seqs := []int32{0, 0, 0, 1, 1}
	poss := []int32{0, 1, 2, 0, 1}
	n := len(seqs)
	q, k, v := randVec(r, n*heads*hd), randVec(r, n*kvh*hd), randVec(r, n*kvh*hd)
	for _, tc := range []struct {
		alibi   bool
		softcap float64
	}{{false, 0}, {true, 0}, {false, 0.3}, {true, 0.3}} {
		alibi := tc.alibi
		// Sequence s's positions go to block s; each token sees its
		// sequence's rows up to its own.
		cache := NewKVCache([]int{kvh * hd}, KVF32)
		step := &kvStep{Step: backend.Step{Seq: seqs, Pos: poss, Views: [][]backend.KVRun{{{Block: 0, N: 3}}, {{Block: 1, N: 2}}}}, kv: cache}
		for i := range seqs {
			cache.SetBlock(int(seqs[i]), 16)
			step.Loc = append(step.Loc, backend.KVLoc{Block: seqs[i], Row: poss[i]})
			step.View = append(step.View, seqs[i])
			step.Len = append(step.Len, poss[i]+1)
		}
		out := tensor.NewF32("out", n, heads*hd)
		run(t, reg, "attention", step, ops.Attrs{"heads": int64(heads), "kv_heads": int64(kvh), "alibi": alibi, "softcap": tc.softcap}, []*tensor.Tensor{out},
			act2("q", n, heads*hd, q), act2("k", n, kvh*hd, k), act2("v", n, kvh*hd, v))
		slopes := alibiSlopes(heads, 8)
		want := make([]float32, n*heads*hd)
		for ti := 0; ti < n; ti++ {
			for h := 0; h < heads; h++ {
				kh := h / (heads / kvh)
				var js []int
				for tj := 0; tj < n; tj++ {
					if seqs[tj] == seqs[ti] && poss[tj] <= poss[ti] {
						js = append(js, tj)
					}
				}
				sc := make([]float64, len(js))
				m := math.Inf(-1)
				for a, tj := range js {
					var s float64
					for d := 0; d < hd; d++ {
						s += float64(q[ti*heads*hd+h*hd+d]) * float64(k[tj*kvh*hd+kh*hd+d])
					}
					sc[a] = s / math.Sqrt(hd)
					if tc.softcap > 0 {
						sc[a] = tc.softcap * math.Tanh(sc[a]/tc.softcap)
					}
					if alibi {
						sc[a] -= float64(slopes[h]) * float64(poss[ti]-poss[tj])
					}
					m = math.Max(m, sc[a])
				}
				var z float64
				for a := range sc {
					sc[a] = math.Exp(sc[a] - m)
					z += sc[a]
				}
				for d := 0; d < hd; d++ {
					var o float64
					for a, tj := range js {
						o += sc[a] / z * float64(v[tj*kvh*hd+kh*hd+d])
					}
					want[ti*heads*hd+h*hd+d] = float32(o)
				}
			}
		}
		near(t, "attention", out.F32(), want, 1e-5)
	}
	// ALiBi slopes for 8 heads are 2^-1 ... 2^-8 (Press et al.).
}

// TestALiBiSlopes checks the slopes against Press et al.'s published
// recipe (their get_slopes): 2^(-8/n·(h+1)) for a power of two n; for
// other counts, the slopes of the largest power of two below, then every
// other slope of twice that count. max_bias replaces the 8 (MPT's
// alibi_bias_max, BLOOM's and llama.cpp's max_bias).
func TestALiBiSlopes(t *testing.T) {
	p := func(e ...float64) []float64 {
		out := make([]float64, len(e))
		for i, x := range e {
			out[i] = math.Pow(2, x)
		}
		return out
	}
	cases := []struct {
		heads   int
		maxBias float64
		want    []float64
	}{
		{8, 8, p(-1, -2, -3, -4, -5, -6, -7, -8)},
		{4, 8, p(-2, -4, -6, -8)},
		{12, 8, p(-1, -2, -3, -4, -5, -6, -7, -8, -0.5, -1.5, -2.5, -3.5)},
		{6, 8, p(-2, -4, -6, -8, -1, -3)},
		{4, 16, p(-4, -8, -12, -16)},
		{3, 8, p(-4, -8, -2)},
	}
	for _, c := range cases {
		got := alibiSlopes(c.heads, c.maxBias)
		for h := range c.want {
			if math.Abs(float64(got[h])-c.want[h]) > 1e-7*c.want[h] {
				t.Errorf("heads=%d max_bias=%g: slope %d = %v, want %v", c.heads, c.maxBias, h, got[h], c.want[h])
			}
		}
	}
}

// TestMoE checks the mixture against the routing written out: router
// probabilities by softmax over all experts or a sigmoid each, the two
// most probable experts, their probabilities rescaled to sum to 1 (norm)
// or kept as they are.
func TestMoE(t *testing.T) {
	reg := ops.Builtins()
	r := rand.New(rand.NewPCG(11, 12))
	const hidden, ffn, experts, topK = 4, 6, 3, 2
	x := randVec(r, hidden)
	router := randVec(r, experts*hidden)
	gate, up, down := randVec(r, experts*ffn*hidden), randVec(r, experts*ffn*hidden), randVec(r, experts*hidden*ffn)
	logit := make([]float64, experts)
	for e := range logit {
		for i := 0; i < hidden; i++ {
			logit[e] += float64(router[e*hidden+i]) * float64(x[i])
		}
	}
	// the two largest
	e1, e2 := 0, 1
	if logit[e2] > logit[e1] {
		e1, e2 = e2, e1
	}
	for e := 2; e < experts; e++ {
		if logit[e] > logit[e1] {
			e1, e2 = e, e1
		} else if logit[e] > logit[e2] {
			e2 = e
		}
	}
	var z float64
	for _, l := range logit {
		z += math.Exp(l)
	}
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	for _, tc := range []struct {
		gating string
		norm   bool
		w1, w2 float64
	}{
		{"softmax", true, math.Exp(logit[e1]) / (math.Exp(logit[e1]) + math.Exp(logit[e2])), math.Exp(logit[e2]) / (math.Exp(logit[e1]) + math.Exp(logit[e2]))},
		{"softmax", false, math.Exp(logit[e1]) / z, math.Exp(logit[e2]) / z},
		{"sigmoid", false, sig(logit[e1]), sig(logit[e2])},
		{"sigmoid", true, sig(logit[e1]) / (sig(logit[e1]) + sig(logit[e2])), sig(logit[e2]) / (sig(logit[e1]) + sig(logit[e2]))},
	} {
		out := tensor.NewF32("out", 1, hidden)
		run(t, reg, "moe", nil, ops.Attrs{"top_k": int64(topK), "gating": tc.gating, "norm": tc.norm}, []*tensor.Tensor{out}, act2("x", 1, hidden, x),
			tensor.FromF32("router", router, experts, hidden), tensor.FromF32("gate", gate, experts, ffn, hidden),
			tensor.FromF32("up", up, experts, ffn, hidden), tensor.FromF32("down", down, experts, hidden, ffn))
		want := make([]float32, hidden)
		for _, c := range []struct {
			e int
			w float64
		}{{e1, tc.w1}, {e2, tc.w2}} {
			h := make([]float64, ffn)
			for f := 0; f < ffn; f++ {
				var g, u float64
				for i := 0; i < hidden; i++ {
					g += float64(gate[(c.e*ffn+f)*hidden+i]) * float64(x[i])
					u += float64(up[(c.e*ffn+f)*hidden+i]) * float64(x[i])
				}
				h[f] = g / (1 + math.Exp(-g)) * u
			}
			for o := 0; o < hidden; o++ {
				var s float64
				for f := 0; f < ffn; f++ {
					s += float64(down[(c.e*hidden+o)*ffn+f]) * h[f]
				}
				want[o] += float32(c.w * s)
			}
		}
		near(t, fmt.Sprintf("moe gating=%s norm=%v", tc.gating, tc.norm), out.F32(), want, 1e-4)
	}
}

// TestSigmoidGate: out[t] = x[t] · σ(h[t] · w), written out.
func TestSigmoidGate(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	const rows, d, hd = 3, 5, 4
	x, h, w := randVec(r, rows*d), randVec(r, rows*hd), randVec(r, hd)
	out := tensor.NewF32("out", rows, d)
	run(t, ops.Builtins(), "sigmoid_gate", nil, nil, []*tensor.Tensor{out}, act2("x", rows, d, x), act2("h", rows, hd, h), tensor.FromF32("w", w, hd))
	want := make([]float32, rows*d)
	for row := 0; row < rows; row++ {
		var z float64
		for j := 0; j < hd; j++ {
			z += float64(h[row*hd+j]) * float64(w[j])
		}
		for j := 0; j < d; j++ {
			want[row*d+j] = float32(float64(x[row*d+j]) / (1 + math.Exp(-z)))
		}
	}
	near(t, "sigmoid_gate", out.F32(), want, 1e-6)
}
