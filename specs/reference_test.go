package specs_test

// A float64 reference forward pass, written out from the papers' formulas
// and independent of weft's kernels, ops and specs. Rows are tokens.

import (
	"math"
	"testing"

	"github.com/weftrun/weft/specs"
	"github.com/weftrun/weft/tensor"
)

type mat = [][]float64

// ref reads reference weights from a tensor source.
type ref struct {
	t   *testing.T
	src specs.TensorSource
}

func (r ref) raw(name string) ([]float64, []int) {
	r.t.Helper()
	tt, err := r.src.Tensor(name)
	if err != nil {
		r.t.Fatal(err)
	}
	if tt.DType != tensor.F32 {
		r.t.Fatalf("%s is %s", name, tt.DType)
	}
	f := tensor.BytesToF32(tt.Data)
	out := make([]float64, len(f))
	for i, v := range f {
		out[i] = float64(v)
	}
	return out, tt.Shape
}

func (r ref) vec(name string) []float64 {
	r.t.Helper()
	v, shape := r.raw(name)
	if len(shape) != 1 {
		r.t.Fatalf("%s is %v, want a vector", name, shape)
	}
	return v
}

func (r ref) mat(name string) mat {
	r.t.Helper()
	v, shape := r.raw(name)
	if len(shape) != 2 {
		r.t.Fatalf("%s is %v, want a matrix", name, shape)
	}
	return reshape(v, shape[0], shape[1])
}

// experts returns a stacked [E, rows, cols] tensor as E matrices.
func (r ref) experts(name string) []mat {
	r.t.Helper()
	v, shape := r.raw(name)
	if len(shape) != 3 {
		r.t.Fatalf("%s is %v, want [experts, rows, cols]", name, shape)
	}
	n := shape[1] * shape[2]
	out := make([]mat, shape[0])
	for e := range out {
		out[e] = reshape(v[e*n:(e+1)*n], shape[1], shape[2])
	}
	return out
}

func reshape(v []float64, rows, cols int) mat {
	m := make(mat, rows)
	for i := range m {
		m[i] = v[i*cols : (i+1)*cols]
	}
	return m
}

func embed(table mat, ids []int) mat {
	out := make(mat, len(ids))
	for i, id := range ids {
		out[i] = append([]float64(nil), table[id]...)
	}
	return out
}

// linear computes x·Wᵀ + b for W stored [out, in]; b may be nil.
func linear(x, w mat, b []float64) mat {
	out := make(mat, len(x))
	for t, row := range x {
		out[t] = make([]float64, len(w))
		for o, wr := range w {
			s := 0.0
			for i, v := range row {
				s += v * wr[i]
			}
			if b != nil {
				s += b[o]
			}
			out[t][o] = s
		}
	}
	return out
}

func add(a, b mat) mat {
	out := make(mat, len(a))
	for t := range a {
		out[t] = make([]float64, len(a[t]))
		for i := range a[t] {
			out[t][i] = a[t][i] + b[t][i]
		}
	}
	return out
}

func addVec(a mat, b []float64) mat {
	out := make(mat, len(a))
	for t := range a {
		out[t] = make([]float64, len(a[t]))
		for i := range a[t] {
			out[t][i] = a[t][i] + b[i]
		}
	}
	return out
}

func mul(a, b mat) mat {
	out := make(mat, len(a))
	for t := range a {
		out[t] = make([]float64, len(a[t]))
		for i := range a[t] {
			out[t][i] = a[t][i] * b[t][i]
		}
	}
	return out
}

func apply(x mat, f func(float64) float64) mat {
	out := make(mat, len(x))
	for t := range x {
		out[t] = make([]float64, len(x[t]))
		for i, v := range x[t] {
			out[t][i] = f(v)
		}
	}
	return out
}

func geluTanh(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

func geluErf(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

func silu(x float64) float64 { return x / (1 + math.Exp(-x)) }

// layerNorm: (x - mean) / sqrt(var + eps) · w + b (Ba et al., 2016).
func layerNorm(x mat, w, b []float64, eps float64) mat {
	out := make(mat, len(x))
	for t, row := range x {
		mean := 0.0
		for _, v := range row {
			mean += v
		}
		mean /= float64(len(row))
		vr := 0.0
		for _, v := range row {
			vr += (v - mean) * (v - mean)
		}
		vr /= float64(len(row))
		out[t] = make([]float64, len(row))
		for i, v := range row {
			out[t][i] = (v-mean)/math.Sqrt(vr+eps)*w[i] + b[i]
		}
	}
	return out
}

// rmsNorm: x / sqrt(mean(x²) + eps) · w (Zhang & Sennrich, 2019).
func rmsNorm(x mat, w []float64, eps float64) mat {
	out := make(mat, len(x))
	for t, row := range x {
		ss := 0.0
		for _, v := range row {
			ss += v * v
		}
		s := 1 / math.Sqrt(ss/float64(len(row))+eps)
		out[t] = make([]float64, len(row))
		for i, v := range row {
			out[t][i] = v * s * w[i]
		}
	}
	return out
}

// rope rotates the pairs (x[2j], x[2j+1]) of each head's first dim
// features by pos·base^(-2j/dim) (Su et al., 2021, GGUF pairing).
func rope(x mat, heads, dim int, base float64) mat {
	out := make(mat, len(x))
	hd := len(x[0]) / heads
	for pos, row := range x {
		out[pos] = append([]float64(nil), row...)
		for h := 0; h < heads; h++ {
			for j := 0; j < dim/2; j++ {
				th := float64(pos) * math.Pow(base, -2*float64(j)/float64(dim))
				a, b := row[h*hd+2*j], row[h*hd+2*j+1]
				out[pos][h*hd+2*j] = a*math.Cos(th) - b*math.Sin(th)
				out[pos][h*hd+2*j+1] = a*math.Sin(th) + b*math.Cos(th)
			}
		}
	}
	return out
}

// sinusoidal is Vaswani et al.'s encoding: PE[p, 2j] = sin(p / base^(2j/d)),
// PE[p, 2j+1] = cos(p / base^(2j/d)).
func sinusoidal(n, d int, base float64) mat {
	out := make(mat, n)
	for p := range out {
		out[p] = make([]float64, d)
		for j := 0; j < d/2; j++ {
			a := float64(p) / math.Pow(base, float64(2*j)/float64(d))
			out[p][2*j] = math.Sin(a)
			out[p][2*j+1] = math.Cos(a)
		}
	}
	return out
}

type attnOpts struct {
	heads, kvHeads int
	causal         bool
	alibi          bool // heads must be a power of two
	window         int  // a query sees the last window positions (0: all)
}

// attention is softmax(q·kᵀ/√d + bias)·v per head; query head h reads KV
// head h / (heads/kvHeads). ALiBi's bias for a power-of-two head count H is
// -m_h·(i - j) with m_h = 2^(-8(h+1)/H) (Press et al., 2022).
func attention(q, k, v mat, o attnOpts) mat {
	if o.kvHeads == 0 {
		o.kvHeads = o.heads
	}
	n := len(q)
	hd := len(q[0]) / o.heads
	group := o.heads / o.kvHeads
	out := make(mat, n)
	for i := 0; i < n; i++ {
		out[i] = make([]float64, len(q[0]))
		for h := 0; h < o.heads; h++ {
			kh := h / group
			var js []int
			for j := 0; j < n; j++ {
				if o.causal && j > i || o.window > 0 && i-j >= o.window {
					continue
				}
				js = append(js, j)
			}
			sc := make([]float64, len(js))
			mx := math.Inf(-1)
			for x, j := range js {
				s := 0.0
				for d := 0; d < hd; d++ {
					s += q[i][h*hd+d] * k[j][kh*hd+d]
				}
				s /= math.Sqrt(float64(hd))
				if o.alibi {
					s -= math.Pow(2, -8*float64(h+1)/float64(o.heads)) * float64(i-j)
				}
				sc[x] = s
				mx = math.Max(mx, s)
			}
			sum := 0.0
			for x := range sc {
				sc[x] = math.Exp(sc[x] - mx)
				sum += sc[x]
			}
			for x, j := range js {
				for d := 0; d < hd; d++ {
					out[i][h*hd+d] += sc[x] / sum * v[j][kh*hd+d]
				}
			}
		}
	}
	return out
}

// split cuts the columns of x into consecutive pieces.
func split(x mat, sizes ...int) []mat {
	out := make([]mat, len(sizes))
	for p := range out {
		out[p] = make(mat, len(x))
	}
	for t, row := range x {
		off := 0
		for p, s := range sizes {
			out[p][t] = row[off : off+s]
			off += s
		}
	}
	return out
}

// moe is a top-k mixture of SwiGLU experts (Shazeer et al., 2017; Jiang
// et al., 2024): softmax over all router logits, keep the top k,
// renormalise, and sum the chosen experts' outputs with those weights.
func moe(x, router mat, gate, up, down []mat, k int) mat {
	out := make(mat, len(x))
	for t := range x {
		row := mat{x[t]}
		logits := linear(row, router, nil)[0]
		mx := math.Inf(-1)
		for _, v := range logits {
			mx = math.Max(mx, v)
		}
		p := make([]float64, len(logits))
		for e, v := range logits {
			p[e] = math.Exp(v - mx)
		}
		used := make([]bool, len(p))
		var chosen []int
		total := 0.0
		for len(chosen) < k {
			best := -1
			for e := range p {
				if !used[e] && (best < 0 || p[e] > p[best]) {
					best = e
				}
			}
			used[best] = true
			chosen = append(chosen, best)
			total += p[best]
		}
		out[t] = make([]float64, len(x[t]))
		for _, e := range chosen {
			h := mul(apply(linear(row, gate[e], nil), silu), linear(row, up[e], nil))
			y := linear(h, down[e], nil)[0]
			for i := range y {
				out[t][i] += p[e] / total * y[i]
			}
		}
	}
	return out
}

func transposed(tt *tensor.Tensor) *tensor.Tensor {
	r, c := tt.Shape[0], tt.Shape[1]
	in := tensor.BytesToF32(tt.Data)
	out := make([]float32, len(in))
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out[j*r+i] = in[i*c+j]
		}
	}
	return &tensor.Tensor{Name: tt.Name, DType: tt.DType, Shape: []int{c, r}, Data: tensor.F32ToBytes(out)}
}
