package tokenizer

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzHFTokenizer feeds arbitrary tokenizer.json text to the HF loader
// and encodes and decodes a fixed text with whatever it accepts.
func FuzzHFTokenizer(f *testing.F) {
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}}`))
	f.Add([]byte(`{"model":{"type":"WordPiece","vocab":{"[UNK]":0,"a":1,"##b":2},"unk_token":"[UNK]"},"normalizer":{"type":"Lowercase"},"pre_tokenizer":{"type":"Whitespace"}}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"<0x41>":0,"▁":1},"merges":[],"byte_fallback":true},"decoder":{"type":"Sequence","decoders":[{"type":"ByteFallback"},{"type":"Fuse"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		m, err := parseHF(data, nil)
		if err != nil {
			return
		}
		ids, err := m.Encode("Hello world, ab ba 12 é", EncodeOptions{AddSpecial: true, ParseSpecial: true})
		if err == nil {
			m.Decode(ids)
		}
	})
}

// FuzzLlama2CTokenizer feeds arbitrary bytes to the llama2.c tokenizer.bin
// loader (through a file, as users give it).
func FuzzLlama2CTokenizer(f *testing.F) {
	// max_token_length, then per token: score f32, length i32, bytes.
	f.Add([]byte("\x04\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00a\x00\x00\x80\x3f\x01\x00\x00\x00b"), 2)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, vocab int) {
		if vocab < 0 || vocab > 1<<12 {
			return
		}
		p := filepath.Join(dir, "tokenizer.bin")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Skip(err)
		}
		tk, err := LoadLlama2C(p, vocab)
		if err != nil {
			return
		}
		ids, err := tk.Encode("ab ba", EncodeOptions{AddSpecial: true})
		if err == nil {
			tk.Decode(ids)
		}
	})
}

// FuzzVocabTxt feeds arbitrary bytes to the BERT vocab.txt loader (one
// piece per line) and encodes and decodes a fixed text with whatever it
// accepts.
func FuzzVocabTxt(f *testing.F) {
	f.Add([]byte("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n##lo\nworld\n,\n"))
	f.Add([]byte("[UNK]\r\na\r\n##b\r\n"))
	f.Add([]byte("\n\n\xff\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<12 {
			return
		}
		p := filepath.Join(dir, "vocab.txt")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Skip(err)
		}
		tk, err := loadVocabTxt(p)
		if err != nil {
			return
		}
		ids, err := tk.Encode("Hello, world! héllo 12 [CLS] ab", EncodeOptions{AddSpecial: true, ParseSpecial: true})
		if err != nil {
			return
		}
		for _, id := range ids {
			if id < 0 || id >= tk.VocabSize() {
				t.Fatalf("id %d outside the vocabulary of %d", id, tk.VocabSize())
			}
		}
		tk.Decode(ids)
	})
}
