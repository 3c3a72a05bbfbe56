package model_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/internal/testdata"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/sampling"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/tensor"
)

// rewriteStories writes a copy of stories260K.gguf with metadata values
// replaced (meta) and tensor bytes edited in place (edit, may be nil).
func rewriteStories(t *testing.T, meta map[string]any, edit func(name string, dt tensor.DType, data []byte)) string {
	t.Helper()
	src, err := gguf.Open(filepath.Join(testdata.Shared(t), "models", "stories260K", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), "edited.gguf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := gguf.NewWriter(f)
	for _, k := range src.Keys {
		v := src.Meta[k]
		if nv, ok := meta[k]; ok {
			v = nv
		}
		if err := w.AddKV(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range meta {
		if _, ok := src.Meta[k]; !ok {
			if err := w.AddKV(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, ti := range src.Tensors {
		if err := w.AddTensor(ti.Name, ti.DType, ti.Shape); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	for _, ti := range src.Tensors {
		tt, err := src.Tensor(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		data := slices.Clone(tt.Data)
		if edit != nil {
			edit(ti.Name, ti.DType, data)
		}
		if err := w.WriteTensorData(ti.Name, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// setF32 writes v into element i of an F32 tensor's bytes.
func setF32(data []byte, i int, v float32) {
	b := math.Float32bits(v)
	data[4*i], data[4*i+1], data[4*i+2], data[4*i+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
}

// TestLoadRefusesBadCheckpoints checks that bad hyperparameters and
// non-finite weights fail at load with an error naming the GGUF key or
// the tensor, and --set values are parsed strictly.
func TestLoadRefusesBadCheckpoints(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		name    string
		meta    map[string]any
		edit    func(string, tensor.DType, []byte)
		set     map[string]any
		wantErr string
	}{
		{name: "NaN rope base", meta: map[string]any{"llama.rope.freq_base": nan},
			wantErr: "checkpoint key llama.rope.freq_base: rope_base is NaN, want a finite number > 0"},
		{name: "NaN norm epsilon", meta: map[string]any{"llama.attention.layer_norm_rms_epsilon": nan},
			wantErr: "checkpoint key llama.attention.layer_norm_rms_epsilon: norm_eps is NaN, want a number > 0 and ≤ 1"},
		{name: "a billion layers", meta: map[string]any{"llama.block_count": uint32(1e9)},
			wantErr: "checkpoint key llama.block_count: layers is 1000000000, want an integer from 1 to 4096"},
		{name: "zero heads", meta: map[string]any{"llama.attention.head_count": uint32(0)},
			wantErr: "checkpoint key llama.attention.head_count: heads is 0, want an integer from 1 to 4096"},
		{name: "huge context", meta: map[string]any{"llama.context_length": uint32(1 << 30)},
			wantErr: "checkpoint key llama.context_length: ctx is 1073741824, want an integer from 1 to 16777216"},
		{name: "NaN norm weight", edit: func(name string, dt tensor.DType, data []byte) {
			if name == "blk.2.ffn_norm.weight" {
				setF32(data, 7, nan)
			}
		}, wantErr: "tensor blk.2.ffn_norm.weight [f32 [64]]: row 0 column 7 is NaN"},
		{name: "Inf in the last row of a matrix", edit: func(name string, dt tensor.DType, data []byte) {
			if name == "token_embd.weight" {
				setF32(data, 511*64+3, float32(math.Inf(-1)))
			}
		}, wantErr: "tensor token_embd.weight [f32 [512 64]]: row 511 column 3 is -Inf"},
		{name: "--set a word for an integer", set: map[string]any{"ctx": "abc"}, wantErr: "--set ctx=abc: want an integer"},
		{name: "--set a negative context", set: map[string]any{"ctx": int64(-5)}, wantErr: "--set ctx=-5: ctx is -5, want an integer from 1 to 16777216"},
		{name: "--set a fraction of a layer", set: map[string]any{"layers": 1.5}, wantErr: "--set layers=1.5: want an integer"},
		{name: "--set NaN", set: map[string]any{"rope_base": math.NaN()}, wantErr: "--set rope_base=NaN: rope_base is NaN"},
		{name: "fine", set: map[string]any{"ctx": int64(128)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(testdata.Shared(t), "models", "stories260K", "stories260K.gguf")
			if tc.meta != nil || tc.edit != nil {
				path = rewriteStories(t, tc.meta, tc.edit)
			}
			m, err := model.Load(model.Options{Path: path, Set: tc.set})
			if tc.wantErr == "" {
				if err == nil {
					m.Close()
				} else if tc.name == "fine" {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				m.Close()
				t.Fatalf("loaded; want an error with %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %q\nwant %q", err, tc.wantErr)
			}
		})
	}
}

// TestNaNLogitsStop checks that a NaN the load-time sample misses (a
// middle row of the embedding table) stops generation with an error
// naming the step, instead of emitting token 0 forever.
func TestNaNLogitsStop(t *testing.T) {
	const tok = 300 // a middle row: CheckFinite reads rows 0, 34, ..., 511
	path := rewriteStories(t, nil, func(name string, dt tensor.DType, data []byte) {
		if name == "token_embd.weight" {
			setF32(data, tok*64, float32(math.NaN()))
		}
	})
	m, err := model.Load(model.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	eng, err := m.NewEngine(model.EngineOptions{Threads: 1, MaxTokens: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	s, err := sampling.New(sampling.Config{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := eng.Generate(context.Background(), scheduler.Request{Prompt: []int{1, 403}, MaxTokens: 8, Force: []int{407, 410, tok, 420}, Sampler: s}, nil)
	if err == nil || !strings.Contains(err.Error(), "step 3 (position 5): logit 0 is NaN") {
		t.Fatalf("tokens %v, error %v; want one naming step 3", got, err)
	}
}
