package tokenizer

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/weftrun/weft/gguf"
)

// TestUGMMatchesLlamaTokenize checks the unigram (T5) tokenizer against
// llama-tokenize on testdata/ugm-t5.gguf: a real SentencePiece unigram
// model (110 pieces, trained with sentencepiece) whose precompiled
// character map holds its own normalisation rules (full-width letters, a
// ligature, circled digits, no-break and ideographic spaces, the Ångström
// sign, e + combining acute), with two user-defined tokens.
func TestUGMMatchesLlamaTokenize(t *testing.T) {
	f, err := gguf.Open("testdata/ugm-t5.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok, err := FromGGUF(f.Meta)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/ugm-t5.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []struct {
			Text         string `json:"text"`
			IDs          []int  `json:"ids"`
			ParseSpecial bool   `json:"parse_special"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range ref.Cases {
		got, err := tok.Encode(c.Text, EncodeOptions{ParseSpecial: c.ParseSpecial})
		if err != nil {
			t.Fatalf("%q: %v", c.Text, err)
		}
		if !slices.Equal(got, c.IDs) && !(len(got) == 0 && len(c.IDs) == 0) {
			t.Errorf("%q: %v, llama-tokenize %v", c.Text, got, c.IDs)
		}
	}
	// add_eos: T5 ends the prompt with </s>; no BOS.
	got, err := tok.Encode("the cat", EncodeOptions{AddSpecial: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[len(got)-1] != 1 || got[0] == 1 {
		t.Errorf("with special tokens: %v, want ... 1 (</s>) at the end only", got)
	}
	if s := tok.Decode(got); s != "the cat" {
		t.Errorf("decode %v = %q, want %q", got, s, "the cat")
	}
}

// TestUGMCharsMapErrors: a truncated or inconsistent character map is an
// error naming the key, not a panic.
func TestUGMCharsMapErrors(t *testing.T) {
	f, err := gguf.Open("testdata/ugm-t5.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		name string
		cm   []uint8
	}{
		{"short", []uint8{1, 0}},
		{"trie past the end", []uint8{200, 0, 0, 0, 1, 2, 3, 4}},
		{"odd trie size", []uint8{3, 0, 0, 0, 1, 2, 3, 4}},
	} {
		meta := gguf.Metadata{}
		for k, v := range f.Meta {
			meta[k] = v
		}
		meta[keyCharsMap] = tc.cm
		if _, err := FromGGUF(meta); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestUGMAnyBytes: any input, invalid UTF-8 included, tokenizes without
// panicking into ids of the vocabulary, and text the vocabulary covers
// decodes back to itself.
func TestUGMAnyBytes(t *testing.T) {
	f, err := gguf.Open("testdata/ugm-t5.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok, err := FromGGUF(f.Meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"\xff\xfe", "a\xc3", "\xe2\x96", "\x00x", "the\x80cat", "ﬁ\xef"} {
		ids, err := tok.Encode(s, EncodeOptions{})
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		for _, id := range ids {
			if id < 0 || id >= tok.VocabSize() {
				t.Fatalf("%q: id %d outside the vocabulary", s, id)
			}
		}
	}
	for _, s := range []string{"the cat sat on the mat", "translate english to german"} {
		ids, err := tok.Encode(s, EncodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Decode(ids); got != s {
			t.Errorf("decode(encode(%q)) = %q", s, got)
		}
	}
}
