package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRunT5 is `weft run` on random-weight T5 files that `weft synth -s
// t5` makes (the recipes of model/testdata/arch/t5): with no -s, the T5
// spec is picked, the prompt encoded and the greedy tokens are
// llama-cli's (-n 20 --temp 0), as recorded in the references.
func TestRunT5(t *testing.T) {
	files, err := filepath.Glob("../../model/testdata/arch/t5/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no T5 references: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var g struct {
				Synth struct {
					DType         string         `json:"dtype"`
					Seed          uint64         `json:"seed"`
					Set           map[string]any `json:"set"`
					RandomVectors bool           `json:"random_vectors"`
					VocabRepo     string         `json:"vocab_repo"`
				} `json:"synth"`
				CLI struct {
					Prompt       string `json:"prompt"`
					PromptTokens []int  `json:"prompt_tokens"`
					Tokens       []int  `json:"tokens"`
				} `json:"cli"`
			}
			if err := json.Unmarshal(data, &g); err != nil {
				t.Fatal(err)
			}
			if g.CLI.Prompt == "" {
				t.Skip("no llama-cli reference for this model (see its about)")
			}
			path := filepath.Join(t.TempDir(), "t5.gguf")
			args := []string{"synth", "-s", "t5", "--dtype", g.Synth.DType, "--seed", fmt.Sprint(g.Synth.Seed), "-o", path}
			if g.Synth.VocabRepo != "" {
				args = append(args, "--vocab", filepath.Join("..", "..", g.Synth.VocabRepo))
			}
			if g.Synth.RandomVectors {
				args = append(args, "--random-vectors")
			}
			for k, v := range g.Synth.Set {
				args = append(args, "--set", fmt.Sprintf("%s=%v", k, v))
			}
			if code, _, errOut := weft(args...); code != 0 {
				t.Fatalf("synth: exit %d: %s", code, errOut)
			}
			r := runJSON(t, "-m", path, "-p", g.CLI.Prompt, "-n", fmt.Sprint(len(g.CLI.Tokens)), "--temp", "0", "-t", "1")
			if !slices.Equal(r.PromptTokens, g.CLI.PromptTokens) {
				t.Errorf("prompt tokens %v, llama-tokenize %v", r.PromptTokens, g.CLI.PromptTokens)
			}
			if !slices.Equal(r.Tokens, g.CLI.Tokens) {
				t.Errorf("greedy tokens %v, llama-cli %v", r.Tokens, g.CLI.Tokens)
			}
		})
	}
}
