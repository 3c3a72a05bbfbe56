// Command weft runs LLM inference from a YAML model spec: it compiles the
// spec into a graph, binds checkpoint weights and schedules the graph on
// the CPU. Run `weft help` for the commands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
)

type command struct {
	run     func(args []string, stdout, stderr io.Writer) error
	summary string
}

func commands() map[string]command {
	return map[string]command{
		"run":        {cmdRun, "generate text: weft run -m MODEL (-p PROMPT | -f FILE | -p -) [-n N|-1] [-c CTX] [-t N] [--temp T] [--seed N] [--json]"},
		"graph":      {cmdGraph, "export a model's graph: weft graph (-m MODEL | -s SPEC) --format dot|mermaid|json|html"},
		"inspect":    {cmdInspect, "print a checkpoint's metadata and tensor table: weft inspect -m MODEL"},
		"tokenize":   {cmdTokenize, "tokenize text: weft tokenize -m MODEL_OR_VOCAB -p TEXT [--no-bos] [--special] [--json]"},
		"bench":      {cmdBench, "measure prefill/decode tok/s and the memory roofline: weft bench -m MODEL [-p 128] [-n 32] [-t N] [-r 5] [--json] [--membw] [--profile]"},
		"embed":      {cmdEmbed, "print text embeddings: weft embed -m MODEL -p TEXT [-f FILE] [--pooling cls|mean|last|none] [--normalize] [--json]"},
		"synth":      {cmdSynth, "write a random-weight GGUF for a spec: weft synth -s SPEC [--set k=v] --dtype T --seed N -o OUT.gguf"},
		"quantize":   {cmdQuantize, "re-quantize a GGUF: weft quantize IN.gguf OUT.gguf TYPE"},
		"perplexity": {cmdPerplexity, "score a text as llama-perplexity does: weft perplexity -m MODEL -f TEXT [-c 512] [--json]"},
		"serve":      {cmdServe, "serve the OpenAI API: weft serve -m MODEL [--host 127.0.0.1] [--port 8080] [-np 4] [--chat-template FILE|NAME]"},
		"chat":       {cmdChat, "chat with a model in the terminal: weft chat -m MODEL [--system TEXT] [--chat-template FILE|NAME] [--temp T]"},
		"loadgen":    {cmdLoadgen, "load an OpenAI-compatible server with streaming clients: weft loadgen [--url URL] [-c 1,4,8,16] [-r 4] [-n 64] [--json]"},
		"convert":    {cmdConvert, "convert a checkpoint (HF folder, safetensors, PyTorch, llama2.c) to GGUF: weft convert IN OUT.gguf"},
	}
}

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

// errUsage marks an error caused by the command line.
var errUsage = errors.New("usage")

func realMain(args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	switch {
	case len(args) == 0:
		usage(stderr, cmds)
		return 2
	case args[0] == "--version" || args[0] == "-version" || args[0] == "version":
		fmt.Fprintf(stdout, "weft %s\n", versionString())
		return 0
	case args[0] == "-h" || args[0] == "--help" || args[0] == "help" && len(args) == 1:
		usage(stdout, cmds) // asked for: help goes to stdout
		return 0
	case args[0] == "help":
		if _, ok := cmds[args[1]]; !ok {
			fmt.Fprintf(stderr, "weft help: unknown command %q\n", args[1])
			usage(stderr, cmds)
			return 2
		}
		args = []string{args[1], "-h"} // weft help CMD = weft CMD -h
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "weft: unknown command %q\n", args[0])
		usage(stderr, cmds)
		return 2
	}
	if flagAsked(args[1:], "-version", "--version") {
		// llama.cpp's tools take --version anywhere: weft run --version.
		fmt.Fprintf(stdout, "weft %s\n", versionString())
		return 0
	}
	if flagAsked(args[1:], "-h", "-help", "--help") {
		// Help that was asked for goes to stdout, like llama.cpp's.
		stderr = stdout
	}
	if err := c.run(args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if errors.Is(err, errInterrupted) {
			return 130
		}
		fmt.Fprintf(stderr, "weft %s: %v\n", args[0], err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

// flagAsked reports whether a command's arguments hold one of names (such
// as -h, -help and --help) before any "--".
func flagAsked(args []string, names ...string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if slices.Contains(names, a) {
			return true
		}
	}
	return false
}

// versionString is the version, with the module version and VCS revision
// Go recorded in the binary when there is one.
func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		if version == "devel" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			v += " (" + rev + dirty + ")"
		}
		v += " " + bi.GoVersion
	}
	return v
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "weft: LLM inference from YAML model specs")
	fmt.Fprintln(w, "\ncommands:")
	var names []string
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\n`weft help CMD` or `weft CMD -h` lists a command's flags; `weft --version` prints the version.")
}

// setFlags collects repeated --set k=v (also k=v,k2=v2).
type setFlags map[string]string

func (s setFlags) String() string { return "" }

func (s setFlags) Set(v string) error {
	for _, kv := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("--set %q: want key=value", kv)
		}
		s[strings.TrimSpace(k)] = strings.TrimSpace(val)
	}
	return nil
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("weft "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { commandUsage(fs, name) }
	return fs
}

// commandUsage prints a command's synopsis, with its positional
// arguments, then its flags (-x and --x are the same flag).
func commandUsage(fs *flag.FlagSet, name string) {
	w := fs.Output()
	what, synopsis, ok := strings.Cut(commands()[name].summary, ": ")
	if !ok {
		synopsis = "weft " + name + " [flags]"
	}
	fmt.Fprintf(w, "usage: %s\n\n%s.\n\nflags (-x and --x are the same):\n", synopsis, what)
	fs.PrintDefaults()
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}

// parsePositional parses flags that may appear before, between or after
// positional arguments, and returns the positional ones.
func parsePositional(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
