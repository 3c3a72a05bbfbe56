package model

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/backend/cpudev"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/tokenizer"
)

// Pooling turns a sequence's per-token hidden states into embeddings.
type Pooling int

// Poolings, numbered as GGUF's ARCH.pooling_type numbers them.
const (
	PoolNone Pooling = 0 // one embedding per token
	PoolMean Pooling = 1 // the mean over the tokens
	PoolCLS  Pooling = 2 // the first token's state (BERT's [CLS])
	PoolLast Pooling = 3 // the last token's state
)

var poolNames = []string{"none", "mean", "cls", "last"}

func (p Pooling) String() string {
	if p >= 0 && int(p) < len(poolNames) {
		return poolNames[p]
	}
	return fmt.Sprintf("Pooling(%d)", int(p))
}

// ParsePooling reads a pooling name: none, mean, cls or last.
func ParsePooling(s string) (Pooling, error) {
	if i := slices.Index(poolNames, strings.ToLower(s)); i >= 0 {
		return Pooling(i), nil
	}
	return 0, fmt.Errorf("pooling %q: want one of %s", s, strings.Join(poolNames, ", "))
}

// DefaultPooling returns the model's pooling: the spec's pooling_type
// param (read from GGUF ARCH.pooling_type), or, when it has none, cls for
// an encoder (causal: false) and last for a decoder, whose last token is
// the only one that has attended to the whole input.
func (m *Model) DefaultPooling() (Pooling, error) {
	v, ok := m.Params["pooling_type"]
	if !ok {
		if c, ok := m.Params["causal"].(bool); ok && !c {
			return PoolCLS, nil
		}
		return PoolLast, nil
	}
	n, ok := v.(int64)
	if !ok || n < 0 || int(n) >= len(poolNames) {
		return 0, fmt.Errorf("%s: pooling_type %v is not one of 0 (none), 1 (mean), 2 (cls), 3 (last)", m.Spec.File, v)
	}
	return Pooling(n), nil
}

// EmbedOptions configures an embedding.
type EmbedOptions struct {
	Pooling Pooling
	// Normalize scales each embedding to unit Euclidean length
	// (llama-embedding's --embd-normalize 2).
	Normalize bool
}

// Embedder computes embeddings: it runs the model's graph over each
// input whole and pools the hidden states (the spec's `hidden` output).
// One Embedder serves one request at a time.
type Embedder struct {
	m        *Model
	plan     *scheduler.Plan
	kv       *scheduler.KV
	backends []backend.Backend
	out      int // index of the hidden-states output
	st       backend.Step
}

// NewEmbedder compiles the model for embeddings over inputs of up to
// opt.MaxTokens tokens (0: the model's context) on one CPU device. It
// runs the model's graph when that computes the spec's `hidden` output;
// otherwise (a decoder loaded for its logits) it builds a second graph
// that computes `hidden` and leaves the LM head out.
func (m *Model) NewEmbedder(opt EngineOptions) (*Embedder, error) {
	if !slices.Contains(m.Spec.Outputs, "hidden") {
		return nil, fmt.Errorf("%s: no `hidden` output to embed (outputs: %s); an embedding model's spec names its final hidden states `hidden`", m.Spec.File, strings.Join(m.Spec.Outputs, ", "))
	}
	g := m.Graph
	out := slices.Index(m.outputs, "hidden")
	if out < 0 {
		var err error
		if g, err = m.build(Source(m.Checkpoint), []string{"hidden"}, m.path); err != nil {
			return nil, err
		}
		out = 0
	}
	maxTok := opt.MaxTokens
	if maxTok <= 0 {
		maxTok = m.Context()
	}
	threads, err := threadCount(opt.Threads)
	if err != nil {
		return nil, err
	}
	dev := cpudev.New("cpu:0", threads, opt.Kernels)
	plan, err := scheduler.NewPlan(g, scheduler.PlanOptions{MaxTokens: maxTok, Backends: []backend.Backend{dev}, Registry: m.Registry})
	if err != nil {
		dev.Close()
		return nil, err
	}
	kv, err := plan.NewKV(0, backend.KVF32)
	if err != nil {
		plan.Close()
		dev.Close()
		return nil, err
	}
	return &Embedder{m: m, plan: plan, kv: kv, backends: []backend.Backend{dev}, out: out}, nil
}

// MaxTokens returns the most tokens one input may have.
func (e *Embedder) MaxTokens() int { return e.plan.MaxTokens }

// Close releases the embedder's device.
func (e *Embedder) Close() {
	e.plan.Close()
	for _, b := range e.backends {
		b.Close()
	}
}

// Embed returns the embeddings of one token sequence: one vector, or one
// per token with PoolNone. types gives each token's segment (nil: all 0).
func (e *Embedder) Embed(ctx context.Context, tokens, types []int, opt EmbedOptions) ([][]float32, error) {
	n := len(tokens)
	if n == 0 {
		return nil, fmt.Errorf("embed: no tokens")
	}
	if n > e.plan.MaxTokens {
		return nil, fmt.Errorf("embed: %d tokens, the model takes at most %d", n, e.plan.MaxTokens)
	}
	if types != nil && len(types) != n {
		return nil, fmt.Errorf("embed: %d token types for %d tokens", len(types), n)
	}
	if opt.Pooling < PoolNone || opt.Pooling > PoolLast {
		return nil, fmt.Errorf("embed: unknown pooling %v", opt.Pooling)
	}
	vocab := e.m.Params.Int("vocab")
	st := &e.st
	st.Tokens, st.Pos, st.Seq, st.Keep, st.Types = st.Tokens[:0], st.Pos[:0], st.Seq[:0], st.Keep[:0], st.Types[:0]
	for i, t := range tokens {
		if vocab > 0 && (t < 0 || t >= vocab) {
			return nil, fmt.Errorf("embed: token %d (at %d) outside the vocabulary of %d", t, i, vocab)
		}
		st.Tokens = append(st.Tokens, int32(t))
		st.Pos = append(st.Pos, int32(i))
		st.Seq = append(st.Seq, 0)
		st.Keep = append(st.Keep, int32(i))
		if types != nil {
			st.Types = append(st.Types, int32(types[i]))
		}
	}
	e.kv.Reset()
	if err := e.kv.AddressWhole(st); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	outs, err := e.plan.Run(ctx, st, e.kv, nil)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	o := outs[e.out]
	cols := o.Shape[len(o.Shape)-1]
	h := o.F32()
	if len(h) < n*cols {
		return nil, fmt.Errorf("embed: output %s holds %d values, want %d rows of %d", o.Name, len(h), n, cols)
	}
	row := func(i int) []float32 { return h[i*cols : (i+1)*cols] }
	var res [][]float32
	switch opt.Pooling {
	case PoolNone:
		for i := 0; i < n; i++ {
			res = append(res, slices.Clone(row(i)))
		}
	case PoolCLS:
		res = [][]float32{slices.Clone(row(0))}
	case PoolLast:
		res = [][]float32{slices.Clone(row(n - 1))}
	case PoolMean:
		sum := make([]float64, cols)
		for i := 0; i < n; i++ {
			for j, v := range row(i) {
				sum[j] += float64(v)
			}
		}
		v := make([]float32, cols)
		for j := range v {
			v[j] = float32(sum[j] / float64(n))
		}
		res = [][]float32{v}
	}
	if opt.Normalize {
		for _, v := range res {
			normalize(v)
		}
	}
	return res, nil
}

// normalize scales v to unit Euclidean length (a zero vector stays zero).
func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	k := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * k)
	}
}

// EmbedText tokenizes text with the model's tokenizer (adding the special
// tokens its metadata asks for, such as BERT's [CLS] and [SEP]) and
// embeds it.
func (e *Embedder) EmbedText(ctx context.Context, text string, opt EmbedOptions) ([][]float32, error) {
	if e.m.Tokenizer == nil {
		return nil, fmt.Errorf("embed: the model has no tokenizer")
	}
	toks, err := e.m.Tokenizer.Encode(text, tokenizer.EncodeOptions{AddSpecial: true})
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	return e.Embed(ctx, toks, nil, opt)
}

// EmbedPair embeds the sentence pair (a, b) as one input laid out by the
// tokenizer's pair template (BERT: [CLS] a [SEP] b [SEP]) with each
// token's type (0 for [CLS], a and its [SEP], 1 for b and the last [SEP]),
// as BERT's next-sentence and cross-encoder inputs are.
func (e *Embedder) EmbedPair(ctx context.Context, a, b string, opt EmbedOptions) ([][]float32, error) {
	if e.m.Tokenizer == nil {
		return nil, fmt.Errorf("embed: the model has no tokenizer")
	}
	toks, types, err := tokenizer.EncodePair(e.m.Tokenizer, a, b, tokenizer.EncodeOptions{AddSpecial: true})
	if err != nil {
		return nil, fmt.Errorf("embed: sentence pair: %w", err)
	}
	return e.Embed(ctx, toks, types, opt)
}
