package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/weftrun/weft/backend/cpudev"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/sampling"
	"github.com/weftrun/weft/scheduler"
)

// benchResult is the --json output of weft bench.
type benchResult struct {
	Model         string        `json:"model"`
	Threads       int           `json:"threads"`
	PromptTokens  int           `json:"n_prompt"`
	GenTokens     int           `json:"n_gen"`
	PPTokS        float64       `json:"pp_tok_s"`
	TGTokS        float64       `json:"tg_tok_s"`
	PPRuns        []float64     `json:"pp_runs,omitempty"`
	TGRuns        []float64     `json:"tg_runs,omitempty"`
	ModelBytes    int64         `json:"model_bytes"`
	MembwBytesS   float64       `json:"membw_bytes_s"`
	RooflineRatio float64       `json:"roofline_ratio"`
	Kernels       string        `json:"kernels"`
	KVType        string        `json:"kv_type,omitempty"`
	KVPosBytes    int64         `json:"kv_bytes_per_pos,omitempty"`
	Devices       []benchDevice `json:"devices"`
	Batch         []benchBatch  `json:"batch,omitempty"`
	Prefix        *benchPrefix  `json:"prefix,omitempty"`
}

// benchPrefix is --prefix-hit: the time to the first token of a -p token
// prompt, cold and with its first N tokens in the prefix cache.
type benchPrefix struct {
	Cached     int     `json:"cached_tokens"`
	ColdTTFTMs float64 `json:"cold_ttft_ms"`
	WarmTTFTMs float64 `json:"warm_ttft_ms"`
	Saved      int64   `json:"prefill_tokens_saved"`
}

// benchBatch is one batch size of --batch: B prompts of -p tokens
// prefilled together, then -n steps of B sequences decoding together,
// as llama-batched-bench measures them (aggregate tok/s).
type benchBatch struct {
	B      int     `json:"b"`
	PPTokS float64 `json:"pp_tok_s"` // B·p / the time to the last first token
	TGTokS float64 `json:"tg_tok_s"` // B·n / the time of the n decode steps
}

// benchDevice is one device's share of a bench run.
type benchDevice struct {
	Name        string `json:"name"`
	Threads     int    `json:"threads"`
	WeightBytes int64  `json:"weight_bytes"`
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func cmdBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	modelPath := fs.String("m", "", "model checkpoint")
	specPath := fs.String("s", "", "spec (default: by architecture)")
	nPrompt := fs.Int("p", 128, "prompt tokens (prefill test; 0 skips it)")
	nGen := fs.Int("n", 32, "generated tokens (decode test; 0 skips it)")
	threads := fs.Int("t", runtime.NumCPU(), "threads")
	fs.IntVar(threads, "threads", runtime.NumCPU(), "same as -t")
	reps := fs.Int("r", 5, "repetitions (medians are reported)")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	membwOnly := fs.Bool("membw", false, "only measure memory read bandwidth (about 15 s) and remember it for later runs' roofline")
	membwMiB := fs.Int("membw-mib", 1024, "buffer size for the bandwidth measurement, MiB")
	profile := fs.Bool("profile", false, "print time per op kind and per layer (decode)")
	profileOut := fs.String("profile-out", "", "write each graph node's decode time to FILE (JSON) for `weft graph --format html --profile FILE`")
	kvType := fs.String("kv-type", "auto", kvTypeUsage)
	devices := fs.String("devices", "", devicesUsage)
	prefixHit := fs.Int("prefix-hit", 0, "time to first token of a -p token prompt cold, then with its first N tokens cached (the prefix cache)")
	batchList := fs.String("batch", "", "comma-separated batch sizes B (e.g. 1,4,8,16): B sequences prefill and decode together; aggregate tok/s per B")
	microBatches := fs.Int("micro-batches", 1, microBatchesUsage)
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
	if *reps < 1 || *threads < 1 || *nPrompt < 0 || *nGen < 0 {
		return fmt.Errorf("%w: -r, -t must be ≥ 1 and -p, -n ≥ 0", errUsage)
	}
	if err := checkKVType(*kvType); err != nil {
		return err
	}
	if err := checkDevices(*devices); err != nil {
		return err
	}
	batches, err := parseIDs(*batchList)
	if err != nil {
		return fmt.Errorf("%w: --batch: %v", errUsage, err)
	}
	for _, b := range batches {
		if b < 1 || b > 256 {
			return fmt.Errorf("%w: --batch %d (1 to 256)", errUsage, b)
		}
	}
	res := benchResult{Threads: *threads, PromptTokens: *nPrompt, GenTokens: *nGen}
	measureBW := func(pool *cpu.Pool) {
		bws := make([]float64, 3)
		for i := range bws {
			bws[i] = cpu.MemBandwidth(pool, *membwMiB<<20) * 1e9 // GB/s → bytes/s
		}
		res.MembwBytesS = median(bws)
	}
	if *membwOnly {
		pool := cpu.NewPoolKernels(*threads, kern)
		defer pool.Close()
		measureBW(pool)
		res.Kernels = pool.Kernels().String()
		if err := saveMembw(*threads, *membwMiB, res.MembwBytesS); err != nil {
			fmt.Fprintf(stderr, "weft bench: not remembered: %v\n", err)
		}
		if *jsonOut {
			return json.NewEncoder(stdout).Encode(res)
		}
		fmt.Fprintf(stdout, "memory read bandwidth: %.2f GB/s (%d threads, %s)\n", res.MembwBytesS/1e9, *threads, res.Kernels)
		return nil
	}
	if *modelPath == "" {
		return fmt.Errorf("%w: -m MODEL is required", errUsage)
	}
	host, err := pf.host(*specPath, stderr)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	defer host.Close()
	loadProg, loadDone := loadProgress(stderr, *modelPath)
	m, err := model.Load(model.Options{Path: *modelPath, Spec: *specPath, Set: overrides(set), Plugins: host, Progress: loadProg})
	loadDone()
	if err != nil {
		return err
	}
	defer m.Close()
	res.Model = *modelPath
	res.ModelBytes = m.WeightBytes()
	batch := max(*nPrompt, 1)
	if *prefixHit > 0 {
		batch = min(batch, 512)
	}
	if len(batches) > 0 {
		batch = max(512, slices.Max(batches)) // llama.cpp's micro-batch
	}
	// Like llama-bench, size the context to the test, not the model.
	eng, err := m.NewEngine(model.EngineOptions{Threads: *threads, MaxTokens: batch,
		Context: max(*nPrompt, 1) + *nGen + 1, KVType: *kvType, Devices: *devices, MicroBatches: *microBatches, Kernels: kern})
	if err != nil {
		return err
	}
	defer eng.Close()
	plan := eng.Plan()
	for i, b := range plan.Backends() {
		res.Devices = append(res.Devices, benchDevice{Name: b.Device(), Threads: b.Threads(), WeightBytes: plan.WeightBytes()[i]})
	}
	pool := plan.Backends()[0].(*cpudev.Backend).Pool()
	res.Kernels = pool.Kernels().String()
	res.KVType, res.KVPosBytes = eng.KV().Type().String(), eng.KV().PositionBytes()
	vocab := eng.Vocab()
	rng := rand.New(rand.NewPCG(1, 2))
	greedy, _ := sampling.New(sampling.Config{})
	// Ctrl-C stops the benchmark: the rounds done so far are reported
	// (exit status 130).
	ctx, stop := interruptible()
	defer stop()
	// One untimed warm-up of each test.
	run := func(prompt, gen int, prof *scheduler.Profile) (ppRate, tgRate float64, err error) {
		ids := make([]int, prompt)
		for i := range ids {
			ids[i] = rng.IntN(vocab)
		}
		eng.Profile = nil
		start := time.Now()
		var first time.Time
		_, err = eng.Generate(ctx, scheduler.Request{Prompt: ids, MaxTokens: gen + 1, Sampler: greedy}, func(ev scheduler.TokenEvent) {
			if ev.Index == 0 {
				first = time.Now()
				eng.Profile = prof
			}
		})
		end := time.Now()
		eng.Profile = nil
		if err != nil {
			return 0, 0, err
		}
		ppRate = float64(prompt) / first.Sub(start).Seconds()
		if gen > 0 {
			tgRate = float64(gen) / end.Sub(first).Seconds()
		}
		return ppRate, tgRate, nil
	}
	if *prefixHit > 0 {
		if *prefixHit >= *nPrompt {
			return fmt.Errorf("%w: --prefix-hit %d must be below -p %d", errUsage, *prefixHit, *nPrompt)
		}
		ttft := func(ids []int) (float64, error) {
			start := time.Now()
			var first time.Duration
			_, err := eng.Generate(ctx, scheduler.Request{Prompt: ids, MaxTokens: 1, Sampler: greedy}, func(scheduler.TokenEvent) { first = time.Since(start) })
			return float64(first) / 1e6, err
		}
		pr := &benchPrefix{Cached: *prefixHit}
		var colds, warms []float64
		for r := 0; r < *reps; r++ {
			ids := make([]int, *nPrompt)
			for i := range ids {
				ids[i] = rng.IntN(vocab)
			}
			other := append([]int(nil), ids...)
			for i := *prefixHit; i < len(other); i++ {
				other[i] = rng.IntN(vocab)
			}
			cold, err := ttft(ids)
			if err != nil {
				return interrupted(ctx, err)
			}
			_, _, saved0 := eng.KV().PrefixStats()
			warm, err := ttft(other)
			if err != nil {
				return interrupted(ctx, err)
			}
			_, _, saved1 := eng.KV().PrefixStats()
			colds, warms = append(colds, cold), append(warms, warm)
			pr.Saved = saved1 - saved0
		}
		pr.ColdTTFTMs, pr.WarmTTFTMs = median(colds), median(warms)
		res.Prefix = pr
		if *jsonOut {
			return json.NewEncoder(stdout).Encode(res)
		}
		fmt.Fprintf(stdout, "time to first token, %d-token prompt: cold %.1f ms; with %d tokens cached %.1f ms (%d prefill tokens saved)\n",
			*nPrompt, pr.ColdTTFTMs, *prefixHit, pr.WarmTTFTMs, pr.Saved)
		return nil
	}
	if len(batches) > 0 {
		for _, b := range batches {
			var pps, tgs []float64
			for r := 0; r <= *reps; r++ { // the first round warms up
				pp, tg, err := runBatch(ctx, eng, rng, b, max(*nPrompt, 1), *nGen)
				if err != nil {
					return interrupted(ctx, err)
				}
				if r > 0 {
					pps, tgs = append(pps, pp), append(tgs, tg)
				}
			}
			res.Batch = append(res.Batch, benchBatch{B: b, PPTokS: median(pps), TGTokS: median(tgs)})
		}
		if *jsonOut {
			return json.NewEncoder(stdout).Encode(res)
		}
		fmt.Fprintf(stdout, "%4s %12s %12s   (p=%d, n=%d, %d threads)\n", "B", "pp tok/s", "tg tok/s", *nPrompt, *nGen, *threads)
		for _, b := range res.Batch {
			fmt.Fprintf(stdout, "%4d %12.1f %12.1f\n", b.B, b.PPTokS, b.TGTokS)
		}
		return nil
	}
	// What is measured comes first, as llama-bench's header does.
	if !*jsonOut {
		fmt.Fprintf(stdout, "model      %s (%.1f MiB of weights), %d threads, kernels %s\n", *modelPath, float64(res.ModelBytes)/(1<<20), *threads, res.Kernels)
		fmt.Fprintf(stdout, "kv cache   %s, %.1f KiB per position\n", res.KVType, float64(res.KVPosBytes)/(1<<10))
		if len(res.Devices) > 1 {
			for _, d := range res.Devices {
				fmt.Fprintf(stdout, "device     %-8s %d threads, %.1f MiB of weights\n", d.Name, d.Threads, float64(d.WeightBytes)/(1<<20))
			}
		}
	}
	// A bar of the runs on a terminal; after Ctrl-C (stopped) the rounds
	// done so far are reported.
	runs := 0
	for _, n := range []int{*nPrompt, *nGen} {
		if n > 0 {
			runs += *reps + 1
		}
	}
	bar := countBar(stderr, "bench", runs)
	var stopped error
	measure := func(prompt, gen int, prof *scheduler.Profile, rates *[]float64) error {
		for r := 0; r <= *reps && stopped == nil; r++ { // the first round warms up
			p := prof
			if r == 0 {
				p = nil
			}
			pp, tg, err := run(prompt, gen, p)
			if err != nil {
				if stopped = interrupted(ctx, err); stopped != errInterrupted {
					return err
				}
				break
			}
			bar.Add(1)
			switch {
			case r == 0:
			case gen > 0:
				*rates = append(*rates, tg)
			default:
				*rates = append(*rates, pp)
			}
		}
		return nil
	}
	if *nPrompt > 0 {
		if err := measure(*nPrompt, 0, nil, &res.PPRuns); err != nil {
			return err
		}
		res.PPTokS = median(res.PPRuns)
	}
	var prof *scheduler.Profile
	if *profile || *profileOut != "" {
		prof = scheduler.NewProfile()
	}
	if *nGen > 0 {
		if err := measure(1, *nGen, prof, &res.TGRuns); err != nil {
			return err
		}
		res.TGTokS = median(res.TGRuns)
	}
	bar.Done()
	if stopped != nil && len(res.PPRuns)+len(res.TGRuns) == 0 {
		if !*jsonOut {
			fmt.Fprintln(stdout, "interrupted before a round was measured")
		}
		return stopped
	}
	// Measuring the bandwidth takes seconds, longer than a small model's
	// whole benchmark: the roofline uses the figure --membw remembered.
	res.MembwBytesS = loadMembw(*threads, *membwMiB)
	if res.MembwBytesS > 0 {
		res.RooflineRatio = float64(res.ModelBytes) * res.TGTokS / res.MembwBytesS
	}
	if *profileOut != "" && prof != nil {
		data, err := json.MarshalIndent(graph.Profile{Format: graph.ProfileFormat, Model: *modelPath, Tokens: len(res.TGRuns) * *nGen, Nodes: prof.Nodes()}, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*profileOut, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	if !*profile {
		prof = nil
	}
	if *jsonOut {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return err
		}
		return stopped
	}
	spread := func(x []float64) string {
		if len(x) == 0 {
			return ""
		}
		s := append([]float64(nil), x...)
		sort.Float64s(s)
		return fmt.Sprintf("(min %.1f, max %.1f, %d runs)", s[0], s[len(s)-1], len(s))
	}
	if *nPrompt > 0 {
		fmt.Fprintf(stdout, "pp%-6d   %8.1f tok/s %s\n", *nPrompt, res.PPTokS, spread(res.PPRuns))
	}
	if *nGen > 0 {
		fmt.Fprintf(stdout, "tg%-6d   %8.1f tok/s %s\n", *nGen, res.TGTokS, spread(res.TGRuns))
		if res.MembwBytesS > 0 {
			fmt.Fprintf(stdout, "decode     %.2f GB/s of weights read; memory bandwidth %.2f GB/s (remembered from --membw); roofline ratio %.3f\n",
				float64(res.ModelBytes)*res.TGTokS/1e9, res.MembwBytesS/1e9, res.RooflineRatio)
		} else {
			fmt.Fprintf(stdout, "decode     %.2f GB/s of weights read; memory bandwidth not measured: `weft bench --membw -t %d` measures it once for the roofline\n",
				float64(res.ModelBytes)*res.TGTokS/1e9, *threads)
		}
	}
	if prof != nil {
		fmt.Fprintln(stdout)
		prof.Write(stdout)
	}
	if stopped != nil {
		fmt.Fprintf(stdout, "interrupted: %d pp and %d tg rounds of %d measured\n", len(res.PPRuns), len(res.TGRuns), *reps)
	}
	return stopped
}

// runBatch prefills b random prompts of p tokens together, then decodes n
// tokens of each together, and returns the aggregate prefill and decode
// rates.
func runBatch(ctx context.Context, eng *scheduler.Engine, rng *rand.Rand, b, p, n int) (pp, tg float64, err error) {
	greedy, _ := sampling.New(sampling.Config{})
	for i := 0; i < b; i++ {
		ids := make([]int, p)
		for j := range ids {
			ids[j] = rng.IntN(eng.Vocab())
		}
		if _, err := eng.AddQuery(scheduler.Request{Prompt: ids, MaxTokens: n + 1, Sampler: greedy}); err != nil {
			return 0, 0, err
		}
	}
	start := time.Now()
	var prefilled time.Time
	firsts := 0
	for eng.Active() > 0 {
		evs, err := eng.Infer(ctx)
		if err != nil {
			return 0, 0, err
		}
		for _, ev := range evs {
			if ev.Err != nil {
				return 0, 0, ev.Err
			}
			if ev.Index == 0 {
				if firsts++; firsts == b {
					prefilled = time.Now()
				}
			}
		}
	}
	end := time.Now()
	pp = float64(b*p) / prefilled.Sub(start).Seconds()
	if n > 0 {
		tg = float64(b*n) / end.Sub(prefilled).Seconds()
	}
	return pp, tg, nil
}

// membwFile is where --membw remembers its figure for a thread count and
// buffer size: a file under the user's cache directory ($XDG_CACHE_HOME).
func membwFile(threads, mib int) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "weft", fmt.Sprintf("membw-t%d-%dmib.json", threads, mib)), nil
}

// membwRecord is a remembered bandwidth measurement.
type membwRecord struct {
	BytesS float64   `json:"bytes_s"`
	When   time.Time `json:"when"`
}

func saveMembw(threads, mib int, bytesS float64) error {
	path, err := membwFile(threads, mib)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.Marshal(membwRecord{BytesS: bytesS, When: time.Now().UTC()})
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// loadMembw returns the remembered bandwidth, or 0 when there is none (or
// it is unreadable: the roofline is then left out).
func loadMembw(threads, mib int) float64 {
	path, err := membwFile(threads, mib)
	if err != nil {
		return 0
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var r membwRecord
	if json.Unmarshal(data, &r) != nil || !(r.BytesS > 0) || math.IsInf(r.BytesS, 0) {
		return 0
	}
	return r.BytesS
}
