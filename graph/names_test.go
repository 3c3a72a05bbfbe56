package graph_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/specs"
)

// TestFusedNodesKeepSpecNames checks that fusion keeps the names the spec
// gives: in llama.yaml q and k are the ropes' results (q: rope(linear(h,
// wq), …)), and once the ropes move into rope_attention the projections
// that feed it in their place are q and k, not linear_9 and linear_14; v
// is attention's v; and the fused projection's box reads "q, k, v". A
// value the spec does not name keeps no made-up name on the page.
func TestFusedNodesKeepSpecNames(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "specs", "llama.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := specs.Parse("llama.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	reg := ops.Builtins()
	params, err := sp.ResolveParams(nil, llamaSet(nil))
	if err != nil {
		t.Fatal(err)
	}
	g, err := sp.Build(specs.BuildOptions{Registry: reg, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if err := graph.Fuse(g, reg); err != nil {
		t.Fatal(err)
	}
	attns, multis := 0, 0
	for _, n := range g.Nodes {
		switch n.Op.Name {
		case "rope_attention":
			attns++
			for i, want := range []string{"q", "k", "v"} {
				if got := n.Inputs[i].Name; got != want {
					t.Errorf("layer %d: rope_attention's input %d is %q, want the spec's %q", n.Layer, i, got, want)
				}
			}
		case "linear_multi":
			multis++
			if got := graph.Label(n); got != "q, k, v" {
				t.Errorf("layer %d: the fused projection is labelled %q, want \"q, k, v\"", n.Layer, got)
			}
			if n.Name != "q" {
				t.Errorf("layer %d: the fused projection is named %q, want its first result's, q", n.Layer, n.Name)
			}
		case "gated_ffn":
			if got := graph.Label(n); got != "gated_ffn(w_gate, w_up)" {
				t.Errorf("layer %d: the fused feed-forward is labelled %q", n.Layer, got)
			}
		}
	}
	if attns != 2 || multis != 2 {
		t.Fatalf("%d rope_attention and %d linear_multi nodes, want 2 of each (was the graph fused?)", attns, multis)
	}
	var page strings.Builder
	if err := g.WriteHTMLPage(&page, graph.HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	_, data, _ := strings.Cut(page.String(), `"names":{`)
	names, _, _ := strings.Cut(data, "}")
	if names == "" || strings.Contains(names, `"linear_`) || strings.Contains(names, `"swiglu_`) {
		t.Errorf("the page's value names hold made-up names: {%s}", names)
	}
}
