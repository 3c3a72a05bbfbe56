package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

// TestEncodePair: sentence pairs follow each tokenizer's pair template:
// BERT's [CLS] A [SEP] B [SEP] with type 0 up to and including the first
// [SEP] and 1 after it (a BERT GGUF, HF BertProcessing, and the
// TemplateProcessing HF writes for BERT, type ids from the file), RoBERTa's
// <s> A </s></s> B </s> all of type 0; without AddSpecial the texts only;
// a tokenizer with no pair template is an error.
func TestEncodePair(t *testing.T) {
	letters := []string{"[UNK]"}
	for c := 'a'; c <= 'z'; c++ {
		letters = append(letters, string(c))
	}
	vocab := charVocab(append(slices.Clone(letters), "[CLS]", "[SEP]")...)
	ws := obj{"type": "WhitespaceSplit"}
	wp := obj{"type": "WordPiece", "unk_token": "[UNK]", "vocab": vocab}
	special := obj{"[CLS]": obj{"id": "[CLS]", "ids": []int{27}, "tokens": []string{"[CLS]"}},
		"[SEP]": obj{"id": "[SEP]", "ids": []int{28}, "tokens": []string{"[SEP]"}}}
	tok := func(id string, typ int) obj { return obj{"SpecialToken": obj{"id": id, "type_id": typ}} }
	seq := func(id string, typ int) obj { return obj{"Sequence": obj{"id": id, "type_id": typ}} }
	bertTemplate := obj{"type": "TemplateProcessing",
		"single":         []obj{tok("[CLS]", 0), seq("A", 0), tok("[SEP]", 0)},
		"pair":           []obj{tok("[CLS]", 0), seq("A", 0), tok("[SEP]", 0), seq("B", 1), tok("[SEP]", 1)},
		"special_tokens": special}
	bert := []string{"[CLS]:0", "a:0", "b:0", "[SEP]:0", "c:1", "[SEP]:1"}
	cases := []struct {
		name string
		tk   Tokenizer
		opt  EncodeOptions
		want []string // piece:type
		err  string
	}{
		{name: "BertProcessing", tk: hfFixture(t, obj{"pre_tokenizer": ws, "model": wp,
			"post_processor": obj{"type": "BertProcessing", "sep": []any{"[SEP]", 28}, "cls": []any{"[CLS]", 27}}}),
			opt: EncodeOptions{AddSpecial: true}, want: bert},
		{name: "TemplateProcessing (HF's BERT)", tk: hfFixture(t, obj{"pre_tokenizer": ws, "model": wp, "post_processor": bertTemplate}),
			opt: EncodeOptions{AddSpecial: true}, want: bert},
		{name: "Sequence of ByteLevel and a template", tk: hfFixture(t, obj{"pre_tokenizer": ws, "model": wp,
			"post_processor": obj{"type": "Sequence", "processors": []obj{{"type": "ByteLevel"}, bertTemplate}}}),
			opt: EncodeOptions{AddSpecial: true}, want: bert},
		{name: "a template's own type ids", tk: hfFixture(t, obj{"pre_tokenizer": ws, "model": wp, "post_processor": obj{"type": "TemplateProcessing",
			"single": []obj{seq("A", 0)}, "pair": []obj{seq("B", 2), tok("[SEP]", 3), seq("A", 0)}, "special_tokens": special}}),
			opt: EncodeOptions{AddSpecial: true}, want: []string{"c:2", "[SEP]:3", "a:0", "b:0"}},
		{name: "without special tokens", tk: hfFixture(t, obj{"pre_tokenizer": ws, "model": wp, "post_processor": bertTemplate}),
			want: []string{"a:0", "b:0", "c:1"}},
		{name: "RobertaProcessing", tk: hfFixture(t, obj{"pre_tokenizer": ws, "model": wp,
			"post_processor": obj{"type": "RobertaProcessing", "sep": []any{"[SEP]", 28}, "cls": []any{"[CLS]", 27}}}),
			opt: EncodeOptions{AddSpecial: true}, want: []string{"[CLS]:0", "a:0", "b:0", "[SEP]:0", "[SEP]:0", "c:0", "[SEP]:0"}},
		{name: "no template", tk: hfFixture(t, obj{"pre_tokenizer": ws, "model": wp}), opt: EncodeOptions{AddSpecial: true},
			err: "no sentence-pair template"},
	}
	if data, err := readSharedOptional("tokenizer-vectors", "ggml-vocab-bert-bge.gguf"); err == nil && len(data) > 0 {
		tk, err := Load(sharedFile(t, "tokenizer-vectors", "ggml-vocab-bert-bge.gguf"))
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			tk   Tokenizer
			opt  EncodeOptions
			want []string
			err  string
		}{name: "BERT GGUF", tk: tk, opt: EncodeOptions{AddSpecial: true}, want: []string{"[CLS]:0", "▁a:0", "▁b:0", "[SEP]:0", "▁c:1", "[SEP]:1"}}) // llama.cpp marks word starts with ▁
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ids, types, err := EncodePair(c.tk, "a b", "c", c.opt)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one mentioning %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, id := range ids {
				got = append(got, c.tk.Piece(id)+":"+string(rune('0'+types[i])))
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("EncodePair = %v, want %v", got, c.want)
			}
		})
	}
}
