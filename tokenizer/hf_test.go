package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weftrun/weft/gguf"
)

// obj is a JSON object under construction.
type obj = map[string]any

// addedTokens lists the control, unknown and user-defined tokens of a GGUF
// vocabulary as tokenizer.json added tokens.
func addedTokens(pieces []string, types []int64) []obj {
	var out []obj
	for id, t := range types {
		if t == typeControl || t == typeUnknown || t == typeUserDefined {
			out = append(out, obj{"id": id, "content": pieces[id], "special": t != typeUserDefined,
				"single_word": false, "lstrip": false, "rstrip": false, "normalized": false})
		}
	}
	return out
}

// hfPatternOf spells out a pre-tokenizer stage as a pattern.
func hfPatternOf(p string) string {
	switch p {
	case "<gpt2>":
		return patGPT2
	case "<llama3>":
		return patLlama3
	case "<qwen2>":
		return patQwen2
	}
	return p
}

// spmMerges derives ranked merges from SentencePiece scores, the way the
// Hugging Face converter does: every split of a piece into two pieces is a
// merge, ordered by the merged piece's score (highest first), then by the
// ids of its parts.
func spmMerges(pieces []string, types []int64, scores []float32) [][2]string {
	ids := map[string]int{}
	for i, p := range pieces {
		if types[i] == typeNormal {
			ids[p] = i
		}
	}
	type merge struct {
		l, r  string
		score float32
	}
	var all []merge
	for id, p := range pieces {
		if types[id] != typeNormal {
			continue
		}
		var local []merge
		for k := 1; k < len(p); k++ {
			if !utf8.RuneStart(p[k]) {
				continue
			}
			if _, ok := ids[p[:k]]; !ok {
				continue
			}
			if _, ok := ids[p[k:]]; !ok {
				continue
			}
			local = append(local, merge{p[:k], p[k:], scores[id]})
		}
		sort.Slice(local, func(i, j int) bool {
			if ids[local[i].l] != ids[local[j].l] {
				return ids[local[i].l] < ids[local[j].l]
			}
			return ids[local[i].r] < ids[local[j].r]
		})
		all = append(all, local...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
	out := make([][2]string, len(all))
	for i, m := range all {
		out[i] = [2]string{m.l, m.r}
	}
	return out
}

// template is a TemplateProcessing that adds prefix and suffix around the
// sequence.
func template(pieces []string, prefix, suffix []int) obj {
	var single []obj
	special := obj{}
	add := func(id int) {
		single = append(single, obj{"SpecialToken": obj{"id": pieces[id], "type_id": 0}})
		special[pieces[id]] = obj{"id": pieces[id], "ids": []int{id}, "tokens": []string{pieces[id]}}
	}
	for _, id := range prefix {
		add(id)
	}
	single = append(single, obj{"Sequence": obj{"id": "A", "type_id": 0}})
	for _, id := range suffix {
		add(id)
	}
	return obj{"type": "TemplateProcessing", "single": single, "special_tokens": special}
}

// ggufToHF writes the tokenizer.json equivalent of a GGUF vocabulary, as
// the Hugging Face converters would have produced it. The special tokens
// around the text are those the GGUF tokenizer adds.
func ggufToHF(t *testing.T, meta gguf.Metadata) []byte {
	t.Helper()
	ref, err := FromGGUF(meta)
	if err != nil {
		t.Fatal(err)
	}
	post := template(ref.(*model).pieces, ref.(*model).prefix, ref.(*model).suffix)
	kind, _ := meta.String(keyModel)
	pieces, _ := meta.Strings(keyTokens)
	unkPiece := func(def int64) string {
		id, ok := meta.Int("tokenizer.ggml.unknown_token_id")
		if !ok {
			id = def
		}
		return pieces[id]
	}
	types, _ := meta.Ints(keyTypes)
	file := obj{"version": "1.0", "added_tokens": addedTokens(pieces, types)}
	vocabMap := obj{}
	switch kind {
	case "gpt2":
		for i, p := range pieces {
			vocabMap[p] = i
		}
		merges, _ := meta.Strings(keyMerges)
		pre, _ := meta.String(keyPre)
		def, ok := preTokenizerDefs[pre]
		if !ok {
			t.Fatalf("pre-tokenizer %q", pre)
		}
		// llama.cpp's pattern list splits like Split(Isolated) steps.
		var steps []obj
		for _, p := range def.patterns {
			steps = append(steps, obj{"type": "Split", "pattern": obj{"Regex": hfPatternOf(p)}, "behavior": "Isolated", "invert": false})
		}
		steps = append(steps, obj{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false})
		file["normalizer"] = nil
		file["pre_tokenizer"] = obj{"type": "Sequence", "pretokenizers": steps}
		file["post_processor"] = obj{"type": "Sequence", "processors": []obj{
			{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true}, post}}
		file["decoder"] = obj{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}
		file["model"] = obj{"type": "BPE", "vocab": vocabMap, "merges": merges, "ignore_merges": def.ignoreMerges}
	case "llama":
		scores, _ := meta.Float32s(keyScores)
		for i, p := range pieces {
			vocabMap[p] = i
		}
		norms := []obj{{"type": "Replace", "pattern": obj{"String": " "}, "content": "▁"}}
		decs := []obj{{"type": "Replace", "pattern": obj{"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}}
		if prefix, ok := meta.Bool(keySpacePrefix); !ok || prefix {
			norms = append([]obj{{"type": "Prepend", "prepend": "▁"}}, norms...)
			decs = append(decs, obj{"type": "Strip", "content": " ", "start": 1, "stop": 0})
		}
		file["normalizer"] = obj{"type": "Sequence", "normalizers": norms}
		file["pre_tokenizer"] = nil
		file["post_processor"] = post
		file["decoder"] = obj{"type": "Sequence", "decoders": decs}
		file["model"] = obj{"type": "BPE", "vocab": vocabMap, "merges": spmMerges(pieces, types, scores),
			"unk_token": unkPiece(0), "fuse_unk": true, "byte_fallback": true}
	case "bert":
		for i, p := range pieces {
			switch {
			case types[i] != typeNormal:
				vocabMap[p] = i
			case strings.HasPrefix(p, "▁"):
				vocabMap[strings.TrimPrefix(p, "▁")] = i
			default:
				vocabMap["##"+p] = i
			}
		}
		lower, ok := meta.Bool(keyLowercase)
		if !ok {
			lower = true
		}
		file["normalizer"] = obj{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": lower}
		file["pre_tokenizer"] = obj{"type": "BertPreTokenizer"}
		file["post_processor"] = post
		file["decoder"] = obj{"type": "WordPiece", "prefix": "##", "cleanup": true}
		file["model"] = obj{"type": "WordPiece", "unk_token": unkPiece(100), "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocabMap}
	default:
		t.Fatalf("model %q", kind)
	}
	data, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestHFFromGGUFVectors rebuilds every vector vocabulary as a
// tokenizer.json and checks that it encodes the vectors to the same ids,
// and that with special tokens it agrees with the GGUF tokenizer.
func TestHFFromGGUFVectors(t *testing.T) {
	for _, vv := range loadVocabVectors(t) {
		t.Run(vv.name, func(t *testing.T) {
			data := ggufToHF(t, vv.meta)
			path := filepath.Join(t.TempDir(), "tokenizer.json")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			tk, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			m := tk.(*model)
			checkVectors(t, tk, vv, m.family == "hf-bpe")
			ref, err := FromGGUF(vv.meta)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range vv.inputs {
				a, _ := ref.Encode(s, EncodeOptions{AddSpecial: true})
				b, err := tk.Encode(s, EncodeOptions{AddSpecial: true})
				if err != nil || !equalIDs(a, b) {
					t.Errorf("AddSpecial: Encode(%q): gguf %v, tokenizer.json %v (%v)", s, a, b, err)
				}
			}
		})
	}
}

// hfFixture builds a tokenizer from a tokenizer.json written in the test.
func hfFixture(t *testing.T, file obj) Tokenizer {
	t.Helper()
	data, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseHF(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// charVocab numbers the given pieces from 0.
func charVocab(pieces ...string) obj {
	v := obj{}
	for i, p := range pieces {
		v[p] = i
	}
	return v
}

func encodeStrings(t *testing.T, tk Tokenizer, s string, opt EncodeOptions) []string {
	t.Helper()
	ids, err := tk.Encode(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = tk.Piece(id)
	}
	return out
}

// TestHFComponents runs small tokenizer.json fixtures through the
// pipeline. Expected pieces are worked out by hand from the Hugging Face
// definitions of each component.
func TestHFComponents(t *testing.T) {
	letters := []string{"[UNK]"}
	for c := 'a'; c <= 'z'; c++ {
		letters = append(letters, string(c))
	}
	wpVocab := func(extra ...string) obj {
		return charVocab(append(append([]string{}, letters...), extra...)...)
	}
	cases := []struct {
		name string
		file obj
		in   string
		opt  EncodeOptions
		want []string
	}{
		{
			name: "BPE merges as pairs, unk fused",
			file: obj{"model": obj{"type": "BPE", "vocab": charVocab("<unk>", "a", "b", "ab", "c", "abc"),
				"merges": [][2]string{{"a", "b"}, {"ab", "c"}}, "unk_token": "<unk>", "fuse_unk": true}},
			in: "abcxyab", want: []string{"abc", "<unk>", "ab"},
		},
		{
			name: "BPE rank order, not left to right",
			file: obj{"model": obj{"type": "BPE", "vocab": charVocab("a", "b", "c", "ab", "bc"),
				"merges": []string{"b c", "a b"}}},
			in: "abc", want: []string{"a", "bc"},
		},
		{
			name: "ignore_merges takes a whole-word token",
			file: obj{"model": obj{"type": "BPE", "vocab": charVocab("a", "b", "c", "ab", "bc", "abc"),
				"merges": []string{"b c", "a b"}, "ignore_merges": true}},
			in: "abc", want: []string{"abc"},
		},
		{
			name: "continuing subword prefix and end of word suffix",
			file: obj{"model": obj{"type": "BPE", "vocab": charVocab("a", "##b", "##c</w>", "ab", "ab##c</w>", "abc</w>"),
				"merges": []string{"a ##b", "ab ##c</w>"}, "continuing_subword_prefix": "##", "end_of_word_suffix": "</w>"}},
			in: "abc", want: []string{"abc</w>"},
		},
		{
			name: "byte fallback",
			file: obj{"model": obj{"type": "BPE", "vocab": charVocab("<unk>", "<0xC3>", "<0xA9>", "a"), "merges": []string{},
				"unk_token": "<unk>", "byte_fallback": true}},
			in: "aéa", want: []string{"a", "<0xC3>", "<0xA9>", "a"},
		},
		{
			name: "Metaspace always, split",
			file: obj{"pre_tokenizer": obj{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true},
				"model": obj{"type": "BPE", "vocab": charVocab("▁", "a", "b", "▁a", "▁b"), "merges": []string{"▁ a", "▁ b"}}},
			in: "a b", want: []string{"▁a", "▁b"},
		},
		{
			name: "Metaspace first: no prefix after a special token",
			file: obj{"added_tokens": []obj{{"id": 5, "content": "<s>", "special": true}},
				"pre_tokenizer": obj{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false},
				"model":         obj{"type": "BPE", "vocab": charVocab("▁", "a", "b", "▁a", "▁b"), "merges": []string{"▁ a", "▁ b"}}},
			in: "a<s>b", opt: EncodeOptions{ParseSpecial: true}, want: []string{"▁a", "<s>", "b"},
		},
		{
			name: "special added token only with ParseSpecial",
			file: obj{"added_tokens": []obj{{"id": 4, "content": "<s>", "special": true}},
				"model": obj{"type": "BPE", "vocab": charVocab("<", "s", ">", "x"), "merges": []string{}}},
			in: "x<s>", want: []string{"x", "<", "s", ">"},
		},
		{
			name: "non-special added token always, rstrip and lstrip",
			file: obj{"added_tokens": []obj{{"id": 2, "content": "<m>", "special": false, "lstrip": true, "rstrip": true}},
				"model": obj{"type": "BPE", "vocab": charVocab("x", " ", "<m>"), "merges": []string{}}},
			in: "x  <m>  x", want: []string{"x", "<m>", "x"},
		},
		{
			name: "Split Removed with invert keeps the matches",
			file: obj{"pre_tokenizer": obj{"type": "Split", "pattern": obj{"Regex": `\w+`}, "behavior": "Removed", "invert": true},
				"model": obj{"type": "BPE", "vocab": charVocab("a", "b", "ab"), "merges": []string{"a b"}}},
			in: "ab, ab", want: []string{"ab", "ab"},
		},
		{
			name: "Split MergedWithPrevious",
			file: obj{"pre_tokenizer": obj{"type": "Split", "pattern": obj{"String": "-"}, "behavior": "MergedWithPrevious", "invert": false},
				"model": obj{"type": "WordPiece", "unk_token": "[UNK]", "vocab": wpVocab("a-", "b-")}},
			in: "a-b-c", want: []string{"a-", "b-", "c"},
		},
		{
			name: "Split MergedWithNext",
			file: obj{"pre_tokenizer": obj{"type": "Split", "pattern": obj{"String": "-"}, "behavior": "MergedWithNext", "invert": false},
				"model": obj{"type": "WordPiece", "unk_token": "[UNK]", "vocab": wpVocab("-b", "-c")}},
			in: "a-b-c", want: []string{"a", "-b", "-c"},
		},
		{
			name: "Punctuation Contiguous",
			file: obj{"pre_tokenizer": obj{"type": "Punctuation", "behavior": "Contiguous"},
				"model": obj{"type": "WordPiece", "unk_token": "[UNK]", "vocab": wpVocab("!?", "!")}},
			in: "a!?b!", want: []string{"a", "!?", "b", "!"},
		},
		{
			name: "Digits individual and WhitespaceSplit",
			file: obj{"pre_tokenizer": obj{"type": "Sequence", "pretokenizers": []obj{{"type": "WhitespaceSplit"}, {"type": "Digits", "individual_digits": true}}},
				"model": obj{"type": "WordPiece", "unk_token": "[UNK]", "vocab": wpVocab("1", "2", "12")}},
			in: "a12 \t b", want: []string{"a", "1", "2", "b"},
		},
		{
			name: "Whitespace splits words from punctuation runs",
			file: obj{"pre_tokenizer": obj{"type": "Whitespace"},
				"model": obj{"type": "WordPiece", "unk_token": "[UNK]", "vocab": wpVocab("ab", ".,")}},
			in: "ab., ab", want: []string{"ab", ".,", "ab"},
		},
		{
			name: "NFKC, Lowercase, StripAccents after NFD",
			file: obj{"normalizer": obj{"type": "Sequence", "normalizers": []obj{{"type": "NFKC"}, {"type": "Lowercase"}, {"type": "NFD"}, {"type": "StripAccents"}}},
				"pre_tokenizer": obj{"type": "WhitespaceSplit"},
				"model":         obj{"type": "WordPiece", "unk_token": "[UNK]", "vocab": wpVocab("fi", "cafe")}},
			in: "ﬁ CAFÉ", want: []string{"fi", "cafe"},
		},
		{
			name: "Replace regex and Strip",
			file: obj{"normalizer": obj{"type": "Sequence", "normalizers": []obj{{"type": "Strip", "strip_left": true, "strip_right": true}, {"type": "Replace", "pattern": obj{"Regex": "[0-9]+"}, "content": "n"}}},
				"model": obj{"type": "WordPiece", "unk_token": "[UNK]", "vocab": wpVocab("ana")}},
			in: "  a123a ", want: []string{"ana"},
		},
		{
			name: "BertNormalizer and BertPreTokenizer, WordPiece ## and max chars",
			file: obj{"normalizer": obj{"type": "BertNormalizer", "lowercase": true},
				"pre_tokenizer": obj{"type": "BertPreTokenizer"},
				"model": obj{"type": "WordPiece", "unk_token": "[UNK]", "max_input_chars_per_word": 9,
					"vocab": wpVocab("un", "##aff", "##able", "中", ",", "aaaaaaaaaa")}},
			in: "UnAffáble,中 AAAAAAAAAA\u200b", want: []string{"un", "##aff", "##able", ",", "中", "[UNK]"},
		},
		{
			name: "BertProcessing",
			file: obj{"post_processor": obj{"type": "BertProcessing", "sep": []any{"[SEP]", 28}, "cls": []any{"[CLS]", 27}},
				"pre_tokenizer": obj{"type": "WhitespaceSplit"},
				"model":         obj{"type": "WordPiece", "unk_token": "[UNK]", "vocab": wpVocab("[CLS]", "[SEP]")}},
			in: "a", opt: EncodeOptions{AddSpecial: true}, want: []string{"[CLS]", "a", "[SEP]"},
		},
		{
			name: "RobertaProcessing and ByteLevel with prefix space",
			file: obj{"post_processor": obj{"type": "RobertaProcessing", "sep": []any{"</s>", 2}, "cls": []any{"<s>", 1}},
				"pre_tokenizer": obj{"type": "ByteLevel", "add_prefix_space": true},
				"model":         obj{"type": "BPE", "vocab": charVocab("Ġ", "<s>", "</s>", "a", "Ġa"), "merges": []string{"Ġ a"}}},
			in: "a a", opt: EncodeOptions{AddSpecial: true}, want: []string{"<s>", "Ġa", "Ġa", "</s>"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tk := hfFixture(t, c.file)
			got := encodeStrings(t, tk, c.in, c.opt)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("Encode(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// TestHFDecoders checks decoding through the decoder chains used by real
// tokenizer.json files.
func TestHFDecoders(t *testing.T) {
	cases := []struct {
		name    string
		decoder obj
		vocab   []string
		ids     []int
		want    string
	}{
		{"llama: Replace, ByteFallback, Fuse, Strip", obj{"type": "Sequence", "decoders": []obj{
			{"type": "Replace", "pattern": obj{"String": "▁"}, "content": " "},
			{"type": "ByteFallback"}, {"type": "Fuse"},
			{"type": "Strip", "content": " ", "start": 1, "stop": 0}}},
			[]string{"▁Hello", "▁world", "<0x21>", "<0xE2>", "<0x9C>", "<0x85>"}, []int{0, 1, 2, 3, 4, 5}, "Hello world!✅"},
		{"Metaspace", obj{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"},
			[]string{"▁a", "b", "▁c"}, []int{0, 1, 2}, "ab c"},
		{"WordPiece", obj{"type": "WordPiece", "prefix": "##"},
			[]string{"un", "##aff", "##able", "day"}, []int{0, 1, 2, 3}, "unaffable day"},
		{"ByteLevel", obj{"type": "ByteLevel"},
			[]string{"Hello", "Ġworld", "Ċ", "ĠðŁ", "¦", "Ļ"}, []int{0, 1, 2, 3, 4, 5}, "Hello world\n 🦙"},
		{"BPEDecoder", obj{"type": "BPEDecoder", "suffix": "</w>"},
			[]string{"hel", "lo</w>", "you</w>"}, []int{0, 1, 2}, "hello you "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tk := hfFixture(t, obj{"decoder": c.decoder, "model": obj{"type": "BPE", "vocab": charVocab(c.vocab...), "merges": []string{}, "byte_fallback": true}})
			if got := tk.Decode(c.ids); got != c.want {
				t.Errorf("Decode = %q, want %q", got, c.want)
			}
		})
	}
}

// TestHFConfig checks BOS/EOS from tokenizer_config.json and directory
// loading.
func TestHFConfig(t *testing.T) {
	dir := t.TempDir()
	file := obj{
		"added_tokens": []obj{{"id": 0, "content": "<s>", "special": true}, {"id": 1, "content": "</s>", "special": true}},
		"model":        obj{"type": "BPE", "vocab": charVocab("<s>", "</s>", "a"), "merges": []string{}},
	}
	data, _ := json.Marshal(file)
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := `{"bos_token": {"content": "<s>"}, "eos_token": "</s>", "add_bos_token": true}`
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	tk, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tk.BOS() != 0 || tk.EOS() != 1 || !tk.IsEOG(1) {
		t.Errorf("BOS %d EOS %d", tk.BOS(), tk.EOS())
	}
	ids, _ := tk.Encode("a</s>", EncodeOptions{AddSpecial: true, ParseSpecial: true})
	if fmt.Sprint(ids) != "[0 2 1]" {
		t.Errorf("Encode = %v, want [0 2 1]", ids)
	}
	if got := tk.Decode(ids); got != "a" {
		t.Errorf("Decode = %q, want %q (special tokens left out)", got, "a")
	}
}
