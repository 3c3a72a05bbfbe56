package specs_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
)

// namedSource is a mapSource that lists its tensors (the `tensors` CEL
// variable).
type namedSource struct{ mapSource }

func (n namedSource) Names() []string {
	var out []string
	for k := range n.mapSource {
		out = append(out, k)
	}
	return out
}

// TestT5Structure: t5.yaml's encoder and decoder build, the FFN is gated
// exactly when the checkpoint has ffn_gate tensors (the `tensors`
// variable), and the encoder's output is `memory`.
func TestT5Structure(t *testing.T) {
	sp := builtin(t, "t5")
	set := map[string]any{"hidden": int64(16), "layers": int64(2), "heads": int64(2), "head_dim": int64(8), "ffn": int64(24), "vocab": int64(10), "buckets": int64(8)}
	p := resolve(t, sp, set)
	for _, gated := range []bool{false, true} {
		src := mapSource{}
		for _, enc := range []bool{false, true} {
			g, err := sp.Build(specs.BuildOptions{Registry: registry(), Params: p, Format: "gguf", Encoder: enc})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range g.Params() {
				if !gated && strings.Contains(v.Param.Source, "ffn_gate") {
					continue
				}
				src[v.Param.Source] = tensor.NewF32(v.Param.Source, shapeOf(v.Type.Shape)...)
			}
		}
		if gated {
			for _, pre := range []string{"enc", "dec"} {
				for i := 0; i < 2; i++ {
					n := pre + ".blk." + strconv.Itoa(i) + ".ffn_gate.weight"
					src[n] = tensor.NewF32(n, 24, 16)
				}
			}
		}
		for _, enc := range []bool{false, true} {
			g, err := sp.Build(specs.BuildOptions{Registry: registry(), Params: p, Format: "gguf", Encoder: enc, Source: namedSource{src}})
			if err != nil {
				t.Fatalf("gated=%v encoder=%v: %v", gated, enc, err)
			}
			st := g.Stats()
			if gated && (st["geglu"] != 2 || st["relu"] != 0) || !gated && (st["relu"] != 2 || st["geglu"] != 0) {
				t.Errorf("gated=%v encoder=%v: ops %v", gated, enc, st)
			}
			if enc && (len(g.Outputs) != 1 || g.Outputs[0].Name != specs.EncoderOutput || st["cross_attention"] != 0) {
				t.Errorf("encoder outputs %v, cross_attention %d", g.Outputs, st["cross_attention"])
			}
			if !enc && st["cross_attention"] != 2 {
				t.Errorf("decoder: %d cross_attention, want 2", st["cross_attention"])
			}
		}
	}
}

func shapeOf(s ops.Shape) []int {
	out := make([]int, len(s))
	for i, d := range s {
		out[i] = d.N
	}
	return out
}

// TestEncoderErrors: an encoder that never assigns `memory`, or asking
// for the encoder of a spec without one, is an error.
func TestEncoderErrors(t *testing.T) {
	const base = `name: e
params:
  vocab: {value: 8}
  hidden: {value: 4}
weights:
  tok: {shape: [vocab, hidden], gguf: tok.weight}
graph:
  - logits: linear(embedding(tok, tokens), tok)
`
	sp, err := specs.Parse("e.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Build(specs.BuildOptions{Registry: registry(), Params: resolve(t, sp, nil), Encoder: true}); err == nil || !strings.Contains(err.Error(), "no encoder") {
		t.Errorf("no encoder: %v", err)
	}
	sp, err = specs.Parse("e.yaml", []byte(base+"encoder:\n  - x: embedding(tok, tokens)\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Build(specs.BuildOptions{Registry: registry(), Params: resolve(t, sp, nil), Encoder: true}); err == nil || !strings.Contains(err.Error(), `"memory"`) {
		t.Errorf("no memory: %v", err)
	}
	// The encoder's ops are checked whichever graph is built.
	sp, err = specs.Parse("e.yaml", []byte(base+"encoder:\n  - memory: nosuchop(tok)\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Build(specs.BuildOptions{Registry: registry(), Params: resolve(t, sp, nil)}); err == nil || !strings.Contains(err.Error(), `unknown op "nosuchop"`) {
		t.Errorf("unknown op in the encoder: %v", err)
	}
}
