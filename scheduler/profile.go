package scheduler

import (
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/weftrun/weft/graph"
)

var start = time.Now()

func nanotime() int64 { return int64(time.Since(start)) }

// Profile accumulates time per op kind and per layer.
type Profile struct {
	ByOp    map[string]time.Duration
	ByLayer map[int]time.Duration
	Calls   map[string]int
}

// NewProfile returns an empty profile.
func NewProfile() *Profile {
	return &Profile{ByOp: map[string]time.Duration{}, ByLayer: map[int]time.Duration{}, Calls: map[string]int{}}
}

func (p *Profile) add(n *graph.Node, ns int64) {
	p.ByOp[n.Op.Name] += time.Duration(ns)
	p.ByLayer[n.Layer] += time.Duration(ns)
	p.Calls[n.Op.Name]++
}

// Write prints the profile as two tables.
func (p *Profile) Write(w io.Writer) {
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
}
