package ops

import (
	"fmt"
	"math"

	"github.com/weftrun/weft/tensor"
)

// Builtins returns a registry holding weft's built-in ops.
func Builtins() *Registry {
	r := NewRegistry()
	for _, d := range append(append(append(builtinDefs(), fusedDefs()...), placementDefs()...), encDecDefs()...) {
		if err := r.Register(d); err != nil {
			panic(err) // a programming error in the table below
		}
	}
	return r
}

func x1(name string) []Port { return []Port{{Name: name}} }

var outPort = []Port{{Name: "out"}}

func builtinDefs() []*Def {
	unary := func(name, doc string) *Def {
		return &Def{Name: name, Doc: doc, Inputs: x1("x"), Outputs: outPort, RowWise: true, Shape: sameAsFirst}
	}
	return []*Def{
		{Name: "embedding", Doc: "Looks up rows of a table: out[t] = table[ids[t]].",
			Inputs: []Port{{Name: "table", Weight: true}, {Name: "ids"}}, Outputs: outPort,
			Shape: shapeEmbedding},
		{Name: "linear", Doc: "Affine map out = x·Wᵀ (+ b); W is [out, in] in any supported weight type.",
			Inputs: []Port{{Name: "x"}, {Name: "w", Weight: true}, {Name: "b", Weight: true, Optional: true},
				{Name: "residual", Optional: true, Doc: "added to the result (a fused residual epilogue)"}}, Outputs: outPort,
			RowWise: true, Shape: shapeLinear},
		{Name: "rms_norm", Doc: "RMSNorm: x / sqrt(mean(x²) + eps) ⊙ w.",
			Inputs: []Port{{Name: "x"}, {Name: "w", Weight: true, Optional: true}}, Outputs: outPort, RowWise: true,
			Attrs: []AttrDef{{Name: "eps", Type: AttrFloat, Default: 1e-5, Doc: "added to the mean square"}, normGroups},
			Shape: shapeNorm},
		{Name: "layer_norm", Doc: "LayerNorm: (x - mean) / sqrt(var + eps) ⊙ w + b.",
			Inputs: []Port{{Name: "x"}, {Name: "w", Weight: true, Optional: true}, {Name: "b", Weight: true, Optional: true}}, Outputs: outPort, RowWise: true,
			Attrs: []AttrDef{{Name: "eps", Type: AttrFloat, Default: 1e-5, Doc: "added to the variance"}, normGroups},
			Shape: shapeNorm},
		{Name: "rope", Doc: "Rotary position embedding applied per head at each token's position.",
			Inputs: []Port{{Name: "x"}, {Name: "pos"}, {Name: "factors", Weight: true, Optional: true, Doc: "per-pair frequency divisors, f32[dim/2] (Llama 3.1's rope_freqs)"}}, Outputs: outPort,
			Attrs: []AttrDef{
				{Name: "heads", Type: AttrInt, Required: true, Doc: "heads packed in the row"},
				{Name: "dim", Type: AttrInt, Default: int64(0), Doc: "rotated features per head (0: the whole head)"},
				{Name: "base", Type: AttrFloat, Default: 10000.0, Doc: "frequency base θ"},
				{Name: "pairing", Type: AttrString, Default: "adjacent", Enum: []string{"adjacent", "rotate_half"},
					Doc: "adjacent pairs (x[2j], x[2j+1]): llama.cpp's NORM rope (llama, mistral, mixtral GGUFs, llama2.c); or (x[j], x[j+d/2]): HF's rotate-half, kept by every HF checkpoint and by the GGUFs of NEOX-rope architectures (qwen2, phi2/3, falcon, gemma, gptneox, stablelm...)"},
				{Name: "freq_scale", Type: AttrFloat, Default: 1.0, Doc: "multiplies every angle: 1/factor for linear scaling and YaRN"},
				{Name: "ext_factor", Type: AttrFloat, Default: 0.0, Doc: "YaRN's ramp back to the unscaled angle for high frequencies (0: off, 1: YaRN)"},
				{Name: "attn_factor", Type: AttrFloat, Default: 1.0, Doc: "scales cos and sin (YaRN multiplies in 1 + 0.1 ln(1/freq_scale) when ext_factor ≠ 0)"},
				{Name: "beta_fast", Type: AttrFloat, Default: 32.0, Doc: "YaRN: rotations over orig_ctx where the ramp starts"},
				{Name: "beta_slow", Type: AttrFloat, Default: 1.0, Doc: "YaRN: rotations over orig_ctx where the ramp ends"},
				{Name: "orig_ctx", Type: AttrInt, Default: int64(0), Doc: "YaRN and Llama 3: the context the model was trained on"},
				{Name: "llama3_factor", Type: AttrFloat, Default: 0.0, Doc: "Llama 3.1's scaling when no factors input is given (0: off): pairs whose wavelength exceeds orig_ctx/low_freq_factor turn llama3_factor times slower, those under orig_ctx/high_freq_factor keep their speed, smoothly between"},
				{Name: "low_freq_factor", Type: AttrFloat, Default: 1.0, Doc: "Llama 3.1: orig_ctx/low_freq_factor is the wavelength past which a pair is fully scaled"},
				{Name: "high_freq_factor", Type: AttrFloat, Default: 4.0, Doc: "Llama 3.1: orig_ctx/high_freq_factor is the wavelength under which a pair is not scaled"},
			},
			Shape: shapeRoPE},
		{Name: "attention", Doc: "Scaled dot-product attention with grouped KV heads; appends k/v to the KV cache and attends over each token's sequence.",
			Inputs: []Port{{Name: "q"}, {Name: "k"}, {Name: "v"}, {Name: "rel_bias", Weight: true, Optional: true,
				Doc: "T5's learned relative-position bias, [buckets, heads] (f32, f16 or bf16): added to each score at the bucket of the key's distance from the query (bidirectional buckets when causal=false, causal ones otherwise; see max_distance)"}}, Outputs: outPort, Stateful: true,
			Attrs: attentionAttrs,
			Shape: shapeAttention},
		unary("silu", "SiLU (swish): x·σ(x)."),
		unary("gelu", "GELU, exact (erf) form."),
		unary("gelu_tanh", "GELU, tanh approximation."),
		unary("relu", "ReLU: max(0, x)."),
		unary("softmax", "Softmax over the last dimension."),
		{Name: "add", Doc: "Element-wise sum; b may be a vector added to every row.",
			Inputs: []Port{{Name: "a"}, {Name: "b"}}, Outputs: outPort, RowWise: true,
			Shape: shapeBinary},
		{Name: "mul", Doc: "Element-wise product; b may be a vector multiplied into every row.",
			Inputs: []Port{{Name: "a"}, {Name: "b"}}, Outputs: outPort, RowWise: true,
			Shape: shapeBinary},
		{Name: "swiglu", Doc: "Gated activation silu(gate) ⊙ up.",
			Inputs: []Port{{Name: "gate"}, {Name: "up"}}, Outputs: outPort, RowWise: true,
			Shape: shapeSame2},
		{Name: "geglu", Doc: "Gated activation gelu(gate) ⊙ up.",
			Inputs: []Port{{Name: "gate"}, {Name: "up"}}, Outputs: outPort, RowWise: true,
			Attrs: []AttrDef{{Name: "gelu", Type: AttrString, Default: "erf", Enum: []string{"erf", "tanh"}, Doc: "GELU form: exact (erf) or the tanh approximation (gemma's gelu_pytorch_tanh)"}},
			Shape: shapeSame2},
		{Name: "softcap", Doc: "Soft-capping: out = cap · tanh(x / cap) (Gemma 2's final logits).",
			Inputs: x1("x"), Outputs: outPort, RowWise: true,
			Attrs: []AttrDef{{Name: "cap", Type: AttrFloat, Required: true, Doc: "the bound approached by large values"}},
			Shape: shapeSoftCap},
		{Name: "clamp", Doc: "Limits every element to [-limit, limit] (MPT's clamp_kqv; 0: no limit).",
			Inputs: x1("x"), Outputs: outPort, RowWise: true,
			Attrs: []AttrDef{{Name: "limit", Type: AttrFloat, Required: true, Doc: "the bound; 0 leaves x unchanged"}},
			Shape: shapeClamp},
		{Name: "scale", Doc: "Multiplies every element by a constant: out = x · by (e.g. gemma's embedding scale √hidden).",
			Inputs: x1("x"), Outputs: outPort, RowWise: true,
			Attrs: []AttrDef{{Name: "by", Type: AttrFloat, Required: true, Doc: "the constant factor"}},
			Shape: shapeScale},
		{Name: "split", Doc: "Splits the last dimension into pieces of the given sizes (e.g. a fused QKV projection).",
			Inputs: x1("x"), RowWise: true,
			Attrs: []AttrDef{{Name: "sizes", Type: AttrInts, Required: true, Doc: "piece sizes, summing to the last dimension"}},
			Shape: shapeSplit},
		{Name: "take", Doc: "Row index of a weight table as a vector (e.g. BERT's token-type 0 embedding).",
			Inputs: []Port{{Name: "table", Weight: true}}, Outputs: outPort,
			Attrs: []AttrDef{{Name: "index", Type: AttrInt, Default: int64(0), Doc: "row to take"}},
			Shape: shapeTake},
		{Name: "sinusoidal", Doc: "Fixed sinusoidal position encoding (Vaswani et al.): sin on even, cos on odd features.",
			Inputs: x1("pos"), Outputs: outPort,
			Attrs: []AttrDef{{Name: "dim", Type: AttrInt, Required: true, Doc: "features"},
				{Name: "base", Type: AttrFloat, Default: 10000.0, Doc: "wavelength base"}},
			Shape: shapeSinusoidal},
		{Name: "moe", Doc: "Mixture of experts: a router picks top_k experts per token; each is a gated FFN; outputs are summed with softmax weights over the chosen experts.",
			Inputs: []Port{{Name: "x"}, {Name: "router", Weight: true}, {Name: "gate", Weight: true},
				{Name: "up", Weight: true}, {Name: "down", Weight: true}}, Outputs: outPort, RowWise: true,
			Attrs: []AttrDef{{Name: "top_k", Type: AttrInt, Default: int64(2), Doc: "experts per token"},
				{Name: "act", Type: AttrString, Default: "silu", Enum: []string{"silu", "gelu", "gelu_tanh", "relu"}, Doc: "gate activation"},
				{Name: "gating", Type: AttrString, Default: "softmax", Enum: []string{"softmax", "sigmoid"}, Doc: "router probabilities: softmax over all experts, or a sigmoid per expert"},
				{Name: "norm", Type: AttrBool, Default: true, Doc: "rescale the chosen experts' probabilities to sum to 1 (Mixtral); false keeps them (Qwen2-MoE)"}},
			Shape: shapeMoE},
		{Name: "sigmoid_gate", Doc: "Scales each row of x by a learned scalar gate: out[t] = x[t] · σ(h[t] · w) (Qwen2-MoE's shared expert).",
			Inputs: []Port{{Name: "x"}, {Name: "h"}, {Name: "w", Weight: true}}, Outputs: outPort, RowWise: true,
			Shape: shapeSigmoidGate},
		{Name: "gather_rows", Doc: "Keeps the rows whose outputs the step wants (inserted by the output-pruning pass).",
			Inputs: x1("x"), Outputs: outPort,
			Shape: shapeGather},
	}
}

// normGroups makes a norm per head: each row is cut into groups equal
// slices, each normalised on its own (QK-norm per head).
var normGroups = AttrDef{Name: "groups", Type: AttrInt, Default: int64(1),
	Doc: "normalise each of this many equal slices of a row on its own (per-head QK-norm); the weight is [features], [groups, features/groups] or one [features/groups] slice shared by every group"}

var attentionAttrs = []AttrDef{
	{Name: "heads", Type: AttrInt, Required: true, Doc: "query heads"},
	{Name: "kv_heads", Type: AttrInt, Default: int64(0), Doc: "key/value heads (0: heads); fewer means GQA/MQA"},
	{Name: "causal", Type: AttrBool, Default: true, Doc: "attend only to earlier positions"},
	{Name: "scale", Type: AttrFloat, Default: 0.0, Doc: "score scale (0: 1/sqrt(head_dim))"},
	{Name: "alibi", Type: AttrBool, Default: false, Doc: "add ALiBi linear position biases"},
	{Name: "max_bias", Type: AttrFloat, Default: 8.0, Doc: "ALiBi's largest slope exponent: head h of n (n rounded down to a power of two p) has slope 2^(-max_bias·(h+1)/p), the rest interleave at 2^(-max_bias·(2(h-p)+1)/(2p))"},
	{Name: "sinks", Type: AttrInt, Default: int64(0), Doc: "StreamingLLM attention-sink positions kept with window"},
	{Name: "window", Type: AttrInt, Default: int64(0), Doc: "sliding-window size (0: unlimited)"},
	{Name: "softcap", Type: AttrFloat, Default: 0.0, Doc: "soft-cap the scaled scores: s → softcap·tanh(s/softcap) (Gemma 2; 0: off)"},
	{Name: "max_distance", Type: AttrInt, Default: int64(128), Doc: "with rel_bias: the distance from which every key shares the last bucket (T5: 128); nearer distances past the exact buckets are bucketed on a log scale"},
}

// ---- shape functions ----

func need(in []*Type, i int, what string) (*Type, error) {
	if i >= len(in) || in[i] == nil {
		return nil, fmt.Errorf("missing input %s", what)
	}
	return in[i], nil
}

func act(t *Type, what string) error {
	if t.DType != tensor.F32 {
		return fmt.Errorf("%s: activations must be f32, got %s", what, t.DType)
	}
	if len(t.Shape) != 2 {
		return fmt.Errorf("%s: want a [tokens, features] activation, got %s", what, t.Shape)
	}
	return nil
}

func sameAsFirst(in []*Type, _ Attrs) ([]Type, error) {
	x, err := need(in, 0, "x")
	if err != nil {
		return nil, err
	}
	if err := act(x, "x"); err != nil {
		return nil, err
	}
	return []Type{*x}, nil
}

func shapeEmbedding(in []*Type, _ Attrs) ([]Type, error) {
	t, err := need(in, 0, "table")
	if err != nil {
		return nil, err
	}
	ids, err := need(in, 1, "ids")
	if err != nil {
		return nil, err
	}
	if len(t.Shape) != 2 {
		return nil, fmt.Errorf("table: want [rows, features], got %s", t.Shape)
	}
	if ids.DType != tensor.I32 || len(ids.Shape) != 1 {
		return nil, fmt.Errorf("ids: want i32 [T], got %s", ids)
	}
	return []Type{{tensor.F32, Shape{ids.Shape[0], t.Shape[1]}}}, nil
}

func shapeLinear(in []*Type, _ Attrs) ([]Type, error) {
	x, err := need(in, 0, "x")
	if err != nil {
		return nil, err
	}
	w, err := need(in, 1, "w")
	if err != nil {
		return nil, err
	}
	if err := act(x, "x"); err != nil {
		return nil, err
	}
	if len(w.Shape) != 2 {
		return nil, fmt.Errorf("w: want [out, in], got %s", w.Shape)
	}
	if w.Shape[1] != x.Shape[1] {
		return nil, fmt.Errorf("w is %s but x has %s features", w.Shape, x.Shape[1])
	}
	if len(in) > 2 && in[2] != nil {
		if b := in[2]; len(b.Shape) != 1 || b.Shape[0] != w.Shape[0] || b.DType != tensor.F32 {
			return nil, fmt.Errorf("bias is %s, want f32[%s]", b, w.Shape[0])
		}
	}
	out := Type{tensor.F32, Shape{x.Shape[0], w.Shape[0]}}
	if len(in) > 3 && in[3] != nil && !in[3].Shape.Equal(out.Shape) {
		return nil, fmt.Errorf("residual is %s, result is %s", in[3].Shape, out.Shape)
	}
	return []Type{out}, nil
}

func shapeNorm(in []*Type, a Attrs) ([]Type, error) {
	x, err := need(in, 0, "x")
	if err != nil {
		return nil, err
	}
	if eps := a.Float("eps"); !(eps > 0) || math.IsInf(eps, 0) {
		return nil, fmt.Errorf("eps=%g must be a positive number", eps)
	}
	if err := act(x, "x"); err != nil {
		return nil, err
	}
	f := x.Shape.Last()
	g := a.Int("groups")
	if g < 1 || f%g != 0 {
		return nil, fmt.Errorf("groups=%d does not divide the %d features", g, f)
	}
	for i := 1; i < len(in); i++ {
		w := in[i]
		if w == nil {
			continue
		}
		ok := w.DType == tensor.F32 && (len(w.Shape) == 1 && (w.Shape[0].N == f || w.Shape[0].N == f/g) ||
			len(w.Shape) == 2 && w.Shape[0].N == g && w.Shape[1].N == f/g)
		if !ok {
			if g == 1 {
				return nil, fmt.Errorf("norm weight %d is %s, want f32[%s]", i, w, x.Shape[1])
			}
			return nil, fmt.Errorf("norm weight %d is %s, want f32[%d], f32[%d %d] or f32[%d]", i, w, f, g, f/g, f/g)
		}
	}
	return []Type{*x}, nil
}

// positions checks that t is a per-token i32 position vector.
func positions(t *Type) error {
	if t.DType != tensor.I32 || len(t.Shape) != 1 || t.Shape[0].Sym == "" {
		return fmt.Errorf("pos must be the i32 [T] token positions, got %s", t)
	}
	return nil
}

func shapeScale(in []*Type, a Attrs) ([]Type, error) {
	if by := a.Float("by"); math.IsNaN(by) || math.IsInf(by, 0) {
		return nil, fmt.Errorf("by=%g must be a finite number", by)
	}
	return sameAsFirst(in, a)
}

func shapeSoftCap(in []*Type, a Attrs) ([]Type, error) {
	if c := a.Float("cap"); !(c > 0) || math.IsInf(c, 0) {
		return nil, fmt.Errorf("cap=%g must be a positive number", c)
	}
	return sameAsFirst(in, a)
}

func shapeClamp(in []*Type, a Attrs) ([]Type, error) {
	if l := a.Float("limit"); !(l >= 0) || math.IsInf(l, 0) {
		return nil, fmt.Errorf("limit=%g must be a finite number ≥ 0", l)
	}
	return sameAsFirst(in, a)
}

func shapeRoPE(in []*Type, a Attrs) ([]Type, error) {
	x, err := need(in, 0, "x")
	if err != nil {
		return nil, err
	}
	p, err := need(in, 1, "pos")
	if err != nil {
		return nil, err
	}
	if err := positions(p); err != nil {
		return nil, err
	}
	if err := act(x, "x"); err != nil {
		return nil, err
	}
	h := a.Int("heads")
	if h <= 0 || x.Shape.Last()%h != 0 {
		return nil, fmt.Errorf("heads=%d does not divide the %d features", h, x.Shape.Last())
	}
	hd := x.Shape.Last() / h
	d := a.Int("dim")
	if d < 0 || d > hd || d%2 != 0 {
		return nil, fmt.Errorf("dim=%d must be even and at most the head size %d", d, hd)
	}
	if d == 0 {
		d = hd
	}
	if len(in) > 2 && in[2] != nil {
		if f := in[2]; f.DType != tensor.F32 || len(f.Shape) != 1 || f.Shape[0].N != d/2 {
			return nil, fmt.Errorf("factors is %s, want f32[%d] (one per rotated pair)", f, d/2)
		}
	}
	if fs := a.Float("freq_scale"); !(fs > 0) || math.IsInf(fs, 0) {
		return nil, fmt.Errorf("freq_scale=%g must be a positive number", fs)
	}
	if f := a.Float("llama3_factor"); f != 0 {
		if !(f > 0) || math.IsInf(f, 0) || a.Int("orig_ctx") <= 0 || !(a.Float("high_freq_factor") > a.Float("low_freq_factor")) || !(a.Float("low_freq_factor") > 0) {
			return nil, fmt.Errorf("llama3_factor=%g needs a positive factor, orig_ctx > 0 (%d) and 0 < low_freq_factor (%g) < high_freq_factor (%g)",
				f, a.Int("orig_ctx"), a.Float("low_freq_factor"), a.Float("high_freq_factor"))
		}
	}
	if a.Float("ext_factor") != 0 && a.Int("orig_ctx") <= 0 {
		return nil, fmt.Errorf("YaRN (ext_factor=%g) needs orig_ctx, the trained context", a.Float("ext_factor"))
	}
	return []Type{*x}, nil
}

func shapeAttention(in []*Type, a Attrs) ([]Type, error) {
	q, err := need(in, 0, "q")
	if err != nil {
		return nil, err
	}
	k, err := need(in, 1, "k")
	if err != nil {
		return nil, err
	}
	v, err := need(in, 2, "v")
	if err != nil {
		return nil, err
	}
	for _, t := range []*Type{q, k, v} {
		if err := act(t, "q/k/v"); err != nil {
			return nil, err
		}
	}
	h, kvh := a.Int("heads"), KVHeads(a)
	if c := a.Float("softcap"); !(c >= 0) || math.IsInf(c, 0) {
		return nil, fmt.Errorf("softcap=%g must be a finite number ≥ 0", c)
	}
	if h <= 0 || q.Shape.Last()%h != 0 {
		return nil, fmt.Errorf("heads=%d does not divide q's %d features", h, q.Shape.Last())
	}
	hd := q.Shape.Last() / h
	if h%kvh != 0 {
		return nil, fmt.Errorf("heads=%d is not a multiple of kv_heads=%d", h, kvh)
	}
	if k.Shape.Last() != kvh*hd || v.Shape.Last() != kvh*hd {
		return nil, fmt.Errorf("k %s and v %s must have kv_heads×head_dim = %d×%d features", k.Shape, v.Shape, kvh, hd)
	}
	if len(in) > 3 && in[3] != nil {
		if err := checkRelBias(in[3], a, h); err != nil {
			return nil, err
		}
	}
	return []Type{*q}, nil
}

func shapeBinary(in []*Type, _ Attrs) ([]Type, error) {
	a, err := need(in, 0, "a")
	if err != nil {
		return nil, err
	}
	b, err := need(in, 1, "b")
	if err != nil {
		return nil, err
	}
	if err := act(a, "a"); err != nil {
		return nil, err
	}
	if len(b.Shape) == 1 && b.Shape[0] == a.Shape[1] {
		if b.DType != tensor.F32 {
			return nil, fmt.Errorf("b is %s; a broadcast vector must be f32", b)
		}
		return []Type{*a}, nil
	}
	if !a.Shape.Equal(b.Shape) || b.DType != tensor.F32 {
		return nil, fmt.Errorf("shapes %s and %s differ", a.Shape, b.Shape)
	}
	return []Type{*a}, nil
}

func shapeSame2(in []*Type, _ Attrs) ([]Type, error) {
	a, err := need(in, 0, "gate")
	if err != nil {
		return nil, err
	}
	b, err := need(in, 1, "up")
	if err != nil {
		return nil, err
	}
	if err := act(a, "gate"); err != nil {
		return nil, err
	}
	if !a.Shape.Equal(b.Shape) {
		return nil, fmt.Errorf("shapes %s and %s differ", a.Shape, b.Shape)
	}
	return []Type{*a}, nil
}

func shapeSplit(in []*Type, a Attrs) ([]Type, error) {
	x, err := need(in, 0, "x")
	if err != nil {
		return nil, err
	}
	if err := act(x, "x"); err != nil {
		return nil, err
	}
	sizes := a.Ints("sizes")
	sum := 0
	out := make([]Type, len(sizes))
	for i, s := range sizes {
		if s <= 0 || s > x.Shape.Last() {
			return nil, fmt.Errorf("sizes[%d] = %d is not within the %d features", i, s, x.Shape.Last())
		}
		sum += s
		out[i] = Type{tensor.F32, Shape{x.Shape[0], D(s)}}
	}
	if sum != x.Shape.Last() {
		return nil, fmt.Errorf("sizes sum to %d, x has %d features", sum, x.Shape.Last())
	}
	return out, nil
}

func shapeTake(in []*Type, a Attrs) ([]Type, error) {
	t, err := need(in, 0, "table")
	if err != nil {
		return nil, err
	}
	if len(t.Shape) != 2 {
		return nil, fmt.Errorf("table: want [rows, features], got %s", t.Shape)
	}
	if i := a.Int("index"); i < 0 || i >= t.Shape[0].N {
		return nil, fmt.Errorf("index %d out of range [0, %d)", i, t.Shape[0].N)
	}
	return []Type{{tensor.F32, Shape{t.Shape[1]}}}, nil
}

func shapeSinusoidal(in []*Type, a Attrs) ([]Type, error) {
	p, err := need(in, 0, "pos")
	if err != nil {
		return nil, err
	}
	if err := positions(p); err != nil {
		return nil, err
	}
	d := a.Int("dim")
	if d <= 0 || d%2 != 0 || d > 1<<20 {
		return nil, fmt.Errorf("dim=%d must be positive and even", d)
	}
	return []Type{{tensor.F32, Shape{p.Shape[0], D(d)}}}, nil
}

func shapeMoE(in []*Type, a Attrs) ([]Type, error) {
	x, err := need(in, 0, "x")
	if err != nil {
		return nil, err
	}
	if err := act(x, "x"); err != nil {
		return nil, err
	}
	r, _ := need(in, 1, "router")
	g, _ := need(in, 2, "gate")
	u, _ := need(in, 3, "up")
	d, _ := need(in, 4, "down")
	if r == nil || g == nil || u == nil || d == nil {
		return nil, fmt.Errorf("moe needs router, gate, up and down weights")
	}
	hidden := x.Shape.Last()
	if len(r.Shape) != 2 || r.Shape[1].N != hidden {
		return nil, fmt.Errorf("router is %s, want [experts, %d]", r.Shape, hidden)
	}
	e := r.Shape[0].N
	if len(g.Shape) != 3 || g.Shape[0].N != e || g.Shape[2].N != hidden || !g.Shape.Equal(u.Shape) {
		return nil, fmt.Errorf("gate %s / up %s: want [%d, ffn, %d]", g.Shape, u.Shape, e, hidden)
	}
	if len(d.Shape) != 3 || d.Shape[0].N != e || d.Shape[1].N != hidden || d.Shape[2] != g.Shape[1] {
		return nil, fmt.Errorf("down is %s, want [%d, %d, %s]", d.Shape, e, hidden, g.Shape[1])
	}
	if k := a.Int("top_k"); k < 1 || k > e {
		return nil, fmt.Errorf("top_k=%d must be in [1, %d]", k, e)
	}
	return []Type{*x}, nil
}

func shapeSigmoidGate(in []*Type, _ Attrs) ([]Type, error) {
	x, err := need(in, 0, "x")
	if err != nil {
		return nil, err
	}
	h, err := need(in, 1, "h")
	if err != nil {
		return nil, err
	}
	w, err := need(in, 2, "w")
	if err != nil {
		return nil, err
	}
	if err := act(x, "x"); err != nil {
		return nil, err
	}
	if err := act(h, "h"); err != nil {
		return nil, err
	}
	if x.Shape[0] != h.Shape[0] {
		return nil, fmt.Errorf("x has %s rows, h %s", x.Shape[0], h.Shape[0])
	}
	if w.DType != tensor.F32 || len(w.Shape) != 1 || w.Shape[0] != h.Shape[1] {
		return nil, fmt.Errorf("w is %s, want f32[%s]", w, h.Shape[1])
	}
	return []Type{*x}, nil
}

func shapeGather(in []*Type, _ Attrs) ([]Type, error) {
	x, err := need(in, 0, "x")
	if err != nil {
		return nil, err
	}
	if err := act(x, "x"); err != nil {
		return nil, err
	}
	if x.Shape[0] != Tokens {
		return nil, fmt.Errorf("x must have one row per token ([T ...]), got %s", x.Shape)
	}
	return []Type{{tensor.F32, Shape{Dim{Sym: "K"}, x.Shape[1]}}}, nil
}
