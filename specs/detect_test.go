package specs

import (
	"strings"
	"testing"
)

// TestForCheckpoint: llama.cpp writes Mixtral GGUFs as arch "llama" with an
// expert count; those go to mixtral.yaml, dense llama checkpoints to
// llama.yaml.
func TestForCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		arch string
		meta map[string]any
		want string
	}{
		{"llama", nil, "llama"},
		{"llama", map[string]any{"llama.block_count": uint32(22)}, "llama"},
		{"llama", map[string]any{"llama.expert_count": uint32(0)}, "llama"},
		{"llama", map[string]any{"llama.expert_count": uint32(8)}, "mixtral"},
		{"mixtral", nil, "mixtral"},
		{"gpt2", nil, "gpt2"},
		{"bert", nil, "bert"},
		{"qwen2", nil, "qwen2"},
		{"qwen2moe", nil, "qwen2moe"},
		{"qwen3", nil, "qwen3"},
		{"qwen3moe", nil, "qwen3"},
		{"gemma", nil, "gemma"},
		{"gemma2", nil, "gemma2"},
		{"gemma3", nil, "gemma3"},
		{"phi2", nil, "phi2"},
		{"phi3", nil, "phi3"},
		{"falcon", nil, "falcon"},
		{"bloom", nil, "bloom"},
		{"mpt", nil, "mpt"},
		{"gptneox", nil, "gptneox"},
		{"starcoder2", nil, "starcoder2"},
		{"stablelm", nil, "stablelm"},
		{"olmo2", nil, "olmo2"},
		{"nomic-bert", nil, "nomic-bert"},
		{"t5", nil, "t5"},
	} {
		s, err := ForCheckpoint(tc.arch, tc.meta)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.arch, tc.meta, err)
		}
		if s.Name != tc.want {
			t.Errorf("%s %v: spec %s, want %s", tc.arch, tc.meta, s.Name, tc.want)
		}
	}
	if _, err := ForCheckpoint("rwkv6", nil); err == nil || !strings.Contains(err.Error(), "rwkv6") {
		t.Errorf("unknown architecture: %v", err)
	}
}

func TestDetectErrors(t *testing.T) {
	_, err := Parse("d.yaml", []byte("name: d\ndetect: arch ==\ngraph:\n  - y: relu(tokens)\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "d.yaml:2:9: detect") {
		t.Errorf("bad detect CEL: %v", err)
	}
	s, err := Parse("d.yaml", []byte("name: d\ndetect: meta[\"x\"]\ngraph:\n  - y: relu(tokens)\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Detects("llama", map[string]any{"x": "yes"}); err == nil || !strings.Contains(err.Error(), "d.yaml:2") {
		t.Errorf("non-bool detect: %v", err)
	}
}
