// Package convert writes models as GGUF: random-weight models synthesized
// from a spec (weft synth), re-quantized GGUFs (weft quantize) and
// checkpoints of other formats renamed through their spec (weft convert).
// Tensors stream through one at a time, so a model is never held in memory
// whole.
package convert

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
)

// Progress receives the bytes written so far; nil is silent.
type Progress interface {
	Add(n int64)
}

// ProgressFunc starts a progress report for a file of total bytes.
type ProgressFunc func(total int64) Progress

// outTensor is one tensor to write: its GGUF name, type and shape, and a
// producer of its float32 values (or of its final bytes when raw).
type outTensor struct {
	name  string
	dtype tensor.DType
	shape []int
	f32   func() ([]float32, error)
	raw   func() ([]byte, error)
}

// kv is one metadata entry in file order.
type kv struct {
	key   string
	value any
}

// TargetType returns the stored type for a tensor of this shape when the
// model's type is dt: 2-D weights take dt (falling back to q8_0 for a
// K-quant whose rows are not a multiple of 256, as llama.cpp does to a
// compatible type); 1-D tensors stay f32.
func TargetType(dt tensor.DType, shape []int) tensor.DType {
	if len(shape) < 2 {
		return tensor.F32
	}
	if dt.Quantized() && shape[len(shape)-1]%dt.BlockSize() != 0 {
		if shape[len(shape)-1]%32 == 0 {
			return tensor.Q8_0
		}
		return tensor.F32
	}
	return dt
}

// encode stores f32 values as dt. Blocks are independent, so the values
// are cut into one run of whole blocks per CPU and quantized in parallel;
// the bytes do not depend on the cut.
func encode(dt tensor.DType, src []float32) ([]byte, error) {
	if dt == tensor.F32 {
		return append([]byte(nil), tensor.F32ToBytes(src)...), nil
	}
	n, err := dt.RowBytes(len(src))
	if err != nil {
		return nil, err
	}
	dst := make([]byte, n)
	bs, ts := dt.BlockSize(), dt.TypeSize()
	blocks := len(src) / bs
	parts := min(runtime.GOMAXPROCS(0), max(1, blocks/256))
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		b0, b1 := blocks*p/parts, blocks*(p+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = quant.Quantize(dt, dst[b0*ts:b1*ts], src[b0*bs:b1*bs])
		}()
	}
	wg.Wait()
	return dst, errors.Join(errs...)
}

// fileType is general.file_type (llama_ftype) for a model of type dt, 0
// (all F32) for a type llama.cpp has no number for.
func fileType(dt tensor.DType) uint32 {
	ft, _ := dt.FileType()
	return ft
}

func write(out io.Writer, meta []kv, tensors []outTensor, newProg ProgressFunc) error {
	var prog Progress
	if newProg != nil {
		var total int64
		for _, t := range tensors {
			n, _ := t.dtype.RowBytes(tensor.NumElems(t.shape))
			total += int64(n)
		}
		prog = newProg(total)
	}
	w := gguf.NewWriter(out)
	for _, m := range meta {
		if err := w.AddKV(m.key, m.value); err != nil {
			return fmt.Errorf("metadata %s: %w", m.key, err)
		}
	}
	for _, t := range tensors {
		if err := w.AddTensor(t.name, t.dtype, t.shape); err != nil {
			return fmt.Errorf("tensor %s: %w", t.name, err)
		}
	}
	if err := w.WriteHeader(); err != nil {
		return err
	}
	for _, t := range tensors {
		var data []byte
		var err error
		if t.raw != nil {
			data, err = t.raw()
		} else {
			var f []float32
			if f, err = t.f32(); err == nil {
				data, err = encode(t.dtype, f)
			}
		}
		if err != nil {
			return fmt.Errorf("tensor %s: %w", t.name, err)
		}
		if err := w.WriteTensorData(t.name, data); err != nil {
			return fmt.Errorf("tensor %s: %w", t.name, err)
		}
		if prog != nil {
			prog.Add(int64(len(data)))
		}
	}
	return w.Close()
}

// InitKind says how a synthesized weight is initialised.
type InitKind int

// Initialisations of synthesized weights.
const (
	InitNormal InitKind = iota // N(0, 0.02²): matrices
	InitOnes                   // 1: norm scales
	InitZeros                  // 0: biases
)

// Init picks a weight's initialisation: tensors of two or more dimensions
// are N(0, 0.02²); 1-D tensors are norm scales (ones) when their spec key
// or tensor name mentions "norm", RoPE factors (ones) when the name
// mentions rope_freqs or rope_factors, else biases (zeros).
func Init(key, name string, shape []int) InitKind {
	if len(shape) >= 2 {
		return InitNormal
	}
	if strings.Contains(key, "norm") || strings.Contains(name, "norm") ||
		strings.Contains(name, "rope_freqs") || strings.Contains(name, "rope_factors") {
		return InitOnes // scales, and RoPE's per-pair divisors
	}
	return InitZeros
}

// RandomTensor returns the seeded values of tensor number index.
func RandomTensor(kind InitKind, n int, seed uint64, index int) []float32 {
	out := make([]float32, n)
	switch kind {
	case InitOnes:
		for i := range out {
			out[i] = 1
		}
	case InitNormal:
		r := rand.New(rand.NewPCG(seed, uint64(index)*0x9e3779b97f4a7c15+1))
		for i := range out {
			out[i] = float32(0.02 * r.NormFloat64())
		}
	}
	return out
}

// SynthOptions configures Synth.
type SynthOptions struct {
	DType tensor.DType
	Seed  uint64
	// Vocab supplies tokenizer metadata (tokenizer.* keys) to copy; nil
	// writes a synthetic SentencePiece vocabulary of the spec's vocab size.
	Vocab    gguf.Metadata
	Progress ProgressFunc
	// Registry holds the ops the spec uses (plugin ops registered); nil:
	// the built-ins.
	Registry *ops.Registry
	// RandomVectors perturbs the 1-D weights too, by seeded N(0, 0.1²)
	// noise (norm scales 1 + noise, biases noise), so that a comparison
	// with another engine exercises them; otherwise they are exactly 1
	// and 0.
	RandomVectors bool
	// Arch is the general.architecture to write, one of the spec's
	// architectures; "" takes the first.
	Arch string
}

// Synth writes a GGUF of seeded random weights for a spec.
func Synth(out io.Writer, sp *specs.Spec, params specs.Params, opt SynthOptions) error {
	reg := opt.Registry
	if reg == nil {
		reg = ops.Builtins()
	}
	g, err := sp.Build(specs.BuildOptions{Registry: reg, Params: params, Format: "gguf", Outputs: sp.Outputs})
	if err != nil {
		return err
	}
	arch := sp.Name
	if len(sp.Architectures) > 0 {
		arch = sp.Architectures[0]
	}
	if opt.Arch != "" {
		if !slices.Contains(sp.Architectures, opt.Arch) {
			return fmt.Errorf("%s: architecture %q is not one of the spec's (%s)", sp.File, opt.Arch, strings.Join(sp.Architectures, ", "))
		}
		arch = opt.Arch
	}
	meta := []kv{{"general.architecture", arch}, {"general.name", sp.Name + "-synth"}}
	for _, m := range sp.MetaKeys(arch, params) {
		meta = append(meta, kv{m.Key, m.Value})
	}
	meta = append(meta, kv{"general.file_type", fileType(opt.DType)})
	if opt.DType.Quantized() {
		meta = append(meta, kv{"general.quantization_version", uint32(2)})
	}
	vocab := opt.Vocab
	if vocab == nil {
		vocab = SyntheticVocab(params.Int("vocab"))
	}
	meta = append(meta, tokenizerKV(vocab)...)
	var tensors []outTensor
	seen := map[string]bool{}
	weights := g.Params()
	if sp.Encoder != nil {
		// An encoder-decoder model: the encoder's weights too.
		eg, err := sp.Build(specs.BuildOptions{Registry: reg, Params: params, Format: "gguf", Encoder: true})
		if err != nil {
			return err
		}
		weights = append(weights, eg.Params()...)
	}
	for i, v := range weights {
		name := v.Param.Source
		if seen[name] {
			continue // a tied weight: one tensor serves both
		}
		seen[name] = true
		shape := concrete(v)
		kind := Init(v.Param.Key, name, shape)
		idx := i
		tensors = append(tensors, outTensor{name: name, dtype: TargetType(opt.DType, shape), shape: shape,
			f32: func() ([]float32, error) {
				v := RandomTensor(kind, tensor.NumElems(shape), opt.Seed, idx)
				if opt.RandomVectors && len(shape) == 1 {
					r := rand.New(rand.NewPCG(opt.Seed^0x5bd1e9955bd1e995, uint64(idx)))
					for i := range v {
						v[i] += float32(0.1 * r.NormFloat64())
					}
				}
				return v, nil
			}})
	}
	return write(out, meta, tensors, opt.Progress)
}

func concrete(v *graph.Value) []int {
	s := make([]int, len(v.Type.Shape))
	for i, d := range v.Type.Shape {
		s[i] = d.N
	}
	return s
}

// tokenizerKV returns the tokenizer.* entries of a vocabulary's metadata in
// a stable order.
func tokenizerKV(m gguf.Metadata) []kv {
	var keys []string
	for k := range m {
		if strings.HasPrefix(k, "tokenizer.") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := make([]kv, len(keys))
	for i, k := range keys {
		out[i] = kv{k, m[k]}
	}
	return out
}

// sameData reports whether two tensors are views of the same bytes.
func sameData(a, b *tensor.Tensor) bool {
	return len(a.Data) == len(b.Data) && len(a.Data) > 0 && &a.Data[0] == &b.Data[0]
}

// SyntheticVocab returns a SentencePiece-style vocabulary of n tokens:
// <unk>, <s>, </s>, the 256 byte tokens, then made-up word pieces. It lets
// a synthesized model load and run anywhere (llama.cpp included); its text
// is meaningless.
func SyntheticVocab(n int) gguf.Metadata {
	if n < 259+1 {
		n = 260
	}
	tokens := make([]string, n)
	scores := make([]float32, n)
	types := make([]int32, n)
	tokens[0], tokens[1], tokens[2] = "<unk>", "<s>", "</s>"
	types[0], types[1], types[2] = 2, 3, 3
	for b := 0; b < 256; b++ {
		tokens[3+b] = fmt.Sprintf("<0x%02X>", b)
		types[3+b] = 6
	}
	const letters = "etaoinshrdlucmfwypvbgkjqxz"
	for i := 259; i < n; i++ {
		k := i - 259
		var b strings.Builder
		b.WriteString("\u2581")
		for {
			b.WriteByte(letters[k%len(letters)])
			k /= len(letters)
			if k == 0 {
				break
			}
		}
		tokens[i] = b.String()
		types[i] = 1
		scores[i] = -float32(i)
	}
	return gguf.Metadata{
		"tokenizer.ggml.model":            "llama",
		"tokenizer.ggml.tokens":           tokens,
		"tokenizer.ggml.scores":           scores,
		"tokenizer.ggml.token_type":       types,
		"tokenizer.ggml.bos_token_id":     uint32(1),
		"tokenizer.ggml.eos_token_id":     uint32(2),
		"tokenizer.ggml.unknown_token_id": uint32(0),
	}
}

// Quantize re-encodes a GGUF's 2-D weights as dt; 1-D tensors become f32.
// Metadata is copied, with general.file_type updated. Every 2-D weight
// takes dt (see TargetType); QuantizePreset applies llama.cpp's mixes.
func Quantize(out io.Writer, in *gguf.File, dt tensor.DType, prog ProgressFunc) error {
	typeOf := func(ti gguf.TensorInfo) (tensor.DType, error) { return TargetType(dt, ti.Shape), nil }
	return quantize(out, in, fileType(dt), dt.Quantized(), typeOf, prog)
}

// QuantizePreset re-encodes a GGUF as llama.cpp's llama-quantize does for
// preset p without an importance matrix: the same tensor types, the same
// bytes, the same metadata and tensor order, so the file is byte-identical
// to llama-quantize's. With pure, every quantizable tensor takes p.Base
// (llama-quantize --pure). Tensors that are not weights of two or more
// dimensions, and norms, keep their type.
func QuantizePreset(out io.Writer, in *gguf.File, p Preset, pure bool, prog ProgressFunc) error {
	st := newMixState(in)
	typeOf := func(ti gguf.TensorInfo) (tensor.DType, error) {
		if !quantizable(ti.Name, ti.Shape) {
			return ti.DType, nil
		}
		if pure || !p.Base.Quantized() {
			return fallbackType(p.Base, ti.Shape[len(ti.Shape)-1]), nil
		}
		return p.tensorType(st, ti.Name, ti.Shape)
	}
	return quantize(out, in, p.FileType, true, typeOf, prog)
}

// quantize copies in's metadata (general.quantization_version and
// general.file_type last, in that order, as llama-quantize writes them)
// and its tensors in llama.cpp's order, each re-encoded as typeOf says
// (copied as is when its type does not change).
func quantize(out io.Writer, in *gguf.File, ftype uint32, quantVersion bool, typeOf func(gguf.TensorInfo) (tensor.DType, error), prog ProgressFunc) error {
	var meta []kv
	for _, k := range in.Keys {
		switch k {
		case "general.file_type", "general.quantization_version", "split.no", "split.count", "split.tensors.count":
			continue
		}
		meta = append(meta, kv{k, in.Meta[k]})
	}
	if quantVersion {
		meta = append(meta, kv{"general.quantization_version", uint32(2)})
	}
	meta = append(meta, kv{"general.file_type", ftype})
	infos := slices.Clone(in.Tensors)
	slices.SortStableFunc(infos, func(a, b gguf.TensorInfo) int {
		switch {
		case llamaLess(a.Name, b.Name):
			return -1
		case llamaLess(b.Name, a.Name):
			return 1
		}
		return 0
	})
	var tensors []outTensor
	for _, ti := range infos {
		target, err := typeOf(ti)
		if err != nil {
			return fmt.Errorf("%s: %w", in.Path, err)
		}
		ot := outTensor{name: ti.Name, dtype: target, shape: ti.Shape}
		if target == ti.DType {
			ot.raw = func() ([]byte, error) {
				t, err := in.Tensor(ti.Name)
				if err != nil {
					return nil, err
				}
				return t.Data, nil
			}
		} else {
			ot.f32 = func() ([]float32, error) {
				t, err := in.Tensor(ti.Name)
				if err != nil {
					return nil, err
				}
				return ToF32(t)
			}
		}
		tensors = append(tensors, ot)
	}
	return write(out, meta, tensors, prog)
}

// ToF32 decodes a tensor of any supported type to float32.
func ToF32(t *tensor.Tensor) ([]float32, error) {
	n := t.Elems()
	if t.DType == tensor.F32 {
		return append([]float32(nil), tensor.BytesToF32(t.Data)[:n]...), nil
	}
	dst := make([]float32, n)
	if err := quant.Dequantize(t.DType, dst, t.Data); err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	return dst, nil
}

// ConvertOptions configures Convert.
type ConvertOptions struct {
	// DType re-encodes 2-D weights; 0 keeps f32/f16/bf16 as stored
	// (other source types become f32).
	DType    tensor.DType
	KeepType bool
	Vocab    gguf.Metadata // tokenizer metadata to include
	Progress ProgressFunc
	// Arch is the general.architecture to write, one of the spec's
	// architectures (the source checkpoint's: an HF Qwen3-MoE folder is
	// qwen3moe under qwen3.yaml); "" takes the spec's first.
	Arch string
}

// Convert writes the weights bound in g (built from sp for a checkpoint of
// another format) as a GGUF with the spec's GGUF tensor names and
// metadata, applying the spec's load-time transforms on the way.
func Convert(out io.Writer, sp *specs.Spec, params specs.Params, g *graph.Graph, opt ConvertOptions) error {
	arch := sp.Name
	if len(sp.Architectures) > 0 {
		arch = sp.Architectures[0]
	}
	if opt.Arch != "" {
		if !slices.Contains(sp.Architectures, opt.Arch) {
			return fmt.Errorf("%s: architecture %q is not one of the spec's (%s)", sp.File, opt.Arch, strings.Join(sp.Architectures, ", "))
		}
		arch = opt.Arch
	}
	meta := []kv{{"general.architecture", arch}, {"general.name", sp.Name}}
	for _, m := range sp.MetaKeys(arch, params) {
		meta = append(meta, kv{m.Key, m.Value})
	}
	model := opt.DType
	if opt.KeepType {
		model = tensor.F32
	}
	meta = append(meta, kv{"general.file_type", fileType(model)})
	if model.Quantized() {
		meta = append(meta, kv{"general.quantization_version", uint32(2)})
	}
	meta = append(meta, tokenizerKV(opt.Vocab)...)
	var tensors []outTensor
	written := map[string]*tensor.Tensor{} // source name → the tensor written for it
	names := map[string]string{}           // GGUF name → the weight key written there
	for _, v := range g.Params() {
		p := v.Param
		if w, ok := written[p.Source]; ok && sameData(w, p.Tensor) {
			continue // tied: the first name serves (llama.cpp falls back to it)
		}
		cands, err := sp.TensorNames(p.Key, p.Vars, "gguf", params)
		if err != nil {
			return err
		}
		name := cands[0]
		if other, ok := names[name]; ok {
			return fmt.Errorf("%s: weights %s and %s would both be written as %s (a tensor cut at load time, e.g. by rows(); convert with the fused layout)",
				sp.File, other, p.Key, name)
		}
		written[p.Source], names[name] = p.Tensor, p.Key
		t := p.Tensor
		target := t.DType
		switch {
		case opt.KeepType && (t.DType == tensor.F32 || t.DType == tensor.F16 || t.DType == tensor.BF16):
		case opt.KeepType:
			target = tensor.F32
		default:
			target = TargetType(opt.DType, t.Shape)
		}
		if len(t.Shape) < 2 {
			target = tensor.F32
		}
		ot := outTensor{name: name, dtype: target, shape: t.Shape}
		if target == t.DType {
			ot.raw = func() ([]byte, error) { return t.Data, nil }
		} else {
			ot.f32 = func() ([]float32, error) { return ToF32(t) }
		}
		tensors = append(tensors, ot)
	}
	return write(out, meta, tensors, opt.Progress)
}

// Stats summarises a float slice (for tests and reports).
func Stats(x []float32) (mean, std float64) {
	for _, v := range x {
		mean += float64(v)
	}
	mean /= float64(len(x))
	for _, v := range x {
		std += (float64(v) - mean) * (float64(v) - mean)
	}
	return mean, math.Sqrt(std / float64(len(x)))
}
