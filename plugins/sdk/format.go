package sdk

import (
	"fmt"
	"strings"
)

// formatSchema describes an op for people (--describe).
func formatSchema(op Op) string {
	s := op.Schema()
	var b strings.Builder
	fmt.Fprintf(&b, "%s", s.Name)
	if s.Doc != "" {
		fmt.Fprintf(&b, ": %s", s.Doc)
	}
	b.WriteString("\n")
	for i, in := range s.Inputs {
		var tags []string
		if in.Weight {
			tags = append(tags, "weight")
		}
		if in.Optional {
			tags = append(tags, "optional")
		}
		fmt.Fprintf(&b, "  input %d  %s", i, in.Name)
		if len(tags) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(tags, ", "))
		}
		if len(in.DTypes) > 0 {
			var dts []string
			for _, dt := range in.DTypes {
				dts = append(dts, dt.String())
			}
			fmt.Fprintf(&b, " %s", strings.Join(dts, "|"))
		}
		if in.Dims != nil {
			fmt.Fprintf(&b, " %s", formatDims(&s, in.Dims))
		}
		if in.Doc != "" {
			fmt.Fprintf(&b, "  %s", in.Doc)
		}
		b.WriteString("\n")
	}
	_, dynamic := op.(Shaper)
	for _, out := range s.Outputs {
		fmt.Fprintf(&b, "  output   %s ", out.Name)
		switch {
		case dynamic:
			b.WriteString("(shape from the plugin's Shape method)")
		case out.Shape.sameAs > 0 && out.Shape.sameAs <= len(s.Inputs):
			fmt.Fprintf(&b, "like %s", s.Inputs[out.Shape.sameAs-1].Name)
		default:
			fmt.Fprintf(&b, "%s %s", out.Shape.dtype, formatDims(&s, out.Shape.dims))
		}
		if out.Doc != "" {
			fmt.Fprintf(&b, "  %s", out.Doc)
		}
		b.WriteString("\n")
	}
	for _, a := range s.Attrs {
		fmt.Fprintf(&b, "  attr     %s %s", a.Name, a.Type)
		switch {
		case a.Required:
			b.WriteString(" (required)")
		case a.Default != nil:
			fmt.Fprintf(&b, " = %v", a.Default)
		}
		if len(a.Enum) > 0 {
			fmt.Fprintf(&b, " {%s}", strings.Join(a.Enum, ", "))
		}
		if a.Doc != "" {
			fmt.Fprintf(&b, "  %s", a.Doc)
		}
		b.WriteString("\n")
	}
	if s.RowWise {
		b.WriteString("  row-wise\n")
	}
	return b.String()
}

func formatDims(s *Schema, dims []Dim) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		switch d.kind {
		case dimAny:
			parts[i] = "*"
		case dimConst:
			parts[i] = fmt.Sprint(d.n)
		case dimInput:
			name := fmt.Sprint(d.input)
			if d.input >= 0 && d.input < len(s.Inputs) {
				name = s.Inputs[d.input].Name
			}
			parts[i] = fmt.Sprintf("%s.dim(%d)", name, d.dim)
		case dimAttr:
			parts[i] = d.attr
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
