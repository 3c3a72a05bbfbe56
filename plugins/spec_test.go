package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/backend/cpudev"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
	"github.com/weftrun/weft/tokenizer"
)

// repoRoot is the directory holding go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for !fileExists(filepath.Join(dir, "go.mod")) {
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
	return dir
}

// sharedDir returns ../shared beside the repository root; it skips the
// test when the folder is absent, and fails it when CI=true.
func sharedDir(t testing.TB) string {
	t.Helper()
	return testdata.Shared(t) // the one locator of ../shared
}

func exampleSpec(t testing.TB, name string) string {
	return filepath.Join(repoRoot(t), "specs", "examples", name)
}

type greedy struct{}

func (greedy) Sample(logits []float32) int {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return best
}

type goldenPrompt struct {
	Prompt       string `json:"prompt"`
	PromptTokens []int  `json:"prompt_tokens"`
	Steps        []struct {
		Token int `json:"token"`
	} `json:"steps"`
}

// pluginNodes counts the graph's nodes served by plugin.
func pluginNodes(g *graph.Graph, plugin string) int {
	n := 0
	for _, nd := range g.Nodes {
		if nd.Op.Plugin == plugin {
			n++
		}
	}
	return n
}

// TestLlamaPluginNormGolden runs stories260K with every norm served by the
// rmsnorm plugin: greedy decoding must give the built-in spec's tokens and
// llama.cpp's, for each golden prompt.
func TestLlamaPluginNormGolden(t *testing.T) {
	shared := sharedDir(t)
	modelPath := filepath.Join(shared, "models", "stories260K", "stories260K.gguf")
	data, err := os.ReadFile(filepath.Join(shared, "golden", "stories260K.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden []goldenPrompt
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden) != 4 {
		t.Fatalf("%d golden prompts, want 4", len(golden))
	}
	h, _ := newHost(t, Options{})
	run := func(spec string) [][]int {
		m, err := model.Load(model.Options{Path: modelPath, Spec: spec, Plugins: h})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		want := 0
		if spec != "" {
			want = 2*m.Params.Int("layers") + 1
		}
		if got := pluginNodes(m.Graph, "rmsnorm"); got != want {
			t.Fatalf("spec %q: %d nodes served by the plugin, want %d", spec, got, want)
		}
		eng, err := m.NewEngine(model.EngineOptions{Threads: 1, MaxTokens: 64})
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close()
		var out [][]int
		for _, g := range golden {
			ids, err := m.Tokenizer.Encode(g.Prompt, tokenizer.EncodeOptions{AddSpecial: true, ParseSpecial: true})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(ids) != fmt.Sprint(g.PromptTokens) {
				t.Fatalf("prompt %q: tokens %v, llama.cpp %v", g.Prompt, ids, g.PromptTokens)
			}
			toks, err := eng.Generate(context.Background(), scheduler.Request{Prompt: ids, MaxTokens: len(g.Steps), Sampler: greedy{}}, nil)
			if err != nil {
				t.Fatalf("spec %q, prompt %q: %v", spec, g.Prompt, err)
			}
			out = append(out, toks)
		}
		return out
	}
	builtin := run("")
	plugin := run(exampleSpec(t, "llama-plugin-norm.yaml"))
	for i, g := range golden {
		var want []int
		for _, s := range g.Steps {
			want = append(want, s.Token)
		}
		if fmt.Sprint(plugin[i]) != fmt.Sprint(builtin[i]) {
			t.Errorf("prompt %q:\nplugin  %v\nbuiltin %v", g.Prompt, plugin[i], builtin[i])
		}
		if fmt.Sprint(plugin[i]) != fmt.Sprint(want) {
			t.Errorf("prompt %q:\nplugin   %v\nllama.cpp %v", g.Prompt, plugin[i], want)
		}
	}
}

// mapSource serves tensors from a map.
type mapSource map[string]*tensor.Tensor

func (m mapSource) Has(name string) bool { _, ok := m[name]; return ok }

func (m mapSource) Tensor(name string) (*tensor.Tensor, error) {
	t, ok := m[name]
	if !ok {
		return nil, fmt.Errorf("no tensor %s", name)
	}
	return t, nil
}

// randomWeights gives every parameter of an unbound graph seeded random
// values: DyT's α in [0.4, 0.9], γ near 1, β near 0, matrices scaled by
// 1/sqrt(fan-in).
func randomWeights(g *graph.Graph, seed uint64) mapSource {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	src := mapSource{}
	for _, v := range g.Params() {
		shape := make([]int, len(v.Type.Shape))
		for i, d := range v.Type.Shape {
			shape[i] = d.N
		}
		t := tensor.NewF32(v.Param.Source, shape...)
		x := t.F32()
		key := v.Param.Key
		for i := range x {
			r := rng.Float32()*2 - 1
			switch {
			case strings.HasSuffix(key, "_alpha"):
				x[i] = 0.65 + 0.25*r
			case strings.HasSuffix(key, "_gamma"):
				x[i] = 1 + 0.2*r
			case strings.HasSuffix(key, "_beta"):
				x[i] = 0.1 * r
			default:
				x[i] = r * float32(math.Sqrt(3/float64(shape[len(shape)-1])))
			}
		}
		src[v.Param.Source] = t
	}
	return src
}

// refDyT registers example.dyt as an in-process op computing
// γ·tanh(α·x) + β in float64, the reference for the plugin.
func refDyT(reg *ops.Registry, pluginDef *ops.Def) error {
	d := *pluginDef
	d.Plugin = ""
	d.Host = func(c *ops.HostCall) error {
		x, out := c.In[0].F32(), c.Out[0].F32()
		alpha, gamma, beta := float64(c.In[1].F32()[0]), c.In[2].F32(), c.In[3].F32()
		n := len(gamma)
		for i := range out {
			out[i] = float32(float64(gamma[i%n])*math.Tanh(alpha*float64(x[i])) + float64(beta[i%n]))
		}
		return nil
	}
	return reg.Register(&d)
}

// TestDyTSpec runs specs/examples/llama-dyt.yaml on seeded random weights
// with DyT served by the plugin and by an in-process reference: the logits
// must agree at every step, through inline and shared-memory transport.
func TestDyTSpec(t *testing.T) {
	sp, err := specs.Load(exampleSpec(t, "llama-dyt.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	params, err := sp.ResolveParams(nil, map[string]any{"hidden": int64(64), "layers": int64(2), "heads": int64(4),
		"kv_heads": int64(2), "ffn": int64(96), "vocab": int64(128), "ctx": int64(64)})
	if err != nil {
		t.Fatal(err)
	}
	prompt := []int{1, 17, 33, 5, 99, 64, 2, 80, 11}
	generate := func(reg *ops.Registry, src mapSource) ([]int, [][]float32) {
		t.Helper()
		g, err := sp.Build(specs.BuildOptions{Registry: reg, Params: params, Format: "gguf", Source: src})
		if err != nil {
			t.Fatal(err)
		}
		if err := graph.Optimize(g, reg); err != nil {
			t.Fatal(err)
		}
		plan, err := scheduler.NewPlan(g, scheduler.PlanOptions{MaxTokens: 16, Backends: []backend.Backend{cpudev.New("cpu:0", 1, cpu.Kernels{})}})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := scheduler.NewEngine(plan, scheduler.Options{Context: 64})
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close()
		var logits [][]float32
		toks, err := eng.Generate(context.Background(), scheduler.Request{Prompt: prompt, MaxTokens: 12, Sampler: greedy{}, KeepLogits: true},
			func(ev scheduler.TokenEvent) { logits = append(logits, append([]float32{}, ev.Logits...)) })
		if err != nil {
			t.Fatal(err)
		}
		return toks, logits
	}
	for _, inlineMax := range []int{0, -1} {
		t.Run(fmt.Sprintf("inline max %d", inlineMax), func(t *testing.T) {
			h, _ := newHost(t, Options{InlineMax: inlineMax})
			reg := ops.Builtins()
			if err := h.Load(sp.Plugins, reg); err != nil {
				t.Fatal(err)
			}
			unbound, err := sp.Build(specs.BuildOptions{Registry: reg, Params: params, Format: "gguf"})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := pluginNodes(unbound, "dyt"), 2*2+1; got != want {
				t.Fatalf("%d DyT nodes, want %d", got, want)
			}
			src := randomWeights(unbound, 42)
			refReg := ops.Builtins()
			def, _ := reg.Lookup("example.dyt")
			if err := refDyT(refReg, def); err != nil {
				t.Fatal(err)
			}
			gotToks, got := generate(reg, src)
			wantToks, want := generate(refReg, src)
			if fmt.Sprint(gotToks) != fmt.Sprint(wantToks) {
				t.Errorf("tokens %v, reference %v", gotToks, wantToks)
			}
			if len(got) != len(want) || len(got) == 0 {
				t.Fatalf("%d logits rows, reference %d", len(got), len(want))
			}
			spread := 0.0
			for i := range got {
				for j, v := range got[i] {
					if math.IsNaN(float64(v)) || math.Abs(float64(v-want[i][j])) > 1e-4 {
						t.Fatalf("step %d: logit %d = %v, reference %v", i, j, v, want[i][j])
					}
					spread = math.Max(spread, math.Abs(float64(v-got[i][0])))
				}
			}
			if spread == 0 {
				t.Error("all logits equal: the model computes nothing")
			}
		})
	}
}

// TestGraphExportShowsPlugin checks that exported graphs name the plugin
// serving each plugin op.
func TestGraphExportShowsPlugin(t *testing.T) {
	sp, err := specs.Load(exampleSpec(t, "llama-plugin-norm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := newHost(t, Options{})
	reg := ops.Builtins()
	if err := h.Load(sp.Plugins, reg); err != nil {
		t.Fatal(err)
	}
	params, err := sp.ResolveParams(nil, map[string]any{"hidden": int64(64), "layers": int64(2), "heads": int64(4), "ffn": int64(96), "vocab": int64(128)})
	if err != nil {
		t.Fatal(err)
	}
	g, err := sp.Build(specs.BuildOptions{Registry: reg, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if err := graph.Optimize(g, reg); err != nil {
		t.Fatal(err)
	}
	var dot, mermaid, js bytes.Buffer
	if err := g.WriteDOT(&dot); err != nil {
		t.Fatal(err)
	}
	if err := g.WriteMermaid(&mermaid); err != nil {
		t.Fatal(err)
	}
	if err := g.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"dot": dot.String(), "mermaid": mermaid.String()} {
		if n := strings.Count(out, "example.rms_norm [rmsnorm]"); n != 5 {
			t.Errorf("%s: %d nodes labelled \"example.rms_norm [rmsnorm]\", want 5", name, n)
		}
	}
	var jg graph.JSONGraph
	if err := json.Unmarshal(js.Bytes(), &jg); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, nd := range jg.Nodes {
		if nd.Op == "example.rms_norm" {
			n++
			if nd.Plugin != "rmsnorm" {
				t.Errorf("json node %d: plugin %q", nd.ID, nd.Plugin)
			}
		} else if nd.Plugin != "" {
			t.Errorf("json node %d (%s): plugin %q", nd.ID, nd.Op, nd.Plugin)
		}
	}
	if n != 5 {
		t.Errorf("json: %d example.rms_norm nodes, want 5", n)
	}
}
