package ops

import (
	"fmt"
	"math"
	"sync"

	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/tensor"
)

// Builtins returns a registry holding weft's built-in ops.
func Builtins() *Registry {
	r := NewRegistry()
	for _, d := range append(builtinDefs(), fusedDefs()...) {
		if err := r.Register(d); err != nil {
			panic(err) // a programming error in the table below
		}
	}
	return r
}

func x1(name string) []Port { return []Port{{Name: name}} }

var outPort = []Port{{Name: "out"}}

func builtinDefs() []*Def {
	unary := func(name, doc string, f func([]float32)) *Def {
		return &Def{Name: name, Doc: doc, Inputs: x1("x"), Outputs: outPort, RowWise: true,
			Shape:   sameAsFirst,
			Kernels: map[string]Kernel{CPU: unaryKernel(f)}}
	}
	return []*Def{
		{Name: "embedding", Doc: "Looks up rows of a table: out[t] = table[ids[t]].",
			Inputs: []Port{{Name: "table", Weight: true}, {Name: "ids"}}, Outputs: outPort,
			Shape: shapeEmbedding, Kernels: map[string]Kernel{CPU: kEmbedding}},
		{Name: "linear", Doc: "Affine map out = x·Wᵀ (+ b); W is [out, in] in any supported weight type.",
			Inputs: []Port{{Name: "x"}, {Name: "w", Weight: true}, {Name: "b", Weight: true, Optional: true},
				{Name: "residual", Optional: true, Doc: "added to the result (a fused residual epilogue)"}}, Outputs: outPort,
			RowWise: true, Shape: shapeLinear, Kernels: map[string]Kernel{CPU: kLinear}},
		{Name: "rms_norm", Doc: "RMSNorm: x / sqrt(mean(x²) + eps) ⊙ w.",
			Inputs: []Port{{Name: "x"}, {Name: "w", Weight: true, Optional: true}}, Outputs: outPort, RowWise: true,
			Attrs: []AttrDef{{Name: "eps", Type: AttrFloat, Default: 1e-5, Doc: "added to the mean square"}},
			Shape: shapeNorm, Kernels: map[string]Kernel{CPU: kRMSNorm}},
		{Name: "layer_norm", Doc: "LayerNorm: (x - mean) / sqrt(var + eps) ⊙ w + b.",
			Inputs: []Port{{Name: "x"}, {Name: "w", Weight: true, Optional: true}, {Name: "b", Weight: true, Optional: true}}, Outputs: outPort, RowWise: true,
			Attrs: []AttrDef{{Name: "eps", Type: AttrFloat, Default: 1e-5, Doc: "added to the variance"}},
			Shape: shapeNorm, Kernels: map[string]Kernel{CPU: kLayerNorm}},
		{Name: "rope", Doc: "Rotary position embedding applied per head at each token's position.",
			Inputs: []Port{{Name: "x"}, {Name: "pos"}}, Outputs: outPort,
			Attrs: []AttrDef{
				{Name: "heads", Type: AttrInt, Required: true, Doc: "heads packed in the row"},
				{Name: "dim", Type: AttrInt, Default: int64(0), Doc: "rotated features per head (0: the whole head)"},
				{Name: "base", Type: AttrFloat, Default: 10000.0, Doc: "frequency base θ"},
				{Name: "pairing", Type: AttrString, Default: "adjacent", Enum: []string{"adjacent", "rotate_half"},
					Doc: "adjacent pairs (x[2j], x[2j+1]) as in GGUF/llama2.c, or (x[j], x[j+d/2]) as in HF"},
			},
			Shape: shapeRoPE, Kernels: map[string]Kernel{CPU: kRoPE}},
		{Name: "attention", Doc: "Scaled dot-product attention with grouped KV heads; appends k/v to the KV cache and attends over each token's sequence.",
			Inputs: []Port{{Name: "q"}, {Name: "k"}, {Name: "v"}}, Outputs: outPort, Stateful: true,
			Attrs: attentionAttrs,
			Shape: shapeAttention, Kernels: map[string]Kernel{CPU: kAttention}},
		unary("silu", "SiLU (swish): x·σ(x).", cpu.SiLU),
		unary("gelu", "GELU, exact (erf) form.", cpu.GELU),
		unary("gelu_tanh", "GELU, tanh approximation.", cpu.GELUTanh),
		unary("relu", "ReLU: max(0, x).", cpu.ReLU),
		unary("softmax", "Softmax over the last dimension.", cpu.Softmax),
		{Name: "add", Doc: "Element-wise sum; b may be a vector added to every row.",
			Inputs: []Port{{Name: "a"}, {Name: "b"}}, Outputs: outPort, RowWise: true,
			Shape: shapeBinary, Kernels: map[string]Kernel{CPU: binaryKernel(cpu.Add)}},
		{Name: "mul", Doc: "Element-wise product; b may be a vector multiplied into every row.",
			Inputs: []Port{{Name: "a"}, {Name: "b"}}, Outputs: outPort, RowWise: true,
			Shape: shapeBinary, Kernels: map[string]Kernel{CPU: binaryKernel(cpu.Mul)}},
		{Name: "swiglu", Doc: "Gated activation silu(gate) ⊙ up.",
			Inputs: []Port{{Name: "gate"}, {Name: "up"}}, Outputs: outPort, RowWise: true,
			Shape: shapeSame2, Kernels: map[string]Kernel{CPU: binaryKernel(cpu.SwiGLU)}},
		{Name: "geglu", Doc: "Gated activation gelu(gate) ⊙ up.",
			Inputs: []Port{{Name: "gate"}, {Name: "up"}}, Outputs: outPort, RowWise: true,
			Shape: shapeSame2, Kernels: map[string]Kernel{CPU: binaryKernel(geglu)}},
		{Name: "split", Doc: "Splits the last dimension into pieces of the given sizes (e.g. a fused QKV projection).",
			Inputs: x1("x"), RowWise: true,
			Attrs: []AttrDef{{Name: "sizes", Type: AttrInts, Required: true, Doc: "piece sizes, summing to the last dimension"}},
			Shape: shapeSplit, Kernels: map[string]Kernel{CPU: kSplit}},
		{Name: "take", Doc: "Row index of a weight table as a vector (e.g. BERT's token-type 0 embedding).",
			Inputs: []Port{{Name: "table", Weight: true}}, Outputs: outPort,
			Attrs: []AttrDef{{Name: "index", Type: AttrInt, Default: int64(0), Doc: "row to take"}},
			Shape: shapeTake, Kernels: map[string]Kernel{CPU: kTake}},
		{Name: "sinusoidal", Doc: "Fixed sinusoidal position encoding (Vaswani et al.): sin on even, cos on odd features.",
			Inputs: x1("pos"), Outputs: outPort,
			Attrs: []AttrDef{{Name: "dim", Type: AttrInt, Required: true, Doc: "features"},
				{Name: "base", Type: AttrFloat, Default: 10000.0, Doc: "wavelength base"}},
			Shape: shapeSinusoidal, Kernels: map[string]Kernel{CPU: kSinusoidal}},
		{Name: "moe", Doc: "Mixture of experts: a router picks top_k experts per token; each is a gated FFN; outputs are summed with softmax weights over the chosen experts.",
			Inputs: []Port{{Name: "x"}, {Name: "router", Weight: true}, {Name: "gate", Weight: true},
				{Name: "up", Weight: true}, {Name: "down", Weight: true}}, Outputs: outPort, RowWise: true,
			Attrs: []AttrDef{{Name: "top_k", Type: AttrInt, Default: int64(2), Doc: "experts per token"},
				{Name: "act", Type: AttrString, Default: "silu", Enum: []string{"silu", "gelu", "gelu_tanh", "relu"}, Doc: "gate activation"}},
			Shape: shapeMoE, Kernels: map[string]Kernel{CPU: kMoE}},
		{Name: "gather_rows", Doc: "Keeps the rows whose outputs the step wants (inserted by the output-pruning pass).",
			Inputs: x1("x"), Outputs: outPort,
			Shape: shapeGather, Kernels: map[string]Kernel{CPU: kGather}},
	}
}

var attentionAttrs = []AttrDef{
	{Name: "heads", Type: AttrInt, Required: true, Doc: "query heads"},
	{Name: "kv_heads", Type: AttrInt, Default: int64(0), Doc: "key/value heads (0: heads); fewer means GQA/MQA"},
	{Name: "causal", Type: AttrBool, Default: true, Doc: "attend only to earlier positions"},
	{Name: "scale", Type: AttrFloat, Default: 0.0, Doc: "score scale (0: 1/sqrt(head_dim))"},
	{Name: "alibi", Type: AttrBool, Default: false, Doc: "add ALiBi linear position biases"},
	{Name: "sinks", Type: AttrInt, Default: int64(0), Doc: "StreamingLLM attention-sink positions kept with window"},
	{Name: "window", Type: AttrInt, Default: int64(0), Doc: "sliding-window size (0: unlimited)"},
}

// geglu writes dst = gelu(g) ⊙ u; dst must not alias u.
func geglu(dst, g, u []float32) {
	copy(dst, g)
	cpu.GELU(dst[:len(g)])
	cpu.Mul(dst, dst[:len(g)], u)
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

func shapeNorm(in []*Type, _ Attrs) ([]Type, error) {
	x, err := need(in, 0, "x")
	if err != nil {
		return nil, err
	}
	if err := act(x, "x"); err != nil {
		return nil, err
	}
	for i := 1; i < len(in); i++ {
		if in[i] == nil {
			continue
		}
		if len(in[i].Shape) != 1 || in[i].Shape[0] != x.Shape[1] || in[i].DType != tensor.F32 {
			return nil, fmt.Errorf("norm weight %d is %s, want f32[%s]", i, in[i], x.Shape[1])
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
	if d := a.Int("dim"); d < 0 || d > hd || d%2 != 0 {
		return nil, fmt.Errorf("dim=%d must be even and at most the head size %d", d, hd)
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
	h, kvh := a.Int("heads"), kvHeads(a)
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

// ---- CPU kernels ----

func f32(t *tensor.Tensor) []float32 { return tensor.BytesToF32(t.Data) }

func i32(t *tensor.Tensor) []int32 { return tensor.BytesToI32(t.Data) }

func unaryKernel(f func([]float32)) Kernel {
	return func(c *Call) error {
		x, out := f32(c.In[0]), f32(c.Out[0])
		cols := c.In[0].Shape[len(c.In[0].Shape)-1]
		n := Rows(c.In[0]) * cols
		copy(out[:n], x[:n])
		for r := 0; r < n; r += cols {
			f(out[r : r+cols])
		}
		return nil
	}
}

func binaryKernel(f func(dst, a, b []float32)) Kernel {
	return func(c *Call) error {
		a, b, out := f32(c.In[0]), f32(c.In[1]), f32(c.Out[0])
		cols := c.In[0].Shape[len(c.In[0].Shape)-1]
		n := Rows(c.In[0]) * cols
		if len(c.In[1].Shape) == 1 { // broadcast a vector over rows
			for r := 0; r < n; r += cols {
				f(out[r:r+cols], a[r:r+cols], b[:cols])
			}
			return nil
		}
		f(out[:n], a[:n], b[:n])
		return nil
	}
}

func kEmbedding(c *Call) error {
	m, err := cpu.MatrixOf(c.In[0])
	if err != nil {
		return err
	}
	ids, out := i32(c.In[1]), f32(c.Out[0])
	for t := 0; t < Rows(c.Out[0]); t++ {
		id := int(ids[t])
		if id < 0 || id >= m.Rows {
			return fmt.Errorf("token id %d out of range [0, %d)", id, m.Rows)
		}
		if err := cpu.DequantizeRow(out[t*m.Cols:(t+1)*m.Cols], m, id); err != nil {
			return err
		}
	}
	return nil
}

func kLinear(c *Call) error {
	w, err := cpu.MatrixOf(c.In[1])
	if err != nil {
		return err
	}
	n := Rows(c.In[0])
	out := f32(c.Out[0])
	if len(c.In) > 3 && c.In[3] != nil {
		copy(out[:n*w.Rows], f32(c.In[3])[:n*w.Rows])
		if err := cpu.MatMulAcc(c.Pool, out, w, f32(c.In[0]), n); err != nil {
			return err
		}
	} else if err := cpu.MatMul(c.Pool, out, w, f32(c.In[0]), n); err != nil {
		return err
	}
	if len(c.In) > 2 && c.In[2] != nil {
		b := f32(c.In[2])
		for t := 0; t < n; t++ {
			cpu.Add(out[t*w.Rows:(t+1)*w.Rows], out[t*w.Rows:(t+1)*w.Rows], b)
		}
	}
	return nil
}

func optF32(c *Call, i int) []float32 {
	if i < len(c.In) && c.In[i] != nil {
		return f32(c.In[i])
	}
	return nil
}

func kRMSNorm(c *Call) error {
	x, out, w := f32(c.In[0]), f32(c.Out[0]), optF32(c, 1)
	d := c.In[0].Shape[1]
	eps := float32(c.Attrs.Float("eps"))
	for t := 0; t < Rows(c.In[0]); t++ {
		cpu.RMSNorm(out[t*d:(t+1)*d], x[t*d:(t+1)*d], w, eps)
	}
	return nil
}

func kLayerNorm(c *Call) error {
	x, out, w, b := f32(c.In[0]), f32(c.Out[0]), optF32(c, 1), optF32(c, 2)
	d := c.In[0].Shape[1]
	eps := float32(c.Attrs.Float("eps"))
	for t := 0; t < Rows(c.In[0]); t++ {
		cpu.LayerNorm(out[t*d:(t+1)*d], x[t*d:(t+1)*d], w, b, eps)
	}
	return nil
}

// ropeSpec is RoPE's configuration decoded from attributes.
type ropeSpec struct {
	headDim, dim int
	base         float32
	pairing      int
}

// ropeOf decodes rope attributes (named dimKey and baseKey: "dim"/"base"
// on rope, "rope_dim"/"rope_base" on rope_attention) for heads of headDim.
func ropeOf(a Attrs, headDim int, dimKey, baseKey string) ropeSpec {
	r := ropeSpec{headDim: headDim, dim: a.Int(dimKey), base: float32(a.Float(baseKey)), pairing: cpu.RoPEAdjacent}
	if r.dim == 0 {
		r.dim = headDim
	}
	if a.String("pairing") == "rotate_half" {
		r.pairing = cpu.RoPERotateHalf
	}
	return r
}

// apply rotates the n rows of x (heads×headDim each) at their positions.
func (r ropeSpec) apply(x []float32, n, heads int, pos []int32) {
	d := heads * r.headDim
	for t := 0; t < n; t++ {
		cpu.RoPE(x[t*d:(t+1)*d], int(pos[t]), heads, r.headDim, r.dim, r.base, r.pairing)
	}
}

// kvHeads returns the kv_heads attribute, defaulting to heads.
func kvHeads(a Attrs) int {
	if k := a.Int("kv_heads"); k > 0 {
		return k
	}
	return a.Int("heads")
}

func kRoPE(c *Call) error {
	x, out := f32(c.In[0]), f32(c.Out[0])
	d := c.In[0].Shape[1]
	heads := c.Attrs.Int("heads")
	n := Rows(c.In[0])
	copy(out[:n*d], x[:n*d])
	ropeOf(c.Attrs, d/heads, "dim", "base").apply(out, n, heads, i32(c.In[1]))
	return nil
}

func kAttention(c *Call) error {
	return attend(c, f32(c.In[0]), f32(c.In[1]), f32(c.In[2]), c.In[0].Shape[1], c.In[1].Shape[1])
}

// attend appends k and v to the cache and attends q over each token's
// sequence; qd and kd are the q and k row widths.
func attend(c *Call, q, k, v []float32, qd, kd int) error {
	st := c.Step
	if st == nil || st.KV == nil {
		return fmt.Errorf("attention needs a KV cache")
	}
	n := Rows(c.Out[0])
	for t := 0; t < n; t++ {
		if err := st.KV.Write(c.Slot, int(st.Seq[t]), int(st.Pos[t]), k[t*kd:(t+1)*kd], v[t*kd:(t+1)*kd]); err != nil {
			return err
		}
	}
	task, ok := c.State.(*attnTask)
	if !ok {
		task = newAttnTask(c.Attrs, qd)
		c.State = task
	}
	task.step, task.slot, task.q, task.out, task.err = st, c.Slot, q, f32(c.Out[0]), nil
	task.seqLen = task.seqLen[:0]
	if !task.causal {
		// Bidirectional attention sees every position of the sequence in this step.
		for t := 0; t < n; t++ {
			task.noteLen(st.Seq[t], int(st.Pos[t])+1)
		}
	}
	// Few tokens (decode): split each token's heads over the threads too.
	task.parts = 1
	if th := c.Pool.Threads(); n < th {
		task.parts = min(task.p.Heads, 2*th)
	}
	c.Pool.Run(n*task.parts, 1, task)
	return task.err
}

// attnTask is the prepared, reusable work of one attention call site.
type attnTask struct {
	p      cpu.AttendParams
	qd     int
	causal bool
	step   *Step
	slot   int
	parts  int // head ranges per token
	q, out []float32
	seqLen []seqCount
	mu     sync.Mutex
	free   []*attnScratch
	err    error
}

type seqCount struct {
	seq int32
	n   int
}

type attnScratch struct {
	kv cpu.KV
	s  []float32
}

func newAttnTask(a Attrs, qd int) *attnTask {
	heads, kvh := a.Int("heads"), kvHeads(a)
	hd := qd / heads
	scale := float32(a.Float("scale"))
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(hd)))
	}
	t := &attnTask{qd: qd, causal: a.Bool("causal"),
		p: cpu.AttendParams{Heads: heads, KVHeads: kvh, HeadDim: hd, Scale: scale, Sink: a.Int("sinks"), Window: a.Int("window")}}
	if a.Bool("alibi") {
		t.p.Slopes = alibiSlopes(heads)
	}
	return t
}

func (t *attnTask) noteLen(seq int32, n int) {
	for i := range t.seqLen {
		if t.seqLen[i].seq == seq {
			t.seqLen[i].n = max(t.seqLen[i].n, n)
			return
		}
	}
	t.seqLen = append(t.seqLen, seqCount{seq, n})
}

func (t *attnTask) lenOf(seq int32) int {
	for _, s := range t.seqLen {
		if s.seq == seq {
			return s.n
		}
	}
	return 0
}

func (t *attnTask) scratch() *attnScratch {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.free); n > 0 {
		s := t.free[n-1]
		t.free = t.free[:n-1]
		return s
	}
	return &attnScratch{}
}

func (t *attnTask) release(s *attnScratch, err error) {
	t.mu.Lock()
	t.free = append(t.free, s)
	if err != nil && t.err == nil {
		t.err = err
	}
	t.mu.Unlock()
}

// Run attends items [lo, hi): item k is head range k%parts of token
// k/parts.
func (t *attnTask) Run(lo, hi int) {
	sc := t.scratch()
	var err error
	st := t.step
	for k := lo; k < hi; k++ {
		i, part := k/t.parts, k%t.parts
		cnt := int(st.Pos[i]) + 1
		if !t.causal {
			cnt = t.lenOf(st.Seq[i])
		}
		if err = st.KV.View(t.slot, int(st.Seq[i]), cnt, &sc.kv); err != nil {
			break
		}
		p := t.p
		p.N = cnt
		p.Batched = len(st.Pos) > 1
		if need := cpu.AttendScratch(p); cap(sc.s) < need {
			sc.s = make([]float32, need+256)
		}
		h0, h1 := part*p.Heads/t.parts, (part+1)*p.Heads/t.parts
		cpu.AttendHeads(t.out[i*t.qd:(i+1)*t.qd], t.q[i*t.qd:(i+1)*t.qd], &sc.kv, p, sc.s, h0, h1)
	}
	t.release(sc, err)
}

// alibiSlopes returns the ALiBi head slopes of Press et al. (2022).
func alibiSlopes(heads int) []float32 {
	n := 1
	for n*2 <= heads {
		n *= 2
	}
	m0 := math.Pow(2, -8/float64(n))
	m1 := math.Pow(2, -4/float64(n))
	s := make([]float32, heads)
	for h := 0; h < heads; h++ {
		if h < n {
			s[h] = float32(math.Pow(m0, float64(h+1)))
		} else {
			s[h] = float32(math.Pow(m1, float64(2*(h-n)+1)))
		}
	}
	return s
}

func kSplit(c *Call) error {
	x := f32(c.In[0])
	d := c.In[0].Shape[1]
	n := Rows(c.In[0])
	off := 0
	for _, o := range c.Out {
		od := o.Shape[1]
		out := f32(o)
		for t := 0; t < n; t++ {
			copy(out[t*od:(t+1)*od], x[t*d+off:t*d+off+od])
		}
		off += od
	}
	return nil
}

func kTake(c *Call) error {
	m, err := cpu.MatrixOf(c.In[0])
	if err != nil {
		return err
	}
	return cpu.DequantizeRow(f32(c.Out[0]), m, c.Attrs.Int("index"))
}

func kSinusoidal(c *Call) error {
	pos, out := i32(c.In[0]), f32(c.Out[0])
	d := c.Attrs.Int("dim")
	base := c.Attrs.Float("base")
	for t := 0; t < Rows(c.Out[0]); t++ {
		for j := 0; j < d/2; j++ {
			ang := float64(pos[t]) / math.Pow(base, float64(2*j)/float64(d))
			out[t*d+2*j] = float32(math.Sin(ang))
			out[t*d+2*j+1] = float32(math.Cos(ang))
		}
	}
	return nil
}

func expertMatrix(t *tensor.Tensor, e int) (cpu.Matrix, error) {
	rows, cols := t.Shape[1], t.Shape[2]
	rb, err := t.DType.RowBytes(cols)
	if err != nil {
		return cpu.Matrix{}, err
	}
	sz := rb * rows
	return cpu.Matrix{DType: t.DType, Rows: rows, Cols: cols, Data: t.Data[e*sz : (e+1)*sz]}, nil
}

func kMoE(c *Call) error {
	x, out := f32(c.In[0]), f32(c.Out[0])
	router, err := cpu.MatrixOf(c.In[1])
	if err != nil {
		return err
	}
	hidden := router.Cols
	experts := router.Rows
	ffn := c.In[2].Shape[1]
	topK := c.Attrs.Int("top_k")
	actFn := map[string]func([]float32){"silu": cpu.SiLU, "gelu": cpu.GELU, "gelu_tanh": cpu.GELUTanh, "relu": cpu.ReLU}[c.Attrs.String("act")]
	logits := make([]float32, experts)
	g := make([]float32, ffn)
	u := make([]float32, ffn)
	y := make([]float32, hidden)
	for t := 0; t < Rows(c.In[0]); t++ {
		xt := x[t*hidden : (t+1)*hidden]
		if err := cpu.MatMul(c.Pool, logits, router, xt, 1); err != nil {
			return err
		}
		chosen := topIndices(logits, topK)
		// softmax over the chosen experts' logits
		ws := make([]float32, len(chosen))
		for i, e := range chosen {
			ws[i] = logits[e]
		}
		cpu.Softmax(ws)
		ot := out[t*hidden : (t+1)*hidden]
		for i := range ot {
			ot[i] = 0
		}
		for i, e := range chosen {
			gm, err := expertMatrix(c.In[2], e)
			if err != nil {
				return err
			}
			um, _ := expertMatrix(c.In[3], e)
			dm, _ := expertMatrix(c.In[4], e)
			if err := cpu.MatMul(c.Pool, g, gm, xt, 1); err != nil {
				return err
			}
			if err := cpu.MatMul(c.Pool, u, um, xt, 1); err != nil {
				return err
			}
			actFn(g)
			cpu.Mul(g, g, u)
			if err := cpu.MatMul(c.Pool, y, dm, g, 1); err != nil {
				return err
			}
			for j := range ot {
				ot[j] += ws[i] * y[j]
			}
		}
	}
	return nil
}

// topIndices returns the indices of the k largest values, largest first.
func topIndices(v []float32, k int) []int {
	idx := make([]int, 0, k)
	used := make([]bool, len(v))
	for len(idx) < k {
		best := -1
		for i, x := range v {
			if !used[i] && (best < 0 || x > v[best]) {
				best = i
			}
		}
		used[best] = true
		idx = append(idx, best)
	}
	return idx
}

func kGather(c *Call) error {
	x, out := f32(c.In[0]), f32(c.Out[0])
	d := c.In[0].Shape[1]
	for i, r := range c.Step.Keep {
		copy(out[i*d:(i+1)*d], x[int(r)*d:(int(r)+1)*d])
	}
	return nil
}
