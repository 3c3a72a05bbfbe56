package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/tensor"
)

// ggufToMeta maps llama.cpp's tensor names to Meta's PyTorch llama names.
func ggufToMeta(name string) string {
	r := strings.NewReplacer(
		"token_embd.weight", "tok_embeddings.weight",
		"output_norm.weight", "norm.weight",
		"blk.", "layers.",
		".attn_q.", ".attention.wq.",
		".attn_k.", ".attention.wk.",
		".attn_v.", ".attention.wv.",
		".attn_output.", ".attention.wo.",
		".attn_norm.", ".attention_norm.",
		".ffn_norm.", ".ffn_norm.",
		".ffn_gate.", ".feed_forward.w1.",
		".ffn_down.", ".feed_forward.w2.",
		".ffn_up.", ".feed_forward.w3.",
	)
	return r.Replace(name)
}

func TestLlama2CMatchesGGUF(t *testing.T) {
	binPath := sharedFile(t, "models/stories260K/stories260K.bin")
	ggufPath := sharedFile(t, "models/stories260K/stories260K.gguf")

	bin, err := Open(binPath)
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Close()
	if bin.Format() != FormatLlama2C || bin.Arch() != "llama" {
		t.Errorf("Format, Arch = %q, %q; want llama2c, llama", bin.Format(), bin.Arch())
	}
	// The figures published in ../shared/README.md.
	want := map[string]any{"dim": 64, "hidden_dim": 172, "n_layers": 5, "n_heads": 8, "n_kv_heads": 4,
		"vocab_size": 512, "seq_len": 512, "shared_classifier": true}
	for k, v := range want {
		if got := bin.Meta()[k]; got != v {
			t.Errorf("Meta[%q] = %v (%T), want %v", k, got, got, v)
		}
	}

	gg, err := Open(ggufPath)
	if err != nil {
		t.Fatal(err)
	}
	defer gg.Close()
	if gg.Format() != FormatGGUF || gg.Arch() != "llama" {
		t.Errorf("GGUF Format, Arch = %q, %q", gg.Format(), gg.Arch())
	}
	gm := gguf.Metadata(gg.Meta())
	for _, kv := range []struct {
		gguf, bin string
	}{{"llama.embedding_length", "dim"}, {"llama.feed_forward_length", "hidden_dim"}, {"llama.block_count", "n_layers"},
		{"llama.attention.head_count", "n_heads"}, {"llama.attention.head_count_kv", "n_kv_heads"}} {
		v, ok := gm.Int(kv.gguf)
		if !ok || int(v) != bin.Meta()[kv.bin] {
			t.Errorf("GGUF %s = %v, llama2c %s = %v", kv.gguf, v, kv.bin, bin.Meta()[kv.bin])
		}
	}

	seen := map[string]bool{}
	for _, inf := range gg.Infos() {
		name := ggufToMeta(inf.Name)
		if name == "output.weight" {
			// llama.cpp's llama2.c converter writes the shared
			// classifier out as a copy of the token embedding.
			name = "tok_embeddings.weight"
		}
		seen[name] = true
		a, err := gg.Tensor(inf.Name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := bin.Tensor(name)
		if err != nil {
			t.Errorf("GGUF %s: %v", inf.Name, err)
			continue
		}
		if a.DType != tensor.F32 || b.DType != tensor.F32 {
			t.Errorf("%s: dtypes %v, %v", name, a.DType, b.DType)
		}
		if !equalInts(a.Shape, b.Shape) {
			t.Errorf("%s: GGUF shape %v, llama2c shape %v", name, a.Shape, b.Shape)
			continue
		}
		if !bytes.Equal(a.Data, b.Data) {
			t.Errorf("%s: data differ (first floats GGUF %v, llama2c %v)", name, a.F32()[:4], b.F32()[:4])
		}
	}
	for _, inf := range bin.Infos() {
		if !seen[inf.Name] {
			t.Errorf("llama2c tensor %s has no GGUF counterpart", inf.Name)
		}
	}
	if n := len(bin.Infos()); n != 2+9*5 {
		t.Errorf("%d llama2c tensors, want %d", n, 2+9*5)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// llama2cFile builds a llama2.c checkpoint whose float i is float32(i), and
// returns it with the offset of each exposed tensor's first float.
func llama2cFile(hdr [7]int32) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, hdr)
	dim, hidden, L, heads, kv, vocab, seq := int(hdr[0]), int(hdr[1]), int(hdr[2]), int(hdr[3]), int(hdr[4]), int(hdr[5]), int(hdr[6])
	shared := vocab > 0
	if vocab < 0 {
		vocab = -vocab
	}
	kvDim := dim * kv / heads
	n := vocab*dim + L*dim + L*dim*dim + 2*L*kvDim*dim + L*dim*dim + L*dim + 3*L*hidden*dim + dim + 2*(seq*(dim/heads)/2)
	if !shared {
		n += vocab * dim
	}
	for i := 0; i < n; i++ {
		binary.Write(&b, binary.LittleEndian, float32(i))
	}
	return b.Bytes()
}

func TestLlama2CLayout(t *testing.T) {
	// dim 8, hidden 12, 2 layers, 4 heads, 2 kv heads, vocab 5 unshared, seq 3.
	hdr := [7]int32{8, 12, 2, 4, 2, -5, 3}
	data := llama2cFile(hdr)
	path := filepath.Join(t.TempDir(), "tiny.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Meta()["shared_classifier"] != false || c.Meta()["vocab_size"] != 5 {
		t.Errorf("Meta = %v", c.Meta())
	}
	// Offsets in floats, written out from the layout: embedding 5*8=40,
	// rms_att 2*8, wq 2*64, wk 2*32, wv 2*32, wo 2*64, rms_ffn 2*8,
	// w1 2*96, w2 2*96, w3 2*96, norm 8, freq 2*(3*2/2), output.
	tests := []struct {
		name  string
		shape []int
		first int
	}{
		{"tok_embeddings.weight", []int{5, 8}, 0},
		{"layers.0.attention_norm.weight", []int{8}, 40},
		{"layers.1.attention_norm.weight", []int{8}, 48},
		{"layers.0.attention.wq.weight", []int{8, 8}, 56},
		{"layers.1.attention.wq.weight", []int{8, 8}, 120},
		{"layers.0.attention.wk.weight", []int{4, 8}, 184},
		{"layers.1.attention.wv.weight", []int{4, 8}, 184 + 64 + 32},
		{"layers.0.attention.wo.weight", []int{8, 8}, 312},
		{"layers.1.ffn_norm.weight", []int{8}, 440 + 8},
		{"layers.0.feed_forward.w1.weight", []int{12, 8}, 456},
		{"layers.1.feed_forward.w2.weight", []int{8, 12}, 456 + 192 + 96},
		{"layers.1.feed_forward.w3.weight", []int{12, 8}, 456 + 384 + 96},
		{"norm.weight", []int{8}, 1032},
		{"output.weight", []int{5, 8}, 1040 + 6},
	}
	for _, tc := range tests {
		tt, err := c.Tensor(tc.name)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !equalInts(tt.Shape, tc.shape) {
			t.Errorf("%s: shape %v, want %v", tc.name, tt.Shape, tc.shape)
		}
		f := tt.F32()
		if len(f) != tensor.NumElems(tc.shape) || f[0] != float32(tc.first) || f[len(f)-1] != float32(tc.first+len(f)-1) {
			t.Errorf("%s: floats [%v .. %v], want [%d .. %d]", tc.name, f[0], f[len(f)-1], tc.first, tc.first+len(f)-1)
		}
	}
	if got := len(c.Infos()); got != 2+9*2+1 {
		t.Errorf("%d tensors, want %d", got, 2+9*2+1)
	}
	if _, err := c.Tensor("freq_cis_real"); err == nil {
		t.Error("freq_cis_real is exposed")
	}
	// Infos are in file order: offsets increase.
	prev := -1.0
	for _, inf := range c.Infos() {
		tt, _ := c.Tensor(inf.Name)
		if v := float64(tt.F32()[0]); v <= prev {
			t.Errorf("Infos out of file order at %s", inf.Name)
		} else {
			prev = v
		}
	}
	c.Close()
	if _, err := c.Tensor("norm.weight"); !errors.Is(err, ErrClosed) {
		t.Errorf("Tensor after Close: %v, want ErrClosed", err)
	}
}

func TestLlama2CBad(t *testing.T) {
	good := [7]int32{8, 12, 2, 4, 2, 5, 3}
	full := llama2cFile(good)
	unshared := llama2cFile([7]int32{8, 12, 2, 4, 2, -5, 3})
	hdr := func(h [7]int32) []byte {
		var b bytes.Buffer
		binary.Write(&b, binary.LittleEndian, h)
		return append(b.Bytes(), full[28:]...)
	}
	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{"truncated in wk", full[:28+4*(40+16+128+20)], []string{"tiny.bin", `"layers.0.attention.wk.weight"`, "truncated"}},
		{"truncated in output", unshared[:len(unshared)-4], []string{`"output.weight"`, "truncated"}},
		{"trailing bytes", append(append([]byte(nil), full...), 1, 2, 3, 4), []string{"4 trailing bytes"}},
		{"classifier with positive vocab", unshared[:len(unshared):len(unshared)], nil},
		{"zero dim", hdr([7]int32{0, 12, 2, 4, 2, 5, 3}), []string{"dim = 0"}},
		{"heads do not divide dim", hdr([7]int32{8, 12, 2, 3, 1, 5, 3}), []string{"not a multiple of n_heads"}},
		{"kv heads do not divide heads", hdr([7]int32{8, 12, 2, 4, 3, 5, 3}), []string{"n_kv_heads"}},
		{"huge layers", hdr([7]int32{8, 12, math.MaxInt32, 4, 2, 5, 3}), []string{"n_layers"}},
		{"short header", full[:20], []string{"too short"}},
	}
	// A file with a classifier but a positive vocab: patch the header of the unshared file.
	patched := append([]byte(nil), unshared...)
	binary.LittleEndian.PutUint32(patched[20:], 5)
	tests[3].data = patched
	tests[3].want = []string{"shared classifier", "negative vocab_size"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tiny.bin")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := OpenLlama2C(path)
			if err == nil {
				c.Close()
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
