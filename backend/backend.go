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
	// Types are the tokens' segments (the token_types step input); nil
	// means type 0 for every token.
	Types []int32
	// Keep lists the rows (token indices) whose outputs are wanted; ops
	// after gather_rows see only those rows.
	Keep []int32
	// Decode marks, per token, the tokens the model generated (a decode
	// step's token, or a row of a speculative verify step), as opposed to
	// prompt tokens; nil marks none. A generated token's attention sums
	// in the order of a step of one token, whatever else shares its step,
	// so a sequence's output does not depend on the batch it runs in;
	// prompt tokens in a step of several sum as a batch (ggml's order for
	// a prompt).
	Decode []bool
	// Memory is, per token, the encoder output its sequence's
	// cross_attention ops attend over (encoder-decoder models); nil for
	// decoder-only models.
	Memory []*Memory

	// KV addressing, filled by the scheduler's block manager. Every
	// attention slot of every device uses the same block ids.
	//
	// Loc is, per token, the block and row its key and value go to.
	Loc []KVLoc
	// View is, per token, the index in Views of the history it attends
	// over, and Len how many rows of that history it sees (a causal
	// token: the rows up to and including its own; a bidirectional
	// attention takes the most any token of the same view sees).
	View []int32
	Len  []int32
	// Views are histories: runs of cached rows in position order. A
	// beam's history is the shared prompt's blocks followed by the rows
	// its ancestors wrote, one run per row (the beam index-select, read
	// in place by the attention kernel).
	Views [][]KVRun
	// Shift lists rotations to apply to cached keys before the step's
	// attention (StreamingLLM's context shift), once per slot.
	Shift []KVShift
}

// KVLoc is one row of a KV block.
type KVLoc struct{ Block, Row int32 }

// KVRun is N consecutive rows of a KV block, from Row.
type KVRun struct{ Block, Row, N int32 }

// KVShift moves the keys of Runs by Delta positions: attention ops that
// apply RoPE themselves re-rotate them by Delta (negative: back).
type KVShift struct {
	Runs  []KVRun
	Delta int32
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
	NewKVStore(dims []int, typ KVType) (KVStore, error)
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

// KVStore is a device's KV storage: blocks of positions for every
// attention slot the device holds, by the ids the scheduler's block
// manager hands out. The attention kernels of the same backend read and
// write it through the backend's own concrete type.
type KVStore interface {
	// SetBlock gives block id room for rows positions in every slot.
	SetBlock(id, rows int)
	// FreeBlock releases block id's memory.
	FreeBlock(id int)
	// CopyRows copies n rows from block src (from srcRow) to block dst
	// (from dstRow) in every slot: copy-on-write of a shared block.
	CopyRows(dst, dstRow, src, srcRow, n int)
	// PositionBytes returns the memory one position takes in every slot.
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
