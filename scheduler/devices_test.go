package scheduler_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/backend/cpudev"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/internal/randweights"
	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
)

func TestParseDevices(t *testing.T) {
	for _, tc := range []struct {
		spec, want string // want: canonical form, or the error's text
		names      int
	}{
		{"", "cpu:0", 1},
		{"cpu:0;cpu:1", "cpu:0;cpu:1", 2},
		{" cpu:0 & cpu:1 ", "cpu:0&cpu:1", 2},
		{"cpu:0&cpu:1;cpu:2&cpu:3", "cpu:0&cpu:1;cpu:2&cpu:3", 4},
		{"cpu:0=8;cpu:1", "cpu:0=8;cpu:1", 2},
		{"gpu:0", `unknown device "gpu:0"`, 0},
		{"cpu:0;cpu:0", "device cpu:0 is listed twice", 0},
		{"cpu:0&cpu:1;cpu:1", "device cpu:1 is listed twice", 0},
		{"cpu", `device "cpu": want cpu:N`, 0},
		{"cpu:-1", `want cpu:N`, 0},
		{"cpu:0;", "layer group 2 is empty", 0},
		{"cpu:0&", "an empty device name", 0},
		{"cpu:0=x", `"x" is not a layer count`, 0},
	} {
		d, err := scheduler.ParseDevices(tc.spec)
		if tc.names == 0 {
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--devices") {
				t.Errorf("ParseDevices(%q) = %v, want an error naming --devices and %q", tc.spec, err, tc.want)
			}
			continue
		}
		if err != nil || d.String() != tc.want || len(d.Names()) != tc.names {
			t.Errorf("ParseDevices(%q) = %q (%d devices), %v; want %q", tc.spec, d, len(d.Names()), err, tc.want)
		}
	}
	d, _ := scheduler.ParseDevices("cpu:0;cpu:1;cpu:2")
	if got := d.Threads(7); !slices.Equal(got, []int{3, 2, 2}) {
		t.Errorf("Threads(7) over 3 devices = %v, want [3 2 2]", got)
	}
	if got := d.Threads(2); !slices.Equal(got, []int{1, 1, 1}) {
		t.Errorf("Threads(2) over 3 devices = %v, want at least 1 each", got)
	}
}

// randomLlama builds the shipped llama spec with random weights, passes
// applied as model.Load applies them.
func randomLlama(t testing.TB, set map[string]any) *graph.Graph {
	t.Helper()
	sp, err := specs.Open("llama")
	if err != nil {
		t.Fatal(err)
	}
	reg := ops.Builtins()
	params, err := sp.ResolveParams(nil, set)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := randweights.ForSpec(sp, reg, params, "gguf", randweights.Config{Seed: 7, NormStd: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	g, err := sp.Build(specs.BuildOptions{Registry: reg, Params: params, Format: "gguf", Source: rw})
	if err != nil {
		t.Fatal(err)
	}
	if err := graph.Optimize(g, reg); err != nil {
		t.Fatal(err)
	}
	return g
}

// forcedLogits runs a teacher-forced generation on devs and returns each
// step's logits.
func forcedLogits(t *testing.T, g *graph.Graph, spec string, prompt, force []int) [][]float32 {
	return forcedMB(t, g, spec, 0, prompt, force)
}

// forcedMB is forcedLogits with steps cut into micro-batches.
func forcedMB(t *testing.T, g *graph.Graph, spec string, micro int, prompt, force []int) [][]float32 {
	t.Helper()
	devs, err := scheduler.ParseDevices(spec)
	if err != nil {
		t.Fatal(err)
	}
	var bs []backend.Backend
	for _, n := range devs.Names() {
		bs = append(bs, cpudev.New(n, 1, cpu.Kernels{}))
	}
	plan, err := scheduler.NewPlan(g, scheduler.PlanOptions{MaxTokens: 8, Devices: devs, Backends: bs, MicroBatches: micro})
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	eng, err := scheduler.NewEngine(plan, scheduler.Options{Context: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var rows [][]float32
	_, err = eng.Generate(context.Background(), scheduler.Request{Prompt: prompt, MaxTokens: len(force), Force: force, KeepLogits: true},
		func(ev scheduler.TokenEvent) { rows = append(rows, ev.Logits) })
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	return rows
}

// TestDevicesRandomWeights: on a random-weight llama (no ../shared), a
// split by layer gives the one-device logits bit for bit, and splits by
// tensor agree to cosine ≥ 0.99999, whether the prompt spans several
// steps or not.
func TestDevicesRandomWeights(t *testing.T) {
	g := randomLlama(t, map[string]any{"hidden": 64, "layers": 4, "heads": 8, "kv_heads": 4, "ffn": 96, "vocab": 97, "ctx": 64})
	prompt := []int{1, 5, 9, 14, 3, 27, 41, 8, 2, 60, 33} // 11 tokens: two prefill steps of at most 8
	force := []int{4, 18, 77, 5, 5, 90, 12, 3}
	ref := forcedLogits(t, g, "", prompt, force)
	for _, spec := range []string{"cpu:0;cpu:1", "cpu:0=3;cpu:1", "cpu:0;cpu:1;cpu:2;cpu:3", "cpu:0&cpu:1", "cpu:0&cpu:1&cpu:2&cpu:3", "cpu:0&cpu:1;cpu:2&cpu:3"} {
		got := forcedLogits(t, g, spec, prompt, force)
		exact := !strings.Contains(spec, "&")
		for r := range ref {
			if exact && !slices.Equal(got[r], ref[r]) {
				t.Errorf("%s: step %d differs from one device", spec, r)
			}
			if c := testdata.Cosine(got[r], ref[r]); c < 0.99999 {
				t.Errorf("%s: step %d cosine %.7f", spec, r, c)
			}
		}
	}
}

// TestMicroBatches: a pipeline that overlaps its groups on micro-batches
// gives the one-device logits up to the last bits of kernels that see
// fewer rows at a time; decode steps of one token stay whole.
func TestMicroBatches(t *testing.T) {
	g := randomLlama(t, map[string]any{"hidden": 64, "layers": 4, "heads": 8, "kv_heads": 4, "ffn": 96, "vocab": 97, "ctx": 64})
	prompt := []int{1, 5, 9, 14, 3, 27, 41, 8, 2, 60, 33}
	force := []int{4, 18, 77, 5}
	ref := forcedLogits(t, g, "", prompt, force)
	for _, tc := range []struct {
		spec  string
		micro int
	}{{"cpu:0;cpu:1", 2}, {"cpu:0;cpu:1;cpu:2;cpu:3", 4}, {"cpu:0;cpu:1", 8}, {"cpu:0&cpu:1;cpu:2&cpu:3", 3}} {
		got := forcedMB(t, g, tc.spec, tc.micro, prompt, force)
		for r := range ref {
			if c := testdata.Cosine(got[r], ref[r]); c < 0.99999 {
				t.Errorf("%s ×%d: step %d cosine %.7f", tc.spec, tc.micro, r, c)
			}
		}
	}
}

// TestPlaceGraph: a placed graph names each node's device and holds the
// copies between layer groups and one all-reduce per split sub-layer;
// each device of a tensor split holds its share of the weights.
func TestPlaceGraph(t *testing.T) {
	g := randomLlama(t, map[string]any{"hidden": 64, "layers": 4, "heads": 8, "kv_heads": 4, "ffn": 96, "vocab": 97, "ctx": 64})
	devs, _ := scheduler.ParseDevices("cpu:0&cpu:1;cpu:2&cpu:3")
	pg, err := scheduler.Place(g, ops.Builtins(), devs)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, n := range pg.Nodes {
		if n.Device == "" {
			t.Fatalf("node %s %q has no device", n.Op.Name, n.Name)
		}
		count[n.Op.Name]++
		if n.Op.Name == "all_reduce" && n.Device != "cpu:0&cpu:1" && n.Device != "cpu:2&cpu:3" {
			t.Errorf("all_reduce on %q", n.Device)
		}
		if n.Op.Name == "rope_attention" && (n.Attrs.Int("heads") != 4 || n.Attrs.Int("kv_heads") != 2) {
			t.Errorf("attention shard on %s has %d heads / %d KV heads, want 4 / 2", n.Device, n.Attrs.Int("heads"), n.Attrs.Int("kv_heads"))
		}
	}
	// 4 layers × (attention + FFN); the residual stream crosses from group
	// 0 to each device of group 1 once.
	if count["all_reduce"] != 8 || count["copy"] != 2 {
		t.Errorf("placed graph has %d all_reduce and %d copy nodes, want 8 and 2", count["all_reduce"], count["copy"])
	}
	var bs []backend.Backend
	for _, n := range devs.Names() {
		bs = append(bs, cpudev.New(n, 1, cpu.Kernels{}))
	}
	plan, err := scheduler.NewPlan(g, scheduler.PlanOptions{MaxTokens: 4, Devices: devs, Backends: bs})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, b := range bs {
			b.Close()
		}
	}()
	w := plan.WeightBytes()
	// Per layer, a split device holds half of wq, wk, wv, wo, gate, up,
	// down (f32) and whole norms.
	perLayer := int64(4 * (64*64 + 2*64*32 + 64*64 + 3*64*96) / 2)
	norms := int64(4 * 2 * 64)
	emb := int64(4 * 97 * 64)
	if w[1] != 2*perLayer+2*norms+emb || w[3] != 2*perLayer+2*norms {
		t.Errorf("weight bytes per device %v; cpu:1 should hold %d, cpu:3 %d", w, 2*perLayer+2*norms+emb, 2*perLayer+2*norms)
	}
	if w0, w2 := w[0], w[2]; w0 != w[1] || w2 <= w[3] {
		t.Errorf("weight bytes %v: cpu:0 should equal cpu:1, and cpu:2 hold the output head too", w)
	}

}

// BenchmarkSplitStep times one decode step of a small random-weight
// llama (8 layers, hidden 64: the kernels are cheap, so the step's time
// is mostly the devices' hand-offs) on one device and on two devices
// split by layer and by tensor; each device has one thread. The
// difference per layer is what a split costs beyond its kernels: one
// hand-off per layer group, or two all-reduces per layer.
func BenchmarkSplitStep(b *testing.B) {
	g := randomLlama(b, map[string]any{"hidden": 64, "layers": 8, "heads": 8, "kv_heads": 4, "ffn": 128, "vocab": 256, "ctx": 4096})
	for _, spec := range []string{"cpu:0", "cpu:0;cpu:1", "cpu:0&cpu:1"} {
		b.Run(spec, func(b *testing.B) {
			devs, _ := scheduler.ParseDevices(spec)
			var bs []backend.Backend
			for _, n := range devs.Names() {
				bs = append(bs, cpudev.New(n, 1, cpu.Kernels{}))
			}
			plan, err := scheduler.NewPlan(g, scheduler.PlanOptions{MaxTokens: 1, Devices: devs, Backends: bs})
			if err != nil {
				b.Fatal(err)
			}
			eng, err := scheduler.NewEngine(plan, scheduler.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			ctx := context.Background()
			// A query of 64 steps at a time keeps attention short: the
			// steps measure the matmuls and the hand-offs.
			id, steps := -1, 0
			for b.Loop() {
				if steps%64 == 0 {
					b.StopTimer()
					eng.Cancel(id)
					if id, err = eng.AddQuery(scheduler.Request{Prompt: []int{1}, MaxTokens: 1 << 20, Sampler: firstToken{}}); err != nil {
						b.Fatal(err)
					}
					if _, err := eng.Infer(ctx); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				steps++
				if _, err := eng.Infer(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// firstToken always picks token 0 (a sampler for benchmarks).
type firstToken struct{}

func (firstToken) Sample([]float32) int { return 0 }

// TestSplitDecodeAllocs: a decode step over several devices allocates
// nothing either (the device goroutines, their waits and the step's
// micro-batch views are reused).
func TestSplitDecodeAllocs(t *testing.T) {
	g := randomLlama(t, map[string]any{"hidden": 64, "layers": 4, "heads": 8, "kv_heads": 4, "ffn": 96, "vocab": 97, "ctx": 512})
	for _, spec := range []string{"cpu:0;cpu:1", "cpu:0&cpu:1"} {
		devs, _ := scheduler.ParseDevices(spec)
		var bs []backend.Backend
		for _, n := range devs.Names() {
			bs = append(bs, cpudev.New(n, 1, cpu.Kernels{}))
		}
		plan, err := scheduler.NewPlan(g, scheduler.PlanOptions{MaxTokens: 16, Devices: devs, Backends: bs})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := scheduler.NewEngine(plan, scheduler.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := eng.AddQuery(scheduler.Request{Prompt: []int{1, 2, 3}, MaxTokens: 400, Sampler: firstToken{}}); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for i := 0; i < 20; i++ {
			eng.Infer(ctx)
		}
		allocs := testing.AllocsPerRun(10, func() { eng.Infer(ctx) })
		if allocs > 1 {
			t.Errorf("%s: a decode step allocates %.1f times", spec, allocs)
		}
		eng.Close()
	}
}
