package specs_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/specs"
)

var update = flag.Bool("update", false, "rewrite the generated op reference in docs/spec.md")

const (
	docPath  = "../docs/spec.md"
	opsBegin = "<!-- BEGIN OPS: generated from the op registry by `go test ./specs -run TestSpecDoc -update`; do not edit -->\n"
	opsEnd   = "<!-- END OPS -->\n"
)

// opReference renders every op of reg as Markdown.
func opReference(reg *ops.Registry) string {
	var b strings.Builder
	for _, name := range reg.Names() {
		d, _ := reg.Lookup(name)
		fmt.Fprintf(&b, "### `%s`\n\n%s\n\n", d.Name, d.Doc)
		var ins []string
		for _, p := range d.Inputs {
			s := "`" + p.Name + "`"
			var tags []string
			if p.Weight {
				tags = append(tags, "weight")
			}
			if p.Optional {
				tags = append(tags, "optional")
			}
			if p.Variadic {
				tags = append(tags, "one or more")
			}
			if p.Doc != "" {
				tags = append(tags, p.Doc)
			}
			if len(tags) > 0 {
				s += " (" + strings.Join(tags, ", ") + ")"
			}
			ins = append(ins, s)
		}
		outs := "one per piece"
		if len(d.Outputs) > 0 {
			var o []string
			for _, p := range d.Outputs {
				o = append(o, "`"+p.Name+"`")
			}
			outs = strings.Join(o, ", ")
		} else if len(d.Inputs) > 0 && d.Inputs[len(d.Inputs)-1].Variadic {
			outs = "one per weight"
		}
		fmt.Fprintf(&b, "- inputs: %s\n- outputs: %s\n", strings.Join(ins, ", "), outs)
		var kind []string
		if d.RowWise {
			kind = append(kind, "row-wise")
		}
		if d.Stateful {
			kind = append(kind, "stateful (one KV-cache slot per node)")
		}
		if len(kind) > 0 {
			fmt.Fprintf(&b, "- %s\n", strings.Join(kind, ", "))
		}
		if len(d.Attrs) > 0 {
			b.WriteString("\n| attribute | type | default | values | meaning |\n|---|---|---|---|---|\n")
			for _, a := range d.Attrs {
				def := "required"
				if !a.Required {
					def = fmt.Sprintf("`%v`", a.Default)
				}
				vals := ""
				if len(a.Enum) > 0 {
					vals = "`" + strings.Join(a.Enum, "`, `") + "`"
				}
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", a.Name, a.Type, def, vals, a.Doc)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestSpecDoc keeps docs/spec.md true to the op registry: its op
// reference must be exactly what the registry generates, and every
// built-in spec must be named.
func TestSpecDoc(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(opsBegin)), bytes.Index(doc, []byte(opsEnd))
	if i < 0 || j < i {
		t.Fatalf("%s: no generated op section (markers %q … %q)", docPath, opsBegin, opsEnd)
	}
	want := opReference(ops.Builtins())
	got := string(doc[i+len(opsBegin) : j])
	if got != want {
		if *update {
			out := append(append(append([]byte(nil), doc[:i+len(opsBegin)]...), want...), doc[j:]...)
			if err := os.WriteFile(docPath, out, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote the op reference in %s", docPath)
		} else {
			t.Errorf("%s: the op reference is out of date with the registry; run go test ./specs -run TestSpecDoc -update", docPath)
		}
	}
	// Every op and attribute must appear in the reference (also covers a
	// hand-edited section that happens to be equal).
	reg := ops.Builtins()
	for _, name := range reg.Names() {
		d, _ := reg.Lookup(name)
		sec := section(want, "### `"+name+"`")
		if sec == "" {
			t.Errorf("op %s is not documented", name)
		}
		for _, a := range d.Attrs {
			if !strings.Contains(sec, "| `"+a.Name+"` |") {
				t.Errorf("attribute %s of %s is not documented", a.Name, name)
			}
		}
	}
	for _, n := range specs.Builtin() {
		if !bytes.Contains(doc, []byte("specs/"+n+".yaml")) {
			t.Errorf("%s does not mention specs/%s.yaml", docPath, n)
		}
	}
}

func section(doc, heading string) string {
	i := strings.Index(doc, heading+"\n")
	if i < 0 {
		return ""
	}
	rest := doc[i+len(heading):]
	if j := strings.Index(rest, "\n### "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}
