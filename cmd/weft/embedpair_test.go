package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/tensor"
	"github.com/weftrun/weft/tokenizer"
)

// TestEmbedPairCLI: weft embed -p A --pair B on a random BERT (bge
// vocabulary, noisy norms and biases) lays the pair out as [CLS] A [SEP]
// B [SEP] (the tokens of A and B encoded alone) with token types 0 up to
// and including the first [SEP] and 1 after it, and prints the hidden
// states of a float64 BERT forward pass over those tokens and types;
// without --pair the same text is all type 0 (other values). -f - reads
// the texts from standard input.
func TestEmbedPairCLI(t *testing.T) {
	shared := testdata.Shared(t)
	dir := t.TempDir()
	m := filepath.Join(dir, "bert.gguf")
	if code, _, e := weft("synth", "-s", "bert", "--set", "hidden=16", "--set", "layers=2", "--set", "heads=2", "--set", "ffn=24",
		"--set", "ctx=32", "--set", "vocab=30522", "--dtype", "f32", "--random-vectors", "--seed", "5",
		"--vocab", filepath.Join(shared, "tokenizer-vectors", "ggml-vocab-bert-bge.gguf"), "-o", m); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, e)
	}
	a, b := "hello world", "the lazy dog"
	embed := func(stdin string, args ...string) [][]float64 {
		t.Helper()
		var code int
		var out, e string
		call := func() {
			code, out, e = weft(append([]string{"embed", "-m", m, "--pooling", "none", "--json", "-t", "1"}, args...)...)
		}
		if stdin != "" {
			withStdin(t, stdin, call)
		} else {
			call()
		}
		if code != 0 {
			t.Fatalf("embed %v: exit %d: %s", args, code, e)
		}
		var res struct {
			Embeddings [][]float64 `json:"embeddings"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("not one JSON object: %v\n%s", err, out)
		}
		return res.Embeddings
	}

	// The layout, from the tokenizer's single-text encodings.
	tk, err := tokenizer.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(s string) []int {
		ids, err := tk.Encode(s, tokenizer.EncodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	cls, sep := tk.Piece(tk.BOS()), "[SEP]"
	if cls != "[CLS]" {
		t.Fatalf("BOS is %q, want [CLS]", cls)
	}
	sepID := -1
	for id := range tk.VocabSize() {
		if tk.Piece(id) == sep {
			sepID = id
			break
		}
	}
	ea, eb := enc(a), enc(b)
	tokens := slices.Concat([]int{tk.BOS()}, ea, []int{sepID}, eb, []int{sepID})
	types := make([]int, len(tokens))
	for i := len(ea) + 2; i < len(types); i++ {
		types[i] = 1
	}

	data, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gguf.Parse(m, data)
	if err != nil {
		t.Fatal(err)
	}
	want := bertRef64(t, g, 2, 1e-12, tokens, types)
	got := embed("", "-p", a, "--pair", b)
	closeRows64(t, "pair", got, want, 1e-4)

	single := embed("", "-p", a)
	plain := bertRef64(t, g, 2, 1e-12, slices.Concat([]int{tk.BOS()}, ea, []int{sepID}), nil)
	closeRows64(t, "single text", single, plain, 1e-4)
	if math.Abs(got[0][0]-single[0][0]) < 1e-6 {
		t.Error("the pair's [CLS] state equals the single text's: the second segment or its types were ignored")
	}

	// Texts from standard input, each paired with --pair.
	both := embed(a+"\n"+a+"\n", "-f", "-", "--pair", b)
	closeRows64(t, "-f - pairs", both, slices.Concat(want, want), 1e-4)
}

// bertRef64 is BERT's encoder in float64 over a GGUF's weights: summed
// token, position and token-type embeddings, LayerNorm, then post-norm
// blocks of bidirectional attention and an erf-GELU FFN, with biases.
func bertRef64(t *testing.T, g *gguf.File, heads int, eps float64, tokens, types []int) [][]float64 {
	t.Helper()
	w := func(name string) ([]float64, []int) {
		tt, err := g.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		if tt.DType != tensor.F32 {
			t.Fatalf("%s is %s", name, tt.DType)
		}
		f := tensor.BytesToF32(tt.Data)
		out := make([]float64, len(f))
		for i, v := range f {
			out[i] = float64(v)
		}
		return out, tt.Shape
	}
	row := func(name string, i int) []float64 {
		v, s := w(name)
		return v[i*s[1] : (i+1)*s[1]]
	}
	linear := func(x [][]float64, name string) [][]float64 {
		m, s := w(name + ".weight")
		bias, _ := w(name + ".bias")
		out := make([][]float64, len(x))
		for i, xi := range x {
			out[i] = make([]float64, s[0])
			for r := range s[0] {
				acc := bias[r]
				for c := range s[1] {
					acc += m[r*s[1]+c] * xi[c]
				}
				out[i][r] = acc
			}
		}
		return out
	}
	norm := func(x [][]float64, name string) [][]float64 {
		gw, _ := w(name + ".weight")
		gb, _ := w(name + ".bias")
		out := make([][]float64, len(x))
		for i, xi := range x {
			var mean, vr float64
			for _, v := range xi {
				mean += v
			}
			mean /= float64(len(xi))
			for _, v := range xi {
				vr += (v - mean) * (v - mean)
			}
			vr /= float64(len(xi))
			out[i] = make([]float64, len(xi))
			for j, v := range xi {
				out[i][j] = (v-mean)/math.Sqrt(vr+eps)*gw[j] + gb[j]
			}
		}
		return out
	}
	add := func(a, b [][]float64) [][]float64 {
		out := make([][]float64, len(a))
		for i := range a {
			out[i] = make([]float64, len(a[i]))
			for j := range a[i] {
				out[i][j] = a[i][j] + b[i][j]
			}
		}
		return out
	}
	if types == nil {
		types = make([]int, len(tokens))
	}
	x := make([][]float64, len(tokens))
	for i, tok := range tokens {
		e, p, ty := row("token_embd.weight", tok), row("position_embd.weight", i), row("token_types.weight", types[i])
		x[i] = make([]float64, len(e))
		for j := range e {
			x[i][j] = e[j] + p[j] + ty[j]
		}
	}
	x = norm(x, "token_embd_norm")
	for l := 0; ; l++ {
		b := func(s string) string { return fmt.Sprintf("blk.%d.%s", l, s) }
		if _, err := g.Tensor(b("attn_q.weight")); err != nil {
			break
		}
		q, k, v := linear(x, b("attn_q")), linear(x, b("attn_k")), linear(x, b("attn_v"))
		n, d := len(x), len(q[0])/heads
		a := make([][]float64, n)
		for i := range a {
			a[i] = make([]float64, len(q[0]))
		}
		for h := range heads {
			for i := range n {
				s := make([]float64, n)
				mx := math.Inf(-1)
				for j := range n {
					for c := range d {
						s[j] += q[i][h*d+c] * k[j][h*d+c]
					}
					s[j] /= math.Sqrt(float64(d))
					mx = max(mx, s[j])
				}
				var z float64
				for j := range s {
					s[j] = math.Exp(s[j] - mx)
					z += s[j]
				}
				for j := range n {
					for c := range d {
						a[i][h*d+c] += s[j] / z * v[j][h*d+c]
					}
				}
			}
		}
		x = norm(add(x, linear(a, b("attn_output"))), b("attn_output_norm"))
		f := linear(x, b("ffn_up"))
		for _, r := range f {
			for j, v := range r {
				r[j] = 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
			}
		}
		x = norm(add(x, linear(f, b("ffn_down"))), b("layer_output_norm"))
	}
	return x
}

func closeRows64(t *testing.T, what string, got, want [][]float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s row %d: %d values, want %d", what, i, len(got[i]), len(want[i]))
		}
		for j := range want[i] {
			if d := math.Abs(got[i][j] - want[i][j]); d > tol*(1+math.Abs(want[i][j])) {
				t.Fatalf("%s[%d][%d] = %v, float64 reference %v", what, i, j, got[i][j], want[i][j])
			}
		}
	}
}
