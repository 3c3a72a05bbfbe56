package convert

import (
	"fmt"
	"strings"

	"github.com/weftrun/weft/gguf"
	"github.com/weftrun/weft/tensor"
)

// Preset is one of llama.cpp's quantization mixes (a llama_ftype): a base
// type for the 2-D weights and per-tensor rules that give some tensors
// more bits (the output and attention value projections, some layers'
// FFN down projections). Quantize with a preset writes what llama.cpp's
// llama-quantize writes for the same name, byte for byte, when no
// importance matrix is given.
type Preset struct {
	Name     string       // llama.cpp's name, e.g. "Q4_K_M"
	FileType uint32       // general.file_type (llama_ftype)
	Base     tensor.DType // the type of the weights no rule moves
	Alias    string       // for an alias ("Q4_K"), the preset it names
}

// Presets lists llama.cpp's quantization mixes weft writes, in the order
// weft quantize --help lists them. The numbers are llama_ftype's.
var presets = []Preset{
	{Name: "F32", FileType: 0, Base: tensor.F32},
	{Name: "F16", FileType: 1, Base: tensor.F16},
	{Name: "BF16", FileType: 32, Base: tensor.BF16},
	{Name: "Q8_0", FileType: 7, Base: tensor.Q8_0},
	{Name: "Q5_1", FileType: 9, Base: tensor.Q5_1},
	{Name: "Q5_0", FileType: 8, Base: tensor.Q5_0},
	{Name: "Q4_1", FileType: 3, Base: tensor.Q4_1},
	{Name: "Q4_0", FileType: 2, Base: tensor.Q4_0},
	{Name: "Q6_K", FileType: 18, Base: tensor.Q6_K},
	{Name: "Q5_K_M", FileType: 17, Base: tensor.Q5_K},
	{Name: "Q5_K_S", FileType: 16, Base: tensor.Q5_K},
	{Name: "Q5_K", FileType: 17, Base: tensor.Q5_K, Alias: "Q5_K_M"},
	{Name: "Q4_K_M", FileType: 15, Base: tensor.Q4_K},
	{Name: "Q4_K_S", FileType: 14, Base: tensor.Q4_K},
	{Name: "Q4_K", FileType: 15, Base: tensor.Q4_K, Alias: "Q4_K_M"},
	{Name: "Q3_K_L", FileType: 13, Base: tensor.Q3_K},
	{Name: "Q3_K_M", FileType: 12, Base: tensor.Q3_K},
	{Name: "Q3_K_S", FileType: 11, Base: tensor.Q3_K},
	{Name: "Q3_K", FileType: 12, Base: tensor.Q3_K, Alias: "Q3_K_M"},
	{Name: "Q2_K", FileType: 10, Base: tensor.Q2_K},
	{Name: "IQ4_NL", FileType: 25, Base: tensor.IQ4_NL},
}

// Presets returns llama.cpp's quantization mixes that weft writes.
func Presets() []Preset { return append([]Preset(nil), presets...) }

// LookupPreset finds a preset by llama.cpp's name (any case). An alias
// (Q3_K, Q4_K, Q5_K) returns the preset it names, as llama-quantize reads
// it.
func LookupPreset(name string) (Preset, bool) {
	for _, p := range presets {
		if strings.EqualFold(p.Name, name) {
			if p.Alias != "" {
				return LookupPreset(p.Alias)
			}
			return p, true
		}
	}
	return Preset{}, false
}

// mixState is what llama.cpp's rules know of the model and how far the
// walk over its tensors has gone (quantize_state_impl).
type mixState struct {
	arch       string
	nLayer     int
	gqa        int // query heads per KV head (0 when there are no KV heads)
	nExpert    int
	is70B      bool
	hasOutput  bool
	nAttnV     int
	iAttnV     int
	iFFNDown   int
	iFFNGate   int
	iFFNUp     int
	outputName string
}

func newMixState(in *gguf.File) *mixState {
	arch := in.Architecture()
	geti := func(key string) int {
		if v, ok := in.Meta.Int(arch + "." + key); ok {
			return int(v)
		}
		if vs, ok := in.Meta.Ints(arch + "." + key); ok && len(vs) > 0 {
			return int(vs[0])
		}
		return 0
	}
	st := &mixState{arch: arch, nLayer: geti("block_count"), nExpert: max(1, geti("expert_count")), outputName: "output.weight"}
	nHead := geti("attention.head_count")
	nKV := nHead
	if _, ok := in.Meta[arch+".attention.head_count_kv"]; ok {
		nKV = geti("attention.head_count_kv")
	}
	if nKV > 0 {
		st.gqa = nHead / nKV
	}
	// llama.cpp sizes a Llama of 80 layers with grouped KV heads as 70B,
	// whose value projections get more bits.
	st.is70B = arch == "llama" && st.nLayer == 80 && nHead != nKV
	for _, ti := range in.Tensors {
		switch {
		case strings.Contains(ti.Name, "attn_v.weight"), strings.Contains(ti.Name, "attn_qkv.weight"),
			strings.Contains(ti.Name, "attn_kv_b.weight"):
			st.nAttnV++
		case ti.Name == st.outputName:
			st.hasOutput = true
		}
	}
	return st
}

// quantizable reports whether llama-quantize quantizes a tensor at all:
// 2-D (or 3-D) weights other than norms, MoE gates, position and token
// type embeddings and a few small recurrent-model tensors.
func quantizable(name string, shape []int) bool {
	if !strings.HasSuffix(name, "weight") || len(shape) < 2 {
		return false
	}
	for _, s := range []string{"_norm.weight", "ffn_gate_inp.weight", "ssm_conv1d.weight", "time_mix_first.weight",
		"time_mix_w1.weight", "time_mix_w2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
		"time_mix_lerp_fused.weight", "attn_rel_b.weight"} {
		if strings.Contains(name, s) {
			return false
		}
	}
	return name != "position_embd.weight" && name != "token_types.weight"
}

// moreBits is llama.cpp's use_more_bits: the first and last eighth of the
// layers and every third layer between.
func moreBits(i, n int) bool { return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2 }

// layerOf returns the layer a per-layer tensor belongs to: the running
// count i, or for a mixture of experts (whose tensors do not come one per
// layer) the number in its blk.N. name.
func (st *mixState) layerOf(i int, name string) (int, error) {
	if st.nExpert <= 1 {
		return i, nil
	}
	var l int
	if _, err := fmt.Sscanf(name, "blk.%d.", &l); err != nil {
		return 0, fmt.Errorf("tensor %s: no layer number in its name", name)
	}
	if l < 0 || l >= st.nLayer {
		return 0, fmt.Errorf("tensor %s: layer %d is outside 0..%d", name, l, st.nLayer-1)
	}
	return l, nil
}

// tensorType is llama.cpp's llama_tensor_get_type for the presets weft
// has: the type of one quantizable tensor. Tensors must come in the order
// of llamaOrder, as the running counts depend on it.
func (p Preset) tensorType(st *mixState, name string, shape []int) (tensor.DType, error) {
	t := p.Base
	ft := p.Name
	falcon := st.arch == "falcon"
	nx := shape[len(shape)-1]
	switch {
	case name == st.outputName || (!st.hasOutput && name == "token_embd.weight"):
		if falcon || nx%t.BlockSize() != 0 {
			t = tensor.Q8_0
		} else if t != tensor.Q8_0 {
			t = tensor.Q6_K
		}
	case name == "token_embd.weight":
	case strings.Contains(name, "attn_v.weight"):
		switch {
		case ft == "Q2_K":
			t = tensor.Q3_K
			if st.gqa >= 4 {
				t = tensor.Q4_K
			}
		case ft == "Q3_K_M":
			t = tensor.Q4_K
			if st.iAttnV < 2 {
				t = tensor.Q5_K
			}
		case ft == "Q3_K_L":
			t = tensor.Q5_K
		case ft == "IQ4_NL" && st.gqa >= 4:
			t = tensor.Q5_K
		case (ft == "Q4_K_M" || ft == "Q5_K_M") && moreBits(st.iAttnV, st.nAttnV):
			t = tensor.Q6_K
		case ft == "Q4_K_S" && st.iAttnV < 4:
			t = tensor.Q5_K
		}
		if st.is70B && (t == tensor.Q3_K || t == tensor.Q4_K) {
			t = tensor.Q5_K
		}
		if st.nExpert == 8 {
			t = tensor.Q8_0
		}
		st.iAttnV++
	case strings.Contains(name, "attn_k.weight"):
		if st.nExpert == 8 {
			t = tensor.Q8_0
		}
	case strings.Contains(name, "attn_q.weight"):
	case strings.Contains(name, "ffn_down"):
		i, err := st.layerOf(st.iFFNDown, name)
		if err != nil {
			return 0, err
		}
		n := st.nLayer
		switch {
		case ft == "Q2_K":
			t = tensor.Q3_K
		case ft == "Q3_K_M":
			switch {
			case i < n/16:
				t = tensor.Q5_K
			case !falcon || moreBits(i, n):
				t = tensor.Q4_K
			default:
				t = tensor.Q3_K
			}
		case ft == "Q3_K_L":
			t = tensor.Q5_K
			if falcon {
				t = tensor.Q4_K
			}
		case ft == "Q4_K_M":
			switch {
			case falcon && i < n/16:
				t = tensor.Q6_K
			case falcon && moreBits(i, n):
				t = tensor.Q5_K
			case falcon:
				t = tensor.Q4_K
			case moreBits(i, n):
				t = tensor.Q6_K
			}
		case i < n/8 && ft == "IQ4_NL":
			t = tensor.Q5_K
		case ft == "Q5_K_M" && moreBits(i, n):
			t = tensor.Q6_K
		case ft == "Q4_K_S" && !falcon && i < n/8:
			t = tensor.Q5_K
		}
		st.iFFNDown++
	case strings.Contains(name, "attn_output.weight"):
		switch {
		case falcon:
			if ft == "Q3_K_L" {
				t = tensor.Q4_K
			}
		case st.nExpert == 8:
			switch ft {
			case "Q2_K", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M":
				t = tensor.Q5_K
			}
		default:
			switch ft {
			case "Q2_K":
				t = tensor.Q3_K
			case "Q3_K_M":
				t = tensor.Q4_K
			case "Q3_K_L":
				t = tensor.Q5_K
			}
		}
	case strings.Contains(name, "attn_qkv.weight"):
		switch ft {
		case "Q3_K_M", "Q3_K_L":
			t = tensor.Q4_K
		case "Q4_K_M":
			t = tensor.Q5_K
		case "Q5_K_M":
			t = tensor.Q6_K
		}
	case strings.Contains(name, "ffn_gate"):
		st.iFFNGate++
	case strings.Contains(name, "ffn_up"):
		st.iFFNUp++
	}
	return fallbackType(t, nx), nil
}

// fallbackType is llama.cpp's replacement for a type whose blocks do not
// divide a row of nx values (K-quants need 256): Q2_K and Q3_K become
// IQ4_NL, Q4_K Q5_0, Q5_K Q5_1, Q6_K Q8_0, and F16 if that still does not
// fit. Where llama-quantize gives up (a 32-value type that does not divide
// the row), weft stores F32.
func fallbackType(t tensor.DType, nx int) tensor.DType {
	if nx%t.BlockSize() == 0 {
		return t
	}
	switch t {
	case tensor.Q2_K, tensor.Q3_K:
		t = tensor.IQ4_NL
	case tensor.Q4_K:
		t = tensor.Q5_0
	case tensor.Q5_K:
		t = tensor.Q5_1
	case tensor.Q6_K:
		t = tensor.Q8_0
	default:
		return tensor.F32
	}
	if nx%t.BlockSize() != 0 {
		return tensor.F16
	}
	return t
}

// llamaLess orders tensors as llama.cpp's model loader keeps them, and so
// as llama-quantize writes them: tensors outside the blocks first, then
// block by block, by name within each.
func llamaLess(a, b string) bool {
	la, lb := blockOf(a), blockOf(b)
	if la != lb {
		return la < lb
	}
	return a < b
}

// blockOf returns N of a name that starts "blk.N.", else -1.
func blockOf(name string) int {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return -1
	}
	n, digits := 0, 0
	for _, c := range rest {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
		digits++
		if n > 1<<30 {
			return -1
		}
	}
	if digits == 0 {
		return -1
	}
	return n
}
