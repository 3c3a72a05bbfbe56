package ops

import (
	"sort"

	"github.com/weftrun/weft/tensor"
)

// StepInput describes one of the per-step inputs a graph may read: the
// scheduler fills it for every token of a step.
type StepInput struct {
	Name string
	Type Type
	Doc  string
}

// stepInputs are the inputs the scheduler knows how to fill. Each is one
// i32 per token of the step.
var stepInputs = []StepInput{
	{Name: "tokens", Type: Type{DType: tensor.I32, Shape: Shape{Tokens}}, Doc: "token ids"},
	{Name: "pos", Type: Type{DType: tensor.I32, Shape: Shape{Tokens}}, Doc: "each token's position in its sequence (0-based)"},
	{Name: "seq", Type: Type{DType: tensor.I32, Shape: Shape{Tokens}}, Doc: "each token's sequence id within the step"},
	{Name: "token_types", Type: Type{DType: tensor.I32, Shape: Shape{Tokens}}, Doc: "each token's segment (BERT token type); 0 unless the request sets them"},
}

// LookupStepInput returns the step input called name.
func LookupStepInput(name string) (StepInput, bool) {
	for _, s := range stepInputs {
		if s.Name == name {
			return s, true
		}
	}
	return StepInput{}, false
}

// StepInputs returns the known step inputs, sorted by name.
func StepInputs() []StepInput {
	out := append([]StepInput(nil), stepInputs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// StepInputNames returns the names of the known step inputs, sorted.
func StepInputNames() []string {
	var out []string
	for _, s := range StepInputs() {
		out = append(out, s.Name)
	}
	return out
}
