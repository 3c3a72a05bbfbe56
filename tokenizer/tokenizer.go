// Package tokenizer turns text into token ids and back for the vocabularies
// LLM checkpoints ship with.
//
// Three families are supported, each reproducing the reference
// implementations (llama.cpp and Hugging Face tokenizers) id for id:
//
//   - SentencePiece-style BPE ("spm"): GGUF tokenizer.ggml.model = "llama"
//     and llama2.c tokenizer.bin files. Pieces are merged by score, spaces
//     become U+2581, unknown characters fall back to <0xNN> byte tokens.
//   - Byte-level BPE ("bpe"): GGUF tokenizer.ggml.model = "gpt2" with the
//     pre-tokenizer named by tokenizer.ggml.pre, merged by rank.
//   - WordPiece ("wpm"): GGUF tokenizer.ggml.model = "bert" and vocab.txt.
//
// Hugging Face tokenizer.json files describe their own pipeline
// (normalizer, pre-tokenizer, BPE or WordPiece model, post-processor and
// decoder); LoadHF builds it.
//
// Every Tokenizer is safe for concurrent use.
//
// The files, by job: tokenizer.go (the interface, Load), vocab.go and
// decode.go (shared by every family), spm.go, bpe.go, wordpiece.go and
// pretok.go (the three families and llama.cpp's pre-tokenizers),
// llama2c.go (tokenizer.bin), gguf_import.go (FromGGUF), gguf_export.go
// (GGUFMetadata: any tokenizer back to GGUF metadata), and the
// tokenizer.json pipeline, one file per stage: hf.go (loading and the
// model), hf_normalizer.go, hf_pretokenizer.go, hf_postprocessor.go,
// hf_decoder.go.
package tokenizer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/weftrun/weft/gguf"
)

// Tokenizer encodes text to token ids and decodes ids to text.
type Tokenizer interface {
	// Encode splits text into token ids.
	Encode(text string, opt EncodeOptions) ([]int, error)
	// Decode returns the text of ids. Control and unknown tokens are left
	// out; the space a SentencePiece vocabulary puts before the first word
	// is removed again, so Decode(Encode(s)) == s for the lossless families.
	Decode(ids []int) string
	// Piece returns the vocabulary entry of id as stored in the model file
	// (for example "▁Hello", "Ġworld", "<0x0A>"), or "" when id is out of range.
	Piece(id int) string
	// VocabSize is the number of token ids.
	VocabSize() int
	// BOS is the beginning-of-sequence token, or -1 if none.
	BOS() int
	// EOS is the end-of-sequence token, or -1 if none.
	EOS() int
	// IsEOG reports whether id ends generation (EOS, EOT, end-of-turn, ...).
	IsEOG(id int) bool
	// NewStreamDecoder returns a decoder for generated tokens that emits
	// text only once its UTF-8 is complete.
	NewStreamDecoder() *StreamDecoder
}

// EncodeOptions controls Encode.
type EncodeOptions struct {
	// AddSpecial adds the tokens the model's metadata asks for around the
	// text (BOS, EOS; [CLS] and [SEP] for BERT; a tokenizer.json template).
	AddSpecial bool
	// ParseSpecial turns the text of control tokens such as "<s>" or
	// "<|eot_id|>" into their ids. User-defined tokens are always matched.
	ParseSpecial bool
}

// Token types, numbered like llama.cpp's tokenizer.ggml.token_type.
const (
	typeUndefined   = 0
	typeNormal      = 1
	typeUnknown     = 2
	typeControl     = 3
	typeUserDefined = 4
	typeUnused      = 5
	typeByte        = 6
)

// Load opens a tokenizer from path, sniffing the format: a GGUF file, a
// Hugging Face tokenizer.json, a WordPiece vocab.txt, or a llama2.c
// tokenizer.bin. A directory is searched for tokenizer.json, then vocab.txt,
// then tokenizer.bin.
func Load(path string) (Tokenizer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if st.IsDir() {
		for _, name := range []string{"tokenizer.json", "vocab.txt", "tokenizer.bin"} {
			p := filepath.Join(path, name)
			if _, err := os.Stat(p); err == nil {
				return Load(p)
			}
		}
		return nil, fmt.Errorf("tokenizer: %s: no tokenizer.json, vocab.txt or tokenizer.bin in directory", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	f.Close()
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte(gguf.Magic)):
		g, err := gguf.Open(path)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		defer g.Close()
		t, err := FromGGUF(g.Meta)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
		}
		return t, nil
	case len(bytes.TrimLeft(head, " \t\r\n\ufeff")) > 0 && bytes.TrimLeft(head, " \t\r\n\ufeff")[0] == '{':
		return LoadHF(path)
	case looksLikeLlama2C(head):
		return LoadLlama2C(path, 0)
	case utf8.Valid(trimIncompleteRune(head)) && n > 0:
		return loadVocabTxt(path)
	}
	return nil, fmt.Errorf("tokenizer: %s: unrecognised format", path)
}

// looksLikeLlama2C checks the start of a llama2.c tokenizer.bin: an int32
// max_token_length, then records of (float32 score, int32 length, bytes).
func looksLikeLlama2C(b []byte) bool {
	if len(b) < 12 {
		return false
	}
	maxLen := int32(binary.LittleEndian.Uint32(b))
	if maxLen <= 0 || maxLen > 1<<16 {
		return false
	}
	n := int32(binary.LittleEndian.Uint32(b[8:]))
	return n > 0 && n <= maxLen
}

// trimIncompleteRune drops a multi-byte character cut at the end of b.
func trimIncompleteRune(b []byte) []byte {
	for i := 1; i <= 3 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < 0x80 {
			return b
		}
		if c >= 0xC0 {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// fragmentEncoder encodes a piece of input that holds no special tokens.
type fragmentEncoder interface {
	// encode appends the ids of text to dst. atStart reports whether text
	// opens the input (it otherwise follows a special token).
	encode(dst []int, text string, atStart bool) ([]int, error)
}

// model is the Tokenizer every loader builds: a vocabulary, a matcher for
// special tokens, a family-specific encoder, and decoded bytes per token.
type model struct {
	vocab
	family string // "spm", "bpe", "wpm", or "hf-…" in error messages
	enc    fragmentEncoder

	bos, eos int
	prefix   []int      // added before the text when EncodeOptions.AddSpecial
	suffix   []int      // added after it
	pair     []pairItem // the sentence-pair template (EncodePair); nil: none
	eog      map[int]bool

	special specialMatcher

	// decoded holds each token's decoded bytes: decoded[off[i]:off[i+1]].
	decoded []byte
	off     []uint32
	// skip marks tokens Decode leaves out (control, unknown).
	skip []bool
	// stripLeading removes one leading space from the first decoded piece.
	stripLeading bool

	// src records what GGUFMetadata needs beyond the encoder.
	src exportSource
}

// Encode implements Tokenizer.
func (m *model) Encode(text string, opt EncodeOptions) ([]int, error) {
	out := make([]int, 0, len(text)/3+len(m.prefix)+len(m.suffix)+2)
	if opt.AddSpecial {
		out = append(out, m.prefix...)
	}
	var err error
	pos := 0
	for pos < len(text) {
		start, end, id, ok := m.special.next(text, pos, opt.ParseSpecial)
		if !ok {
			start, end = len(text), len(text)
		}
		if start > pos {
			out, err = m.enc.encode(out, text[pos:start], pos == 0)
			if err != nil {
				return nil, fmt.Errorf("%s encode: %w", m.family, err)
			}
		}
		if !ok {
			break
		}
		out = append(out, id)
		pos = end
	}
	if opt.AddSpecial {
		out = append(out, m.suffix...)
	}
	return out, nil
}

// Decode implements Tokenizer.
func (m *model) Decode(ids []int) string {
	n := 0
	for _, id := range ids {
		if id >= 0 && id < len(m.skip) {
			n += int(m.off[id+1] - m.off[id])
		}
	}
	buf := make([]byte, 0, n)
	first := true
	for _, id := range ids {
		if id < 0 || id >= len(m.skip) || m.skip[id] {
			continue
		}
		p := m.decoded[m.off[id]:m.off[id+1]]
		if first && len(p) > 0 {
			if m.stripLeading && p[0] == ' ' {
				p = p[1:]
			}
			first = false
		}
		buf = append(buf, p...)
	}
	return string(buf)
}

// appendToken appends the decoded bytes of id (nothing for skipped tokens).
func (m *model) appendToken(dst []byte, id int) []byte {
	if id < 0 || id >= len(m.skip) || m.skip[id] {
		return dst
	}
	return append(dst, m.decoded[m.off[id]:m.off[id+1]]...)
}

// Piece implements Tokenizer.
func (m *model) Piece(id int) string {
	if id < 0 || id >= len(m.pieces) {
		return ""
	}
	return m.pieces[id]
}

// VocabSize implements Tokenizer.
func (m *model) VocabSize() int { return len(m.pieces) }

// BOS implements Tokenizer.
func (m *model) BOS() int { return m.bos }

// EOS implements Tokenizer.
func (m *model) EOS() int { return m.eos }

// IsEOG implements Tokenizer.
func (m *model) IsEOG(id int) bool { return m.eog[id] }

// NewStreamDecoder implements Tokenizer.
func (m *model) NewStreamDecoder() *StreamDecoder { return &StreamDecoder{m: m} }

// setDecoded stores the decoded bytes of every token, computed by piece.
func (m *model) setDecoded(piece func(id int) []byte) {
	n := len(m.pieces)
	m.off = make([]uint32, n+1)
	m.skip = make([]bool, n)
	size := 0
	for _, p := range m.pieces {
		size += len(p)
	}
	m.decoded = make([]byte, 0, size)
	for id := 0; id < n; id++ {
		switch m.types[id] {
		case typeControl, typeUnknown:
			m.skip[id] = true
		default:
			m.decoded = append(m.decoded, piece(id)...)
		}
		m.off[id+1] = uint32(len(m.decoded))
	}
}

// finish validates the special token ids and builds the special matcher and
// the end-of-generation set. extraEOG are ids that end generation besides EOS.
func (m *model) finish(extraEOG ...int) {
	m.special = newSpecialMatcher(&m.vocab, nil)
	m.eog = map[int]bool{}
	if m.eos >= 0 {
		m.eog[m.eos] = true
	}
	for _, id := range extraEOG {
		if id >= 0 && id < len(m.pieces) {
			m.eog[id] = true
		}
	}
}

// eogTexts are token texts that end generation in common chat vocabularies
// (the list llama.cpp keeps).
var eogTexts = []string{
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>",
	"<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>",
	"<|end_of_text|>", "<end_of_utterance>", "<｜end▁of▁sentence｜>",
}

// eogByText returns the ids of tokens whose text marks an end of
// generation. Like llama.cpp, "<|end|>" is left out when the vocabulary
// also has "<|return|>" and "<|call|>" (there it ends a message, not the
// generation).
func eogByText(v *vocab) []int {
	var ids []int
	for _, s := range eogTexts {
		if id, ok := v.ids[s]; ok {
			ids = append(ids, int(id))
		}
	}
	_, hasReturn := v.ids["<|return|>"]
	_, hasCall := v.ids["<|call|>"]
	if end, ok := v.ids["<|end|>"]; ok && hasReturn && hasCall {
		for i, id := range ids {
			if id == int(end) {
				ids = append(ids[:i], ids[i+1:]...)
				break
			}
		}
	}
	return ids
}
