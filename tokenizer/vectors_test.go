package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weftrun/weft/gguf"
)

// vocabVectors is one llama.cpp tokenizer test: a vocabulary-only GGUF and
// its input strings with the expected ids.
type vocabVectors struct {
	name   string
	meta   gguf.Metadata
	inputs []string
	want   [][]int
}

// loadVocabVectors reads every ggml-vocab-*.gguf in the vectors folder with
// its .inp and .out files.
func loadVocabVectors(t *testing.T) []vocabVectors {
	t.Helper()
	dir := sharedFile(t, "tokenizer-vectors")
	paths, err := filepath.Glob(filepath.Join(dir, "ggml-vocab-*.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no ggml-vocab-*.gguf in %s", dir)
	}
	var out []vocabVectors
	for _, p := range paths {
		inp, err := os.ReadFile(p + ".inp")
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		outb, err := os.ReadFile(p + ".out")
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		inputs := strings.Split(string(inp), "\n__ggml_vocab_test__\n")
		if inputs[len(inputs)-1] != "" {
			t.Fatalf("%s.inp: does not end with the separator", p)
		}
		inputs = inputs[:len(inputs)-1]
		lines := strings.Split(strings.TrimSuffix(string(outb), "\n"), "\n")
		if len(lines) != len(inputs) {
			t.Fatalf("%s: %d inputs but %d output lines", p, len(inputs), len(lines))
		}
		want := make([][]int, len(lines))
		for i, ln := range lines {
			for _, f := range strings.Fields(ln) {
				id, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("%s.out line %d: %v", p, i+1, err)
				}
				want[i] = append(want[i], id)
			}
		}
		g, err := gguf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		meta := g.Meta
		g.Close()
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "ggml-vocab-"), ".gguf")
		out = append(out, vocabVectors{name: name, meta: meta, inputs: inputs, want: want})
	}
	return out
}

func equalIDs(a, b []int) bool {
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

// checkVectors encodes every input with tk and compares with the expected
// ids; for lossless families it also checks Decode(Encode(s)) == s.
func checkVectors(t *testing.T, tk Tokenizer, vv vocabVectors, lossless bool) {
	t.Helper()
	for i, s := range vv.inputs {
		got, err := tk.Encode(s, EncodeOptions{})
		if err != nil {
			t.Errorf("%s: Encode(%q): %v", vv.name, s, err)
			continue
		}
		if !equalIDs(got, vv.want[i]) {
			t.Errorf("%s: Encode(%q)\n got  %v\n want %v\n got pieces %s", vv.name, s, got, vv.want[i], piecesOf(tk, got))
			continue
		}
		if lossless {
			if back := tk.Decode(got); back != s {
				t.Errorf("%s: Decode(Encode(%q)) = %q", vv.name, s, back)
			}
		}
	}
}

func piecesOf(tk Tokenizer, ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%q ", tk.Piece(id))
	}
	return b.String()
}

// isLossless reports whether the tokenizer can give back any text: a
// SentencePiece or byte-level vocabulary with a token for every byte.
func isLossless(tk Tokenizer) bool {
	m, ok := tk.(*model)
	if !ok {
		return false
	}
	switch e := m.enc.(type) {
	case *spmEncoder:
		for _, id := range e.byteTok {
			if id < 0 {
				return false
			}
		}
		return true
	case *byteBPEEncoder:
		return e.lossless()
	}
	return false
}

func TestGGUFVectors(t *testing.T) {
	for _, vv := range loadVocabVectors(t) {
		t.Run(vv.name, func(t *testing.T) {
			tk, err := FromGGUF(vv.meta)
			if err != nil {
				t.Fatal(err)
			}
			checkVectors(t, tk, vv, isLossless(tk))
		})
	}
}

// TestStories260K checks the prompts of the llama.cpp golden run: the GGUF
// vocabulary and the llama2.c tokenizer.bin must both give prompt_tokens
// (BOS included), and decoding the generated tokens must give the text.
func TestStories260K(t *testing.T) {
	var golden []struct {
		Prompt       string `json:"prompt"`
		PromptTokens []int  `json:"prompt_tokens"`
		Steps        []struct {
			Token int `json:"token"`
		} `json:"steps"`
		Text string `json:"text"`
	}
	data, err := os.ReadFile(sharedFile(t, "golden", "stories260K.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	g, err := gguf.Open(sharedFile(t, "models", "stories260K", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	fromGGUF, err := FromGGUF(g.Meta)
	if err != nil {
		t.Fatal(err)
	}
	fromBin, err := LoadLlama2C(sharedFile(t, "models", "stories260K", "tok512.bin"), 512)
	if err != nil {
		t.Fatal(err)
	}
	sniffed, err := Load(sharedFile(t, "models", "stories260K", "tok512.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for name, tk := range map[string]Tokenizer{"gguf": fromGGUF, "tok512.bin": fromBin, "Load(tok512.bin)": sniffed} {
		if tk.VocabSize() != 512 || tk.BOS() != 1 || tk.EOS() != 2 || !tk.IsEOG(2) || tk.IsEOG(1) {
			t.Errorf("%s: vocab %d, BOS %d, EOS %d", name, tk.VocabSize(), tk.BOS(), tk.EOS())
		}
		for _, gp := range golden {
			got, err := tk.Encode(gp.Prompt, EncodeOptions{AddSpecial: true})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !equalIDs(got, gp.PromptTokens) {
				t.Errorf("%s: Encode(%q) = %v, want %v", name, gp.Prompt, got, gp.PromptTokens)
			}
			gen := make([]int, len(gp.Steps))
			for i, s := range gp.Steps {
				gen[i] = s.Token
			}
			sd := tk.NewStreamDecoder()
			var streamed strings.Builder
			for _, id := range gen {
				streamed.WriteString(sd.Push(id))
			}
			streamed.WriteString(sd.Flush())
			if streamed.String() != gp.Text {
				t.Errorf("%s: streamed text %q, want %q", name, streamed.String(), gp.Text)
			}
			if all := tk.Decode(append(append([]int{}, gp.PromptTokens...), gen...)); all != gp.Prompt+gp.Text {
				t.Errorf("%s: Decode(prompt+generated) = %q, want %q", name, all, gp.Prompt+gp.Text)
			}
		}
	}
	// Both sources describe the same vocabulary.
	for id := 0; id < 512; id++ {
		if a, b := fromGGUF.Piece(id), fromBin.Piece(id); a != b {
			t.Errorf("piece %d: gguf %q, tok512.bin %q", id, a, b)
		}
	}
}

// TestGoldenMiniLlama checks the prompts of the mini-llama golden runs,
// which use the real 32000-token Llama vocabulary.
func TestGoldenMiniLlama(t *testing.T) {
	for _, q := range []string{"f16", "Q8_0", "Q4_0"} {
		var golden []struct {
			Prompt       string `json:"prompt"`
			PromptTokens []int  `json:"prompt_tokens"`
			Steps        []struct {
				Token int `json:"token"`
			} `json:"steps"`
			Text string `json:"text"`
		}
		data, err := os.ReadFile(sharedFile(t, "golden", "mini-llama-"+q+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &golden); err != nil {
			t.Fatal(err)
		}
		tk, err := Load(sharedFile(t, "models", "mini-llama", "mini-llama-"+q+".gguf"))
		if err != nil {
			t.Fatal(err)
		}
		for _, gp := range golden {
			got, err := tk.Encode(gp.Prompt, EncodeOptions{AddSpecial: true})
			if err != nil {
				t.Fatal(err)
			}
			if !equalIDs(got, gp.PromptTokens) {
				t.Errorf("%s: Encode(%q) = %v, want %v", q, gp.Prompt, got, gp.PromptTokens)
			}
			sd := tk.NewStreamDecoder()
			var b strings.Builder
			for _, s := range gp.Steps {
				b.WriteString(sd.Push(s.Token))
			}
			b.WriteString(sd.Flush())
			if b.String() != gp.Text {
				t.Errorf("%s: streamed %q, want %q", q, b.String(), gp.Text)
			}
		}
	}
}
