package cpudev

import (
	"fmt"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/kernels/quant"
)

// KVType is the element type a KVCache stores.
type KVType = backend.KVType

// The element types.
const (
	KVF32 = backend.KVF32
	KVF16 = backend.KVF16
)

// block is one KV block of one attention slot: rows key and value rows
// of d elements, as float32 (k, v) or f16 bits (k16, v16).
type block struct {
	k, v     []float32
	k16, v16 []uint16
	rows     int
}

// KVCache is the CPU's KV store: for each attention slot, blocks of key
// and value rows in host memory, addressed by the block ids the
// scheduler's block manager hands out. The attention kernels write each
// token's row at its backend.KVLoc and read each token's history through
// its backend.Step view; a block shared by several sequences is simply
// read by several views.
type KVCache struct {
	typ    KVType
	dims   []int     // K/V row width per slot
	blocks [][]block // per slot, by block id
}

// NewKVCache makes an empty store of elements of type typ for slots whose
// rows have the given widths.
func NewKVCache(dims []int, typ KVType) *KVCache {
	return &KVCache{typ: typ, dims: dims, blocks: make([][]block, len(dims))}
}

// Type returns the cache's element type.
func (c *KVCache) Type() KVType { return c.typ }

// SetBlock implements backend.KVStore: block id gets room for rows rows in
// every slot, reusing its memory when it is large enough.
func (c *KVCache) SetBlock(id, rows int) {
	for slot, d := range c.dims {
		for len(c.blocks[slot]) <= id {
			c.blocks[slot] = append(c.blocks[slot], block{})
		}
		b := &c.blocks[slot][id]
		b.rows = rows
		n := rows * d
		if c.typ == KVF16 {
			if cap(b.k16) < n {
				b.k16, b.v16 = make([]uint16, n), make([]uint16, n)
			}
			b.k16, b.v16 = b.k16[:n], b.v16[:n]
		} else {
			if cap(b.k) < n {
				b.k, b.v = make([]float32, n), make([]float32, n)
			}
			b.k, b.v = b.k[:n], b.v[:n]
		}
	}
}

// FreeBlock implements backend.KVStore: block id's memory goes back to
// the Go heap.
func (c *KVCache) FreeBlock(id int) {
	for slot := range c.dims {
		if id < len(c.blocks[slot]) {
			c.blocks[slot][id] = block{}
		}
	}
}

// CopyRows implements backend.KVStore (copy-on-write of a shared block).
func (c *KVCache) CopyRows(dst, dstRow, src, srcRow, n int) {
	for slot, d := range c.dims {
		s, t := &c.blocks[slot][src], &c.blocks[slot][dst]
		if c.typ == KVF16 {
			copy(t.k16[dstRow*d:(dstRow+n)*d], s.k16[srcRow*d:(srcRow+n)*d])
			copy(t.v16[dstRow*d:(dstRow+n)*d], s.v16[srcRow*d:(srcRow+n)*d])
		} else {
			copy(t.k[dstRow*d:(dstRow+n)*d], s.k[srcRow*d:(srcRow+n)*d])
			copy(t.v[dstRow*d:(dstRow+n)*d], s.v[srcRow*d:(srcRow+n)*d])
		}
	}
}

// PositionBytes implements backend.KVStore: one position in every slot.
func (c *KVCache) PositionBytes() int64 {
	var n int64
	for _, d := range c.dims {
		n += int64(2 * d * c.typ.ElemSize())
	}
	return n
}

// Write stores a key and value row of slot at loc.
func (c *KVCache) Write(slot int, loc backend.KVLoc, k, v []float32) error {
	if slot < 0 || slot >= len(c.dims) {
		return fmt.Errorf("kv cache: slot %d of %d", slot, len(c.dims))
	}
	d := c.dims[slot]
	if len(k) != d || len(v) != d {
		return fmt.Errorf("kv cache: slot %d rows are %d wide, got %d/%d", slot, d, len(k), len(v))
	}
	if int(loc.Block) >= len(c.blocks[slot]) || int(loc.Row) >= c.blocks[slot][loc.Block].rows || loc.Row < 0 {
		return fmt.Errorf("kv cache: no row %d in block %d", loc.Row, loc.Block)
	}
	b := &c.blocks[slot][loc.Block]
	r := int(loc.Row)
	if c.typ == KVF16 {
		cpu.F32ToF16Bits(b.k16[r*d:(r+1)*d], k)
		cpu.F32ToF16Bits(b.v16[r*d:(r+1)*d], v)
		return nil
	}
	copy(b.k[r*d:(r+1)*d], k)
	copy(b.v[r*d:(r+1)*d], v)
	return nil
}

// View fills kv with the first n rows of the runs, in order, for the
// attention kernels: each run is a segment of its block (no copy).
func (c *KVCache) View(slot int, runs []backend.KVRun, n int, kv *cpu.KV) error {
	d := c.dims[slot]
	kv.K, kv.V, kv.K16, kv.V16, kv.Len = kv.K[:0], kv.V[:0], kv.K16[:0], kv.V16[:0], kv.Len[:0]
	for _, r := range runs {
		if n <= 0 {
			break
		}
		if int(r.Block) >= len(c.blocks[slot]) || int(r.Row+r.N) > c.blocks[slot][r.Block].rows {
			return fmt.Errorf("kv cache: rows %d..%d of block %d are not held", r.Row, r.Row+r.N, r.Block)
		}
		b := &c.blocks[slot][r.Block]
		m := min(int(r.N), n)
		lo := int(r.Row) * d
		if c.typ == KVF16 {
			kv.K16 = append(kv.K16, b.k16[lo:])
			kv.V16 = append(kv.V16, b.v16[lo:])
		} else {
			kv.K = append(kv.K, b.k[lo:])
			kv.V = append(kv.V, b.v[lo:])
		}
		kv.Len = append(kv.Len, m)
		n -= m
	}
	if n > 0 {
		return fmt.Errorf("kv cache: the view holds %d rows fewer than asked", n)
	}
	return nil
}

// shiftKeys re-rotates the cached keys of slot named by the shifts by
// their deltas (StreamingLLM's context shift, llama.cpp's K-shift): the
// rotation of RoPE r at position Delta, applied to keys already rotated
// at their old positions. An f16 key is widened, rotated and rounded back.
func (c *KVCache) shiftKeys(slot int, shifts []backend.KVShift, r ropeSpec, kvHeads int) error {
	d := c.dims[slot]
	row := make([]float32, d)
	for _, sh := range shifts {
		for _, run := range sh.Runs {
			if int(run.Block) >= len(c.blocks[slot]) || int(run.Row+run.N) > c.blocks[slot][run.Block].rows {
				return fmt.Errorf("kv cache: shift of rows %d..%d of block %d, which are not held", run.Row, run.Row+run.N, run.Block)
			}
			b := &c.blocks[slot][run.Block]
			for i := run.Row; i < run.Row+run.N; i++ {
				lo, hi := int(i)*d, int(i+1)*d
				if c.typ == KVF16 {
					for j, h := range b.k16[lo:hi] {
						row[j] = quant.FromF16(h)
					}
					r.apply(row, 1, kvHeads, []int32{sh.Delta})
					cpu.F32ToF16Bits(b.k16[lo:hi], row)
				} else {
					r.apply(b.k[lo:hi], 1, kvHeads, []int32{sh.Delta})
				}
			}
		}
	}
	return nil
}
