package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/weftrun/weft/checkpoint"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/model"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/plugins"
	"github.com/weftrun/weft/scheduler"
	"github.com/weftrun/weft/specs"
)

// specGraph builds an unbound graph from a spec with its default params,
// and returns the params too.
func specGraph(specPath string, set setFlags, reg *ops.Registry, pl model.PluginLoader, passes bool) (*graph.Graph, specs.Params, error) {
	sp, err := model.Prepare(specPath, "", nil, reg, pl)
	if err != nil {
		return nil, nil, err
	}
	params, err := sp.ResolveParams(nil, overrides(set))
	if err != nil {
		return nil, nil, err
	}
	if err := model.CheckParams(sp, params, overrides(set), nil); err != nil {
		return nil, nil, err
	}
	g, err := sp.Build(specs.BuildOptions{Registry: reg, Params: params})
	if err != nil {
		return nil, nil, err
	}
	if passes {
		if err := graph.Optimize(g, reg); err != nil {
			return nil, nil, err
		}
	}
	return g, params, nil
}

func cmdGraph(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("graph", stderr)
	modelPath := fs.String("m", "", "model checkpoint")
	specPath := fs.String("s", "", "spec file or built-in name")
	format := fs.String("format", "dot", "dot, mermaid, json or html (an interactive page, self-contained)")
	outPath := fs.String("o", "", "write to this file instead of stdout")
	noPasses := fs.Bool("no-passes", false, "show the graph as the spec wrote it, before fusion")
	devices := fs.String("devices", "", devicesUsage+"; shows each node's device and the copies and all-reduces")
	profilePath := fs.String("profile", "", "html: overlay the node times of FILE (weft bench --profile-out FILE, same model and flags)")
	fs.String("plugin-dir", "", "accepted and ignored: weft graph starts no plugin (it draws plugin ops with placeholders)")
	set := setFlags{}
	fs.Var(set, "set", "override a spec param: key=value (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	devs, err := scheduler.ParseDevices(*devices)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	write := map[string]func(*graph.Graph, io.Writer) error{"dot": (*graph.Graph).WriteDOT, "mermaid": (*graph.Graph).WriteMermaid,
		"json": (*graph.Graph).WriteJSON, "html": nil}
	fn, ok := write[*format]
	if !ok {
		return fmt.Errorf("%w: unknown format %q (dot, mermaid, json, html)", errUsage, *format)
	}
	if *profilePath != "" && *format != "html" {
		return fmt.Errorf("%w: --profile goes with --format html", errUsage)
	}
	// Drawing a spec must not run a program: plugin ops get placeholders
	// (plugins.Unstarted), and no plugin starts, even from --plugin-dir.
	var host plugins.Unstarted
	reg := ops.Builtins()
	html := *format == "html"
	var g, unfused *graph.Graph
	var params specs.Params
	spec := *specPath
	switch {
	case *modelPath != "":
		m, err := model.Load(model.Options{Path: *modelPath, Spec: *specPath, Set: overrides(set), NoPasses: *noPasses, Plugins: host, Registry: reg})
		if err != nil {
			return err
		}
		defer m.Close()
		g, params = m.Graph, m.Params
		if spec == "" {
			spec = strings.TrimSuffix(m.Spec.File, ".yaml") // a built-in chosen by architecture
		}
		if html && !*noPasses {
			u, err := model.Load(model.Options{Path: *modelPath, Spec: *specPath, Set: overrides(set), NoPasses: true, Plugins: host, Registry: reg})
			if err != nil {
				return err
			}
			defer u.Close()
			unfused = u.Graph
		}
	case *specPath != "":
		var err error
		if g, params, err = specGraph(*specPath, set, reg, host, !*noPasses); err != nil {
			return err
		}
		if html && !*noPasses {
			if unfused, _, err = specGraph(*specPath, set, reg, host, false); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("%w: give -m MODEL or -s SPEC", errUsage)
	}
	if *devices != "" {
		if g, err = scheduler.Place(g, reg, devs); err != nil {
			return err
		}
	}
	if html {
		opt := graph.HTMLOptions{Unfused: unfused, Params: params, Title: g.Name}
		if *modelPath != "" {
			opt.Title = filepath.Base(*modelPath) + " (" + g.Name + ")"
		}
		if c := params.Int("ctx"); c > 0 {
			opt.Context = min(c, 512)
		}
		if src, err := specs.Source(spec); err == nil {
			opt.Sources = map[string]string{filepath.Base(spec): string(src)}
			if !strings.ContainsAny(spec, "/.") {
				opt.Sources = map[string]string{spec + ".yaml": string(src)}
			}
		}
		if *profilePath != "" {
			if opt.Profile, err = graph.ReadProfile(*profilePath); err != nil {
				return err
			}
		}
		fn = func(g *graph.Graph, w io.Writer) error { return g.WriteHTMLPage(w, opt) }
	}
	if *outPath == "" {
		return fn(g, stdout)
	}
	f, err := os.Create(*outPath)
	if err != nil {
		return err
	}
	if err := fn(g, f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func cmdInspect(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("inspect", stderr)
	modelPath := fs.String("m", "", "model checkpoint")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *modelPath == "" {
		return fmt.Errorf("%w: -m MODEL is required", errUsage)
	}
	ck, err := checkpoint.Open(*modelPath)
	if err != nil {
		return err
	}
	defer ck.Close()
	fmt.Fprintf(stdout, "format: %s\narchitecture: %s\n\nmetadata:\n", ck.Format(), ck.Arch())
	meta := ck.Meta()
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := fmt.Sprint(meta[k])
		if len(s) > 100 {
			s = s[:97] + "..."
		}
		fmt.Fprintf(stdout, "  %-44s %s\n", k, s)
	}
	infos := ck.Infos()
	fmt.Fprintf(stdout, "\ntensors (%d):\n", len(infos))
	var total int64
	for _, in := range infos {
		n := int64(1)
		for _, d := range in.Shape {
			n *= int64(d)
		}
		rb, _ := in.DType.RowBytes(int(n))
		total += int64(rb)
		fmt.Fprintf(stdout, "  %-44s %-6s %v\n", in.Name, in.DType, in.Shape)
	}
	fmt.Fprintf(stdout, "\n%d tensors, %.2f MiB\n", len(infos), float64(total)/(1<<20))
	return nil
}
