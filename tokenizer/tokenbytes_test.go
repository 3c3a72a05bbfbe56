package tokenizer

import (
	"bytes"
	"strings"
	"testing"
)

// TestTokenBytes checks that the bytes of the tokens of an encoding,
// concatenated, are the text that was encoded (after SentencePiece's
// added leading space), on the llama.cpp vocabulary vectors, and that
// control tokens have none and the EOS is among the EOG ids.
func TestTokenBytes(t *testing.T) {
	for _, vv := range loadVocabVectors(t) {
		t.Run(vv.name, func(t *testing.T) {
			tk, err := FromGGUF(vv.meta)
			if err != nil {
				t.Fatal(err)
			}
			if !isLossless(tk) {
				t.Skip("not a lossless vocabulary")
			}
			toks, eog := TokenBytes(tk)
			if len(toks) != tk.VocabSize() {
				t.Fatalf("%d token byte strings for a vocabulary of %d", len(toks), tk.VocabSize())
			}
			if e := tk.EOS(); e >= 0 {
				found := false
				for _, id := range eog {
					found = found || id == e
				}
				if !found {
					t.Errorf("EOS %d not among the EOG ids %v", e, eog)
				}
				if toks[e] != nil {
					t.Errorf("EOS %d has bytes %q", e, toks[e])
				}
			}
			checked := 0
			for _, s := range vv.inputs {
				ids, err := tk.Encode(s, EncodeOptions{})
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				for _, id := range ids {
					b.Write(toks[id])
				}
				got := b.String()
				if tk.(*model).family == "spm" {
					got = strings.TrimPrefix(got, " ")
				}
				if got != s && got != strings.TrimPrefix(s, " ") {
					t.Errorf("Encode(%q): token bytes give %q", s, got)
				}
				checked++
			}
			if checked == 0 {
				t.Fatal("no input checked")
			}
		})
	}
}
