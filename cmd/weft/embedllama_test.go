package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
)

// TestEmbedCLIMatchesLlamaCpp: `weft embed --pooling cls|mean|none --json`
// on the random encoders of model/testdata/embed (made here by `weft
// synth` from each reference's recipe, the same bytes) prints
// llama-embedding's vectors (--embd-normalize -1) within f32 rounding
// (llama.cpp prints 7 decimals), and with no --pooling the GGUF's
// pooling_type (cls for BERT, mean for nomic-bert). model's
// TestEmbedMatchesLlamaCpp checks the same numbers at the Embedder.
func TestEmbedCLIMatchesLlamaCpp(t *testing.T) {
	shared := testdata.Shared(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "model", "testdata", "embed", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no references in model/testdata/embed: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var g struct {
				Synth struct {
					Spec          string                     `json:"spec"`
					Seed          int                        `json:"seed"`
					DType         string                     `json:"dtype"`
					Vocab         string                     `json:"vocab"`
					RandomVectors bool                       `json:"random_vectors"`
					Set           map[string]json.RawMessage `json:"set"`
				} `json:"synth"`
				SHA256 string `json:"sha256"`
				Cases  []struct {
					Text string      `json:"text"`
					CLS  [][]float64 `json:"cls"`
					Mean [][]float64 `json:"mean"`
					None [][]float64 `json:"none"`
				} `json:"cases"`
			}
			if err := json.Unmarshal(data, &g); err != nil {
				t.Fatal(err)
			}
			m := filepath.Join(t.TempDir(), g.Synth.Spec+".gguf")
			args := []string{"synth", "-s", g.Synth.Spec, "--seed", fmt.Sprint(g.Synth.Seed), "--dtype", g.Synth.DType, "-o", m}
			if g.Synth.RandomVectors {
				args = append(args, "--random-vectors")
			}
			if g.Synth.Vocab != "" {
				args = append(args, "--vocab", filepath.Join(shared, g.Synth.Vocab))
			}
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range g.Synth.Set {
					if !yield(k) {
						return
					}
				}
			}) {
				args = append(args, "--set", k+"="+string(g.Synth.Set[k])) // as written: 4 an int, 4.0 a float
			}
			if code, _, e := weft(args...); code != 0 {
				t.Fatalf("synth: exit %d: %s", code, e)
			}
			raw, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != g.SHA256 {
				t.Fatalf("weft synth %v wrote another file than the reference's (sha256 %x, want %s)", args[1:], sum, g.SHA256)
			}
			embed := func(text string, flags ...string) [][]float64 {
				t.Helper()
				code, out, e := weft(append([]string{"embed", "-m", m, "-p", text, "--json", "-t", "1"}, flags...)...)
				if code != 0 {
					t.Fatalf("embed %v: exit %d: %s", flags, code, e)
				}
				var res struct {
					Embedding  []float64   `json:"embedding"`
					Embeddings [][]float64 `json:"embeddings"`
				}
				if err := json.Unmarshal([]byte(out), &res); err != nil {
					t.Fatalf("not one JSON object: %v\n%s", err, out)
				}
				if res.Embedding != nil {
					return [][]float64{res.Embedding}
				}
				return res.Embeddings
			}
			def := map[string]string{"bert": "cls", "nomic-bert": "mean"}[g.Synth.Spec]
			for _, c := range g.Cases {
				want := map[string][][]float64{"cls": c.CLS, "mean": c.Mean, "none": c.None}
				for _, pool := range []string{"cls", "mean", "none", ""} {
					flags, ref := []string{"--pooling", pool}, want[pool]
					if pool == "" {
						flags, ref = nil, want[def]
					}
					got := embed(c.Text, flags...)
					if len(got) != len(ref) {
						t.Fatalf("%q --pooling %q: %d vectors, llama-embedding %d", c.Text, pool, len(got), len(ref))
					}
					for i := range ref {
						if len(got[i]) != len(ref[i]) {
							t.Fatalf("%q --pooling %q vector %d: %d values, want %d", c.Text, pool, i, len(got[i]), len(ref[i]))
						}
						for j := range ref[i] {
							if d := math.Abs(got[i][j] - ref[i][j]); d > 5e-5*(1+math.Abs(ref[i][j])) {
								t.Fatalf("%q --pooling %q [%d][%d] = %v, llama-embedding %v", c.Text, pool, i, j, got[i][j], ref[i][j])
							}
						}
					}
				}
			}
		})
	}
}
