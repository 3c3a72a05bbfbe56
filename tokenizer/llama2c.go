package tokenizer

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"
)

// LoadLlama2C reads a llama2.c tokenizer.bin: an int32 max_token_length,
// then per token a float32 score, an int32 byte length and the bytes.
// vocabSize is the number of tokens the checkpoint expects; vocabSize <= 0
// reads records up to the end of the file.
//
// Such files store pieces with plain spaces; they are rewritten with U+2581
// as in SentencePiece. Token 0 is <unk>, 1 is BOS (<s>), 2 is EOS (</s>),
// 3..258 are the byte tokens <0x00>..<0xFF>. A BOS is added by
// EncodeOptions.AddSpecial and a space is put in front of the text, as
// llama2.c does.
func LoadLlama2C(path string, vocabSize int) (Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llama2.c tokenizer: %w", err)
	}
	t, err := parseLlama2C(data, vocabSize)
	if err != nil {
		return nil, fmt.Errorf("llama2.c tokenizer %s: %w", path, err)
	}
	return t, nil
}

func parseLlama2C(data []byte, vocabSize int) (*model, error) {
	if len(data) < 4 {
		return nil, fmt.Errorf("file is %d bytes, too short for the header", len(data))
	}
	maxLen := int32(binary.LittleEndian.Uint32(data))
	if maxLen <= 0 {
		return nil, fmt.Errorf("max_token_length is %d", maxLen)
	}
	var pieces []string
	var scores []float32
	off := 4
	for i := 0; vocabSize <= 0 || i < vocabSize; i++ {
		if vocabSize <= 0 && off == len(data) {
			break
		}
		if off+8 > len(data) {
			return nil, fmt.Errorf("token %d: record header at byte %d runs past the end of the file (%d bytes)", i, off, len(data))
		}
		score := math.Float32frombits(binary.LittleEndian.Uint32(data[off:]))
		n := int32(binary.LittleEndian.Uint32(data[off+4:]))
		off += 8
		if n < 0 || n > maxLen || int(n) > len(data)-off {
			return nil, fmt.Errorf("token %d: length %d is negative, over max_token_length %d, or past the end of the file", i, n, maxLen)
		}
		if math.IsNaN(float64(score)) {
			return nil, fmt.Errorf("token %d: score is NaN", i)
		}
		pieces = append(pieces, string(data[off:off+int(n)]))
		scores = append(scores, score)
		off += int(n)
	}
	if vocabSize > 0 && off != len(data) {
		return nil, fmt.Errorf("%d bytes left after %d tokens: vocabulary size mismatch", len(data)-off, vocabSize)
	}
	if len(pieces) < 3 {
		return nil, fmt.Errorf("%d tokens; need at least <unk>, <s>, </s>", len(pieces))
	}

	types := make([]uint8, len(pieces))
	for i, p := range pieces {
		switch {
		case i == 0:
			types[i] = typeUnknown
		case i == 1 || i == 2:
			types[i] = typeControl
			// llama2.c stores "\n<s>\n" and "\n</s>\n".
			pieces[i] = strings.TrimSpace(p)
		case isByteToken(p):
			types[i] = typeByte
		default:
			types[i] = typeNormal
			pieces[i] = strings.ReplaceAll(p, " ", spaceMark)
		}
	}
	v, err := newVocab(pieces, types, scores)
	if err != nil {
		return nil, err
	}
	m := &model{vocab: v, family: "spm", bos: 1, eos: 2, prefix: []int{1}}
	m.enc = newSPMEncoder(&m.vocab, true, 0)
	m.stripLeading = true
	m.setDecoded(spmPiece(&m.vocab))
	m.finish()
	return m, nil
}

func isByteToken(p string) bool {
	_, ok := parseByteToken(p)
	return ok
}
