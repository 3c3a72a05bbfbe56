package checkpoint

import (
	"archive/zip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestOpenSniffs(t *testing.T) {
	dir := t.TempDir()
	specs, storages := stateFixture()
	tiny := llama2cFile([7]int32{8, 12, 2, 4, 2, 5, 3})
	st := makeSafetensors([]stEntry{{"x", "F32", []int{1}, f32Bytes(1)}}, nil)
	tests := []struct {
		name   string
		file   string
		data   []byte
		format string
		errs   []string
	}{
		{"safetensors named .bin", "weights.bin", st, FormatSafetensors, nil},
		{"safetensors without extension", "weights", st, FormatSafetensors, nil},
		{"torch zip named .pt", "m.pt", torchZip(t, "m", statePickle(specs), storages, zip.Store), FormatPyTorch, nil},
		{"legacy torch", "m.pth", legacyFile(specs, storages, map[string]int{"0": 4, "1": 2, "2": 2, "3": 8, "4": 4, "5": 1}), FormatPyTorch, nil},
		{"llama2c without .bin", "model", tiny, FormatLlama2C, nil},
		{"truncated llama2c named .bin", "model.bin", tiny[:100], "", []string{"llama2c", "truncated"}},
		{"truncated llama2c without .bin", "model", tiny[:100], "", []string{"unrecognised checkpoint format"}},
		{"text", "notes.txt", []byte("hello, this is not a model\n"), "", []string{"unrecognised checkpoint format", "notes.txt"}},
		{"empty", "empty.bin", nil, "", []string{"unrecognised checkpoint format", "empty.bin"}},
		{"truncated safetensors named .safetensors", "w.safetensors", st[:20], "", []string{"safetensors", "runs past the end"}},
		{"llama2.c version 1 export", "v1.bin", append([]byte("24ka\x01\x00\x00\x00"), make([]byte, 248)...), "", []string{"export version 1", "not supported"}},
		{"GGUF magic only", "m.gguf", []byte("GGUF\x03\x00\x00\x00"), "", []string{"gguf", "too short"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(dir, tc.file), tc.data)
			c, err := Open(path)
			if tc.format != "" {
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if c.Format() != tc.format || c.Path() != path {
					t.Errorf("Format %q Path %q, want %q %q", c.Format(), c.Path(), tc.format, path)
				}
				return
			}
			if err == nil {
				c.Close()
				t.Fatalf("opened as %s", c.Format())
			}
			for _, w := range tc.errs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(tc.errs[0], "unrecognised") && !errors.Is(err, ErrUnrecognised) {
				t.Errorf("error %v does not wrap ErrUnrecognised", err)
			}
			os.Remove(path)
		})
	}
	if _, err := Open(os.DevNull); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("%s: %v", os.DevNull, err)
	}
	if _, err := Open(filepath.Join(dir, "missing.gguf")); err == nil || !strings.Contains(err.Error(), "missing.gguf") {
		t.Errorf("missing file: %v", err)
	}
}

// TestConcurrentTensor reads tensors from many goroutines at once, including
// a deflated PyTorch storage that is inflated on first use (run with -race).
func TestConcurrentTensor(t *testing.T) {
	specs, storages := stateFixture()
	path := writeFile(t, filepath.Join(t.TempDir(), "m.bin"), torchZip(t, "m", statePickle(specs), storages, zip.Deflate))
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, inf := range c.Infos() {
				if _, err := c.Tensor(inf.Name); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkState(t, c)
}

// TestHFArch: config.json's model class names the architecture as GGUF
// does; model_type is the fallback, renamed where the two differ.
func TestHFArch(t *testing.T) {
	for _, tc := range []struct {
		cfg, want string
	}{
		{`{"architectures": ["LlamaForCausalLM"], "model_type": "llama"}`, "llama"},
		{`{"architectures": ["MistralForCausalLM"], "model_type": "mistral"}`, "mistral"},
		{`{"architectures": ["MixtralForCausalLM"]}`, "mixtral"},
		{`{"architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe"}`, "qwen2moe"},
		{`{"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe"}`, "qwen3moe"},
		{`{"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text"}`, "gemma3"},
		{`{"architectures": ["PhiForCausalLM"], "model_type": "phi"}`, "phi2"},
		{`{"architectures": ["Phi3ForCausalLM"], "model_type": "phi3"}`, "phi3"},
		{`{"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2"}`, "gpt2"},
		{`{"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox"}`, "gptneox"},
		{`{"architectures": ["NomicBertModel"], "model_type": "nomic_bert"}`, "nomic-bert"},
		{`{"architectures": ["T5ForConditionalGeneration"], "model_type": "t5"}`, "t5"},
		{`{"architectures": ["SomethingNew", "BertModel"], "model_type": "bert"}`, "bert"},
		{`{"architectures": ["SomethingNew"], "model_type": "newarch"}`, "newarch"},
		{`{"model_type": "gpt_neox"}`, "gptneox"},
		{`{"model_type": "qwen2"}`, "qwen2"},
		{`{"architectures": "LlamaForCausalLM", "model_type": "llama"}`, "llama"},
		{`{}`, ""},
	} {
		_, arch, err := ParseHFConfig("config.json", []byte(tc.cfg))
		if err != nil {
			t.Fatalf("%s: %v", tc.cfg, err)
		}
		if arch != tc.want {
			t.Errorf("%s: arch %q, want %q", tc.cfg, arch, tc.want)
		}
	}
}
