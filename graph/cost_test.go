package graph_test

import (
	"testing"

	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/specs"
)

// TestNodeCost checks the per-token costs of a small Llama's fused ops
// against the counts written out by hand.
func TestNodeCost(t *testing.T) {
	const hidden, heads, kvHeads, ffn, vocab = 64, 8, 4, 96, 128
	const hd = hidden / heads
	sp, err := specs.Open("llama")
	if err != nil {
		t.Fatal(err)
	}
	params, err := sp.ResolveParams(nil, map[string]any{"hidden": int64(hidden), "layers": int64(1), "heads": int64(heads),
		"kv_heads": int64(kvHeads), "ffn": int64(ffn), "vocab": int64(vocab), "ctx": int64(256)})
	if err != nil {
		t.Fatal(err)
	}
	reg := ops.Builtins()
	g, err := sp.Build(specs.BuildOptions{Registry: reg, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if err := graph.Optimize(g, reg); err != nil {
		t.Fatal(err)
	}
	const f32 = 4
	want := map[string]graph.Cost{
		// A lookup: one row of the table read, nothing computed.
		"embedding": {Params: vocab * hidden, WeightBytes: f32 * vocab * hidden, ActBytes: f32*hidden + 4 + f32*hidden}, // row, token id, output
		// Three projections: 2·out·in each.
		"linear_multi": {FLOPs: 2 * (hidden*hidden + 2*kvHeads*hd*hidden), Params: hidden*hidden + 2*kvHeads*hd*hidden,
			WeightBytes: f32 * (hidden*hidden + 2*kvHeads*hd*hidden), ActBytes: f32 * (hidden + hidden + 2*kvHeads*hd)},
		// RoPE on q and k (3 per element), then per position 4·Wq + 5·heads;
		// keys and values of 2 bytes each read per position.
		"rope_attention": {FLOPs: 3 * (hidden + kvHeads*hd), FLOPsPerPos: 4*hidden + 5*heads, KVBytesPerPos: 2 * 2 * kvHeads * hd,
			ActBytes: f32 * (hidden + 2*kvHeads*hd + 1 + hidden)},
		// Gate and up projections, then SwiGLU's 4 per element.
		"gated_ffn": {FLOPs: 2*2*ffn*hidden + 4*ffn, Params: 2 * ffn * hidden, WeightBytes: f32 * 2 * ffn * hidden, ActBytes: f32 * (hidden + ffn)},
	}
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		w, ok := want[n.Op.Name]
		if !ok || n.Layer != 0 && n.Op.Name != "embedding" {
			continue
		}
		seen[n.Op.Name] = true
		if got := graph.NodeCost(n); got != w {
			t.Errorf("%s (%s): cost %+v\nwant %+v", n.Op.Name, graph.Label(n), got, w)
		}
	}
	for op := range want {
		if !seen[op] {
			t.Errorf("no %s node in the fused graph", op)
		}
	}
}
