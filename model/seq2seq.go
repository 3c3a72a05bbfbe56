package model

import (
	"context"
	"fmt"
	"slices"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/backend/cpudev"
	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
)

// Seq2Seq runs an encoder-decoder model (a spec with an encoder: graph,
// such as T5) in two phases: Encode runs the encoder once over a prompt
// and keeps its output, the memory, read-only beside the decoder's KV
// cache; Decode then feeds decoder tokens, starting from
// DecoderStart, each attending causally to the tokens before it and,
// through cross_attention, to the memory. One Seq2Seq serves one request
// at a time. The engine that serves decoder-only models is not involved.
type Seq2Seq struct {
	m        *Model
	enc, dec *scheduler.Plan
	encKV    *scheduler.KV
	decKV    *scheduler.KV
	backends []backend.Backend
	st       backend.Step
	mem      *backend.Memory
	blocks   []int32 // the decoder sequence's KV blocks
	pos      int     // decoder tokens fed so far
}

// buildEncoder builds and optimises the spec's encoder graph.
func buildEncoder(sp *specs.Spec, opt specs.BuildOptions, noPasses bool) (*graph.Graph, error) {
	opt.Encoder = true
	g, err := sp.Build(opt)
	if err != nil {
		return nil, err
	}
	if !noPasses {
		if err := graph.Optimize(g, opt.Registry); err != nil {
			return nil, fmt.Errorf("optimize %s encoder: %w", sp.File, err)
		}
	}
	return g, nil
}

// NewSeq2Seq compiles the encoder and the decoder on one CPU device for
// prompts and outputs of up to opt.Context positions (0: the model's
// context). The KV cache type follows opt.KVType as for NewEngine.
func (m *Model) NewSeq2Seq(opt EngineOptions) (*Seq2Seq, error) {
	if m.Encoder == nil {
		return nil, fmt.Errorf("%s has no encoder: it is not an encoder-decoder model", m.Spec.File)
	}
	ctx := opt.Context
	if ctx <= 0 {
		ctx = m.Context()
	}
	kvt := m.DefaultKVType()
	if opt.KVType != "" && opt.KVType != "auto" {
		t, err := backend.ParseKVType(opt.KVType)
		if err != nil {
			return nil, err
		}
		kvt = t
	}
	threads, err := threadCount(opt.Threads)
	if err != nil {
		return nil, err
	}
	dev := cpudev.New("cpu:0", threads, opt.Kernels)
	s := &Seq2Seq{m: m, backends: []backend.Backend{dev}}
	fail := func(err error) (*Seq2Seq, error) {
		s.Close()
		return nil, err
	}
	if s.enc, err = scheduler.NewPlan(m.Encoder, scheduler.PlanOptions{MaxTokens: ctx, Backends: s.backends, Registry: m.Registry}); err != nil {
		return fail(fmt.Errorf("encoder: %w", err))
	}
	if s.dec, err = scheduler.NewPlan(m.Graph, scheduler.PlanOptions{MaxTokens: ctx, Backends: s.backends, Registry: m.Registry}); err != nil {
		return fail(fmt.Errorf("decoder: %w", err))
	}
	if s.encKV, err = s.enc.NewKV(opt.KVBudget, kvt); err != nil {
		return fail(err)
	}
	if s.decKV, err = s.dec.NewKV(opt.KVBudget, kvt); err != nil {
		return fail(err)
	}
	return s, nil
}

// Close releases the device.
func (s *Seq2Seq) Close() {
	for _, p := range []*scheduler.Plan{s.enc, s.dec} {
		if p != nil {
			p.Close()
		}
	}
	for _, b := range s.backends {
		b.Close()
	}
}

// MaxTokens returns the most tokens a prompt, or the decoder's input, may
// have.
func (s *Seq2Seq) MaxTokens() int { return s.dec.MaxTokens }

// DecoderStart returns the decoder's first input token: the model's
// decoder_start param (GGUF ARCH.decoder_start_token_id), or when it has
// none the BOS token, as llama.cpp falls back, or else the padding token.
func (s *Seq2Seq) DecoderStart() (int, error) {
	if v := s.m.Params.Int("decoder_start"); v >= 0 {
		return v, nil
	}
	meta := gguf.Metadata(s.m.Checkpoint.Meta())
	for _, k := range []string{"tokenizer.ggml.bos_token_id", "tokenizer.ggml.padding_token_id"} {
		if v, ok := meta[k]; ok {
			if id, ok := asInt(v); ok && id >= 0 {
				return id, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: no decoder start token (decoder_start_token_id, BOS or padding token)", s.m.Spec.File)
}

func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case uint32:
		return int(x), true
	case int32:
		return int(x), true
	case uint64:
		return int(x), true
	case int64:
		return int(x), true
	case int:
		return x, true
	}
	return 0, false
}

func (s *Seq2Seq) checkTokens(what string, tokens []int) error {
	if len(tokens) == 0 {
		return fmt.Errorf("%s: no tokens", what)
	}
	vocab := s.m.Params.Int("vocab")
	for i, t := range tokens {
		if vocab > 0 && (t < 0 || t >= vocab) {
			return fmt.Errorf("%s: token %d (at %d) outside the vocabulary of %d", what, t, i, vocab)
		}
	}
	return nil
}

// Encode runs the encoder over the prompt, keeps its output as the memory
// the decoder attends to, and starts a new decoder sequence.
func (s *Seq2Seq) Encode(ctx context.Context, prompt []int) error {
	if err := s.checkTokens("encode", prompt); err != nil {
		return err
	}
	if len(prompt) > s.enc.MaxTokens {
		return fmt.Errorf("encode: %d prompt tokens, the model takes at most %d", len(prompt), s.enc.MaxTokens)
	}
	st := &s.st
	s.fill(prompt, 0)
	s.encKV.Reset()
	if err := s.encKV.AddressWhole(st); err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	outs, err := s.enc.Run(ctx, st, s.encKV, nil)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	o := outs[0]
	cols := o.Shape[len(o.Shape)-1]
	// The memory outlives the encoder's buffers: it is copied out once.
	mem, err := backend.NewMemory(slices.Clone(o.F32()[:len(prompt)*cols]), len(prompt), cols)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	s.mem = mem
	s.encKV.Reset()
	s.decKV.Reset()
	s.blocks, s.pos = s.blocks[:0], 0
	return nil
}

// fill sets the step's tokens at positions from pos on, all kept.
func (s *Seq2Seq) fill(tokens []int, pos int) {
	st := &s.st
	st.Tokens, st.Pos, st.Seq, st.Keep, st.Types, st.Memory = st.Tokens[:0], st.Pos[:0], st.Seq[:0], st.Keep[:0], st.Types[:0], st.Memory[:0]
	for i, t := range tokens {
		st.Tokens = append(st.Tokens, int32(t))
		st.Pos = append(st.Pos, int32(pos+i))
		st.Seq = append(st.Seq, 0)
		st.Keep = append(st.Keep, int32(i))
	}
}

// Decode feeds the next decoder tokens (the first call after Encode
// starts with DecoderStart) and returns the logits after each of them.
// The rows are views valid until the next call.
func (s *Seq2Seq) Decode(ctx context.Context, tokens []int) ([][]float32, error) {
	if s.mem == nil {
		return nil, fmt.Errorf("decode: no encoder output: call Encode first")
	}
	if err := s.checkTokens("decode", tokens); err != nil {
		return nil, err
	}
	if s.pos+len(tokens) > s.dec.MaxTokens {
		return nil, fmt.Errorf("decode: %d decoder positions, the context holds %d", s.pos+len(tokens), s.dec.MaxTokens)
	}
	st := &s.st
	s.fill(tokens, s.pos)
	for range tokens {
		st.Memory = append(st.Memory, s.mem)
	}
	var err error
	if s.blocks, err = s.decKV.AddressSequence(st, s.blocks); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	outs, err := s.dec.Run(ctx, st, s.decKV, nil)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	s.pos += len(tokens)
	o := outs[0]
	cols := o.Shape[len(o.Shape)-1]
	h := o.F32()
	rows := make([][]float32, len(tokens))
	for i := range rows {
		rows[i] = h[i*cols : (i+1)*cols]
	}
	return rows, nil
}

// Greedy encodes the prompt and decodes from DecoderStart, taking the
// most likely token each step, until stop(token) or n tokens. It returns
// the generated tokens (without the start token).
func (s *Seq2Seq) Greedy(ctx context.Context, prompt []int, n int, stop func(int) bool) ([]int, error) {
	if err := s.Encode(ctx, prompt); err != nil {
		return nil, err
	}
	tok, err := s.DecoderStart()
	if err != nil {
		return nil, err
	}
	var out []int
	for len(out) < n {
		rows, err := s.Decode(ctx, []int{tok})
		if err != nil {
			return out, err
		}
		tok = argmax(rows[0])
		out = append(out, tok)
		if stop != nil && stop(tok) {
			break
		}
	}
	return out, nil
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
