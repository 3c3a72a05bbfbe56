package model_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/weftrun/weft/convert"
	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
	"github.com/weftrun/weft/tokenizer"
)

// embedGolden is testdata/bert-embed.json: llama-embedding's output
// (--embd-normalize -1) on a random-weight BERT that `weft synth` makes.
type embedGolden struct {
	Synth  synthRecipe `json:"synth"`
	SHA256 string      `json:"sha256"`
	Cases  []struct {
		Text   string      `json:"text"`
		Tokens []int       `json:"tokens"`
		CLS    [][]float32 `json:"cls"`
		Mean   [][]float32 `json:"mean"`
		None   [][]float32 `json:"none"`
	} `json:"cases"`
}

// synthRecipe is how a reference's random-weight model was made: the
// arguments of `weft synth`.
type synthRecipe struct {
	Spec  string         `json:"spec"`
	Seed  uint64         `json:"seed"`
	DType string         `json:"dtype"`
	Vocab string         `json:"vocab"` // under ../shared; "" for synth's own
	Set   map[string]any `json:"set"`
	// RandomVectors is --random-vectors: 1-D weights are noisy too.
	RandomVectors bool `json:"random_vectors"`
	// Arch is --arch: the architecture written ("": the spec's first).
	Arch string `json:"arch"`
	// VocabRepo, when set, is a vocabulary GGUF in this repository
	// (relative to its root), as `weft synth --vocab` takes it.
	VocabRepo string `json:"vocab_repo"`
}

// synthGolden rebuilds a reference's model (as `weft synth` does) in a
// temporary folder and checks that it is byte for byte the file llama.cpp
// ran (sha256).
func synthGolden(t *testing.T, r synthRecipe, sha string) string {
	t.Helper()
	g := struct {
		Synth  synthRecipe
		SHA256 string
	}{r, sha}
	sp, err := specs.LoadBuiltin(g.Synth.Spec)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]any{}
	for k, v := range g.Synth.Set {
		if n, ok := v.(json.Number); ok { // 4 is an int, 4.0 a float, as `weft synth --set` reads them
			if i, err := n.Int64(); err == nil {
				v = i
			} else if v, err = n.Float64(); err != nil {
				t.Fatalf("set %s: %v", k, err)
			}
		}
		set[k] = v
	}
	params, err := sp.ResolveParams(nil, set)
	if err != nil {
		t.Fatal(err)
	}
	dt, err := tensor.ParseDType(g.Synth.DType)
	if err != nil {
		t.Fatal(err)
	}
	opt := convert.SynthOptions{DType: dt, Seed: g.Synth.Seed, RandomVectors: g.Synth.RandomVectors, Arch: g.Synth.Arch}
	vocabPath := ""
	switch {
	case g.Synth.VocabRepo != "":
		vocabPath = filepath.Join("..", g.Synth.VocabRepo)
	case g.Synth.Vocab != "":
		vocabPath = filepath.Join(testdata.Shared(t), g.Synth.Vocab)
	}
	if vocabPath != "" {
		f, err := gguf.Open(vocabPath)
		if err != nil {
			t.Fatal(err)
		}
		opt.Vocab = gguf.Metadata{}
		for k, v := range f.Meta {
			opt.Vocab[k] = v
		}
		f.Close()
	}
	path := filepath.Join(t.TempDir(), g.Synth.Spec+".gguf")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if err := convert.Synth(out, sp, params, opt); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h.Write(data)
	if got := hex.EncodeToString(h.Sum(nil)); got != g.SHA256 {
		t.Fatalf("weft synth no longer writes the file the reference was computed on (sha256 %s, want %s): regenerate the reference", got, g.SHA256)
	}
	return path
}

func closeVecs(t *testing.T, what string, got, want [][]float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d vectors, want %d", what, len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s[%d]: %d values, want %d", what, i, len(got[i]), len(want[i]))
		}
		for j := range want[i] {
			if d := math.Abs(float64(got[i][j] - want[i][j])); d > tol*(1+math.Abs(float64(want[i][j]))) {
				t.Fatalf("%s[%d][%d] = %v, llama.cpp %v", what, i, j, got[i][j], want[i][j])
			}
		}
	}
}

// TestEmbedMatchesLlamaCpp: weft's embeddings of random-weight encoders
// (testdata/embed: BERT and nomic-bert, picked by their architecture and
// tokenized by their own WordPiece vocabulary) equal llama-embedding's for
// cls, mean and none pooling, within f32 rounding (llama.cpp prints 7
// decimals).
func TestEmbedMatchesLlamaCpp(t *testing.T) {
	files, err := filepath.Glob("testdata/embed/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no references in testdata/embed: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { checkEmbed(t, f) })
	}
}

func checkEmbed(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var g embedGolden
	if err := decodeGolden(data, &g); err != nil {
		t.Fatal(err)
	}
	path := synthGolden(t, g.Synth, g.SHA256)
	m, err := model.Load(model.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Spec.Name != g.Synth.Spec {
		t.Fatalf("detected spec %s, want %s", m.Spec.Name, g.Synth.Spec)
	}
	want := map[string]model.Pooling{"bert": model.PoolCLS, "nomic-bert": model.PoolMean}[g.Synth.Spec]
	if p, err := m.DefaultPooling(); err != nil || p != want {
		t.Fatalf("default pooling %v, %v; want %v (the GGUF's pooling_type)", p, err, want)
	}
	e, err := m.NewEmbedder(model.EngineOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	for _, c := range g.Cases {
		toks, err := m.Tokenizer.Encode(c.Text, tokenizer.EncodeOptions{AddSpecial: true})
		if err != nil {
			t.Fatal(err)
		}
		if !equalInts(toks, c.Tokens) {
			t.Fatalf("%q: tokens %v, llama.cpp %v", c.Text, toks, c.Tokens)
		}
		for _, pc := range []struct {
			pool model.Pooling
			want [][]float32
		}{{model.PoolCLS, c.CLS}, {model.PoolMean, c.Mean}, {model.PoolNone, c.None}} {
			got, err := e.EmbedText(ctx, c.Text, model.EmbedOptions{Pooling: pc.pool})
			if err != nil {
				t.Fatal(err)
			}
			closeVecs(t, c.Text+" "+pc.pool.String(), got, pc.want, 5e-5)
		}
		// --normalize: the cls vector scaled to unit length.
		got, err := e.EmbedText(ctx, c.Text, model.EmbedOptions{Pooling: model.PoolLast, Normalize: true})
		if err != nil {
			t.Fatal(err)
		}
		last := c.None[len(c.None)-1]
		var n float64
		for _, x := range last {
			n += float64(x) * float64(x)
		}
		want := make([]float32, len(last))
		for i, x := range last {
			want[i] = float32(float64(x) / math.Sqrt(n))
		}
		closeVecs(t, c.Text+" last normalized", got, [][]float32{want}, 5e-5)
	}
	// Bad requests are errors, not panics.
	if _, err := e.Embed(ctx, []int{101, 1 << 20}, nil, model.EmbedOptions{}); err == nil {
		t.Error("a token outside the vocabulary was accepted")
	}
	if _, err := e.Embed(ctx, make([]int, e.MaxTokens()+1), nil, model.EmbedOptions{}); err == nil {
		t.Error("an input longer than the context was accepted")
	}
	if _, err := e.Embed(ctx, []int{101, 102}, []int{0}, model.EmbedOptions{}); err == nil {
		t.Error("a token-type list of the wrong length was accepted")
	}
	if _, err := e.Embed(ctx, []int{101, 102}, []int{0, 5}, model.EmbedOptions{}); err == nil {
		t.Error("a token type outside the type table was accepted")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// decodeGolden reads a reference file, keeping the synth recipe's numbers
// as written (json.Number).
func decodeGolden(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}
