package specs_test

import (
	"fmt"
	"testing"

	"github.com/weftrun/weft/specs"
)

// Small inline specs for architectural variants the built-in specs do
// not use, each checked against the reference forward pass.

// GPT-J / Falcon: attention and FFN read the same normalised input and
// are added to the residual together; partial rotary embedding (dim=rot);
// `_` leaves out an optional input (the norm has a bias but no scale).
const parallelSpec = `
name: parallel
params: {hidden: 32, heads: 4, layers: 2, ffn: 64, vocab: 40, rot: 4}
weights:
  tok_embd: {shape: [vocab, hidden], gguf: token_embd.weight}
  ln_b:     {shape: [hidden], gguf: "blk.{i}.attn_norm.bias"}
  wq:       {shape: [hidden, hidden], gguf: "blk.{i}.attn_q.weight"}
  wk:       {shape: [hidden, hidden], gguf: "blk.{i}.attn_k.weight"}
  wv:       {shape: [hidden, hidden], gguf: "blk.{i}.attn_v.weight"}
  wo:       {shape: [hidden, hidden], gguf: "blk.{i}.attn_output.weight"}
  w_up:     {shape: [ffn, hidden], gguf: "blk.{i}.ffn_up.weight"}
  up_b:     {shape: [ffn], gguf: "blk.{i}.ffn_up.bias"}
  w_down:   {shape: [hidden, ffn], gguf: "blk.{i}.ffn_down.weight"}
  out_norm: {shape: [hidden], gguf: output_norm.weight}
  output:   {shape: [vocab, hidden], gguf: output.weight}
graph:
  - x: embedding(tok_embd, tokens)
  - repeat: layers
    body:
      - h: layer_norm(x, _, ln_b)
      - q: rope(linear(h, wq), pos, heads=heads, dim=rot)
      - k: rope(linear(h, wk), pos, heads=heads, dim=rot)
      - a: linear(attention(q, k, linear(h, wv), heads=heads), wo)
      - f: linear(gelu_tanh(linear(h, w_up, up_b)), w_down)
      - x: add(add(x, a), f)      # x + attn(norm(x)) + ffn(norm(x))
  - logits: linear(rms_norm(x, out_norm), output)
`

func parallelRef(r ref, p specs.Params, tokens []int) mat {
	hidden, heads := p.Int("hidden"), p.Int("heads")
	ones := make([]float64, hidden)
	for i := range ones {
		ones[i] = 1
	}
	x := embed(r.mat("token_embd.weight"), tokens)
	for l := 0; l < p.Int("layers"); l++ {
		b := func(s string) string { return fmt.Sprintf("blk.%d.%s", l, s) }
		h := layerNorm(x, ones, r.vec(b("attn_norm.bias")), 1e-5)
		q := rope(linear(h, r.mat(b("attn_q.weight")), nil), heads, p.Int("rot"), 10000)
		k := rope(linear(h, r.mat(b("attn_k.weight")), nil), heads, p.Int("rot"), 10000)
		a := attention(q, k, linear(h, r.mat(b("attn_v.weight")), nil), attnOpts{heads: heads, causal: true})
		a = linear(a, r.mat(b("attn_output.weight")), nil)
		f := linear(apply(linear(h, r.mat(b("ffn_up.weight")), r.vec(b("ffn_up.bias"))), geluTanh), r.mat(b("ffn_down.weight")), nil)
		x = add(add(x, a), f)
	}
	return linear(rmsNorm(x, r.vec("output_norm.weight"), 1e-5), r.mat("output.weight"), nil)
}

// BLOOM-like: no position embedding; ALiBi biases in attention; a
// LayerNorm on the embeddings; the loop variable is named with `as` and
// the tensor names are whole CEL expressions (`=`).
const alibiSpec = `
name: alibi
params: {hidden: 32, heads: 4, layers: 2, vocab: 40}
weights:
  tok_embd:   {shape: [vocab, hidden], gguf: token_embd.weight}
  embd_norm:  {shape: [hidden], gguf: token_embd_norm.weight}
  embd_norm_b: {shape: [hidden], gguf: token_embd_norm.bias}
  attn_norm:  {shape: [hidden], gguf: '="blk." + string(layer) + ".attn_norm.weight"'}
  wqkv:       {shape: [3 * hidden, hidden], gguf: '="blk." + string(layer) + ".attn_qkv.weight"'}
  wo:         {shape: [hidden, hidden], gguf: '="blk." + string(layer) + ".attn_output.weight"'}
graph:
  - x: layer_norm(embedding(tok_embd, tokens), embd_norm, embd_norm_b)
  - repeat: layers
    as: layer
    body:
      - "q, k, v": split(linear(layer_norm(x, attn_norm), wqkv), sizes=[hidden, hidden, hidden])
      - x: add(x, linear(attention(q, k, v, heads=heads, alibi=true), wo))
  - logits: linear(x, tok_embd)
`

func alibiRef(r ref, p specs.Params, tokens []int) mat {
	hidden := p.Int("hidden")
	zeros := make([]float64, hidden)
	x := layerNorm(embed(r.mat("token_embd.weight"), tokens), r.vec("token_embd_norm.weight"), r.vec("token_embd_norm.bias"), 1e-5)
	for l := 0; l < p.Int("layers"); l++ {
		b := func(s string) string { return fmt.Sprintf("blk.%d.%s", l, s) }
		qkv := split(linear(layerNorm(x, r.vec(b("attn_norm.weight")), zeros, 1e-5), r.mat(b("attn_qkv.weight")), nil), hidden, hidden, hidden)
		a := attention(qkv[0], qkv[1], qkv[2], attnOpts{heads: p.Int("heads"), causal: true, alibi: true})
		x = add(x, linear(a, r.mat(b("attn_output.weight")), nil))
	}
	return linear(x, r.mat("token_embd.weight"), nil)
}

// The original Transformer's decoder stack (Vaswani et al., 2017), minus
// cross-attention: fixed sinusoidal positions added to the embeddings,
// post-norm blocks with a ReLU FFN.
const sinusoidalSpec = `
name: sinusoidal
params: {hidden: 32, heads: 4, layers: 2, ffn: 48, vocab: 40, eps: 1e-6}
weights:
  tok_embd: {shape: [vocab, hidden], gguf: token_embd.weight}
  wq:       {shape: [hidden, hidden], gguf: "blk.{i}.attn_q.weight"}
  wk:       {shape: [hidden, hidden], gguf: "blk.{i}.attn_k.weight"}
  wv:       {shape: [hidden, hidden], gguf: "blk.{i}.attn_v.weight"}
  wo:       {shape: [hidden, hidden], gguf: "blk.{i}.attn_output.weight"}
  ln1:      {shape: [hidden], gguf: "blk.{i}.attn_output_norm.weight"}
  ln1_b:    {shape: [hidden], gguf: "blk.{i}.attn_output_norm.bias"}
  w1:       {shape: [ffn, hidden], gguf: "blk.{i}.ffn_up.weight"}
  b1:       {shape: [ffn], gguf: "blk.{i}.ffn_up.bias"}
  w2:       {shape: [hidden, ffn], gguf: "blk.{i}.ffn_down.weight"}
  b2:       {shape: [hidden], gguf: "blk.{i}.ffn_down.bias"}
  ln2:      {shape: [hidden], gguf: "blk.{i}.layer_output_norm.weight"}
  ln2_b:    {shape: [hidden], gguf: "blk.{i}.layer_output_norm.bias"}
blocks:
  post_norm_layer:
    in: [x]
    out: [x]
    body:
      - a: attention(linear(x, wq), linear(x, wk), linear(x, wv), heads=heads)
      - x: layer_norm(add(x, linear(a, wo)), ln1, ln1_b, eps=eps)
      - x: layer_norm(add(x, linear(relu(linear(x, w1, b1)), w2, b2)), ln2, ln2_b, eps=eps)
graph:
  - x: add(embedding(tok_embd, tokens), sinusoidal(pos, dim=hidden))
  - repeat: layers
    body:
      - x: post_norm_layer(x)
  - logits: linear(x, tok_embd)
`

func sinusoidalRef(r ref, p specs.Params, tokens []int) mat {
	eps := p.Float("eps")
	x := add(embed(r.mat("token_embd.weight"), tokens), sinusoidal(len(tokens), p.Int("hidden"), 10000))
	relu := func(v float64) float64 { return max(v, 0) }
	for l := 0; l < p.Int("layers"); l++ {
		b := func(s string) string { return fmt.Sprintf("blk.%d.%s", l, s) }
		q := linear(x, r.mat(b("attn_q.weight")), nil)
		k := linear(x, r.mat(b("attn_k.weight")), nil)
		v := linear(x, r.mat(b("attn_v.weight")), nil)
		a := linear(attention(q, k, v, attnOpts{heads: p.Int("heads"), causal: true}), r.mat(b("attn_output.weight")), nil)
		x = layerNorm(add(x, a), r.vec(b("attn_output_norm.weight")), r.vec(b("attn_output_norm.bias")), eps)
		f := linear(apply(linear(x, r.mat(b("ffn_up.weight")), r.vec(b("ffn_up.bias"))), relu), r.mat(b("ffn_down.weight")), r.vec(b("ffn_down.bias")))
		x = layerNorm(add(x, f), r.vec(b("layer_output_norm.weight")), r.vec(b("layer_output_norm.bias")), eps)
	}
	return linear(x, r.mat("token_embd.weight"), nil)
}

func TestVariants(t *testing.T) {
	prompt := []int{4, 33, 8, 15, 16, 23, 2}
	for _, c := range []struct {
		name, src string
		ref       func(ref, specs.Params, []int) mat
		tensors   []string // some of the tensor names the spec must bind
	}{
		{"parallel", parallelSpec, parallelRef, []string{"blk.1.attn_norm.bias"}},
		{"alibi", alibiSpec, alibiRef, []string{"blk.0.attn_qkv.weight", "blk.1.attn_output.weight"}},
		{"sinusoidal", sinusoidalSpec, sinusoidalRef, []string{"blk.1.layer_output_norm.bias"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp := parse(t, c.name+".yaml", c.src)
			p := resolve(t, sp, nil)
			src := randSource(t, sp, p, "gguf")
			for _, n := range c.tensors {
				if !src.Has(n) {
					t.Errorf("no tensor %s in %v", n, src.Names())
				}
			}
			r := ref{t, src}
			got := runSeq(t, build(t, sp, p, "gguf", src), prompt, 0)
			spread(t, got)
			closeRows(t, "prefill", got, c.ref(r, p, prompt), 1e-5)
			checkGenerate(t, build(t, sp, p, "gguf", src), prompt, 4, 16, func(toks []int) [][]float64 { return c.ref(r, p, toks) })
		})
	}
}
