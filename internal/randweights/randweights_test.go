package randweights

import (
	"math"
	"strings"
	"testing"

	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		key, name string
		shape     []int
		want      Kind
	}{
		{"wq", "blk.0.attn_q.weight", []int{8, 8}, Matrix},
		{"gate_exps", "blk.0.ffn_gate_exps.weight", []int{4, 8, 8}, Matrix},
		{"attn_norm", "blk.0.attn_norm.weight", []int{8}, Norm},
		{"attn_norm_b", "blk.0.attn_norm.bias", []int{8}, Bias},
		{"qkv_b", "blk.0.attn_qkv.bias", []int{24}, Bias},
		{"bq", "h.0.attn.c_attn.bias", []int{8}, Bias},
		{"scale", "blk.0.layer_scale", []int{8}, Norm},
		{"emb_norm", "embeddings.LayerNorm.weight", []int{8}, Norm},
		{"out_bias", "x", []int{8}, Bias},
	} {
		if got := Classify(c.key, c.name, c.shape); got != c.want {
			t.Errorf("Classify(%q, %q, %v) = %s, want %s", c.key, c.name, c.shape, got, c.want)
		}
	}
}

func param(g *graph.Graph, key, name string, shape ...int) {
	g.AddParam(key, ops.Type{DType: tensor.F32, Shape: ops.ConstShape(shape...)}, &graph.Param{Key: key, Layer: -1, Source: name})
}

func values(t *testing.T, s *Source, name string) []float32 {
	t.Helper()
	tt, err := s.Tensor(name)
	if err != nil {
		t.Fatal(err)
	}
	if tt.DType != tensor.F32 || len(tt.Data) != 4*tt.Elems() {
		t.Fatalf("%s: %s with %d bytes for shape %v", name, tt.DType, len(tt.Data), tt.Shape)
	}
	return tensor.BytesToF32(tt.Data)
}

func moments(v []float32) (mean, std float64) {
	for _, x := range v {
		mean += float64(x)
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (float64(x) - mean) * (float64(x) - mean)
	}
	return mean, math.Sqrt(std / float64(len(v)))
}

func TestValues(t *testing.T) {
	g := graph.New("t")
	param(g, "w", "w.weight", 256, 256)
	param(g, "norm", "norm.weight", 64)
	param(g, "norm_b", "norm.bias", 64)
	s, err := New(g, Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Names(), ","); got != "norm.bias,norm.weight,w.weight" {
		t.Errorf("Names = %s", got)
	}
	if !s.Has("w.weight") || s.Has("other") {
		t.Error("Has is wrong")
	}
	if _, err := s.Tensor("other"); err == nil {
		t.Error("Tensor(other) did not fail")
	}
	// 65536 draws: the sample std is within 1% of 0.02 with overwhelming probability.
	mean, std := moments(values(t, s, "w.weight"))
	if math.Abs(mean) > 0.001 || math.Abs(std-DefaultStd) > 0.0002 {
		t.Errorf("matrix mean %g std %g, want 0 and %g", mean, std, DefaultStd)
	}
	for _, v := range values(t, s, "norm.weight") {
		if v != 1 {
			t.Fatalf("norm value %g, want 1", v)
		}
	}
	for _, v := range values(t, s, "norm.bias") {
		if v != 0 {
			t.Fatalf("bias value %g, want 0", v)
		}
	}
	a, b := values(t, s, "w.weight"), values(t, s, "w.weight")
	if &a[0] != &b[0] {
		t.Error("a second Tensor call generated a new tensor")
	}

	// Spread options.
	s2, err := New(g, Config{Seed: 1, Std: 0.5, BiasStd: 0.1, NormStd: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if _, std := moments(values(t, s2, "w.weight")); math.Abs(std-0.5) > 0.01 {
		t.Errorf("std %g, want 0.5", std)
	}
	if mean, std := moments(values(t, s2, "norm.weight")); math.Abs(mean-1) > 0.1 || std < 0.1 || std > 0.3 {
		t.Errorf("norm mean %g std %g, want 1 and 0.2", mean, std)
	}
	if mean, std := moments(values(t, s2, "norm.bias")); math.Abs(mean) > 0.05 || std < 0.05 || std > 0.15 {
		t.Errorf("bias mean %g std %g, want 0 and 0.1", mean, std)
	}
}

func TestDeterministic(t *testing.T) {
	g1 := graph.New("a")
	param(g1, "w", "a.weight", 4, 4)
	param(g1, "v", "b.weight", 4, 4)
	g2 := graph.New("b") // other order, other tensors
	param(g2, "v", "b.weight", 4, 4)
	param(g2, "u", "c.weight", 2, 2)
	s1, _ := New(g1, Config{Seed: 9})
	s2, _ := New(g2, Config{Seed: 9})
	s3, _ := New(g1, Config{Seed: 10})
	x, y, z := values(t, s1, "b.weight"), values(t, s2, "b.weight"), values(t, s3, "b.weight")
	for i := range x {
		if x[i] != y[i] {
			t.Fatalf("same seed, same name, different values at %d", i)
		}
	}
	same := 0
	for i := range x {
		if x[i] == z[i] {
			same++
		}
	}
	if same == len(x) {
		t.Error("another seed gave the same values")
	}
	if a := values(t, s1, "a.weight"); a[0] == x[0] && a[1] == x[1] {
		t.Error("two names gave the same values")
	}
}

func TestConflict(t *testing.T) {
	g := graph.New("t")
	param(g, "wq", "qkv.weight", 4, 4)
	param(g, "w_qkv", "qkv.weight", 12, 4)
	if _, err := New(g, Config{}); err == nil || !strings.Contains(err.Error(), "qkv.weight is wanted as [4 4] (wq) and as [12 4] (w_qkv)") {
		t.Errorf("err = %v", err)
	}
	g = graph.New("t")
	g.AddParam("w", ops.Type{DType: tensor.F32, Shape: ops.Shape{ops.Tokens}}, &graph.Param{Key: "w", Source: "w"})
	if _, err := New(g, Config{}); err == nil {
		t.Error("a symbolic shape was accepted")
	}
}

// TestForSpec binds every weight of the llama spec and checks the rule on
// its real tensors.
func TestForSpec(t *testing.T) {
	sp, err := specs.LoadBuiltin("llama")
	if err != nil {
		t.Fatal(err)
	}
	p, err := sp.ResolveParams(nil, map[string]any{"hidden": int64(16), "layers": int64(2), "heads": int64(2), "ffn": int64(24), "vocab": int64(10)})
	if err != nil {
		t.Fatal(err)
	}
	reg := ops.Builtins()
	s, err := ForSpec(sp, reg, p, "gguf", Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	// token_embd, output, output_norm, then 9 tensors per layer.
	if n := len(s.Names()); n != 3+2*9 {
		t.Errorf("%d tensors: %v", n, s.Names())
	}
	g, err := sp.Build(specs.BuildOptions{Registry: reg, Params: p, Format: "gguf", Source: s})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range g.Params() {
		vals := values(t, s, v.Param.Source)
		if strings.Contains(v.Param.Key, "norm") {
			if vals[0] != 1 {
				t.Errorf("%s starts with %g, want 1", v.Param.Source, vals[0])
			}
		} else if vals[0] == 0 || vals[0] == 1 {
			t.Errorf("%s starts with %g", v.Param.Source, vals[0])
		}
	}
}
