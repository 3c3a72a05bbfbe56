package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weftrun/weft/convert"
	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
	"github.com/weftrun/weft/tokenizer"
)

// createAtomic writes a file through a temporary name, renamed into place
// only when fn succeeds: a failed or interrupted run leaves no half-written
// model behind. Ctrl-C (ctx from interruptible) stops fn at its next write
// and gives errInterrupted.
func createAtomic(ctx context.Context, path string, fn func(w io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(ctxWriter{ctx, tmp}, 1<<20)
	if err := fn(bw); err != nil {
		tmp.Close()
		return interrupted(ctx, err)
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return interrupted(ctx, fmt.Errorf("write %s: %w", path, err))
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

// vocabMeta returns tokenizer metadata: copied from a GGUF, or exported
// from any tokenizer file weft reads (tokenizer.json, vocab.txt,
// tokenizer.bin, a model folder).
func vocabMeta(path string) (gguf.Metadata, error) {
	if path == "" {
		return nil, nil
	}
	if !strings.HasSuffix(path, ".gguf") {
		tk, err := tokenizer.Load(path)
		if err != nil {
			return nil, fmt.Errorf("--vocab: %w", err)
		}
		m, err := tokenizer.GGUFMetadata(tk)
		if err != nil {
			return nil, fmt.Errorf("--vocab %s: %w", path, err)
		}
		return m, nil
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--vocab: %w", err)
	}
	defer f.Close()
	if _, ok := f.Meta["tokenizer.ggml.tokens"]; !ok {
		return nil, fmt.Errorf("--vocab %s: no tokenizer.ggml.tokens in its metadata", path)
	}
	// Copy out of the mapping before it closes.
	m := gguf.Metadata{}
	for k, v := range f.Meta {
		m[k] = v
	}
	return m, nil
}

func cmdSynth(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("synth", stderr)
	specPath := fs.String("s", "", "spec file or built-in name")
	dtype := fs.String("dtype", "f16", "weight type of 2-D tensors (f32, f16, bf16, q8_0, q4_0, q4_k, ...)")
	seed := fs.Uint64("seed", 1, "random seed")
	out := fs.String("o", "", "output GGUF")
	vocab := fs.String("vocab", "", "tokenizer to include: a GGUF, tokenizer.json, vocab.txt or tokenizer.bin (default: a synthetic vocabulary)")
	pf := addPluginFlags(fs, true)
	randVec := fs.Bool("random-vectors", false, "perturb 1-D weights (norm scales, biases) by N(0, 0.1²) noise instead of exact ones and zeros")
	arch := fs.String("arch", "", "general.architecture to write: one of the spec's architectures (default: its first; qwen3moe for a qwen3 spec with experts)")
	set := setFlags{}
	fs.Var(set, "set", "override a spec param: key=value (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *specPath == "" || *out == "" {
		return fmt.Errorf("%w: -s SPEC and -o OUT.gguf are required", errUsage)
	}
	dt, err := tensor.ParseDType(*dtype)
	if err != nil {
		return fmt.Errorf("%w: --dtype: %v", errUsage, err)
	}
	host, err := pf.host(*specPath, stderr)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	defer host.Close()
	reg := ops.Builtins()
	sp, err := model.Prepare(*specPath, "", nil, reg, host) // a spec's plugins register their ops
	if err != nil {
		return err
	}
	params, err := sp.ResolveParams(nil, overrides(set))
	if err != nil {
		return err
	}
	if err := model.CheckParams(sp, params, overrides(set), nil); err != nil {
		return err
	}
	vm, err := vocabMeta(*vocab)
	if err != nil {
		return err
	}
	if vm != nil {
		if toks, _ := vm.Strings("tokenizer.ggml.tokens"); len(toks) != params.Int("vocab") {
			return fmt.Errorf("--vocab %s has %d tokens, the model's vocab is %d (--set vocab=%d?)", *vocab, len(toks), params.Int("vocab"), len(toks))
		}
	}
	prog, done := progressTo(stderr, "synth "+filepath.Base(*out))
	defer done()
	ctx, stop := interruptible()
	defer stop()
	return createAtomic(ctx, *out, func(w io.Writer) error {
		return convert.Synth(w, sp, params, convert.SynthOptions{DType: dt, Seed: *seed, Vocab: vm, Progress: prog, Registry: reg, RandomVectors: *randVec, Arch: *arch})
	})
}

// quantTypes are the types weft quantize writes besides llama.cpp's
// presets, every 2-D weight as that type, in the order its help lists
// them.
var quantTypes = []tensor.DType{
	tensor.Q8_B32T2, tensor.Q6_B64T1, tensor.Q5_B64T1, tensor.Q4_B32T1, tensor.Q4_B64T1, tensor.Q3H_B64T1, tensor.Q3_B32T1, tensor.Q2_B32T1,
}

// bitsPerWeight is a type's size in bits per value.
func bitsPerWeight(dt tensor.DType) float64 {
	return float64(8*dt.TypeSize()) / float64(dt.BlockSize())
}

func cmdQuantize(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("quantize", stderr)
	requant := fs.Bool("allow-requantize", false, "allow an input whose weights are already quantized (quality suffers)")
	pure := fs.Bool("pure", false, "a llama.cpp preset without its per-tensor rules: every 2-D weight takes the preset's base type")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: weft quantize [--allow-requantize] [--pure] IN.gguf OUT.gguf TYPE")
		fmt.Fprintln(w, "\nTYPE: llama.cpp's presets (any case; the same tensor types and bytes as llama-quantize),")
		fmt.Fprintln(w, "bits per weight of the base type:")
		for _, p := range convert.Presets() {
			note := ""
			if p.Alias != "" {
				note = "  alias for " + p.Alias
			}
			fmt.Fprintf(w, "  %-10s %6.3f  %s%s\n", p.Name, bitsPerWeight(p.Base), strings.ToUpper(p.Base.String()), note)
		}
		fmt.Fprintln(w, "\nor Inferflow's formats, every 2-D weight as that type (llama.cpp cannot read the file):")
		for _, dt := range quantTypes {
			fmt.Fprintf(w, "  %-10s %6.3f\n", strings.ToUpper(dt.String()), bitsPerWeight(dt))
		}
		fmt.Fprintln(w)
		fs.PrintDefaults()
	}
	pos, err := parsePositional(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 3 {
		return fmt.Errorf("%w: weft quantize [--allow-requantize] [--pure] IN.gguf OUT.gguf TYPE (weft quantize --help lists the types)", errUsage)
	}
	in, outPath, typ := pos[0], pos[1], pos[2]
	preset, isPreset := convert.LookupPreset(typ)
	var dt tensor.DType
	if !isPreset {
		dt, err = tensor.ParseDType(typ)
		if err != nil || !slices.Contains(quantTypes, dt) {
			return fmt.Errorf("%w: %q is not a type weft quantize writes (weft quantize --help lists them)", errUsage, typ)
		}
	}
	if a, err := os.Stat(in); err == nil {
		if b, err := os.Stat(outPath); err == nil && os.SameFile(a, b) {
			return fmt.Errorf("%w: %s is the input: weft quantize does not overwrite its input", errUsage, outPath)
		}
	}
	f, err := gguf.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	if !*requant {
		for _, ti := range f.Tensors {
			if len(ti.Shape) == 2 && ti.DType.Quantized() {
				return fmt.Errorf("%w: %s: tensor %s is already %s; re-quantizing loses quality (--allow-requantize to go on)", errUsage, in, ti.Name, ti.DType)
			}
		}
	}
	prog, done := progressTo(stderr, "quantize "+filepath.Base(outPath))
	defer done()
	ctx, stop := interruptible()
	defer stop()
	return createAtomic(ctx, outPath, func(w io.Writer) error {
		if isPreset {
			return convert.QuantizePreset(w, f, preset, *pure, prog)
		}
		return convert.Quantize(w, f, dt, prog)
	})
}

func cmdConvert(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("convert", stderr)
	specPath := fs.String("s", "", "spec (default: chosen by the checkpoint's architecture)")
	dtype := fs.String("dtype", "", "re-encode 2-D weights as this type (default: keep f32/f16/bf16)")
	vocab := fs.String("vocab", "", "tokenizer to include: a GGUF, tokenizer.json, vocab.txt or tokenizer.bin (default: the checkpoint's own)")
	pf := addPluginFlags(fs, true)
	set := setFlags{}
	fs.Var(set, "set", "override a spec param: key=value (repeatable)")
	pos, err := parsePositional(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return fmt.Errorf("%w: weft convert [flags] IN OUT.gguf", errUsage)
	}
	in, outPath := pos[0], pos[1]
	opt := convert.ConvertOptions{KeepType: *dtype == ""}
	if *dtype != "" {
		dt, err := tensor.ParseDType(*dtype)
		if err != nil {
			return fmt.Errorf("%w: --dtype: %v", errUsage, err)
		}
		opt.DType = dt
	}
	vm, err := vocabMeta(*vocab)
	if err != nil {
		return err
	}
	opt.Vocab = vm
	host, err := pf.host(*specPath, stderr)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	defer host.Close()
	loadProg, loadDone := loadProgress(stderr, in)
	m, err := model.Load(model.Options{Path: in, Spec: *specPath, Set: overrides(set), NoPasses: true, Plugins: host, Progress: loadProg})
	loadDone()
	if err != nil {
		return err
	}
	defer m.Close()
	if opt.Vocab == nil {
		if tk := m.Tokenizer; tk == nil {
			fmt.Fprintf(stderr, "weft convert: %s has no tokenizer beside it; %s will have none (give --vocab)\n", in, outPath)
		} else if opt.Vocab, err = tokenizer.GGUFMetadata(tk); err != nil {
			return fmt.Errorf("%s: tokenizer: %w", in, err)
		}
	}
	if a := m.Checkpoint.Arch(); slices.Contains(m.Spec.Architectures, a) {
		opt.Arch = a // an HF Qwen3-MoE folder stays qwen3moe
	}
	prog, done := progressTo(stderr, "convert "+filepath.Base(outPath))
	defer done()
	ctx, stop := interruptible()
	defer stop()
	opt.Progress = prog
	return createAtomic(ctx, outPath, func(w io.Writer) error { return convert.Convert(w, m.Spec, m.Params, m.Graph, opt) })
}
