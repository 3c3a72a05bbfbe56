package cpudev

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
)

// attendRef is softmax(scale·q·kᵀ + bias)·v for one head, written out in
// float64; k and v are rows of width stride read at offset off.
func attendRef(q []float32, k, v []float32, stride, off, n int, scale float64, bias func(j int) float64) []float64 {
	hd := len(q)
	s := make([]float64, n)
	mx := math.Inf(-1)
	for j := 0; j < n; j++ {
		for d := 0; d < hd; d++ {
			s[j] += float64(q[d]) * float64(k[j*stride+off+d])
		}
		s[j] = s[j]*scale + bias(j)
		mx = math.Max(mx, s[j])
	}
	var sum float64
	for j := range s {
		s[j] = math.Exp(s[j] - mx)
		sum += s[j]
	}
	out := make([]float64, hd)
	for d := range out {
		for j := 0; j < n; j++ {
			out[d] += s[j] / sum * float64(v[j*stride+off+d])
		}
	}
	return out
}

func matT(m []float32, rows, cols int, w []float32, outs int) []float32 {
	o := make([]float32, rows*outs)
	for r := 0; r < rows; r++ {
		for c := 0; c < outs; c++ {
			var s float64
			for i := 0; i < cols; i++ {
				s += float64(m[r*cols+i]) * float64(w[c*cols+i])
			}
			o[r*outs+c] = float32(s)
		}
	}
	return o
}

// TestCrossAttention: tokens of two sequences attend over their own
// encoder memories; the memories' K/V projections are made once per
// memory and call site (a later change to a memory's data is not seen);
// a token without memory, or a memory of the wrong width, is an error.
func TestCrossAttention(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const heads, kvh, hd, width = 4, 2, 3, 5
	memA, err := backend.NewMemory(randVec(r, 4*width), 4, width)
	if err != nil {
		t.Fatal(err)
	}
	memB, _ := backend.NewMemory(randVec(r, 2*width), 2, width)
	wk, wv := randVec(r, kvh*hd*width), randVec(r, kvh*hd*width)
	const n = 3
	q := randVec(r, n*heads*hd)
	st := &backend.Step{Memory: []*backend.Memory{memA, memA, memB}}
	reg := ops.Builtins()
	d, _ := reg.Lookup("cross_attention")
	out := tensor.NewF32("out", n, heads*hd)
	pool := cpu.NewPool(2)
	defer pool.Close()
	call := &Call{Name: "c", Attrs: ops.Attrs{"heads": int64(heads), "kv_heads": int64(kvh), "scale": 0.5}, Step: st, Pool: pool,
		In:  []*tensor.Tensor{act2("q", n, heads*hd, q), act2("wk", kvh*hd, width, wk), act2("wv", kvh*hd, width, wv)},
		Out: []*tensor.Tensor{out}}
	k, ok := KernelFor(d)
	if !ok {
		t.Fatal("no kernel")
	}
	want := make([]float32, n*heads*hd)
	for ti, m := range st.Memory {
		km, vm := matT(m.Data, m.Rows, width, wk, kvh*hd), matT(m.Data, m.Rows, width, wv, kvh*hd)
		for h := 0; h < heads; h++ {
			o := attendRef(q[(ti*heads+h)*hd:(ti*heads+h+1)*hd], km, vm, kvh*hd, (h/(heads/kvh))*hd, m.Rows, 0.5, func(int) float64 { return 0 })
			for i, x := range o {
				want[(ti*heads+h)*hd+i] = float32(x)
			}
		}
	}
	for round := 0; round < 2; round++ {
		if err := k(call); err != nil {
			t.Fatal(err)
		}
		near(t, "cross_attention", out.F32(), want, 1e-5)
		memA.Data[0] += 100 // the projections were kept: no effect
	}
	st.Memory = st.Memory[:2]
	if err := k(call); err == nil || !strings.Contains(err.Error(), "encoder output") {
		t.Errorf("missing memory: %v", err)
	}
	wide, _ := backend.NewMemory(randVec(r, 2*(width+1)), 2, width+1)
	st.Memory = []*backend.Memory{wide, wide, wide}
	if err := k(call); err == nil || !strings.Contains(err.Error(), "features") {
		t.Errorf("memory of the wrong width: %v", err)
	}
}

// TestAttentionRelBias checks attention with T5's relative-position bias
// (unscaled, bidirectional and causal) against the sum written out.
func TestAttentionRelBias(t *testing.T) {
	reg := ops.Builtins()
	r := rand.New(rand.NewPCG(5, 6))
	const heads, hd, n, buckets = 2, 4, 11, 8
	q, kx, vx := randVec(r, n*heads*hd), randVec(r, n*heads*hd), randVec(r, n*heads*hd)
	table := randVec(r, buckets*heads)
	// The table as GGUFs of T5 store it, f16: the kernel widens it.
	t16 := &tensor.Tensor{Name: "rel_bias", DType: tensor.F16, Shape: []int{buckets, heads}, Data: make([]byte, 2*buckets*heads)}
	for i, x := range table {
		h := quant.ToF16(x)
		t16.Data[2*i], t16.Data[2*i+1] = byte(h), byte(h>>8)
		table[i] = quant.FromF16(h)
	}
	for _, tc := range []struct {
		causal bool
		table  *tensor.Tensor
	}{{false, act2("rel_bias", buckets, heads, table)}, {true, act2("rel_bias", buckets, heads, table)}, {false, t16}, {true, t16}} {
		causal := tc.causal
		cache := NewKVCache([]int{heads * hd}, KVF32)
		cache.SetBlock(0, 16)
		step := &kvStep{Step: backend.Step{Views: [][]backend.KVRun{{{Block: 0, N: 16}}}}, kv: cache}
		for i := 0; i < n; i++ {
			step.Pos = append(step.Pos, int32(i))
			step.Seq = append(step.Seq, 0)
			step.Loc = append(step.Loc, backend.KVLoc{Block: 0, Row: int32(i)})
			step.View = append(step.View, 0)
			step.Len = append(step.Len, int32(i+1))
		}
		out := tensor.NewF32("out", n, heads*hd)
		run(t, reg, "attention", step, ops.Attrs{"heads": int64(heads), "causal": causal, "scale": 1.0, "max_distance": int64(20)}, []*tensor.Tensor{out},
			act2("q", n, heads*hd, q), act2("k", n, heads*hd, kx), act2("v", n, heads*hd, vx), tc.table)
		want := make([]float32, n*heads*hd)
		for ti := 0; ti < n; ti++ {
			seen := n
			if causal {
				seen = ti + 1
			}
			for h := 0; h < heads; h++ {
				bias := func(j int) float64 {
					return float64(table[cpu.RelPosBucket(j-ti, buckets, 20, !causal)*heads+h])
				}
				o := attendRef(q[(ti*heads+h)*hd:(ti*heads+h+1)*hd], kx, vx, heads*hd, h*hd, seen, 1, bias)
				for i, x := range o {
					want[(ti*heads+h)*hd+i] = float32(x)
				}
			}
		}
		near(t, "attention with rel_bias", out.F32(), want, 1e-5)
	}
}
