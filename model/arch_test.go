package model_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/backend/cpudev"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
)

// archGolden is one file of testdata/arch: llama.cpp's teacher-forced
// logits (every token of one batch) on a random-weight model of one
// architecture that `weft synth` makes from the shipped spec.
type archGolden struct {
	Synth  synthRecipe `json:"synth"`
	SHA256 string      `json:"sha256"`
	Tokens []int       `json:"tokens"`
	Logits [][]float32 `json:"logits"`
	// Tolerance, when set, replaces 1e-4 (relative to 1 + |logit|), and
	// Why says why the reference is not plain f32.
	Tolerance float64 `json:"tolerance"`
	Why       string  `json:"why"`
}

// TestArchitecturesMatchLlamaCpp loads each reference's model with no
// spec named (the spec is picked from general.architecture) and checks
// its logits for every prompt position against llama.cpp's, within f32
// rounding.
func TestArchitecturesMatchLlamaCpp(t *testing.T) {
	files, err := filepath.Glob("testdata/arch/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no references in testdata/arch: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var g archGolden
			if err := decodeGolden(data, &g); err != nil {
				t.Fatal(err)
			}
			path := synthGolden(t, g.Synth, g.SHA256)
			// Structure choices are not in the GGUF's metadata (llama.cpp
			// looks for optional tensors): pass them as `weft run --set`
			// would. Params come from the metadata.
			sp, err := specs.LoadBuiltin(g.Synth.Spec)
			if err != nil {
				t.Fatal(err)
			}
			set := map[string]any{}
			for _, c := range sp.Structure {
				if v, ok := g.Synth.Set[c.Name]; ok {
					set[c.Name] = v
				}
			}
			m, err := model.Load(model.Options{Path: path, Set: set})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if m.Spec.Name != g.Synth.Spec {
				t.Fatalf("picked spec %s for architecture %s, want %s", m.Spec.Name, m.Checkpoint.Arch(), g.Synth.Spec)
			}
			got := teacherForced(t, m, g.Tokens)
			for i := range got {
				if i < len(g.Logits) && len(g.Logits[i]) < len(got[i]) {
					got[i] = got[i][:len(g.Logits[i])] // a large vocabulary's reference keeps the first columns
				}
			}
			tol := 1e-4
			if g.Tolerance > 0 {
				if g.Why == "" {
					t.Fatal("a reference with its own tolerance must say why")
				}
				tol = g.Tolerance
			}
			closeVecs(t, name+" logits", got, g.Logits, tol)
		})
	}
}

// teacherForced runs tokens as one sequence in one step and returns the
// logits of every position.
func teacherForced(t *testing.T, m *model.Model, tokens []int) [][]float32 {
	t.Helper()
	dev := cpudev.New("cpu:0", 1, cpu.Kernels{})
	defer dev.Close()
	plan, err := scheduler.NewPlan(m.Graph, scheduler.PlanOptions{MaxTokens: len(tokens), Backends: []backend.Backend{dev}, Registry: m.Registry})
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	kv, err := plan.NewKV(0, backend.KVF32)
	if err != nil {
		t.Fatal(err)
	}
	st := &backend.Step{}
	for i, tok := range tokens {
		st.Tokens = append(st.Tokens, int32(tok))
		st.Pos = append(st.Pos, int32(i))
		st.Seq = append(st.Seq, 0)
		st.Keep = append(st.Keep, int32(i))
	}
	if err := kv.AddressWhole(st); err != nil {
		t.Fatal(err)
	}
	outs, err := plan.Run(context.Background(), st, kv, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := outs[0]
	cols := o.Shape[len(o.Shape)-1]
	h := o.F32()
	var rows [][]float32
	for i := range tokens {
		rows = append(rows, append([]float32(nil), h[i*cols:(i+1)*cols]...))
	}
	return rows
}
