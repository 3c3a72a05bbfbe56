package graph

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// JSONGraph is the documented export format (docs/architecture.md).
type JSONGraph struct {
	Format  string      `json:"format"` // "weft-graph/1"
	Name    string      `json:"name"`
	Inputs  []string    `json:"inputs"`
	Outputs []string    `json:"outputs"`
	Values  []JSONValue `json:"values"`
	Nodes   []JSONNode  `json:"nodes"`
}

// JSONValue is one value of a JSONGraph.
type JSONValue struct {
	ID     int      `json:"id"`
	Name   string   `json:"name"`
	DType  string   `json:"dtype"`
	Shape  []string `json:"shape"` // numbers, or symbols such as "T"
	Kind   string   `json:"kind"`  // input, param, activation
	Tensor string   `json:"tensor,omitempty"`
}

// JSONNode is one op application of a JSONGraph.
type JSONNode struct {
	ID      int            `json:"id"`
	Op      string         `json:"op"`
	Plugin  string         `json:"plugin,omitempty"`
	Name    string         `json:"name"`
	Inputs  []*int         `json:"inputs"` // value ids; null for an absent optional input
	Outputs []int          `json:"outputs"`
	Attrs   map[string]any `json:"attrs,omitempty"`
	Layer   int            `json:"layer"`
	Block   string         `json:"block,omitempty"`
	Fused   []string       `json:"fused,omitempty"`
	Source  string         `json:"source"`           // spec file:line:col
	Device  string         `json:"device,omitempty"` // where the scheduler placed it (--devices)
	// NotStarted marks an op of a plugin that was not started (weft graph
	// starts none): its output types are assumed equal to its first
	// input's.
	NotStarted bool `json:"not_started,omitempty"`
}

// ToJSON converts g to its export form.
func (g *Graph) ToJSON() *JSONGraph {
	j := &JSONGraph{Format: "weft-graph/1", Name: g.Name, Inputs: []string{}, Outputs: []string{}}
	used := map[int]bool{}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			if v != nil {
				used[v.ID] = true
			}
		}
		for _, v := range n.Outputs {
			used[v.ID] = true
		}
	}
	for _, v := range g.Inputs {
		j.Inputs = append(j.Inputs, v.Name)
	}
	for _, v := range g.Outputs {
		j.Outputs = append(j.Outputs, v.Name)
	}
	for _, v := range g.Values {
		if !used[v.ID] && !v.Input {
			continue
		}
		jv := JSONValue{ID: v.ID, Name: v.Name, DType: v.Type.DType.String(), Kind: "activation"}
		for _, d := range v.Type.Shape {
			jv.Shape = append(jv.Shape, d.String())
		}
		switch {
		case v.Input:
			jv.Kind = "input"
		case v.Param != nil:
			jv.Kind = "param"
			jv.Tensor = v.Param.Source
		}
		j.Values = append(j.Values, jv)
	}
	for _, n := range g.Nodes {
		jn := JSONNode{ID: n.ID, Op: n.Op.Name, Plugin: n.Op.Plugin, Name: n.Name, Attrs: map[string]any(n.Attrs),
			Layer: n.Layer, Block: n.Block, Fused: n.Fused, Source: n.Pos.String(), Device: n.Device, NotStarted: n.NotStarted()}
		for _, v := range n.Inputs {
			if v == nil {
				jn.Inputs = append(jn.Inputs, nil)
				continue
			}
			id := v.ID
			jn.Inputs = append(jn.Inputs, &id)
		}
		for _, v := range n.Outputs {
			jn.Outputs = append(jn.Outputs, v.ID)
		}
		j.Nodes = append(j.Nodes, jn)
	}
	return j
}

// WriteJSON writes the documented JSON form.
func (g *Graph) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	enc.SetEscapeHTML(false) // "cpu:0&cpu:1" stays readable
	return enc.Encode(g.ToJSON())
}

func attrText(n *Node) string {
	keys := make([]string, 0, len(n.Attrs))
	for k := range n.Attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, n.Attrs[k]))
	}
	return strings.Join(parts, " ")
}

// WriteDOT writes Graphviz DOT: ops as boxes (plugin ops highlighted,
// layers as clusters), weights as small notes.
func (g *Graph) WriteDOT(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %q {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n", g.Name)
	if g.hasNotStarted() {
		fmt.Fprintf(&b, "  label=%q; labelloc=b; fontsize=10;\n", NotStartedNote)
	}
	for _, v := range g.Inputs {
		fmt.Fprintf(&b, "  v%d [label=%q, shape=oval, style=filled, fillcolor=\"#e0f0ff\"];\n", v.ID, v.Name+"\n"+v.Type.String())
	}
	layer := -2
	for _, n := range g.Nodes {
		if n.Layer != layer {
			if layer >= 0 {
				b.WriteString("  }\n")
			}
			layer = n.Layer
			if layer >= 0 {
				fmt.Fprintf(&b, "  subgraph cluster_layer%d {\n  label=\"layer %d\"; style=dashed;\n", layer, layer)
			}
		}
		label := n.Label()
		if n.Device != "" {
			label += " @" + n.Device
		}
		if at := attrText(n); at != "" {
			label += "\n" + at
		}
		style := "shape=box, style=\"rounded,filled\", fillcolor=\"" + deviceColor(n) + "\""
		if n.Op.Plugin != "" {
			style = "shape=box, style=\"rounded,filled\", fillcolor=\"#ffe6b3\""
		}
		if n.Op.Name == "copy" || n.Op.Name == "all_reduce" {
			style = "shape=hexagon, style=filled, fillcolor=\"#ffd6d6\""
		}
		fmt.Fprintf(&b, "  n%d [label=%q, %s];\n", n.ID, label, style)
	}
	if layer >= 0 {
		b.WriteString("  }\n")
	}
	producer := func(v *Value) string {
		if v.Producer != nil {
			return fmt.Sprintf("n%d", v.Producer.ID)
		}
		return fmt.Sprintf("v%d", v.ID)
	}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			if v == nil {
				continue
			}
			if v.Param != nil {
				fmt.Fprintf(&b, "  v%d [label=%q, shape=note, fontsize=8];\n", v.ID, v.Param.Source+"\n"+v.Type.String())
			}
			fmt.Fprintf(&b, "  %s -> n%d [label=%q, fontsize=8];\n", producer(v), n.ID, shapeText(v))
		}
	}
	for _, v := range g.Outputs {
		fmt.Fprintf(&b, "  out_%d [label=%q, shape=oval, style=filled, fillcolor=\"#e6ffe6\"];\n  %s -> out_%d;\n", v.ID, v.Name, producer(v), v.ID)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMermaid writes a Mermaid flowchart (weights omitted for legibility).
func (g *Graph) WriteMermaid(w io.Writer) error {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	if g.hasNotStarted() {
		fmt.Fprintf(&b, "  note[/\"%s\"/]\n", strings.ReplaceAll(NotStartedNote, "\"", "'"))
	}
	for _, v := range g.Inputs {
		fmt.Fprintf(&b, "  v%d([\"%s %s\"])\n", v.ID, v.Name, v.Type.Shape)
	}
	layer := -2
	for _, n := range g.Nodes {
		if n.Layer != layer {
			if layer >= 0 {
				b.WriteString("  end\n")
			}
			layer = n.Layer
			if layer >= 0 {
				fmt.Fprintf(&b, "  subgraph layer%d[\"layer %d\"]\n", layer, layer)
			}
		}
		label := n.Label()
		if n.Device != "" {
			label += " @" + n.Device
		}
		fmt.Fprintf(&b, "  n%d[\"%s\"]\n", n.ID, strings.ReplaceAll(label, "\"", "'"))
		if n.Op.Plugin != "" {
			fmt.Fprintf(&b, "  style n%d fill:#ffe6b3\n", n.ID)
		}
	}
	if layer >= 0 {
		b.WriteString("  end\n")
	}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			if v == nil || v.Param != nil {
				continue
			}
			src := fmt.Sprintf("v%d", v.ID)
			if v.Producer != nil {
				src = fmt.Sprintf("n%d", v.Producer.ID)
			}
			fmt.Fprintf(&b, "  %s -->|%s| n%d\n", src, shapeText(v), n.ID)
		}
	}
	for _, v := range g.Outputs {
		src := fmt.Sprintf("v%d", v.ID)
		if v.Producer != nil {
			src = fmt.Sprintf("n%d", v.Producer.ID)
		}
		fmt.Fprintf(&b, "  o%d([\"%s\"])\n  %s --> o%d\n", v.ID, v.Name, src, v.ID)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// deviceColors tell devices apart in DOT drawings.
var deviceColors = []string{"#f4f4f4", "#e3f2fd", "#e8f5e9", "#fff8e1", "#f3e5f5", "#e0f7fa", "#fbe9e7", "#ede7f6"}

// deviceColor returns the fill colour of n's device (cpu:N → colour N).
func deviceColor(n *Node) string {
	i := strings.LastIndexByte(n.Device, ':')
	if i < 0 || strings.Contains(n.Device, "&") {
		return deviceColors[0]
	}
	k := 0
	for _, c := range n.Device[i+1:] {
		k = k*10 + int(c-'0')
	}
	return deviceColors[k%len(deviceColors)]
}

// NotStartedNote is what drawings say when they hold ops of plugins that
// were not started.
const NotStartedNote = "ops marked \"not started\" belong to plugins weft graph did not run: their outputs are drawn with their first input's type (shapes marked ?)"

// hasNotStarted reports whether any node applies an op of a plugin that
// was not started.
func (g *Graph) hasNotStarted() bool {
	for _, n := range g.Nodes {
		if n.NotStarted() {
			return true
		}
	}
	return false
}

// shapeText is v's shape as an edge label: marked "?" when a plugin that
// was not started would have inferred it.
func shapeText(v *Value) string {
	if v.Producer != nil && v.Producer.NotStarted() {
		return v.Type.Shape.String() + "?"
	}
	return v.Type.Shape.String()
}
