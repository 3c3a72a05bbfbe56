package plugins

import (
	"errors"
	"fmt"
	"strings"

	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/specs"
)

// Unstarted is the plugin loader of commands that only draw or inspect a
// graph (weft graph): it starts no plugin, not even one from a plugin
// directory. Each op the spec calls that is neither built in nor a block
// gets a placeholder definition: the inputs and attributes the spec gives
// it, and outputs of its first input's type (the shape a plugin op most
// often has; the real rule is known only to the running plugin). A
// placeholder has no Host function, so it cannot run, and graph's
// Node.NotStarted reports it.
type Unstarted struct{}

// Load refuses: placeholders are made from the whole spec (LoadSpec).
func (Unstarted) Load([]*specs.PluginDecl, *ops.Registry) error {
	return errors.New("plugins: Unstarted needs the spec (LoadSpec)")
}

// LoadSpec registers a placeholder into reg for every op sp calls that reg
// lacks, when sp names plugins. An op of a spec without plugins stays
// unknown (the builder reports it).
func (Unstarted) LoadSpec(sp *specs.Spec, reg *ops.Registry) error {
	if len(sp.Plugins) == 0 {
		return nil
	}
	names := make([]string, len(sp.Plugins))
	for i, d := range sp.Plugins {
		names[i] = d.Name
	}
	owner := strings.Join(names, "|")
	for _, u := range sp.UnknownOps(reg) {
		if err := reg.Register(placeholder(u, owner)); err != nil {
			return fmt.Errorf("%s: %w", u.Pos, err)
		}
	}
	return nil
}

// placeholder is the stand-in definition for an op of a plugin not
// started.
func placeholder(u specs.OpUse, owner string) *ops.Def {
	d := &ops.Def{
		Name:   u.Name,
		Doc:    "an op of plugin " + owner + ", not started: its outputs are drawn with its first input's type",
		Plugin: owner,
	}
	for i := range u.Inputs {
		d.Inputs = append(d.Inputs, ops.Port{Name: fmt.Sprintf("in%d", i), Optional: true})
	}
	for i := range u.Outputs {
		d.Outputs = append(d.Outputs, ops.Port{Name: fmt.Sprintf("out%d", i)})
	}
	for _, a := range u.Attrs {
		d.Attrs = append(d.Attrs, ops.AttrDef{Name: a, Type: ops.AttrAny})
	}
	outs := len(d.Outputs)
	d.Shape = func(in []*ops.Type, _ ops.Attrs) ([]ops.Type, error) {
		for _, t := range in {
			if t != nil {
				res := make([]ops.Type, outs)
				for i := range res {
					res[i] = *t
				}
				return res, nil
			}
		}
		return nil, fmt.Errorf("%s: a placeholder for an op of a plugin not started needs an input to take its type from", u.Name)
	}
	return d
}
