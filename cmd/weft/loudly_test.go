package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrun/weft/internal/testdata"
)

// TestRunRefusesMismatches checks the errors weft run gives for a
// tokenizer of another model, a truncated tokenizer.bin and an encoder.
func TestRunRefusesMismatches(t *testing.T) {
	shared := testdata.Shared(t)
	dir := filepath.Join(shared, "models", "stories260K")
	gguf := filepath.Join(dir, "stories260K.gguf")
	// tok512.bin cut after its 300th record: a well-formed llama2.c
	// tokenizer of 300 tokens.
	tok, err := os.ReadFile(filepath.Join(dir, "tok512.bin"))
	if err != nil {
		t.Fatal(err)
	}
	off := 4
	for range 300 {
		off += 8 + int(binary.LittleEndian.Uint32(tok[off+4:]))
	}
	short := filepath.Join(t.TempDir(), "short.bin")
	if err := os.WriteFile(short, tok[:off], 0o644); err != nil {
		t.Fatal(err)
	}
	bert := filepath.Join(t.TempDir(), "bert.gguf")
	if code, _, errOut := weft("synth", "-s", "bert", "--set", "hidden=32,layers=1,heads=2,ffn=64,vocab=260", "--dtype", "f32", "--seed", "1", "-o", bert); code != 0 {
		t.Fatalf("synth: %s", errOut)
	}
	cases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"another model's vocabulary", []string{"-m", gguf, "--tokenizer", filepath.Join(shared, "tokenizer-vectors", "ggml-vocab-llama-spm.gguf")},
			"has 32000 tokens but the model's vocabulary is 512"},
		{"truncated tokenizer.bin", []string{"-m", gguf, "--tokenizer", short}, "short.bin has 300 tokens but the model's vocabulary is 512"},
		{"an encoder", []string{"-m", bert}, `bert.yaml outputs "x" (width 32), not logits over the vocabulary of 260`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := weft(append([]string{"run", "-p", "Once upon a time", "-n", "2"}, tc.args...)...)
			if code == 0 || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("exit %d, stderr %q; want an error with %q", code, errOut, tc.wantErr)
			}
		})
	}
}
