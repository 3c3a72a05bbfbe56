package tokenizer

import (
	"encoding/binary"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weftrun/weft/gguf"
)

func spmMeta() gguf.Metadata {
	return gguf.Metadata{
		"tokenizer.ggml.model":      "llama",
		"tokenizer.ggml.tokens":     []string{"<unk>", "<s>", "</s>", "a", "b", "ab"},
		"tokenizer.ggml.scores":     []float32{0, 0, 0, -1, -2, -0.5},
		"tokenizer.ggml.token_type": []int32{2, 3, 3, 1, 1, 1},
	}
}

func bpeMeta() gguf.Metadata {
	return gguf.Metadata{
		"tokenizer.ggml.model":      "gpt2",
		"tokenizer.ggml.pre":        "gpt-2",
		"tokenizer.ggml.tokens":     []string{"a", "b", "ab", "<|endoftext|>"},
		"tokenizer.ggml.token_type": []int32{1, 1, 1, 3},
		"tokenizer.ggml.merges":     []string{"a b"},
	}
}

// TestMalformedGGUF checks that broken tokenizer metadata is an error that
// names what is wrong.
func TestMalformedGGUF(t *testing.T) {
	cases := []struct {
		name string
		base func() gguf.Metadata
		edit func(m gguf.Metadata)
		want string
	}{
		{"no model", spmMeta, func(m gguf.Metadata) { delete(m, keyModel) }, keyModel},
		{"unsupported model", spmMeta, func(m gguf.Metadata) { m[keyModel] = "rwkv" }, "not supported"},
		{"no tokens", spmMeta, func(m gguf.Metadata) { delete(m, keyTokens) }, keyTokens},
		{"tokens not strings", spmMeta, func(m gguf.Metadata) { m[keyTokens] = []int32{1, 2} }, keyTokens},
		{"empty tokens", spmMeta, func(m gguf.Metadata) { m[keyTokens] = []string{} }, "empty"},
		{"scores length", spmMeta, func(m gguf.Metadata) { m[keyScores] = []float32{0, 0} }, keyScores},
		{"scores type", spmMeta, func(m gguf.Metadata) { m[keyScores] = []string{"x"} }, keyScores},
		{"types length", spmMeta, func(m gguf.Metadata) { m[keyTypes] = []int32{1} }, keyTypes},
		{"bad token type", spmMeta, func(m gguf.Metadata) { m[keyTypes] = []int32{2, 3, 3, 1, 9, 1} }, "not a token type"},
		{"bos out of range", spmMeta, func(m gguf.Metadata) { m["tokenizer.ggml.bos_token_id"] = uint32(6) }, "bos_token_id"},
		{"eos negative", spmMeta, func(m gguf.Metadata) { m["tokenizer.ggml.eos_token_id"] = int32(-5) }, "eos_token_id"},
		{"id not an integer", spmMeta, func(m gguf.Metadata) { m["tokenizer.ggml.unknown_token_id"] = "0" }, "want an integer"},
		{"add_bos without bos", spmMeta, func(m gguf.Metadata) { m["tokenizer.ggml.bos_token_id"] = uint32(0xFFFFFFFF) }, "no BOS"},
		{"add_bos not a bool", spmMeta, func(m gguf.Metadata) { m[keyAddBOS] = uint8(1) }, "want a bool"},
		{"duplicate token", spmMeta, func(m gguf.Metadata) { m[keyTokens] = []string{"<unk>", "<s>", "</s>", "a", "a", "ab"} }, "duplicate"},
		{"missing merges", bpeMeta, func(m gguf.Metadata) { delete(m, keyMerges) }, keyMerges},
		{"merges not strings", bpeMeta, func(m gguf.Metadata) { m[keyMerges] = []int32{1} }, keyMerges},
		{"merge without space", bpeMeta, func(m gguf.Metadata) { m[keyMerges] = []string{"abc"} }, "no space"},
		{"unknown pre-tokenizer", bpeMeta, func(m gguf.Metadata) { m[keyPre] = "my-new-model" }, `unknown pre-tokenizer "my-new-model"`},
		{"bert without unknown token", spmMeta, func(m gguf.Metadata) { m[keyModel] = "bert" }, "unknown token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.base()
			if _, err := FromGGUF(m); err != nil {
				t.Fatalf("base metadata: %v", err)
			}
			c.edit(m)
			_, err := FromGGUF(m)
			if err == nil {
				t.Fatalf("no error, want one containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

// TestGGUFWithoutTokenTypes infers byte and special tokens when
// tokenizer.ggml.token_type is missing.
func TestGGUFWithoutTokenTypes(t *testing.T) {
	m := spmMeta()
	m[keyTokens] = []string{"<unk>", "<s>", "</s>", "<0x41>", "<0x0A>", "▁b"}
	m[keyScores] = make([]float32, 6)
	delete(m, keyTypes)
	tk, err := FromGGUF(m)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tk.Encode("b\n", EncodeOptions{AddSpecial: true})
	if err != nil {
		t.Fatal(err)
	}
	if !equalIDs(ids, []int{1, 5, 4}) {
		t.Errorf("Encode = %v, want [1 5 4]", ids)
	}
	if got := tk.Decode([]int{1, 5, 4, 3, 2}); got != "b\nA" {
		t.Errorf("Decode = %q", got)
	}
}

// llama2cFile writes a tokenizer.bin from (score, piece) records.
func llama2cFile(maxLen int32, pieces []string, extra []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(maxLen))
	for i, p := range pieces {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(-i)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	return append(b, extra...)
}

func TestMalformedLlama2C(t *testing.T) {
	good := []string{"<unk>", "\n<s>\n", "\n</s>\n", " a", "b"}
	nan := binary.LittleEndian.AppendUint32(nil, uint32(10))
	nan = binary.LittleEndian.AppendUint32(nan, math.Float32bits(float32(math.NaN())))
	nan = binary.LittleEndian.AppendUint32(nan, 1)
	nan = append(nan, 'x')
	cases := []struct {
		name  string
		data  []byte
		vocab int
		want  string
	}{
		{"short header", []byte{1, 0}, 0, "too short"},
		{"zero max length", llama2cFile(0, good, nil), 0, "max_token_length"},
		{"piece over max length", llama2cFile(2, good, nil), 0, "over max_token_length"},
		{"truncated record", llama2cFile(8, good, nil)[:33], 0, "past the end"},
		{"fewer tokens than vocab size", llama2cFile(8, good, nil), 6, "past the end"},
		{"bytes after vocab size", llama2cFile(8, good, nil), 4, "bytes left"},
		{"NaN score", nan, 0, "NaN"},
		{"too few tokens", llama2cFile(8, good[:2], nil), 0, "need at least"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokenizer.bin")
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadLlama2C(path, c.vocab)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v, want one naming %s and containing %q", err, path, c.want)
			}
		})
	}
	// The good file loads, with spaces as U+2581 and BOS/EOS renamed.
	path := filepath.Join(t.TempDir(), "tokenizer.bin")
	if err := os.WriteFile(path, llama2cFile(8, good, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	tk, err := LoadLlama2C(path, 5)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Piece(1) != "<s>" || tk.Piece(3) != "▁a" {
		t.Errorf("pieces %q %q", tk.Piece(1), tk.Piece(3))
	}
}

func TestMalformedHF(t *testing.T) {
	model := `"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}`
	cases := []struct {
		name, json, want string
	}{
		{"not JSON", `{"model": `, "unexpected end"},
		{"no model", `{}`, "no model"},
		{"unigram", `{"model": {"type": "Unigram", "vocab": [["a", 0.0]]}}`, "not supported"},
		{"merge part not in vocab", `{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]}}`, `"ab" is not in the vocabulary`},
		{"merges not strings", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [1]}}`, "merges"},
		{"unk not in vocab", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "unk_token": "<unk>"}}`, "unk_token"},
		{"negative id", `{"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}}`, "negative id"},
		{"id given twice", `{"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}}`, "id 0 is given"},
		{"added token conflict", `{"added_tokens": [{"id": 0, "content": "<s>"}], ` + model + `}`, "already belongs"},
		{"unknown normalizer", `{"normalizer": {"type": "Foo"}, ` + model + `}`, `normalizer type "Foo"`},
		{"unknown pre-tokenizer", `{"pre_tokenizer": {"type": "UnicodeScripts"}, ` + model + `}`, `"UnicodeScripts" is not supported`},
		{"bad split regex", `{"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated"}, ` + model + `}`, "compile"},
		{"bad split behavior", `{"pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, "behavior": "Sideways"}, ` + model + `}`, "Sideways"},
		{"unknown decoder", `{"decoder": {"type": "CTC"}, ` + model + `}`, `"CTC" is not supported`},
		{"template without entry", `{"post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}}, {"Sequence": {"id": "A"}}], "special_tokens": {}}, ` + model + `}`, "no entry"},
		{"template id out of range", `{"post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}}, {"Sequence": {"id": "A"}}], "special_tokens": {"<s>": {"ids": [99]}}}, ` + model + `}`, "out of range"},
		{"wordpiece without unk", `{"model": {"type": "WordPiece", "vocab": {"a": 0}}}`, "unk_token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokenizer.json")
			if err := os.WriteFile(path, []byte(c.json), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadHF(path)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "no tokenizer.json") {
		t.Errorf("empty directory: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(empty); err == nil {
		t.Error("empty file: no error")
	}
}

// TestRandomInput encodes random bytes (invalid UTF-8 included) with every
// vector vocabulary, parsing special tokens or not. Nothing may fail, and
// the lossless families must give the bytes back.
func TestRandomInput(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var inputs []string
	for i := 0; i < 200; i++ {
		b := make([]byte, rng.Intn(60))
		for j := range b {
			switch rng.Intn(4) {
			case 0:
				b[j] = byte(rng.Intn(256))
			case 1:
				b[j] = ' '
			default:
				b[j] = byte('a' + rng.Intn(26))
			}
		}
		inputs = append(inputs, string(b), randomText(rng, 20)+"<s></s><|endoftext|>[CLS]")
	}
	for _, vv := range loadVocabVectors(t) {
		tk, err := FromGGUF(vv.meta)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range inputs {
			for _, opt := range []EncodeOptions{{}, {AddSpecial: true, ParseSpecial: true}} {
				ids, err := tk.Encode(s, opt)
				if err != nil {
					t.Errorf("%s: Encode(%q, %+v): %v", vv.name, s, opt, err)
					continue
				}
				for _, id := range ids {
					if id < 0 || id >= tk.VocabSize() {
						t.Fatalf("%s: id %d out of range", vv.name, id)
					}
				}
				// Text holding special-token text is not given back exactly:
				// a SentencePiece fragment after a user-defined token gets a
				// space in front, as in llama.cpp.
				if !opt.ParseSpecial && isLossless(tk) && !strings.Contains(s, "</s>") {
					if back := tk.Decode(ids); back != s {
						t.Errorf("%s: Decode(Encode(%q)) = %q", vv.name, s, back)
					}
				}
			}
		}
		// Decoding ids out of range neither panics nor prints anything.
		if s := tk.Decode([]int{-1, tk.VocabSize(), 1 << 40}); s != "" {
			t.Errorf("%s: Decode(out of range) = %q", vv.name, s)
		}
		if tk.Piece(-1) != "" || tk.Piece(tk.VocabSize()) != "" {
			t.Errorf("%s: Piece out of range is not empty", vv.name)
		}
		sd := tk.NewStreamDecoder()
		for _, s := range inputs[:20] {
			ids, _ := tk.Encode(s, EncodeOptions{})
			for _, id := range ids {
				if out := sd.Push(id); !utf8.ValidString(out) {
					t.Errorf("%s: stream output %q is not UTF-8", vv.name, out)
				}
			}
		}
	}
}
