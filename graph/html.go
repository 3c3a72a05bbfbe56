package graph

import (
	_ "embed" // the page
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// HTMLOptions adds to the graph page what a graph alone does not know.
// Every field is optional.
type HTMLOptions struct {
	// Title heads the page (default: the graph's name).
	Title string
	// Unfused is the same model's graph before the passes, for the
	// before/after-fusion toggle.
	Unfused *Graph
	// Params are the spec's resolved hyperparameters.
	Params map[string]any
	// Sources maps a spec file name, as node positions give it, to its
	// text: a node's spec line opens in the page.
	Sources map[string]string
	// Profile overlays measured time per node (weft bench --profile-out).
	// It must have been taken on this graph.
	Profile *Profile
	// Context is the position at which the page first counts attention's
	// FLOPs (0: 512).
	Context int
}

// htmlPage is the viewer; WriteHTMLPage puts the data in place of its
// /*DATA*/null.
//
//go:embed page.html
var htmlPage string

// pageGraph is a graph as the page draws it: the JSON export plus each
// node's label and cost and each weight's bytes.
type pageGraph struct {
	*JSONGraph
	Labels map[int]string `json:"labels"`
	// Names are the values' names as the spec gives them, "" for the
	// values the spec leaves unnamed (an edge then shows its shape only).
	Names map[int]string `json:"names"`
	Costs map[int]Cost   `json:"costs"`
	Bytes map[int]int64  `json:"bytes"` // weight value id → bytes
}

type pageData struct {
	Title   string            `json:"title"`
	Fused   *pageGraph        `json:"fused"`
	Unfused *pageGraph        `json:"unfused,omitempty"`
	Params  map[string]any    `json:"params,omitempty"`
	Sources map[string]string `json:"sources,omitempty"`
	Profile *Profile          `json:"profile,omitempty"`
	Context int               `json:"ctx"`
}

// autoName matches the names the spec builder makes up for ops the spec
// does not name (linear_9, swiglu_37).
var autoName = regexp.MustCompile(`^[a-z][a-z0-9_.]*_[0-9]+$`)

// AutoNamed reports whether name is one the spec builder made up for a
// value the spec does not name (linear_9, swiglu_37).
func AutoNamed(name string) bool { return autoName.MatchString(name) }

// Label is the name the graph page shows for n: the spec's name for its
// result (its results' names, for a fused node with several, "q, k, v"),
// or, for an op the spec left unnamed, the op with the weights it applies
// (linear(wq)).
func Label(n *Node) string {
	if len(n.Outputs) > 1 {
		var names []string
		for _, v := range n.Outputs {
			if AutoNamed(v.Name) {
				names = nil
				break
			}
			names = append(names, v.Name)
		}
		if names != nil {
			return strings.Join(names, ", ")
		}
	}
	if n.Name != "" && !AutoNamed(n.Name) {
		return n.Name
	}
	var keys []string
	for _, v := range n.Inputs {
		if v != nil && v.Param != nil {
			keys = append(keys, v.Param.Key)
		}
	}
	if len(keys) == 0 {
		return n.Op.Name
	}
	return n.Op.Name + "(" + strings.Join(keys, ", ") + ")"
}

func newPageGraph(g *Graph) *pageGraph {
	pg := &pageGraph{JSONGraph: g.ToJSON(), Labels: map[int]string{}, Names: map[int]string{}, Costs: map[int]Cost{}, Bytes: map[int]int64{}}
	for _, v := range pg.JSONGraph.Values {
		if !AutoNamed(v.Name) {
			pg.Names[v.ID] = v.Name
		}
	}
	for _, n := range g.Nodes {
		pg.Labels[n.ID] = Label(n)
		pg.Costs[n.ID] = NodeCost(n)
		for _, v := range n.Inputs {
			if v != nil && v.Param != nil {
				pg.Bytes[v.ID] = ValueBytes(v)
			}
		}
	}
	return pg
}

// WriteHTML writes the graph page with no options (see WriteHTMLPage).
func (g *Graph) WriteHTML(w io.Writer) error { return g.WriteHTMLPage(w, HTMLOptions{}) }

// WriteHTMLPage writes a self-contained interactive page (no network):
// the dataflow drawn as boxes and edges labelled with shapes, layers that
// collapse and expand, nodes named as the spec names them with their spec
// line, weights with tensor name, type and bytes, the hyperparameters,
// totals (parameters, bytes, FLOPs per token) and per-op FLOPs and
// memory, a before/after-fusion toggle, search, and overlays of measured
// time (opt.Profile) and device placement (--devices).
func (g *Graph) WriteHTMLPage(w io.Writer, opt HTMLOptions) error {
	if opt.Profile != nil {
		if err := opt.Profile.matches(g); err != nil {
			return err
		}
	}
	d := pageData{Title: opt.Title, Fused: newPageGraph(g), Params: opt.Params, Sources: opt.Sources, Profile: opt.Profile, Context: opt.Context}
	if d.Title == "" {
		d.Title = g.Name
	}
	if d.Context <= 0 {
		d.Context = 512
	}
	if opt.Unfused != nil {
		d.Unfused = newPageGraph(opt.Unfused)
	}
	data, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("graph page: %w", err)
	}
	// Inside <script>, "</" could end the element: JSON allows "<\/".
	page := strings.Replace(htmlPage, "/*DATA*/null", strings.ReplaceAll(string(data), "</", `<\/`), 1)
	_, err = io.WriteString(w, page)
	return err
}
