// Package model loads a checkpoint with its spec and tokenizer into a
// bound, optimised graph ready for the scheduler.
package model

import (
	"fmt"
	"os"
	"path/filepath"

	"runtime"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/backend/cpudev"
	"github.com/weftrun/weft/checkpoint"
	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
	"github.com/weftrun/weft/tokenizer"
)

// Options selects what to load.
type Options struct {
	Path      string         // checkpoint file or HF folder
	Spec      string         // spec path or built-in name; "" picks by architecture
	Tokenizer string         // tokenizer file; "" uses the checkpoint's own
	Set       map[string]any // --set overrides
	Registry  *ops.Registry  // nil: the built-ins
	// NoPasses skips graph optimisation (for debugging and tests).
	NoPasses bool
	// Plugins registers the ops of the plugins a spec names (its
	// plugins: section) before the graph is built.
	Plugins PluginLoader
	// Progress, when set, is started with the checkpoint's tensor bytes
	// and told of each weight's bytes as it is bound (a progress line).
	Progress func(total int64) Progress
	// Outputs picks the spec outputs the graph computes (nil: the first,
	// which text generation samples from). `weft embed` asks for
	// "hidden" alone, which leaves a decoder's LM head out.
	Outputs []string
}

// Progress receives the bytes of the weights bound so far.
type Progress interface {
	Add(n int64)
}

// PluginLoader registers out-of-process plugin ops into a registry.
type PluginLoader interface {
	Load(decls []*specs.PluginDecl, reg *ops.Registry) error
}

// SpecPluginLoader is a PluginLoader that wants the whole spec, not only
// its plugins: section (plugins.Unstarted, which stands placeholders in
// for the ops a spec calls, to draw a graph without starting a plugin).
type SpecPluginLoader interface {
	LoadSpec(sp *specs.Spec, reg *ops.Registry) error
}

// Prepare resolves a spec by path, built-in name or checkpoint
// architecture and metadata, and registers the plugin ops it names into
// reg.
func Prepare(spec, arch string, meta map[string]any, reg *ops.Registry, pl PluginLoader) (*specs.Spec, error) {
	var sp *specs.Spec
	var err error
	if spec != "" {
		sp, err = specs.Open(spec)
	} else {
		sp, err = specs.ForCheckpoint(arch, meta)
	}
	if err != nil {
		return nil, err
	}
	if len(sp.Plugins) > 0 {
		if pl == nil {
			return nil, fmt.Errorf("%s uses plugins (%s) but no plugin host is configured", sp.File, sp.Plugins[0].Name)
		}
		load := func() error { return pl.Load(sp.Plugins, reg) }
		if sl, ok := pl.(SpecPluginLoader); ok {
			load = func() error { return sl.LoadSpec(sp, reg) }
		}
		if err := load(); err != nil {
			return nil, err // plugin errors name the spec line already
		}
	}
	return sp, nil
}

// Model is a loaded model.
type Model struct {
	Checkpoint checkpoint.Checkpoint
	Spec       *specs.Spec
	Params     specs.Params
	Graph      *graph.Graph
	// Encoder is an encoder-decoder model's encoder graph (nil for other
	// models); Graph is then its decoder. See NewSeq2Seq.
	Encoder   *graph.Graph
	Tokenizer tokenizer.Tokenizer // nil when none was found
	Format    string              // the spec naming scheme used
	Registry  *ops.Registry
	noPasses  bool     // Options.NoPasses, for graphs built later
	path      string   // Options.Path
	outputs   []string // the spec outputs Graph computes, in order
}

// NamingScheme maps a checkpoint format to the spec's naming scheme.
func NamingScheme(format string) string {
	switch format {
	case checkpoint.FormatGGUF, checkpoint.FormatLlama2C:
		return format
	}
	return "hf"
}

type source struct {
	ck    checkpoint.Checkpoint
	names map[string]bool
	prog  Progress // nil: none
}

// Source adapts a checkpoint to the spec builder's tensor source.
func Source(ck checkpoint.Checkpoint) specs.TensorSource {
	src := &source{ck: ck, names: map[string]bool{}}
	for _, in := range ck.Infos() {
		src.names[in.Name] = true
	}
	return src
}

func (s *source) Has(name string) bool { return s.names[name] }

// Names lists the checkpoint's tensors (the spec's `tensors` variable).
func (s *source) Names() []string {
	out := make([]string, 0, len(s.names))
	for n := range s.names {
		out = append(out, n)
	}
	return out
}

// Tensor returns the named tensor. 1-D F16/BF16 tensors (norm scales and
// biases in HF checkpoints) are widened to F32 once, at bind time: the row
// kernels read vectors as F32.
func (s *source) Tensor(name string) (*tensor.Tensor, error) {
	t, err := s.ck.Tensor(name)
	if err != nil {
		return nil, err
	}
	if err := CheckFinite(t); err != nil {
		return nil, err
	}
	if s.prog != nil {
		s.prog.Add(int64(len(t.Data)))
	}
	if len(t.Shape) != 1 || (t.DType != tensor.F16 && t.DType != tensor.BF16) {
		return t, nil
	}
	out := make([]float32, t.Shape[0])
	if err := quant.Dequantize(t.DType, out, t.Data); err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	return tensor.FromF32(t.Name, out, t.Shape[0]), nil
}

// Load opens the checkpoint, picks and resolves the spec, binds the
// weights, runs the graph passes and loads the tokenizer.
func Load(opt Options) (*Model, error) {
	ck, err := checkpoint.Open(opt.Path)
	if err != nil {
		return nil, err
	}
	m, err := load(ck, opt)
	if err != nil {
		ck.Close()
		return nil, err
	}
	return m, nil
}

func load(ck checkpoint.Checkpoint, opt Options) (*Model, error) {
	reg := opt.Registry
	if reg == nil {
		reg = ops.Builtins()
	}
	sp, err := Prepare(opt.Spec, ck.Arch(), ck.Meta(), reg, opt.Plugins)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opt.Path, err)
	}
	format := NamingScheme(ck.Format())
	src := Source(ck)
	meta := &specs.Meta{Format: format, Arch: ck.Arch(), Values: ck.Meta(), HasTensor: src.Has}
	if err := CheckMeta(sp, meta); err != nil {
		return nil, fmt.Errorf("%s: %w", opt.Path, err)
	}
	params, err := sp.ResolveParams(meta, opt.Set)
	if err != nil {
		return nil, err
	}
	if err := CheckParams(sp, params, opt.Set, meta); err != nil {
		return nil, fmt.Errorf("%s: %w", opt.Path, err)
	}
	if opt.Progress != nil {
		var total int64
		for _, in := range ck.Infos() {
			n := 1
			for _, d := range in.Shape {
				n *= d
			}
			if rb, err := in.DType.RowBytes(n); err == nil {
				total += int64(rb)
			}
		}
		src.(*source).prog = opt.Progress(total)
	}
	m := &Model{Checkpoint: ck, Spec: sp, Params: params, Format: format, Registry: reg, noPasses: opt.NoPasses, path: opt.Path}
	if m.Graph, err = m.build(src, opt.Outputs, opt.Path); err != nil {
		return nil, err
	}
	m.outputs = opt.Outputs
	if m.outputs == nil {
		m.outputs = sp.Outputs[:min(1, len(sp.Outputs))]
	}
	if sp.Encoder != nil {
		if m.Encoder, err = buildEncoder(sp, specs.BuildOptions{Registry: reg, Params: params, Format: format, Source: src}, opt.NoPasses); err != nil {
			return nil, fmt.Errorf("%s with %s: %w", filepath.Base(opt.Path), sp.File, err)
		}
	}
	if m.Tokenizer, err = LoadTokenizer(ck, opt.Path, opt.Tokenizer, params.Int("vocab")); err != nil {
		return nil, err
	}
	if err := checkVocab(m.Tokenizer, params.Int("vocab"), format, opt); err != nil {
		return nil, err
	}
	return m, nil
}

// build builds and optimises the graph of the spec outputs named (nil:
// the first) over the weights of src.
func (m *Model) build(src specs.TensorSource, outputs []string, path string) (*graph.Graph, error) {
	if outputs == nil && len(m.Spec.Outputs) > 0 {
		outputs = m.Spec.Outputs[:1]
	}
	g, err := m.Spec.Build(specs.BuildOptions{Registry: m.Registry, Params: m.Params, Format: m.Format, Source: src, Outputs: outputs})
	if err != nil {
		return nil, fmt.Errorf("%s with %s: %w", filepath.Base(path), m.Spec.File, err)
	}
	if !m.noPasses {
		if err := graph.Optimize(g, m.Registry); err != nil {
			return nil, fmt.Errorf("optimize %s: %w", m.Spec.File, err)
		}
	}
	return g, nil
}

// checkVocab checks that the tokenizer and the model agree on the number
// of token ids. An HF config may round its vocab_size up past the
// tokenizer's (padding rows nobody emits); GGUF and llama2.c files may not.
func checkVocab(tok tokenizer.Tokenizer, vocab int, format string, opt Options) error {
	if tok == nil || vocab <= 0 {
		return nil
	}
	n := tok.VocabSize()
	if n == vocab || (n < vocab && format == "hf") {
		return nil
	}
	from := "the checkpoint's own tokenizer"
	if opt.Tokenizer != "" {
		from = "--tokenizer " + opt.Tokenizer
	}
	return fmt.Errorf("%s: %s has %d tokens but the model's vocabulary is %d: the tokenizer does not belong to this model (or is truncated)", opt.Path, from, n, vocab)
}

// CheckGenerates returns an error unless the model's graph outputs logits
// over its vocabulary, as text generation needs (an encoder outputs
// hidden states instead).
func (m *Model) CheckGenerates() error {
	if len(m.Graph.Outputs) == 0 {
		return fmt.Errorf("%s: the graph has no output", m.Spec.File)
	}
	out := m.Graph.Outputs[0]
	width := 0
	if sh := out.Type.Shape; len(sh) > 0 {
		width = sh[len(sh)-1].N
	}
	if out.Name != "logits" || (m.Params.Int("vocab") > 0 && width != m.Params.Int("vocab")) {
		return fmt.Errorf("%s outputs %q (width %d), not logits over the vocabulary of %d: it is an encoder or embedding model, which cannot generate text", m.Spec.File, out.Name, width, m.Params.Int("vocab"))
	}
	return nil
}

// LoadTokenizer returns the tokenizer for checkpoint ck opened from path:
// the file named by explicit when given, else the checkpoint's own (GGUF
// metadata, a llama2.c tokenizer.bin beside it, an HF folder's
// tokenizer.json). It returns nil, nil when there is none.
func LoadTokenizer(ck checkpoint.Checkpoint, path, explicit string, vocab int) (tokenizer.Tokenizer, error) {
	opt := Options{Path: path, Tokenizer: explicit}
	if opt.Tokenizer != "" {
		if ck.Format() == checkpoint.FormatLlama2C || filepath.Ext(opt.Tokenizer) == ".bin" {
			t, err := tokenizer.LoadLlama2C(opt.Tokenizer, vocab)
			if err == nil {
				return t, nil
			}
		}
		return tokenizer.Load(opt.Tokenizer)
	}
	switch ck.Format() {
	case checkpoint.FormatGGUF:
		t, err := tokenizer.FromGGUF(gguf.Metadata(ck.Meta()))
		if err != nil {
			return nil, fmt.Errorf("%s: tokenizer: %w", opt.Path, err)
		}
		return t, nil
	case checkpoint.FormatLlama2C:
		// llama2.c keeps its vocabulary beside the weights.
		dir := filepath.Dir(opt.Path)
		for _, n := range []string{"tokenizer.bin", "tok512.bin"} {
			if p := filepath.Join(dir, n); fileExists(p) {
				return tokenizer.LoadLlama2C(p, vocab)
			}
		}
		return nil, nil
	}
	if p := filepath.Join(opt.Path, "tokenizer.json"); fileExists(p) {
		return tokenizer.LoadHF(p)
	}
	return nil, nil
}

func fileExists(p string) bool { st, err := os.Stat(p); return err == nil && !st.IsDir() }

// Close releases the checkpoint.
func (m *Model) Close() error { return m.Checkpoint.Close() }

// Context returns the model's context size (the ctx param, or 4096).
func (m *Model) Context() int {
	if c := m.Params.Int("ctx"); c > 0 {
		return c
	}
	return 4096
}

// EngineOptions configures NewEngine.
type EngineOptions struct {
	Threads   int // worker threads over all devices (0: all cores)
	MaxTokens int // tokens per step
	Context   int // positions per sequence (0: the model's context)
	// KVType is the KV cache element type: "f32", "f16", or "auto" (or
	// empty) for DefaultKVType.
	KVType string
	// Devices places the model (--devices, see scheduler.ParseDevices);
	// "" is one CPU device.
	Devices string
	// KVBudget bounds the KV cache's bytes (0: no limit).
	KVBudget int64
	// MicroBatches overlaps the layer groups of a pipeline (see
	// scheduler.PlanOptions.MicroBatches); 0 or 1: steps run whole.
	MicroBatches int
	// Kernels forces a CPU kernel set (the zero value: the best the
	// machine has).
	Kernels cpu.Kernels
	// StepTokens bounds the tokens of a step that carries decodes
	// (scheduler.Options.StepTokens; 0: MaxTokens).
	StepTokens int
}

// NewEngine places the graph on the devices opt names, compiles it and
// returns an engine that owns the devices' workers (close it).
func (m *Model) NewEngine(opt EngineOptions) (*scheduler.Engine, error) {
	if m.Encoder != nil {
		return nil, fmt.Errorf("%s is an encoder-decoder model: `weft run` serves it (model.Seq2Seq); the engine (serve, chat, bench, perplexity) serves decoder-only models", m.Spec.File)
	}
	kvt := m.DefaultKVType()
	if opt.KVType != "" && opt.KVType != "auto" {
		t, err := backend.ParseKVType(opt.KVType)
		if err != nil {
			return nil, err
		}
		kvt = t
	}
	ctx := opt.Context
	if ctx <= 0 {
		ctx = m.Context()
	}
	devs, err := scheduler.ParseDevices(opt.Devices)
	if err != nil {
		return nil, err
	}
	threads, err := threadCount(opt.Threads)
	if err != nil {
		return nil, err
	}
	var backends []backend.Backend
	closeAll := func() {
		for _, b := range backends {
			b.Close()
		}
	}
	for i, name := range devs.Names() {
		backends = append(backends, cpudev.New(name, devs.Threads(threads)[i], opt.Kernels))
	}
	plan, err := scheduler.NewPlan(m.Graph, scheduler.PlanOptions{MaxTokens: opt.MaxTokens, Devices: devs, Backends: backends, Registry: m.Registry, MicroBatches: opt.MicroBatches})
	if err != nil {
		closeAll()
		return nil, err
	}
	e, err := scheduler.NewEngine(plan, scheduler.Options{Context: ctx, KVType: kvt, KVBudget: opt.KVBudget, StepTokens: opt.StepTokens})
	if err != nil {
		closeAll()
		return nil, err
	}
	return e, nil
}

// DefaultKVType returns llama.cpp's default KV cache type for the model:
// f16, unless every 2-D weight the graph reads is float32 (a float32
// model keeps the whole computation in float32).
func (m *Model) DefaultKVType() backend.KVType {
	for _, v := range m.Graph.Params() {
		if t := v.Param.Tensor; t != nil && len(t.Shape) == 2 && t.DType != tensor.F32 {
			return backend.KVF16
		}
	}
	return backend.KVF32
}

// WeightBytes returns the bytes of the weights the graph reads, each
// tensor counted once (a tied embedding counts once).
func (m *Model) WeightBytes() int64 {
	seen := map[string]bool{}
	var n int64
	for _, v := range m.Graph.Params() {
		if seen[v.Param.Source] || v.Param.Tensor == nil {
			continue
		}
		seen[v.Param.Source] = true
		n += int64(len(v.Param.Tensor.Data))
	}
	return n
}

// threadCount is EngineOptions.Threads resolved: 0 means every core, and a
// negative count is an error.
func threadCount(n int) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("threads %d: want 0 (all cores) or more", n)
	case n == 0:
		return runtime.GOMAXPROCS(0), nil
	}
	return n, nil
}
