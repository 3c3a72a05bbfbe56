package ops

import "fmt"

// Placement ops are inserted by the scheduler when it splits a graph over
// devices (--devices); a spec does not name them.
func placementDefs() []*Def {
	return []*Def{
		{Name: "copy", Doc: "Moves an activation from one device to another (inserted where a value crosses a device boundary).",
			Inputs: x1("x"), Outputs: outPort, RowWise: true,
			Attrs: []AttrDef{{Name: "from", Type: AttrString, Required: true, Doc: "the device holding x"},
				{Name: "to", Type: AttrString, Required: true, Doc: "the device that reads the result"}},
			Shape: sameAsFirst},
		{Name: "all_reduce", Doc: "Sums the partial results of a tensor-split sub-layer, one per device, and gives every device the sum (in device order, the same bits everywhere).",
			Inputs: []Port{{Name: "x", Variadic: true}}, RowWise: true,
			Attrs: []AttrDef{{Name: "devices", Type: AttrString, Required: true, Doc: "the devices joined by &, in the order of the inputs and outputs"}},
			Shape: shapeAllReduce},
	}
}

func shapeAllReduce(in []*Type, _ Attrs) ([]Type, error) {
	if len(in) < 2 {
		return nil, fmt.Errorf("all_reduce needs at least two inputs, got %d", len(in))
	}
	out := make([]Type, len(in))
	for i, t := range in {
		if t == nil {
			return nil, fmt.Errorf("missing input %d", i)
		}
		if err := act(t, "x"); err != nil {
			return nil, err
		}
		if !t.Shape.Equal(in[0].Shape) {
			return nil, fmt.Errorf("input %d is %s, input 0 is %s", i, t.Shape, in[0].Shape)
		}
		out[i] = *t
	}
	return out, nil
}
