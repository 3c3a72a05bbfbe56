package tokenizer

// TokenBytes returns the bytes each token id stands for in generated text,
// as a grammar matcher needs them (grammar.NewVocab): for byte-level BPE
// the decoded bytes (not the printable "Ġ" form), for SentencePiece the
// piece with "▁" turned into a space and <0xNN> into the byte. Control and
// unknown tokens get nil (they never appear in text). eog lists the ids
// that end generation. The slices share no memory with the tokenizer.
//
// Unlike Decode of a single id, a SentencePiece token keeps its leading
// space: within a generation it is text like any other.
func TokenBytes(t Tokenizer) (tokens [][]byte, eog []int) {
	n := t.VocabSize()
	tokens = make([][]byte, n)
	for id := 0; id < n; id++ {
		if t.IsEOG(id) {
			eog = append(eog, id)
		}
	}
	if m, ok := t.(*model); ok {
		buf := make([]byte, len(m.decoded))
		copy(buf, m.decoded)
		for id := 0; id < n; id++ {
			if m.skip[id] {
				continue
			}
			tokens[id] = buf[m.off[id]:m.off[id+1]:m.off[id+1]]
		}
		return tokens, eog
	}
	// Another implementation: Decode of the single id (a SentencePiece
	// implementation may strip the leading space there).
	for id := 0; id < n; id++ {
		if s := t.Decode([]int{id}); s != "" {
			tokens[id] = []byte(s)
		}
	}
	return tokens, eog
}
