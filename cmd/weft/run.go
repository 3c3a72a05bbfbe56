package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tokenizer"
)

type runResult struct {
	PromptTokens []int        `json:"prompt_tokens"`
	Tokens       []int        `json:"tokens"`
	Text         string       `json:"text"`
	PrefillTokS  float64      `json:"prefill_tok_s"`
	DecodeTokS   float64      `json:"decode_tok_s"`
	Beams        []beamResult `json:"beams,omitempty"`
	Choices      []choice     `json:"choices,omitempty"`
	KVBytes      int64        `json:"kv_bytes"`                // the KV cache's bytes in use at the end of generation
	Seed         uint64       `json:"seed"`                    // the sampling seed, drawn at random unless --seed gave it
	FinishReason string       `json:"finish_reason,omitempty"` // length, stop, or dead_end (a grammar allows no token)
	Spec         *specResult  `json:"speculative,omitempty"`   // --spec-ngram, --model-draft
}

// specResult reports speculative decoding: drafted tokens, those the
// model kept, and their ratio.
type specResult struct {
	Drafted    int     `json:"drafted"`
	Accepted   int     `json:"accepted"`
	AcceptRate float64 `json:"accept_rate"`
}

// beamResult is one beam of --beams, best first.
type beamResult struct {
	Tokens  []int   `json:"tokens"`
	Text    string  `json:"text"`
	Logprob float64 `json:"logprob"` // the sum of its tokens' log-probabilities under the raw softmax
}

// choice is one sample of --choices.
type choice struct {
	Tokens []int  `json:"tokens"`
	Text   string `json:"text"`
}

func overrides(set setFlags) map[string]any {
	out := map[string]any{}
	for k, v := range set {
		out[k] = specs.ParseValue(v)
	}
	return out
}

func cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	modelPath := fs.String("m", "", "model: GGUF, llama2.c .bin, safetensors/PyTorch file or HF folder")
	specPath := fs.String("s", "", "spec file or built-in name (default: chosen by the checkpoint's architecture)")
	tokPath := fs.String("tokenizer", "", "tokenizer file (llama2.c tokenizer.bin, tokenizer.json, vocab GGUF)")
	prompt := fs.String("p", "", "prompt (-: read it from standard input)")
	promptFile := fs.String("f", "", "read the prompt from FILE (-: standard input)")
	fs.StringVar(promptFile, "file", "", "same as -f")
	n := fs.Int("n", 128, "tokens to generate (-1: until end of text or the context is full)")
	sf := addSampleFlags(fs)
	spf := addSpecFlags(fs)
	seed := fs.Int64("seed", -1, "sampling seed (-1: random)")
	threads := fs.Int("threads", 0, "CPU threads (0: all cores)")
	fs.IntVar(threads, "t", 0, "same as --threads")
	batch := fs.Int("batch", 256, "tokens per prefill step")
	jsonOut := fs.Bool("json", false, "print one JSON object instead of streaming text")
	logitsOut := fs.String("logits-out", "", "write float32 logits rows, one per generated token")
	force := fs.String("force-tokens", "", "comma-separated token ids to feed instead of sampling (teacher forcing)")
	noBOS := fs.Bool("no-bos", false, "do not add BOS even if the model asks for it")
	kvType := fs.String("kv-type", "auto", kvTypeUsage)
	devices := fs.String("devices", "", devicesUsage)
	microBatches := fs.Int("micro-batches", 1, microBatchesUsage)
	ctxSize := fs.Int("c", 0, "context size in positions per sequence (0: the model's)")
	fs.IntVar(ctxSize, "ctx-size", 0, "same as -c")
	beams := fs.Int("beams", 0, "beam search of this width (HF num_beams); prints \"beams\" with --json")
	lengthPenalty := fs.Float64("length-penalty", 1, "beam search length penalty (HF length_penalty): score = logprob / length^X")
	choices := fs.Int("choices", 1, "independent samples of the prompt (sharing its KV cache); prints \"choices\" with --json")
	keep := fs.Int("keep", -1, "when the context fills, keep the first N positions (attention sinks), drop half of the rest and go on (StreamingLLM; -1: stop at the context)")
	kvBudget := fs.String("kv-budget", "auto", kvBudgetUsage)
	pf := addPluginFlags(fs, true)
	set := setFlags{}
	fs.Var(set, "set", "override a spec param: key=value (repeatable)")
	kernels := addKernelsFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	kern, err := kernels()
	if err != nil {
		return err
	}
	if *modelPath == "" {
		return fmt.Errorf("%w: -m MODEL is required", errUsage)
	}
	if *n < -1 {
		return fmt.Errorf("%w: -n %d (a count of tokens, or -1: until end of text)", errUsage, *n)
	}
	switch {
	case *ctxSize < 0:
		return fmt.Errorf("%w: -c %d: the context size must be ≥ 0", errUsage, *ctxSize)
	case *beams < 0 || *beams > 256:
		return fmt.Errorf("%w: --beams %d (0 to 256)", errUsage, *beams)
	case *choices < 1 || *choices > 256:
		return fmt.Errorf("%w: --choices %d (1 to 256)", errUsage, *choices)
	case *beams > 0 && *choices > 1:
		return fmt.Errorf("%w: --beams and --choices cannot be combined", errUsage)
	case *keep < -1:
		return fmt.Errorf("%w: --keep %d (-1 or a count of positions)", errUsage, *keep)
	case *keep >= 0 && (*beams > 0 || *choices > 1):
		return fmt.Errorf("%w: --keep serves a single sequence, not --beams or --choices", errUsage)
	case math.IsNaN(*lengthPenalty) || math.IsInf(*lengthPenalty, 0):
		return fmt.Errorf("%w: --length-penalty %v", errUsage, *lengthPenalty)
	}
	budget, err := parseBytes(*kvBudget)
	if err != nil {
		return fmt.Errorf("%w: --kv-budget: %v", errUsage, err)
	}
	if *batch < 1 || *batch > 1<<16 {
		return fmt.Errorf("%w: --batch %d (1 to 65536)", errUsage, *batch)
	}
	if err := checkKVType(*kvType); err != nil {
		return err
	}
	if err := checkDevices(*devices); err != nil {
		return err
	}
	forced, err := parseIDs(*force)
	if err != nil {
		return fmt.Errorf("%w: --force-tokens: %v", errUsage, err)
	}
	nSet, pSet := false, false
	fs.Visit(func(f *flag.Flag) { nSet, pSet = nSet || f.Name == "n", pSet || f.Name == "p" })
	if *prompt, err = readPrompt(*prompt, pSet, *promptFile, os.Stdin); err != nil {
		return err
	}
	if len(forced) > 0 && (!nSet || len(forced) > *n) {
		*n = len(forced)
	}
	s := uint64(*seed)
	if *seed < 0 {
		// A random seed is reported so that a good sample can be redone.
		s = uint64(time.Now().UnixNano()) & (1<<63 - 1)
		fmt.Fprintf(stderr, "weft run: seed %d (--seed %d repeats this sample)\n", s, s)
	}
	if err := sf.check(*beams); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := spf.check(*beams, *choices, *keep, len(forced) > 0); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	host, err := pf.host(*specPath, stderr)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	defer host.Close()
	loadProg, loadDone := loadProgress(stderr, *modelPath)
	m, err := model.Load(model.Options{Path: *modelPath, Spec: *specPath, Tokenizer: *tokPath, Set: overrides(set), Plugins: host, Progress: loadProg})
	loadDone()
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.CheckGenerates(); err != nil {
		return err
	}
	if m.Tokenizer == nil {
		return fmt.Errorf("%s has no tokenizer; pass --tokenizer FILE", *modelPath)
	}
	ids, err := m.Tokenizer.Encode(*prompt, tokenizer.EncodeOptions{AddSpecial: !*noBOS, ParseSpecial: true})
	if err != nil {
		return fmt.Errorf("tokenize prompt: %w", err)
	}
	if len(ids) == 0 {
		return fmt.Errorf("%w: the prompt is empty and the model adds no BOS", errUsage)
	}
	ctxLen := *ctxSize
	if ctxLen == 0 {
		ctxLen = m.Context()
	}
	if len(ids) > ctxLen {
		return fmt.Errorf("the prompt's %d tokens exceed the context of %d (-c)", len(ids), ctxLen)
	}
	if m.Encoder != nil {
		// An encoder-decoder model: its own two-phase loop, on one CPU.
		if *beams > 0 || *choices > 1 || *keep >= 0 || *devices != "" || spf.on() {
			return fmt.Errorf("%w: %s is an encoder-decoder model: --beams, --choices, --keep, --devices and speculative decoding serve decoder-only models", errUsage, m.Spec.File)
		}
		pickers, err := sf.pickers(1, s, m.Tokenizer)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		return runSeq2Seq(m, seq2seqRun{prompt: *prompt, ids: ids, n: *n, ctx: ctxLen, threads: *threads, kvType: *kvType,
			picker: pickers[0], forced: forced, logitsOut: *logitsOut, json: *jsonOut, seed: s}, stdout, stderr)
	}
	if *n == -1 {
		*n = ctxLen - len(ids) // until end of text, or the context is full
		if *keep >= 0 {
			*n = math.MaxInt32 // until end of text: --keep shifts the context
		}
	}
	if room := ctxLen - len(ids); *n > room && *keep < 0 {
		if room <= 0 {
			return fmt.Errorf("the prompt's %d tokens fill the context of %d", len(ids), ctxLen)
		}
		fmt.Fprintf(stderr, "weft run: generating %d tokens, not %d: the context holds %d (--keep N goes on past it)\n", room, *n, ctxLen)
		*n = room
	}
	if *keep >= 0 && *keep > ctxLen-3 {
		return fmt.Errorf("%w: --keep %d leaves no room to shift in a context of %d", errUsage, *keep, ctxLen)
	}
	pickers, err := sf.pickers(*choices, s, m.Tokenizer)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	sampler := pickers[0]
	engOpt := model.EngineOptions{Kernels: kern, Threads: *threads, MaxTokens: min(*batch, ctxLen), Context: ctxLen, KVType: *kvType,
		Devices: *devices, MicroBatches: *microBatches, KVBudget: budget}
	eng, err := m.NewEngine(engOpt)
	if err != nil {
		return err
	}
	defer eng.Close()
	drafter, closeDrafter, err := spf.drafter(m, engOpt)
	if err != nil {
		return err
	}
	defer closeDrafter()

	var logitsFile *os.File
	if *logitsOut != "" {
		if logitsFile, err = os.Create(*logitsOut); err != nil {
			return err
		}
		defer logitsFile.Close()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	res := runResult{PromptTokens: ids, Tokens: []int{}, Seed: s}
	dec := m.Tokenizer.NewStreamDecoder()
	var text strings.Builder
	if !*jsonOut {
		fmt.Fprint(stdout, *prompt)
	}
	start := time.Now()
	var firstAt time.Time
	var writeErr error
	req := scheduler.Request{Prompt: ids, MaxTokens: *n, Sampler: sampler, Force: forced, KeepLogits: logitsFile != nil,
		Stop:  func(t int) bool { return len(forced) == 0 && m.Tokenizer.IsEOG(t) },
		Beams: *beams, LengthPenalty: *lengthPenalty, Shift: *keep >= 0, Keep: *keep}
	prefillReport, prefillDone := prefillProgress(stderr, len(ids), 2*min(*batch, ctxLen))
	req.Prefill = prefillReport
	if drafter != nil {
		req.Draft, req.DraftMax, req.DraftMin = drafter, spf.max, spf.min
	}
	if *choices > 1 {
		req.N = *choices
		for _, p := range pickers {
			req.Pickers = append(req.Pickers, p)
		}
		res.Choices = make([]choice, *choices)
	}
	eng.KV().ResetPeak()
	var kvAtEnd int64
	_, genErr := eng.Generate(ctx, req, func(ev scheduler.TokenEvent) {
		if firstAt.IsZero() {
			firstAt = time.Now()
			prefillDone()
		}
		if ev.Beams != nil {
			for _, b := range ev.Beams {
				res.Beams = append(res.Beams, beamResult{Tokens: b.Tokens, Text: m.Tokenizer.Decode(b.Tokens), Logprob: b.Logprob})
			}
			return
		}
		if ev.Done && req.N <= 1 {
			res.FinishReason = ev.Reason
			if drafter != nil {
				res.Spec = &specResult{Drafted: ev.Drafted, Accepted: ev.Accepted}
			}
		}
		if ev.Reason == "error" || ev.Token < 0 {
			return
		}
		if !ev.Done {
			kvAtEnd = eng.KV().Bytes()
		}
		if req.N > 1 {
			res.Choices[ev.Seq].Tokens = append(res.Choices[ev.Seq].Tokens, ev.Token)
			return
		}
		res.Tokens = append(res.Tokens, ev.Token)
		piece := dec.Push(ev.Token)
		text.WriteString(piece)
		if !*jsonOut {
			fmt.Fprint(stdout, piece)
		}
		if logitsFile != nil && writeErr == nil {
			writeErr = binary.Write(logitsFile, binary.LittleEndian, ev.Logits)
		}
	})
	end := time.Now()
	prefillDone()
	interrupted := genErr != nil && ctx.Err() != nil
	if interrupted {
		genErr = nil // Ctrl-C: end quietly with the text so far
	}
	// The bytes in use at the end of generation: a query's blocks only
	// grow (a context shift frees whole blocks as it goes), so the peak
	// over the run unless a shift freed some.
	res.KVBytes = eng.KV().PeakBytes()
	if *keep >= 0 {
		res.KVBytes = kvAtEnd
	}
	for i := range res.Choices {
		res.Choices[i].Text = m.Tokenizer.Decode(res.Choices[i].Tokens)
		if res.Choices[i].Tokens == nil {
			res.Choices[i].Tokens = []int{}
		}
	}
	if len(res.Beams) > 0 {
		res.Tokens, res.Text = res.Beams[0].Tokens, res.Beams[0].Text
		if !*jsonOut {
			fmt.Fprint(stdout, res.Text)
		}
	}
	if len(res.Choices) > 0 && !*jsonOut {
		for i, c := range res.Choices {
			fmt.Fprintf(stdout, "\n--- choice %d ---\n%s%s", i, *prompt, c.Text)
		}
	}
	if rest := dec.Flush(); rest != "" {
		text.WriteString(rest)
		if !*jsonOut {
			fmt.Fprint(stdout, rest)
		}
	}
	switch {
	case len(res.Choices) > 0:
		res.Tokens, res.Text = res.Choices[0].Tokens, res.Choices[0].Text // the first choice, as with one
	case len(res.Beams) == 0:
		res.Text = text.String()
	}
	if !firstAt.IsZero() {
		res.PrefillTokS = rate(len(ids), firstAt.Sub(start))
		if len(res.Tokens) > 1 {
			res.DecodeTokS = rate(len(res.Tokens)-1, end.Sub(firstAt))
		}
	}
	if res.Spec != nil && res.Spec.Drafted > 0 {
		res.Spec.AcceptRate = math.Round(float64(res.Spec.Accepted)/float64(res.Spec.Drafted)*1000) / 1000
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout)
		fmt.Fprintf(stderr, "prompt %d tokens, %.1f tok/s; generated %d tokens, %.1f tok/s\n", len(ids), res.PrefillTokS, len(res.Tokens), res.DecodeTokS)
		if res.Spec != nil {
			fmt.Fprintf(stderr, "speculative: %d drafted, %d accepted (%.1f%%)\n", res.Spec.Drafted, res.Spec.Accepted, 100*res.Spec.AcceptRate)
		}
	}
	if genErr != nil {
		return genErr
	}
	if writeErr != nil {
		return fmt.Errorf("write %s: %w", *logitsOut, writeErr)
	}
	if interrupted {
		return errInterrupted
	}
	return nil
}

const devicesUsage = "devices to run on: ';' separates layer groups (pipeline), '&' splits each layer's tensors (e.g. cpu:0;cpu:1, cpu:0&cpu:1, cpu:0&cpu:1;cpu:2&cpu:3, cpu:0=8;cpu:1); -t is shared among them"

const microBatchesUsage = "with layer groups (--devices a;b), cut each step into up to N token ranges that overlap in the pipeline (1: steps run whole, with one device's exact bits)"

// checkDevices validates a --devices value before the model loads.
func checkDevices(s string) error {
	if _, err := scheduler.ParseDevices(s); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

const kvBudgetUsage = "KV cache memory: bytes (K, M, G suffixes allowed), or auto (half of the memory available now); when it runs out new requests wait and the newest is recomputed later"

// parseBytes parses a byte count with an optional K, M or G suffix
// (powers of 1024), or "auto": half of the memory available now.
func parseBytes(s string) (int64, error) {
	if s == "auto" {
		return availableMemory() / 2, nil
	}
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a byte count (e.g. 512M, 4G, auto)", s)
	}
	return n * mult, nil
}

// availableMemory returns /proc/meminfo's MemAvailable in bytes (0, no
// limit, where it cannot be read).
func availableMemory() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

const kvTypeUsage = "KV cache element type: auto (f16, or f32 for a model whose 2-D weights are all f32, as llama.cpp), f32 or f16"

// checkKVType validates a --kv-type value before the model loads.
func checkKVType(s string) error {
	if s == "auto" {
		return nil
	}
	if _, err := backend.ParseKVType(s); err != nil {
		return fmt.Errorf("%w: --kv-type: %v", errUsage, err)
	}
	return nil
}

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return math.Round(float64(n)/d.Seconds()*10) / 10
}

func parseIDs(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
