// Package cpudev is weft's CPU backend: a device is a worker pool with
// its own threads (kernels/cpu), the kernels of every built-in op, a KV
// store in host memory, and the fusion passes its kernels implement.
package cpudev

import (
	"context"
	"fmt"
	"math"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
)

// Call is one kernel invocation. Activations are F32 tensors whose leading
// dimension is the step's row count; weights keep their stored type.
type Call struct {
	Ctx   context.Context
	Name  string // node name, for errors
	In    []*tensor.Tensor
	Out   []*tensor.Tensor
	Attrs ops.Attrs
	Step  *backend.Step
	KV    *KVCache
	Pool  *cpu.Pool
	Slot  int // cache slot of a stateful node
	// Scratch is working memory owned by this call site, reused across
	// steps.
	Scratch []float32
	// State is a kernel's own per-call-site state (prepared tasks,
	// buffers), created on the first call and reused, so that
	// steady-state steps allocate nothing.
	State any
	// angles is the runner's cache of RoPE angles, shared by its calls
	// (nil: computed by each call).
	angles *ropeAngles
}

// Kernel runs an op on the CPU.
type Kernel func(c *Call) error

// kernels is the CPU kernel of every built-in op, by op name. A plugin op
// runs through its Def.Host function instead.
var kernels = map[string]Kernel{
	"embedding":      kEmbedding,
	"linear":         kLinear,
	"rms_norm":       kRMSNorm,
	"layer_norm":     kLayerNorm,
	"rope":           kRoPE,
	"attention":      kAttention,
	"silu":           unaryKernel(cpu.SiLU),
	"gelu":           unaryKernel(cpu.GELU),
	"gelu_tanh":      unaryKernel(cpu.GELUTanh),
	"relu":           unaryKernel(cpu.ReLU),
	"softmax":        unaryKernel(cpu.Softmax),
	"add":            binaryKernel(cpu.Add),
	"mul":            binaryKernel(cpu.Mul),
	"swiglu":         binaryKernel(cpu.SwiGLU),
	"geglu":          kGeGLU,
	"scale":          kScale,
	"clamp":          kClamp,
	"softcap":        kSoftCap,
	"sigmoid_gate":   kSigmoidGate,
	"split":          kSplit,
	"take":           kTake,
	"sinusoidal":     kSinusoidal,
	"moe":            kMoE,
	"gather_rows":    kGather,
	"linear_multi":   kLinearMulti,
	"gated_ffn":      kGatedFFN,
	"rope_attention": kRoPEAttention,
	"copy":           kCopy,
	"all_reduce":     kAllReduce,
}

// KernelFor returns the kernel that runs op on the CPU: the built-in
// kernel, or a call of the op's host function.
func KernelFor(op *ops.Def) (Kernel, bool) {
	if op.Host != nil {
		h := op.Host
		return func(c *Call) error {
			return h(&ops.HostCall{Ctx: c.Ctx, Name: c.Name, In: c.In, Out: c.Out, Attrs: c.Attrs})
		}, true
	}
	if op.Plugin != "" {
		return nil, false
	}
	k, ok := kernels[op.Name]
	if !ok {
		k, ok = encDecKernels[op.Name]
	}
	return k, ok
}

// kGeGLU writes out = gelu(gate) ⊙ up, with the erf or tanh GELU.
func kGeGLU(c *Call) error {
	g, u, out := f32(c.In[0]), f32(c.In[1]), f32(c.Out[0])
	n := ops.Rows(c.In[0]) * c.In[0].Shape[len(c.In[0].Shape)-1]
	copy(out[:n], g[:n])
	if c.Attrs.String("gelu") == "tanh" {
		cpu.GELUTanh(out[:n])
	} else {
		cpu.GELU(out[:n])
	}
	cpu.Mul(out[:n], out[:n], u[:n])
	return nil
}

// kClamp writes out = min(max(x, -limit), limit); limit 0 copies x.
func kClamp(c *Call) error {
	x, out := f32(c.In[0]), f32(c.Out[0])
	n := ops.Rows(c.In[0]) * c.In[0].Shape[len(c.In[0].Shape)-1]
	l := float32(c.Attrs.Float("limit"))
	if l == 0 {
		copy(out[:n], x[:n])
		return nil
	}
	for i, v := range x[:n] {
		out[i] = min(max(v, -l), l)
	}
	return nil
}

// kSoftCap writes out = cap · tanh(x / cap).
func kSoftCap(c *Call) error {
	x, out := f32(c.In[0]), f32(c.Out[0])
	n := ops.Rows(c.In[0]) * c.In[0].Shape[len(c.In[0].Shape)-1]
	k := c.Attrs.Float("cap")
	for i, v := range x[:n] {
		out[i] = float32(k * math.Tanh(float64(v)/k))
	}
	return nil
}

// kScale writes out = x · by.
func kScale(c *Call) error {
	x, out := f32(c.In[0]), f32(c.Out[0])
	n := ops.Rows(c.In[0]) * c.In[0].Shape[len(c.In[0].Shape)-1]
	by := float32(c.Attrs.Float("by"))
	for i, v := range x[:n] {
		out[i] = v * by
	}
	return nil
}

// Backend is one CPU device.
type Backend struct {
	name string
	pool *cpu.Pool
	cpus []int // its NUMA node's CPUs, on a machine of several nodes
}

// New returns the CPU device called name (as --devices names it, "cpu:0")
// computing with threads worker threads (≤ 0: all cores) and the kernel
// set k (the zero value, or its WithRepack: the best the machine has,
// cpu.Detect(), with that repacking). On a
// machine of several NUMA nodes, device cpu:N lives on node N (modulo the
// nodes): its threads are pinned there and its weights copied into that
// node's memory, as Intel's LLM runtime does for multi-socket tensor
// parallelism.
func New(name string, threads int, k cpu.Kernels) *Backend {
	if k.WithRepack(false) == (cpu.Kernels{}) {
		k = cpu.Detect().WithRepack(k.Repack())
	}
	nodes, _ := numaNodes("/sys/devices/system/node") // none: not pinned
	cpus := nodeCPUs(name, nodes)
	return &Backend{name: name, pool: cpu.NewPoolOn(threads, k, cpus), cpus: cpus}
}

// PinThread pins the calling goroutine's thread to the device's node,
// for the scheduler's goroutine that runs the device's splits.
func (b *Backend) PinThread() {
	if len(b.cpus) > 0 {
		cpu.PinThread(b.cpus)
	}
}

// Device implements backend.Backend.
func (b *Backend) Device() string { return b.name }

// Threads implements backend.Backend.
func (b *Backend) Threads() int { return b.pool.Threads() }

// Pool returns the device's worker pool.
func (b *Backend) Pool() *cpu.Pool { return b.pool }

// Supports implements backend.Backend.
func (b *Backend) Supports(op *ops.Def) bool { _, ok := KernelFor(op); return ok }

// Passes implements backend.Backend: the fusions whose fused ops have CPU
// kernels.
func (b *Backend) Passes() []graph.Pass { return graph.Fusions() }

// Weight implements backend.Backend: host tensors are used in place, or,
// on a device pinned to a NUMA node, copied by a thread of that node so
// that their pages are allocated there (Linux's first-touch policy).
func (b *Backend) Weight(t *tensor.Tensor) (*tensor.Tensor, error) {
	if len(b.cpus) == 0 {
		return t, nil
	}
	c := *t
	done := make(chan struct{})
	go func() {
		defer close(done)
		cpu.PinThread(b.cpus)
		c.Data = append([]byte(nil), t.Data...)
	}() // the goroutine exits with its thread locked: Go ends that thread
	<-done
	return &c, nil
}

// pack hands a 2-D weight to the pool's PackWeight, which copies the
// matrices whose kernels read a layout of their own into it (the pool's
// workers write the copy: on a NUMA node, its pages are the node's).
// Compile calls it for the weights of every op but those that only read
// rows (embedding, take).
func (b *Backend) pack(t *tensor.Tensor) {
	if len(t.Shape) != 2 {
		return
	}
	if m, err := cpu.MatrixOf(t); err == nil {
		b.pool.PackWeight(m)
	}
}

// NewKVStore implements backend.Backend.
func (b *Backend) NewKVStore(dims []int, typ backend.KVType) (backend.KVStore, error) {
	if typ != KVF32 && typ != KVF16 {
		return nil, fmt.Errorf("%s: unknown KV cache type %v", b.name, typ)
	}
	return NewKVCache(dims, typ), nil
}

// Close implements backend.Backend.
func (b *Backend) Close() error {
	b.pool.Close()
	return nil
}

func kCopy(c *Call) error {
	n := ops.Rows(c.In[0]) * c.In[0].Shape[len(c.In[0].Shape)-1]
	copy(f32(c.Out[0])[:n], f32(c.In[0])[:n])
	return nil
}

// kAllReduce sums the inputs in their order into the first output and
// copies the sum to the others, so every device reads the same bits.
func kAllReduce(c *Call) error {
	n := ops.Rows(c.In[0]) * c.In[0].Shape[len(c.In[0].Shape)-1]
	sum := f32(c.Out[0])[:n]
	cpu.Add(sum, f32(c.In[0])[:n], f32(c.In[1])[:n])
	for _, in := range c.In[2:] {
		cpu.Add(sum, sum, f32(in)[:n])
	}
	for _, o := range c.Out[1:] {
		copy(f32(o)[:n], sum)
	}
	return nil
}
