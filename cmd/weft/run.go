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
	"github.com/weftrun/weft/sampling"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tokenizer"
)

type runResult struct {
	PromptTokens []int   `json:"prompt_tokens"`
	Tokens       []int   `json:"tokens"`
	Text         string  `json:"text"`
	PrefillTokS  float64 `json:"prefill_tok_s"`
	DecodeTokS   float64 `json:"decode_tok_s"`
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
	prompt := fs.String("p", "", "prompt")
	n := fs.Int("n", 128, "tokens to generate")
	temp := fs.Float64("temp", 0.8, "temperature (0: greedy)")
	topK := fs.Int("top-k", 40, "top-k (0: off)")
	topP := fs.Float64("top-p", 0.95, "top-p (1: off)")
	minP := fs.Float64("min-p", 0.05, "min-p (0: off)")
	seed := fs.Int64("seed", -1, "sampling seed (-1: random)")
	threads := fs.Int("threads", 0, "CPU threads (0: all cores)")
	batch := fs.Int("batch", 256, "tokens per prefill step")
	jsonOut := fs.Bool("json", false, "print one JSON object instead of streaming text")
	logitsOut := fs.String("logits-out", "", "write float32 logits rows, one per generated token")
	force := fs.String("force-tokens", "", "comma-separated token ids to feed instead of sampling (teacher forcing)")
	noBOS := fs.Bool("no-bos", false, "do not add BOS even if the model asks for it")
	kvType := fs.String("kv-type", "auto", kvTypeUsage)
	devices := fs.String("devices", "", devicesUsage)
	microBatches := fs.Int("micro-batches", 1, microBatchesUsage)
	pluginDir := fs.String("plugin-dir", "", pluginDirUsage)
	set := setFlags{}
	fs.Var(set, "set", "override a spec param: key=value (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *modelPath == "" {
		return fmt.Errorf("%w: -m MODEL is required", errUsage)
	}
	if *n < 0 {
		return fmt.Errorf("%w: -n %d", errUsage, *n)
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
	nSet := false
	fs.Visit(func(f *flag.Flag) { nSet = nSet || f.Name == "n" })
	if len(forced) > 0 && (!nSet || len(forced) > *n) {
		*n = len(forced)
	}
	s := uint64(*seed)
	if *seed < 0 {
		s = uint64(time.Now().UnixNano())
	}
	sampler, err := sampling.New(sampling.Config{Temperature: *temp, TopK: *topK, TopP: *topP, MinP: *minP, Seed: s})
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	host, err := pluginHost(*pluginDir, stderr)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	defer host.Close()
	host.SetSpecDir(specDir(*specPath))
	m, err := model.Load(model.Options{Path: *modelPath, Spec: *specPath, Tokenizer: *tokPath, Set: overrides(set), Plugins: host})
	if err != nil {
		return err
	}
	defer m.Close()
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
	if room := m.Context() - len(ids); *n > room {
		if room <= 0 {
			return fmt.Errorf("the prompt's %d tokens fill the model's context of %d", len(ids), m.Context())
		}
		fmt.Fprintf(stderr, "weft run: generating %d tokens, not %d: the context holds %d\n", room, *n, m.Context())
		*n = room
	}
	eng, err := m.NewEngine(model.EngineOptions{Threads: *threads, MaxTokens: min(*batch, m.Context()), KVType: *kvType, Devices: *devices, MicroBatches: *microBatches})
	if err != nil {
		return err
	}
	defer eng.Close()

	var logitsFile *os.File
	if *logitsOut != "" {
		if logitsFile, err = os.Create(*logitsOut); err != nil {
			return err
		}
		defer logitsFile.Close()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	res := runResult{PromptTokens: ids, Tokens: []int{}}
	dec := m.Tokenizer.NewStreamDecoder()
	var text strings.Builder
	if !*jsonOut {
		fmt.Fprint(stdout, *prompt)
	}
	start := time.Now()
	var firstAt time.Time
	var writeErr error
	req := scheduler.Request{Prompt: ids, MaxTokens: *n, Sampler: sampler, Force: forced, KeepLogits: logitsFile != nil,
		Stop: func(t int) bool { return len(forced) == 0 && m.Tokenizer.IsEOG(t) }}
	_, genErr := eng.Generate(ctx, req, func(ev scheduler.TokenEvent) {
		if ev.Index == 0 {
			firstAt = time.Now()
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
	if rest := dec.Flush(); rest != "" {
		text.WriteString(rest)
		if !*jsonOut {
			fmt.Fprint(stdout, rest)
		}
	}
	res.Text = text.String()
	if !firstAt.IsZero() {
		res.PrefillTokS = rate(len(ids), firstAt.Sub(start))
		if len(res.Tokens) > 1 {
			res.DecodeTokS = rate(len(res.Tokens)-1, end.Sub(firstAt))
		}
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout)
		fmt.Fprintf(stderr, "prompt %d tokens, %.1f tok/s; generated %d tokens, %.1f tok/s\n", len(ids), res.PrefillTokS, len(res.Tokens), res.DecodeTokS)
	}
	if genErr != nil {
		return genErr
	}
	if writeErr != nil {
		return fmt.Errorf("write %s: %w", *logitsOut, writeErr)
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
