package specs

import (
	"fmt"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

func rowBytes(t *tensor.Tensor) (int, int, error) {
	if len(t.Shape) != 2 {
		return 0, 0, fmt.Errorf("tensor %s: shape %v is not a matrix", t.Name, t.Shape)
	}
	rb, err := t.DType.RowBytes(t.Shape[1])
	if err != nil {
		return 0, 0, fmt.Errorf("tensor %s: %w", t.Name, err)
	}
	if len(t.Data) != rb*t.Shape[0] {
		return 0, 0, fmt.Errorf("tensor %s: %d bytes, want %d", t.Name, len(t.Data), rb*t.Shape[0])
	}
	return t.Shape[0], rb, nil
}

// Rows returns rows [start, start+count) of a matrix, without copying
// (used to split a fused QKV projection). On a vector (a fused bias) it
// returns elements [start, start+count) of a plain-typed vector.
func Rows(t *tensor.Tensor, start, count int) (*tensor.Tensor, error) {
	if len(t.Shape) == 1 {
		return elements(t, start, count)
	}
	rows, rb, err := rowBytes(t)
	if err != nil {
		return nil, err
	}
	if start < 0 || count <= 0 || start+count > rows {
		return nil, fmt.Errorf("rows(%d, %d) outside the %d rows of %s", start, count, rows, t.Name)
	}
	return &tensor.Tensor{Name: t.Name, DType: t.DType, Shape: []int{count, t.Shape[1]}, Data: t.Data[start*rb : (start+count)*rb]}, nil
}

// RoPEPermute reorders the rows of a query or key projection from the
// rotate-half RoPE convention (Hugging Face) to adjacent pairs (GGUF,
// llama2.c): within each head, row s·(d/2)+j moves to 2j+s.
func RoPEPermute(t *tensor.Tensor, heads int) (*tensor.Tensor, error) {
	rows, rb, err := rowBytes(t)
	if err != nil {
		return nil, err
	}
	if heads <= 0 || rows%heads != 0 || (rows/heads)%2 != 0 {
		return nil, fmt.Errorf("%d rows do not split into %d heads of even size", rows, heads)
	}
	hd := rows / heads
	out := make([]byte, len(t.Data))
	for h := 0; h < heads; h++ {
		for s := 0; s < 2; s++ {
			for j := 0; j < hd/2; j++ {
				src := h*hd + s*(hd/2) + j
				dst := h*hd + 2*j + s
				copy(out[dst*rb:(dst+1)*rb], t.Data[src*rb:(src+1)*rb])
			}
		}
	}
	return &tensor.Tensor{Name: t.Name, DType: t.DType, Shape: append([]int(nil), t.Shape...), Data: out}, nil
}

// RoPEUnpermute is the inverse of RoPEPermute (adjacent pairs → rotate-half).
func RoPEUnpermute(t *tensor.Tensor, heads int) (*tensor.Tensor, error) {
	rows, rb, err := rowBytes(t)
	if err != nil {
		return nil, err
	}
	if heads <= 0 || rows%heads != 0 || (rows/heads)%2 != 0 {
		return nil, fmt.Errorf("%d rows do not split into %d heads of even size", rows, heads)
	}
	hd := rows / heads
	out := make([]byte, len(t.Data))
	for h := 0; h < heads; h++ {
		for s := 0; s < 2; s++ {
			for j := 0; j < hd/2; j++ {
				dst := h*hd + s*(hd/2) + j
				src := h*hd + 2*j + s
				copy(out[dst*rb:(dst+1)*rb], t.Data[src*rb:(src+1)*rb])
			}
		}
	}
	return &tensor.Tensor{Name: t.Name, DType: t.DType, Shape: append([]int(nil), t.Shape...), Data: out}, nil
}

// Transpose transposes a plain-typed (f32, f16, bf16) matrix.
func Transpose(t *tensor.Tensor) (*tensor.Tensor, error) {
	if t.DType.Quantized() {
		return nil, fmt.Errorf("cannot transpose %s tensor %s", t.DType, t.Name)
	}
	rows, _, err := rowBytes(t)
	if err != nil {
		return nil, err
	}
	cols := t.Shape[1]
	es := t.DType.TypeSize()
	out := make([]byte, len(t.Data))
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			copy(out[(c*rows+r)*es:(c*rows+r+1)*es], t.Data[(r*cols+c)*es:(r*cols+c+1)*es])
		}
	}
	return &tensor.Tensor{Name: t.Name, DType: t.DType, Shape: []int{cols, rows}, Data: out}, nil
}

func elements(t *tensor.Tensor, start, count int) (*tensor.Tensor, error) {
	if t.DType.Quantized() {
		return nil, fmt.Errorf("cannot slice %s vector %s", t.DType, t.Name)
	}
	n, es := t.Shape[0], t.DType.TypeSize()
	if len(t.Data) != n*es {
		return nil, fmt.Errorf("tensor %s: %d bytes, want %d", t.Name, len(t.Data), n*es)
	}
	if start < 0 || count <= 0 || start+count > n {
		return nil, fmt.Errorf("rows(%d, %d) outside the %d elements of %s", start, count, n, t.Name)
	}
	return &tensor.Tensor{Name: t.Name, DType: t.DType, Shape: []int{count}, Data: t.Data[start*es : (start+count)*es]}, nil
}

// Stack joins tensors of one type and shape along a new first dimension:
// n pieces of shape S give one tensor of shape [n, S...] (HF's per-expert
// weights as the stacked [experts, rows, cols] tensor moe reads).
func Stack(name string, pieces []*tensor.Tensor) (*tensor.Tensor, error) {
	if len(pieces) == 0 {
		return nil, fmt.Errorf("no tensors to stack")
	}
	p0 := pieces[0]
	size := len(p0.Data)
	for i, p := range pieces[1:] {
		if p.DType != p0.DType || !sameDims(p.Shape, p0.Shape) || len(p.Data) != size {
			return nil, fmt.Errorf("piece %d is %s%v, piece 0 %s%v", i+1, p.DType, p.Shape, p0.DType, p0.Shape)
		}
	}
	data := make([]byte, 0, size*len(pieces))
	for _, p := range pieces {
		data = append(data, p.Data...)
	}
	return &tensor.Tensor{Name: name, DType: p0.DType, Shape: append([]int{len(pieces)}, p0.Shape...), Data: data}, nil
}

// AddOne returns 1 + w as f32 for a plain-typed (f32, f16, bf16) tensor:
// Gemma's RMSNorm multiplies by (1 + w) and HF checkpoints store w,
// where llama.cpp's converter writes 1 + w into the GGUF.
func AddOne(t *tensor.Tensor) (*tensor.Tensor, error) {
	n := t.Elems()
	var get func(i int) float32
	switch t.DType {
	case tensor.F32:
		if len(t.Data) != 4*n {
			return nil, fmt.Errorf("tensor %s: %d bytes, want %d", t.Name, len(t.Data), 4*n)
		}
		f := tensor.BytesToF32(t.Data)
		get = func(i int) float32 { return f[i] }
	case tensor.F16, tensor.BF16:
		if len(t.Data) != 2*n {
			return nil, fmt.Errorf("tensor %s: %d bytes, want %d", t.Name, len(t.Data), 2*n)
		}
		conv := quant.FromF16
		if t.DType == tensor.BF16 {
			conv = quant.FromBF16
		}
		get = func(i int) float32 { return conv(uint16(t.Data[2*i]) | uint16(t.Data[2*i+1])<<8) }
	default:
		return nil, fmt.Errorf("cannot add 1 to %s tensor %s", t.DType, t.Name)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = 1 + get(i)
	}
	return tensor.FromF32(t.Name, out, append([]int(nil), t.Shape...)...), nil
}

// Flatten returns t as a vector of all its elements, without copying
// (HF Qwen2-MoE's shared-expert gate is [1, hidden], GGUF's [hidden]).
func Flatten(t *tensor.Tensor) (*tensor.Tensor, error) {
	n := t.Elems()
	rb, err := t.DType.RowBytes(n)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", t.Name, err)
	}
	if len(t.Data) != rb {
		return nil, fmt.Errorf("tensor %s: %d bytes, want %d", t.Name, len(t.Data), rb)
	}
	return &tensor.Tensor{Name: t.Name, DType: t.DType, Shape: []int{n}, Data: t.Data}, nil
}

// qkvRows returns the rows of a fused QKV weight (a matrix) or bias (a
// plain-typed vector: one element a row) and each row's bytes.
func qkvRows(t *tensor.Tensor) (int, int, error) {
	if len(t.Shape) == 1 {
		es, err := t.DType.RowBytes(1)
		if err != nil || len(t.Data) != es*t.Shape[0] {
			return 0, 0, fmt.Errorf("tensor %s: a %s vector of %d elements cannot be regrouped", t.Name, t.DType, t.Shape[0])
		}
		return t.Shape[0], es, nil
	}
	return rowBytes(t)
}

// QKVGroups reorders a fused QKV projection (weight rows or bias
// elements) from Hugging Face's grouped layout to GGUF's [Q; K; V]: HF
// keeps `groups` groups (the key/value heads), each of heads/groups query
// heads, then one key head and one value head, every head head_dim rows
// (head_dim = rows / (heads + 2·groups)). BLOOM, GPT-NeoX and Falcon
// without multi-query interleave per head (groups = heads: q, k, v of
// head 0, then head 1, ...); Falcon-40B's new decoder architecture has
// groups = kv_heads; Falcon-7B's multi-query groups = 1 is already [Q; K; V].
func QKVGroups(t *tensor.Tensor, groups, heads int) (*tensor.Tensor, error) {
	return qkvRegroup(t, groups, heads, false)
}

// QKVUngroups is the inverse of QKVGroups ([Q; K; V] → HF's groups).
func QKVUngroups(t *tensor.Tensor, groups, heads int) (*tensor.Tensor, error) {
	return qkvRegroup(t, groups, heads, true)
}

func qkvRegroup(t *tensor.Tensor, groups, heads int, inverse bool) (*tensor.Tensor, error) {
	rows, rb, err := qkvRows(t)
	if err != nil {
		return nil, err
	}
	if groups <= 0 || heads <= 0 || heads%groups != 0 || rows%(heads+2*groups) != 0 {
		return nil, fmt.Errorf("tensor %s: %d rows do not split into %d query heads and %d key/value groups", t.Name, rows, heads, groups)
	}
	d, per := rows/(heads+2*groups), heads/groups
	out := make([]byte, len(t.Data))
	move := func(src, dst int) { // head src of HF's layout is head dst of GGUF's
		if inverse {
			src, dst = dst, src
		}
		copy(out[dst*d*rb:(dst+1)*d*rb], t.Data[src*d*rb:(src+1)*d*rb])
	}
	for g := 0; g < groups; g++ {
		base := g * (per + 2)
		for j := 0; j < per; j++ {
			move(base+j, g*per+j) // query head g·per+j
		}
		move(base+per, heads+g)          // key head g
		move(base+per+1, heads+groups+g) // value head g
	}
	return &tensor.Tensor{Name: t.Name, DType: t.DType, Shape: append([]int(nil), t.Shape...), Data: out}, nil
}
