package tokenizer

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weftrun/weft/gguf"
)

// byteVocab is a SentencePiece vocabulary of <unk>, <s>, </s>, the 256
// byte tokens and a few pieces.
func byteVocab(t *testing.T) Tokenizer {
	t.Helper()
	pieces := []string{"<unk>", "<s>", "</s>"}
	types := []int32{typeUnknown, typeControl, typeControl}
	for b := 0; b < 256; b++ {
		pieces = append(pieces, fmt.Sprintf("<0x%02X>", b))
		types = append(types, typeByte)
	}
	pieces = append(pieces, "▁", "a", "▁a")
	types = append(types, typeNormal, typeNormal, typeNormal)
	scores := make([]float32, len(pieces))
	tk, err := FromGGUF(gguf.Metadata{keyModel: "llama", keyTokens: pieces, keyTypes: types, keyScores: scores})
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestStreamDecoderSplitCharacters pushes characters split over byte
// tokens: nothing comes out until the character is complete.
func TestStreamDecoderSplitCharacters(t *testing.T) {
	tk := byteVocab(t)
	byteID := func(b byte) int { return 3 + int(b) }
	type step struct {
		id   int
		want string
	}
	cases := []struct {
		name  string
		steps []step
		flush string
	}{
		{"emoji over four byte tokens", []step{{byteID(0xF0), ""}, {byteID(0x9F), ""}, {byteID(0xA6), ""}, {byteID(0x99), "🦙"}}, ""},
		{"CJK over three byte tokens, then a piece", []step{{byteID(0xE4), ""}, {byteID(0xB8), ""}, {byteID(0xAD), "中"}, {261, " a"}}, ""},
		{"piece completes nothing pending", []step{{260, "a"}, {byteID('!'), "!"}}, ""},
		{"control tokens print nothing", []step{{1, ""}, {byteID(0xC3), ""}, {2, ""}, {byteID(0xA9), "é"}}, ""},
		{"broken sequence becomes U+FFFD", []step{{byteID(0xE4), ""}, {byteID(0xB8), ""}, {260, "\uFFFD\uFFFDa"}}, ""},
		{"stray continuation byte", []step{{byteID(0x80), "\uFFFD"}}, ""},
		{"incomplete at the end is flushed", []step{{byteID(0xF0), ""}, {byteID(0x9F), ""}}, "\uFFFD\uFFFD"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sd := tk.NewStreamDecoder()
			for i, s := range c.steps {
				if got := sd.Push(s.id); got != s.want {
					t.Errorf("step %d: Push(%d) = %q, want %q", i, s.id, got, s.want)
				}
			}
			if got := sd.Flush(); got != c.flush {
				t.Errorf("Flush() = %q, want %q", got, c.flush)
			}
			if got := sd.Flush(); got != "" {
				t.Errorf("second Flush() = %q", got)
			}
		})
	}
}

// TestStreamDecoderVectors streams the ids of every vector string: each
// chunk is valid UTF-8 and together they are the decoded text (with the
// leading space SentencePiece adds, which a stream keeps).
func TestStreamDecoderVectors(t *testing.T) {
	for _, vv := range loadVocabVectors(t) {
		tk, err := FromGGUF(vv.meta)
		if err != nil {
			t.Fatal(err)
		}
		if !isLossless(tk) {
			continue
		}
		spm := tk.(*model).family == "spm"
		for _, s := range append(vv.inputs, "🚀 我想在apple工作 😶‍🌫️ ✅ Cửa Việt") {
			ids, err := tk.Encode(s, EncodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sd := tk.NewStreamDecoder()
			var b strings.Builder
			for _, id := range ids {
				out := sd.Push(id)
				if !utf8.ValidString(out) {
					t.Errorf("%s: Push(%d) = %q, not UTF-8", vv.name, id, out)
				}
				b.WriteString(out)
			}
			b.WriteString(sd.Flush())
			want := s
			if spm && s != "" {
				want = " " + s
			}
			if b.String() != want {
				t.Errorf("%s: streamed %q, want %q", vv.name, b.String(), want)
			}
		}
	}
}
