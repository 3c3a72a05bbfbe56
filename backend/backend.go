// Package backend is the contract between weft's scheduler and the devices
// that run graphs: a Backend owns a device's memory, its kernels, its graph
// passes and its KV storage, and runs the splits of a graph the scheduler
// places on it. The scheduler decides placement and inserts the copies and
// all-reduces between devices; ops stay definitions only and know no
// backend.
//
// The interface follows ggml-backend's split: buffers (where memory
// lives), running a split, and supports-op; it is shaped for asynchronous
// devices (a CUDA backend queues a split on a stream and Run returns when
// its results are needed) as well as for the CPU.
package backend

import (
	"context"
	"fmt"

	"github.com/weftrun/weft/graph"
	"github.com/weftrun/weft/ops"
	"github.com/weftrun/weft/tensor"
)

// Step describes the tokens of one scheduler step. Positions and sequence
// ids are per token, so one step may carry many sequences (continuous
// batching) at different positions.
type Step struct {
	Tokens []int32
	Pos    []int32
	Seq    []int32
	// Keep lists the rows (token indices) whose outputs are wanted; ops
	// after gather_rows see only those rows.
	Keep []int32
}

// Backend runs graph splits on one device.
type Backend interface {
	// Device names the device as --devices does ("cpu:0").
	Device() string
	// Supports reports whether the backend can run op.
	Supports(op *ops.Def) bool
	// Passes returns the backend's own graph passes (its fusions), run
	// on a graph whose every node it will run.
	Passes() []graph.Pass
	// Weight places a checkpoint tensor in the device's memory and returns
	// the tensor the device's kernels read. The CPU returns t itself
	// (mmapped host memory); a GPU copies it into device memory.
	Weight(t *tensor.Tensor) (*tensor.Tensor, error)
	// Compile prepares nodes (in order, all placed on this device) to run
	// as one split.
	Compile(nodes []*graph.Node, opt CompileOptions) (Runner, error)
	// NewKVStore makes the device's KV storage for attention slots whose
	// key and value rows are dims[i] wide.
	NewKVStore(dims []int, maxPositions int, typ KVType) (KVStore, error)
	// Threads returns the worker threads the device computes with.
	Threads() int
	// Close releases the device's workers and memory.
	Close() error
}

// CompileOptions configures Backend.Compile.
type CompileOptions struct {
	// MaxTokens bounds the tokens of one step.
	MaxTokens int
	// Bind gives the tensors of values the split reads but does not
	// compute (graph inputs, weights, other splits' outputs), by value ID.
	// Compile adds the tensors of the values the split computes, so that
	// later splits read them; on a device without host-addressable memory
	// those are device tensors read only through copy nodes.
	Bind map[int]*tensor.Tensor
	// Keep lists the values the split computes that are read after it
	// (by later splits, or as graph outputs): their buffers are never
	// reused within the split.
	Keep map[int]bool
	// Slots maps each stateful node to its slot in the device's KV store.
	Slots map[*graph.Node]int
}

// Runner is a compiled split.
type Runner interface {
	// Run executes the split for one step; kv is the store NewKVStore
	// made on the same backend.
	Run(ctx context.Context, st *Step, kv KVStore, prof Profiler) error
	// ArenaBytes returns the bytes of its activation buffers.
	ArenaBytes() int64
}

// Profiler receives the time each node took.
type Profiler interface {
	Add(n *graph.Node, ns int64)
}

// KVStore is a device's key/value cache as the scheduler manages it:
// sequences are reserved, forked, truncated and dropped on every device
// alike. The attention kernels of the same backend read and write it
// through the backend's own concrete type.
type KVStore interface {
	// Reserve sizes the next segment of seq for n more positions.
	Reserve(seq, n int)
	// Len returns the positions cached for seq.
	Len(seq int) int
	// Fork makes child share all of parent's cached positions.
	Fork(parent, child int) error
	// Truncate drops positions ≥ n of seq.
	Truncate(seq, n int)
	// Drop forgets seq.
	Drop(seq int)
	// Bytes returns the memory held by cached positions.
	Bytes() int64
	// PositionBytes returns the memory one position of one sequence takes.
	PositionBytes() int64
}

// KVType is the element type a KV store keeps.
type KVType uint8

const (
	// KVF32 stores keys and values as float32.
	KVF32 KVType = iota
	// KVF16 stores them in IEEE half precision, rounded to nearest even
	// on write: half the memory of KVF32, and llama.cpp's default.
	KVF16
)

// String returns "f32" or "f16".
func (t KVType) String() string {
	switch t {
	case KVF32:
		return "f32"
	case KVF16:
		return "f16"
	}
	return fmt.Sprintf("KVType(%d)", uint8(t))
}

// ParseKVType parses a cache element type as String writes it.
func ParseKVType(s string) (KVType, error) {
	switch s {
	case "f32":
		return KVF32, nil
	case "f16":
		return KVF16, nil
	}
	return 0, fmt.Errorf("unknown KV cache type %q (want f32 or f16)", s)
}

// ElemSize returns the bytes one cached key or value element takes.
func (t KVType) ElemSize() int {
	if t == KVF16 {
		return 2
	}
	return 4
}
