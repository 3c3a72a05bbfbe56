package scheduler

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/weftrun/weft/graph"
)

// Profile accumulates time per op kind, per layer and per device. It is
// safe for the concurrent splits of several devices.
type Profile struct {
	mu       sync.Mutex
	ByOp     map[string]time.Duration
	ByLayer  map[int]time.Duration
	ByDevice map[string]time.Duration
	Calls    map[string]int
	// ByNode is the time of each graph node, by node ID (for the graph
	// page's overlay).
	ByNode map[int]time.Duration
	nodes  map[int]*graph.Node
}

// NewProfile returns an empty profile.
func NewProfile() *Profile {
	return &Profile{ByOp: map[string]time.Duration{}, ByLayer: map[int]time.Duration{}, ByDevice: map[string]time.Duration{}, Calls: map[string]int{}, ByNode: map[int]time.Duration{}, nodes: map[int]*graph.Node{}}
}

// Add records that node n ran for ns nanoseconds (backend.Profiler).
func (p *Profile) Add(n *graph.Node, ns int64) {
	p.mu.Lock()
	p.ByOp[n.Op.Name] += time.Duration(ns)
	p.ByLayer[n.Layer] += time.Duration(ns)
	p.ByDevice[n.Device] += time.Duration(ns)
	p.Calls[n.Op.Name]++
	p.ByNode[n.ID] += time.Duration(ns)
	p.nodes[n.ID] = n
	p.mu.Unlock()
}

// Write prints the profile as tables: per op, per layer, and per device
// when there are several.
func (p *Profile) Write(w io.Writer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var total time.Duration
	type row struct {
		k string
		d time.Duration
	}
	var rows []row
	for k, d := range p.ByOp {
		rows = append(rows, row{k, d})
		total += d
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].d > rows[j].d })
	fmt.Fprintf(w, "%-16s %10s %7s %8s\n", "op", "time", "share", "calls")
	for _, r := range rows {
		fmt.Fprintf(w, "%-16s %10s %6.1f%% %8d\n", r.k, r.d.Round(time.Microsecond), 100*float64(r.d)/float64(total), p.Calls[r.k])
	}
	var layers []int
	for l := range p.ByLayer {
		layers = append(layers, l)
	}
	sort.Ints(layers)
	fmt.Fprintf(w, "\n%-16s %10s %7s\n", "layer", "time", "share")
	for _, l := range layers {
		name := fmt.Sprint(l)
		if l < 0 {
			name = "(outside layers)"
		}
		d := p.ByLayer[l]
		fmt.Fprintf(w, "%-16s %10s %6.1f%%\n", name, d.Round(time.Microsecond), 100*float64(d)/float64(total))
	}
	if len(p.ByDevice) > 1 {
		var devs []string
		for d := range p.ByDevice {
			devs = append(devs, d)
		}
		sort.Strings(devs)
		fmt.Fprintf(w, "\n%-16s %10s %7s\n", "device", "time", "share")
		for _, d := range devs {
			fmt.Fprintf(w, "%-16s %10s %6.1f%%\n", d, p.ByDevice[d].Round(time.Microsecond), 100*float64(p.ByDevice[d])/float64(total))
		}
	}
}

// Nodes returns the time of each node that ran, in node order, for
// graph.Profile.
func (p *Profile) Nodes() []graph.ProfiledNode {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]graph.ProfiledNode, 0, len(p.ByNode))
	for id, d := range p.ByNode {
		n := p.nodes[id]
		out = append(out, graph.ProfiledNode{ID: id, Op: n.Op.Name, Name: n.Name, Layer: n.Layer, NS: int64(d)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
