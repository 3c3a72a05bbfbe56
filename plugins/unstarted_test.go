package plugins

import (
	"strings"
	"testing"

	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/specs"
)

// TestUnstartedPlaceholders builds a spec whose plugin is never started:
// each plugin op gets the inputs, outputs and attributes the spec gives it
// (an op called with two results, another with an attribute and a nested
// call), outputs of its first input's type, and is marked not started.
// An op of a spec that names no plugin stays unknown.
func TestUnstartedPlaceholders(t *testing.T) {
	const src = `name: t
params:
  hidden: 8
  vocab: 16
weights:
  emb: {shape: [vocab, hidden], gguf: tok_embd.weight}
  w: {shape: [hidden, hidden], gguf: w.weight}
plugins:
  - name: demo
    path: ./nowhere
graph:
  - x: embedding(emb, tokens)
  - a, b: demo.split(x)
  - c: demo.scale(linear(add(a, b), w), by=2.5, mode=fast)
  - logits: linear(c, emb)
outputs: [logits]
`
	sp, err := specs.Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	uses := sp.UnknownOps(ops.Builtins())
	if len(uses) != 2 || uses[0].Name != "demo.scale" || uses[0].Inputs != 1 || strings.Join(uses[0].Attrs, ",") != "by,mode" ||
		uses[1].Name != "demo.split" || uses[1].Outputs != 2 || uses[1].Pos.Line != 13 {
		t.Fatalf("UnknownOps = %+v", uses)
	}
	reg := ops.Builtins()
	if err := (Unstarted{}).LoadSpec(sp, reg); err != nil {
		t.Fatal(err)
	}
	params, err := sp.ResolveParams(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := sp.Build(specs.BuildOptions{Registry: reg, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	var plugin []*graph.Node
	for _, n := range g.Nodes {
		if n.Op.Plugin != "" {
			plugin = append(plugin, n)
		}
	}
	if len(plugin) != 2 {
		t.Fatalf("%d plugin nodes, want 2", len(plugin))
	}
	split, scale := plugin[0], plugin[1]
	if len(split.Outputs) != 2 || split.Outputs[1].Type.String() != split.Inputs[0].Type.String() || !split.NotStarted() {
		t.Errorf("split: outputs %v from input %v, not started %v", split.Outputs, split.Inputs[0].Type, split.NotStarted())
	}
	if scale.Attrs.Float("by") != 2.5 || scale.Attrs.String("mode") != "fast" || scale.Label() != "demo.scale [demo, not started]" {
		t.Errorf("scale: attrs %v, label %q", scale.Attrs, scale.Label())
	}
	// Without a plugins: section the op is a spec error, as before.
	bare, err := specs.Parse("u.yaml", []byte(strings.Replace(src, "plugins:\n  - name: demo\n    path: ./nowhere\n", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	reg = ops.Builtins()
	if err := (Unstarted{}).LoadSpec(bare, reg); err != nil {
		t.Fatal(err)
	}
	if _, err := bare.Build(specs.BuildOptions{Registry: reg, Params: params}); err == nil || !strings.Contains(err.Error(), `unknown op "demo.split"`) {
		t.Errorf("a spec without plugins: %v, want unknown op", err)
	}
}
