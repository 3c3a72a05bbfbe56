package specs_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
)

func f32Tensor(name string, rows, cols int) *tensor.Tensor {
	v := make([]float32, rows*cols)
	for i := range v {
		v[i] = float32(i)
	}
	return tensor.FromF32(name, v, rows, cols)
}

func TestRows(t *testing.T) {
	m := f32Tensor("m", 6, 2)
	r, err := specs.Rows(m, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := tensor.BytesToF32(r.Data); fmt.Sprint(r.Shape, got) != "[3 2] [4 5 6 7 8 9]" {
		t.Errorf("rows(2, 3) = %v %v", r.Shape, got)
	}
	v := tensor.FromF32("b", []float32{0, 1, 2, 3, 4, 5}, 6)
	r, err = specs.Rows(v, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := tensor.BytesToF32(r.Data); fmt.Sprint(r.Shape, got) != "[2] [4 5]" {
		t.Errorf("vector rows(4, 2) = %v %v", r.Shape, got)
	}
	for _, c := range []struct {
		t            *tensor.Tensor
		start, count int
	}{{m, 5, 2}, {m, -1, 1}, {m, 0, 0}, {v, 3, 4}, {&tensor.Tensor{Name: "q", DType: tensor.Q8_0, Shape: []int{64}, Data: make([]byte, 68)}, 0, 32}} {
		if _, err := specs.Rows(c.t, c.start, c.count); err == nil {
			t.Errorf("Rows(%v, %d, %d) did not fail", c.t.Shape, c.start, c.count)
		}
	}
}

func TestTranspose(t *testing.T) {
	m := f32Tensor("m", 2, 3)
	tr, err := specs.Transpose(m)
	if err != nil {
		t.Fatal(err)
	}
	if got := tensor.BytesToF32(tr.Data); fmt.Sprint(tr.Shape, got) != "[3 2] [0 3 1 4 2 5]" {
		t.Errorf("transpose = %v %v", tr.Shape, got)
	}
}

// TestRoPEPermute checks the transform's defining property: rotating
// HF's q = W·x with rotate-half pairing equals rotating the permuted
// W'·x with adjacent pairing, after the same permutation of features.
func TestRoPEPermute(t *testing.T) {
	const heads, hd, in = 2, 8, 3
	w := f32Tensor("w", heads*hd, in)
	for i, v := range tensor.BytesToF32(w.Data) {
		tensor.BytesToF32(w.Data)[i] = float32(math.Sin(float64(v)))
	}
	p, err := specs.RoPEPermute(w, heads)
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.3, -1.2, 0.7}
	proj := func(t *tensor.Tensor) []float64 {
		out := make([]float64, heads*hd)
		f := tensor.BytesToF32(t.Data)
		for r := range out {
			for c := 0; c < in; c++ {
				out[r] += float64(f[r*in+c]) * x[c]
			}
		}
		return out
	}
	const pos = 5
	hf := proj(w)
	half := hd / 2
	for h := 0; h < heads; h++ { // rotate-half: pairs (j, j + hd/2)
		for j := 0; j < half; j++ {
			th := pos * math.Pow(10000, -2*float64(j)/hd)
			a, b := hf[h*hd+j], hf[h*hd+j+half]
			hf[h*hd+j], hf[h*hd+j+half] = a*math.Cos(th)-b*math.Sin(th), a*math.Sin(th)+b*math.Cos(th)
		}
	}
	q := make(mat, pos+1) // rope's row index is the position

	for i := range q {
		q[i] = proj(p)
	}
	got := rope(q, heads, hd, 10000)[pos]
	for h := 0; h < heads; h++ {
		for j := 0; j < half; j++ {
			// adjacent feature 2j (2j+1) holds HF feature j (j + hd/2)
			for s, hfIdx := range []int{j, j + half} {
				if d := math.Abs(got[h*hd+2*j+s] - hf[h*hd+hfIdx]); d > 1e-5 {
					t.Fatalf("head %d pair %d: %g vs %g", h, j, got[h*hd+2*j+s], hf[h*hd+hfIdx])
				}
			}
		}
	}
	back, err := specs.RoPEUnpermute(p, heads)
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "unpermute", [][]float32{tensor.BytesToF32(back.Data)}, [][]float32{tensor.BytesToF32(w.Data)})
	if _, err := specs.RoPEPermute(f32Tensor("odd", 6, 2), 2); err == nil {
		t.Error("6 rows in 2 heads of odd size were accepted")
	}
}

// TestLlamaHF binds llama.yaml to HF-named weights whose q/k rows are in
// HF's rotate-half order (rope_permute) and compares with GGUF names.
func TestLlamaHF(t *testing.T) {
	sp := builtin(t, "llama")
	p := resolve(t, sp, map[string]any{"hidden": int64(32), "heads": int64(4), "kv_heads": int64(2), "layers": int64(2), "ffn": int64(40), "vocab": int64(30)})
	src := randSource(t, sp, p, "gguf")
	hf := mapSource{}
	get := func(n string) *tensor.Tensor {
		tt, err := src.Tensor(n)
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	hf["model.embed_tokens.weight"] = get("token_embd.weight")
	hf["model.norm.weight"] = get("output_norm.weight")
	hf["lm_head.weight"] = get("output.weight")
	for l := 0; l < 2; l++ {
		g := func(s string) *tensor.Tensor { return get(fmt.Sprintf("blk.%d.%s.weight", l, s)) }
		h := func(s string) string { return fmt.Sprintf("model.layers.%d.%s.weight", l, s) }
		var err error
		if hf[h("self_attn.q_proj")], err = specs.RoPEUnpermute(g("attn_q"), 4); err != nil {
			t.Fatal(err)
		}
		if hf[h("self_attn.k_proj")], err = specs.RoPEUnpermute(g("attn_k"), 2); err != nil {
			t.Fatal(err)
		}
		hf[h("self_attn.v_proj")] = g("attn_v")
		hf[h("self_attn.o_proj")] = g("attn_output")
		hf[h("input_layernorm")] = g("attn_norm")
		hf[h("post_attention_layernorm")] = g("ffn_norm")
		hf[h("mlp.gate_proj")] = g("ffn_gate")
		hf[h("mlp.up_proj")] = g("ffn_up")
		hf[h("mlp.down_proj")] = g("ffn_down")
	}
	prompt := []int{1, 2, 29, 7, 7}
	sameRows(t, "logits", runSeq(t, build(t, sp, p, "hf", hf), prompt, 0), runSeq(t, build(t, sp, p, "gguf", src), prompt, 0))
}

// TestAddOne: 1 + w as f32 from f32, f16 and bf16; quantized refused.
func TestAddOne(t *testing.T) {
	w := []float32{-0.5, 0, 0.25, 2}
	f16 := make([]byte, 2*len(w))
	bf16 := make([]byte, 2*len(w))
	for i, v := range w {
		binary.LittleEndian.PutUint16(f16[2*i:], quant.ToF16(v))
		binary.LittleEndian.PutUint16(bf16[2*i:], quant.ToBF16(v))
	}
	for _, in := range []*tensor.Tensor{
		tensor.FromF32("n", w, 4),
		{Name: "n", DType: tensor.F16, Shape: []int{4}, Data: f16},
		{Name: "n", DType: tensor.BF16, Shape: []int{4}, Data: bf16},
	} {
		out, err := specs.AddOne(in)
		if err != nil {
			t.Fatal(err)
		}
		if out.DType != tensor.F32 || len(out.Shape) != 1 || out.Shape[0] != 4 {
			t.Fatalf("%s: got %s%v", in.DType, out.DType, out.Shape)
		}
		for i, v := range out.F32() {
			if v != 1+w[i] {
				t.Errorf("%s: element %d = %v, want %v", in.DType, i, v, 1+w[i])
			}
		}
	}
	if _, err := specs.AddOne(&tensor.Tensor{Name: "q", DType: tensor.Q8_0, Shape: []int{32}, Data: make([]byte, 34)}); err == nil {
		t.Error("add_one on q8_0: no error")
	}
	if _, err := specs.AddOne(&tensor.Tensor{Name: "s", DType: tensor.F32, Shape: []int{4}, Data: make([]byte, 8)}); err == nil {
		t.Error("add_one on a short tensor: no error")
	}
}

// TestQKVGroups: HF's fused QKV layouts, written out by hand with one-row
// heads (each row holds its own label), regroup to GGUF's [Q; K; V]:
// BLOOM/GPT-NeoX's per-head q, k, v (groups = heads), Falcon-40B's groups
// of query heads with their key and value, and Falcon-7B's multi-query
// (one group: unchanged); a bias vector likewise, with two-row heads;
// QKVUngroups undoes it.
func TestQKVGroups(t *testing.T) {
	for _, c := range []struct {
		name          string
		groups, heads int
		hf, gguf      []float32
		vector        bool
	}{
		// 1xx query heads, 2xx keys, 3xx values
		{"per head", 2, 2, []float32{100, 200, 300, 101, 201, 301}, []float32{100, 101, 200, 201, 300, 301}, false},
		{"grouped", 2, 4, []float32{100, 101, 200, 300, 102, 103, 201, 301}, []float32{100, 101, 102, 103, 200, 201, 300, 301}, false},
		{"multi-query", 1, 3, []float32{100, 101, 102, 200, 300}, []float32{100, 101, 102, 200, 300}, false},
		{"bias, two-row heads", 2, 2, []float32{100, 100.5, 200, 200.5, 300, 300.5, 101, 101.5, 201, 201.5, 301, 301.5},
			[]float32{100, 100.5, 101, 101.5, 200, 200.5, 201, 201.5, 300, 300.5, 301, 301.5}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			shape := []int{len(c.hf), 2}
			data := make([]float32, 0, 2*len(c.hf))
			want := make([]float32, 0, 2*len(c.hf))
			for i := range c.hf {
				data = append(data, c.hf[i], -c.hf[i])
				want = append(want, c.gguf[i], -c.gguf[i])
			}
			if c.vector {
				shape, data, want = []int{len(c.hf)}, c.hf, c.gguf
			}
			x := tensor.FromF32("qkv", data, shape...)
			got, err := specs.QKVGroups(x, c.groups, c.heads)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.F32(), want) {
				t.Fatalf("QKVGroups = %v, want %v", got.F32(), want)
			}
			back, err := specs.QKVUngroups(got, c.groups, c.heads)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(back.F32(), data) {
				t.Fatalf("QKVUngroups = %v, want %v", back.F32(), data)
			}
		})
	}
	if _, err := specs.QKVGroups(tensor.FromF32("qkv", make([]float32, 10), 10), 2, 3); err == nil {
		t.Error("3 query heads in 2 groups were accepted")
	}
}
