package cpudev

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
)

// ---- CPU kernels ----

func f32(t *tensor.Tensor) []float32 { return tensor.BytesToF32(t.Data) }

func i32(t *tensor.Tensor) []int32 { return tensor.BytesToI32(t.Data) }

func unaryKernel(f func([]float32)) Kernel {
	return func(c *Call) error {
		x, out := f32(c.In[0]), f32(c.Out[0])
		cols := c.In[0].Shape[len(c.In[0].Shape)-1]
		n := ops.Rows(c.In[0]) * cols
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
		n := ops.Rows(c.In[0]) * cols
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
	for t := 0; t < ops.Rows(c.Out[0]); t++ {
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
	n := ops.Rows(c.In[0])
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
	d, g := normSlices(c)
	eps := float32(c.Attrs.Float("eps"))
	for r := 0; r < ops.Rows(c.In[0])*g; r++ {
		cpu.RMSNorm(out[r*d:(r+1)*d], x[r*d:(r+1)*d], groupSlice(w, r%g, d), eps)
	}
	return nil
}

func kLayerNorm(c *Call) error {
	x, out, w, b := f32(c.In[0]), f32(c.Out[0]), optF32(c, 1), optF32(c, 2)
	d, g := normSlices(c)
	eps := float32(c.Attrs.Float("eps"))
	for r := 0; r < ops.Rows(c.In[0])*g; r++ {
		cpu.LayerNorm(out[r*d:(r+1)*d], x[r*d:(r+1)*d], groupSlice(w, r%g, d), groupSlice(b, r%g, d), eps)
	}
	return nil
}

// normSlices returns the width of the slices a norm normalises and how
// many there are per row (the groups attribute; 1: the whole row).
func normSlices(c *Call) (width, groups int) {
	g := max(c.Attrs.Int("groups"), 1)
	return c.In[0].Shape[1] / g, g
}

// groupSlice returns group i's d weights: its slice of a per-group weight,
// or the whole of a weight shared by every group (nil stays nil).
func groupSlice(w []float32, i, d int) []float32 {
	if w == nil || len(w) == d {
		return w
	}
	return w[i*d : (i+1)*d]
}

// ropeSpec is RoPE's configuration decoded from attributes.
type ropeSpec struct {
	headDim, dim int
	base         float32
	pairing      int
	scaling      *cpu.RoPEScaling // nil: plain RoPE
}

// ropeOf decodes rope attributes (named dimKey and baseKey: "dim"/"base"
// on rope, "rope_dim"/"rope_base" on rope_attention) for heads of headDim.
func ropeOf(a ops.Attrs, headDim int, dimKey, baseKey string) ropeSpec {
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
		if r.scaling != nil {
			cpu.RoPEExt(x[t*d:(t+1)*d], int(pos[t]), heads, r.headDim, r.dim, r.base, r.pairing, r.scaling)
			continue
		}
		cpu.RoPE(x[t*d:(t+1)*d], int(pos[t]), heads, r.headDim, r.dim, r.base, r.pairing)
	}
}

// ropeTask rotates the q and k rows (qh and kh heads) of tokens [lo, hi)
// at positions pos, by the angles cs and sn (r.dim/2 per token).
type ropeTask struct {
	r      ropeSpec
	q, k   []float32
	qh, kh int
	cs, sn []float32
}

func (t *ropeTask) Run(lo, hi int) {
	qd, kd, half := t.qh*t.r.headDim, t.kh*t.r.headDim, t.r.dim/2
	for i := lo; i < hi; i++ {
		cs, sn := t.cs[i*half:(i+1)*half], t.sn[i*half:(i+1)*half]
		cpu.RoPERotate(t.q[i*qd:(i+1)*qd], t.qh, t.r.headDim, t.r.dim, t.r.pairing, cs, sn)
		cpu.RoPERotate(t.k[i*kd:(i+1)*kd], t.kh, t.r.headDim, t.r.dim, t.r.pairing, cs, sn)
	}
}

// ropeAngles holds the cosines and sines of plain RoPE at a step's
// positions, for the last few (dim, base) configurations: every layer of
// a step turns its tokens by the same angles, so they are computed once
// per step instead of once per layer and per q and k (about 3% of a
// 128-token Q4_0 prefill of a TinyLlama). An entry is found by comparing
// the positions themselves, so a reused position buffer cannot return
// stale angles. Calls of one runner run one at a time, so it needs no
// lock.
type ropeAngles struct {
	sets [4]angleSet
	next int
}

// angleSet is the angles of one configuration at positions pos.
type angleSet struct {
	dim    int
	base   float32
	pos    []int32
	cs, sn []float32 // len(pos)×dim/2
}

// get returns the angles of RoPE r at positions pos, len(pos)×r.dim/2
// cosines and sines, computing them unless an entry holds them.
func (a *ropeAngles) get(r ropeSpec, pos []int32) (cs, sn []float32) {
	half := r.dim / 2
	for i := range a.sets {
		s := &a.sets[i]
		if s.dim == r.dim && s.base == r.base && slices.Equal(s.pos, pos) {
			return s.cs[:len(pos)*half], s.sn[:len(pos)*half]
		}
	}
	s := &a.sets[a.next]
	a.next = (a.next + 1) % len(a.sets)
	s.dim, s.base = r.dim, r.base
	s.pos = append(s.pos[:0], pos...)
	n := len(pos) * half
	if cap(s.cs) < n {
		s.cs, s.sn = make([]float32, n), make([]float32, n)
	}
	s.cs, s.sn = s.cs[:n], s.sn[:n]
	for t, p := range pos {
		cpu.RoPEAngles(s.cs[t*half:(t+1)*half], s.sn[t*half:(t+1)*half], int(p), r.dim, r.base)
	}
	return s.cs, s.sn
}

// ropeState is a scaled rope node's state: its scaling and the Llama 3.1
// factors it computed from its attributes, once.
type ropeState struct {
	s      cpu.RoPEScaling
	llama3 []float32
}

func kRoPE(c *Call) error {
	x, out := f32(c.In[0]), f32(c.Out[0])
	d := c.In[0].Shape[1]
	heads := c.Attrs.Int("heads")
	n := ops.Rows(c.In[0])
	copy(out[:n*d], x[:n*d])
	r := ropeOf(c.Attrs, d/heads, "dim", "base")
	a := c.Attrs
	l3 := a.Float("llama3_factor")
	if f := optF32(c, 2); f != nil || a.Float("freq_scale") != 1 || a.Float("ext_factor") != 0 || a.Float("attn_factor") != 1 || l3 != 0 {
		if c.State == nil {
			c.State = &ropeState{}
		}
		st := c.State.(*ropeState)
		if f == nil && l3 != 0 {
			if len(st.llama3) != r.dim/2 {
				st.llama3 = make([]float32, r.dim/2)
				cpu.Llama3Factors(st.llama3, r.base, r.dim, l3, a.Float("low_freq_factor"), a.Float("high_freq_factor"), a.Int("orig_ctx"))
			}
			f = st.llama3
		}
		st.s = cpu.RoPEScaling{FreqScale: float32(a.Float("freq_scale")), ExtFactor: float32(a.Float("ext_factor")),
			AttnFactor: float32(a.Float("attn_factor")), BetaFast: float32(a.Float("beta_fast")), BetaSlow: float32(a.Float("beta_slow")),
			OrigCtx: a.Int("orig_ctx"), Factors: f}
		r.scaling = &st.s
	}
	r.apply(out, n, heads, i32(c.In[1]))
	return nil
}

func kAttention(c *Call) error {
	if len(c.In) > 3 && c.In[3] != nil {
		return attendRelBias(c)
	}
	if c.Step != nil && len(c.Step.Shift) > 0 {
		return fmt.Errorf("a context shift needs attention that applies RoPE itself (rope_attention, the fused graph)")
	}
	return attend(c, f32(c.In[0]), f32(c.In[1]), f32(c.In[2]), c.In[0].Shape[1], c.In[1].Shape[1])
}

// attend appends k and v to the cache and attends q over each token's
// sequence; qd and kd are the q and k row widths.
func attend(c *Call, q, k, v []float32, qd, kd int) error {
	st, kv := c.Step, c.KV
	if st == nil || kv == nil {
		return fmt.Errorf("attention needs a KV cache")
	}
	n := ops.Rows(c.Out[0])
	if len(st.Loc) < n || len(st.View) < n || len(st.Len) < n {
		return fmt.Errorf("attention: the step addresses %d of its %d tokens in the KV cache", min(len(st.Loc), len(st.View), len(st.Len)), n)
	}
	for t := 0; t < n; t++ {
		if err := kv.Write(c.Slot, st.Loc[t], k[t*kd:(t+1)*kd], v[t*kd:(t+1)*kd]); err != nil {
			return err
		}
	}
	task, ok := c.State.(*attnTask)
	if !ok {
		task = newAttnTask(c.Attrs, qd)
		c.State = task
	}
	task.step, task.kv, task.slot, task.q, task.out, task.err = st, kv, c.Slot, q, f32(c.Out[0]), nil
	task.seqLen = task.seqLen[:0]
	if !task.causal {
		// Bidirectional attention sees every row of its view in this step.
		for t := 0; t < n; t++ {
			task.noteLen(st.View[t], int(st.Len[t]))
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
	step   *backend.Step
	kv     *KVCache
	slot   int
	parts  int // head ranges per token
	rope   ropeTask
	angles ropeAngles // when the call has no runner's cache
	q, out []float32
	seqLen []seqCount
	mu     sync.Mutex
	free   []*attnScratch
	err    error
}

type seqCount struct {
	view int32
	n    int
}

type attnScratch struct {
	kv cpu.KV
	s  []float32
}

func newAttnTask(a ops.Attrs, qd int) *attnTask {
	heads, kvh := a.Int("heads"), ops.KVHeads(a)
	hd := qd / heads
	scale := float32(a.Float("scale"))
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(hd)))
	}
	t := &attnTask{qd: qd, causal: a.Bool("causal"),
		p: cpu.AttendParams{Heads: heads, KVHeads: kvh, HeadDim: hd, Scale: scale, Sink: a.Int("sinks"), Window: a.Int("window"), SoftCap: float32(a.Float("softcap"))}}
	if a.Bool("alibi") {
		t.p.Slopes = alibiSlopes(heads, a.Float("max_bias"))
	}
	return t
}

func (t *attnTask) noteLen(view int32, n int) {
	for i := range t.seqLen {
		if t.seqLen[i].view == view {
			t.seqLen[i].n = max(t.seqLen[i].n, n)
			return
		}
	}
	t.seqLen = append(t.seqLen, seqCount{view, n})
}

func (t *attnTask) lenOf(view int32) int {
	for _, s := range t.seqLen {
		if s.view == view {
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
		cnt := int(st.Len[i])
		if !t.causal {
			cnt = t.lenOf(st.View[i])
		}
		if err = t.kv.View(t.slot, st.Views[st.View[i]], cnt, &sc.kv); err != nil {
			break
		}
		p := t.p
		p.N = cnt
		p.Batched = len(st.Pos) > 1 && !(i < len(st.Decode) && st.Decode[i])
		if need := cpu.AttendScratch(p); cap(sc.s) < need {
			sc.s = make([]float32, need+256)
		}
		h0, h1 := part*p.Heads/t.parts, (part+1)*p.Heads/t.parts
		cpu.AttendHeads(t.out[i*t.qd:(i+1)*t.qd], t.q[i*t.qd:(i+1)*t.qd], &sc.kv, p, sc.s, h0, h1)
	}
	t.release(sc, err)
}

// alibiSlopes returns the ALiBi head slopes of Press et al. (2022) with
// the largest exponent maxBias (8 in the paper): with n the largest power
// of two ≤ heads, head h < n has slope 2^(-maxBias(h+1)/n) and the others
// take the odd powers of 2^(-maxBias/(2n)), interleaving between them.
func alibiSlopes(heads int, maxBias float64) []float32 {
	n := 1
	for n*2 <= heads {
		n *= 2
	}
	m0 := math.Pow(2, -maxBias/float64(n))
	m1 := math.Pow(2, -maxBias/2/float64(n))
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
	n := ops.Rows(c.In[0])
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
	for t := 0; t < ops.Rows(c.Out[0]); t++ {
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
	sigmoid, renorm := c.Attrs.String("gating") == "sigmoid", c.Attrs.Bool("norm")
	logits := make([]float32, experts)
	ws := make([]float32, topK)
	g := make([]float32, ffn)
	u := make([]float32, ffn)
	y := make([]float32, hidden)
	for t := 0; t < ops.Rows(c.In[0]); t++ {
		xt := x[t*hidden : (t+1)*hidden]
		if err := cpu.MatMul(c.Pool, logits, router, xt, 1); err != nil {
			return err
		}
		// Router probabilities, the top_k experts by probability, and
		// their weights (rescaled to sum to 1 with norm).
		if sigmoid {
			for i, v := range logits {
				logits[i] = float32(1 / (1 + math.Exp(-float64(v))))
			}
		} else {
			cpu.Softmax(logits)
		}
		chosen := topIndices(logits, topK)
		var sum float32
		for i, e := range chosen {
			ws[i] = logits[e]
			sum += ws[i]
		}
		if renorm {
			for i := range ws {
				ws[i] /= sum
			}
		}
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

// kSigmoidGate writes out[t] = x[t] · σ(h[t] · w).
func kSigmoidGate(c *Call) error {
	x, h, w, out := f32(c.In[0]), f32(c.In[1]), f32(c.In[2]), f32(c.Out[0])
	d, hd := c.In[0].Shape[1], c.In[1].Shape[1]
	for t := 0; t < ops.Rows(c.In[0]); t++ {
		var z float64
		for j, v := range h[t*hd : (t+1)*hd] {
			z += float64(v) * float64(w[j])
		}
		gate := float32(1 / (1 + math.Exp(-z)))
		for j, v := range x[t*d : (t+1)*d] {
			out[t*d+j] = v * gate
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

func matrices(ts []*tensor.Tensor) ([]cpu.Matrix, error) {
	ms := make([]cpu.Matrix, len(ts))
	for i, t := range ts {
		m, err := cpu.MatrixOf(t)
		if err != nil {
			return nil, err
		}
		ms[i] = m
	}
	return ms, nil
}

// multiState caches the weight views and output slices of a multi-matmul
// call site.
type multiState struct {
	ws   []cpu.Matrix
	dsts [][]float32
}

func multi(c *Call, weights []*tensor.Tensor, outs int) (*multiState, error) {
	if s, ok := c.State.(*multiState); ok {
		return s, nil
	}
	ws, err := matrices(weights)
	if err != nil {
		return nil, err
	}
	s := &multiState{ws: ws, dsts: make([][]float32, outs)}
	c.State = s
	return s, nil
}

func kLinearMulti(c *Call) error {
	s, err := multi(c, c.In[1:], len(c.Out))
	if err != nil {
		return err
	}
	for i, o := range c.Out {
		s.dsts[i] = f32(o)
	}
	return cpu.MatMulMulti(c.Pool, s.dsts, s.ws, f32(c.In[0]), ops.Rows(c.In[0]))
}

func kGatedFFN(c *Call) error {
	s, err := multi(c, c.In[1:3], 2)
	if err != nil {
		return err
	}
	n := ops.Rows(c.In[0])
	out := f32(c.Out[0])
	// The up projection goes to the output; the gate to scratch.
	gate := c.scratch(n * s.ws[0].Rows)
	s.dsts[0], s.dsts[1] = gate, out
	if err := cpu.MatMulMulti(c.Pool, s.dsts, s.ws, f32(c.In[0]), n); err != nil {
		return err
	}
	m := n * s.ws[0].Rows
	switch c.Attrs.String("act") {
	case "gelu":
		// out holds up: GELU the gate (scratch) in place, then multiply.
		cpu.GELU(gate[:m])
		cpu.Mul(out[:m], gate[:m], out[:m])
	case "gelu_tanh":
		cpu.GELUTanh(gate[:m])
		cpu.Mul(out[:m], gate[:m], out[:m])
	default:
		cpu.SwiGLU(out[:m], gate[:m], out[:m])
	}
	return nil
}

func kRoPEAttention(c *Call) error {
	// Rotate q and k in scratch copies, then attend.
	qd, kd := c.In[0].Shape[1], c.In[1].Shape[1]
	n := ops.Rows(c.In[0])
	buf := c.scratch(n * (qd + kd))
	q, k := buf[:n*qd], buf[n*qd:n*(qd+kd)]
	copy(q, f32(c.In[0])[:n*qd])
	copy(k, f32(c.In[1])[:n*kd])
	pos := i32(c.In[3])
	heads := c.Attrs.Int("heads")
	r := ropeOf(c.Attrs, qd/heads, "rope_dim", "rope_base")
	// Each token on its own: over the threads (a 128-token prefill of a
	// TinyLlama spent about 2% of its time rotating on one thread).
	task, ok := c.State.(*attnTask)
	if !ok {
		task = newAttnTask(c.Attrs, qd)
		c.State = task
	}
	angles := c.angles
	if angles == nil {
		angles = &task.angles
	}
	cs, sn := angles.get(r, pos[:n])
	task.rope = ropeTask{r: r, q: q, k: k, qh: heads, kh: ops.KVHeads(c.Attrs), cs: cs, sn: sn}
	c.Pool.Run(n, 1, &task.rope)
	task.rope = ropeTask{}
	if c.Step != nil && c.KV != nil && len(c.Step.Shift) > 0 {
		if err := c.KV.shiftKeys(c.Slot, c.Step.Shift, r, ops.KVHeads(c.Attrs)); err != nil {
			return err
		}
	}
	return attend(c, q, k, f32(c.In[2]), qd, kd)
}

// scratch returns a float buffer owned by the call, grown as needed.
func (c *Call) scratch(n int) []float32 {
	if cap(c.Scratch) < n {
		c.Scratch = make([]float32, n)
	}
	return c.Scratch[:n]
}
