package scheduler

import (
	"fmt"

	"github.com/weftrun/weft/kernels/cpu"
)

// BlockRows is the growth step of a sequence's response K/V: it grows in
// blocks of this many positions, never by copying.
const BlockRows = 16

// segment is a run of cached positions for one slot. A segment reachable
// from two sequences (a prompt shared by beams) is frozen: no one writes
// into it again.
type segment struct {
	k, v   []float32
	rows   int // positions filled
	cap    int
	frozen bool
}

type seqState struct {
	slots [][]*segment // per cache slot, in position order
	n     []int        // positions held per slot
}

// KVCache is a segment KV cache: each sequence's keys and values, per
// attention slot, as a list of segments. A prompt is stored once in one
// segment sized to it (Reserve) and shared by the sequences forked from it
// (beams); new positions go into blocks of BlockRows.
type KVCache struct {
	dims  []int // K/V row width per slot
	seqs  map[int]*seqState
	free  [][][]float32 // per slot: recycled block buffers (k and v alternate)
	limit int           // max positions per sequence
}

// NewKVCache makes a cache for slots whose rows have the given widths.
func NewKVCache(dims []int, maxPositions int) *KVCache {
	return &KVCache{dims: dims, seqs: map[int]*seqState{}, free: make([][][]float32, len(dims)), limit: maxPositions}
}

func (c *KVCache) seq(id int) *seqState {
	s := c.seqs[id]
	if s == nil {
		s = &seqState{slots: make([][]*segment, len(c.dims)), n: make([]int, len(c.dims))}
		c.seqs[id] = s
	}
	return s
}

// Reserve sizes the next segment of seq to hold n more positions (a
// prompt), so that a prompt occupies one segment.
func (c *KVCache) Reserve(id, n int) {
	s := c.seq(id)
	for slot, d := range c.dims {
		s.slots[slot] = append(s.slots[slot], &segment{k: make([]float32, n*d), v: make([]float32, n*d), cap: n})
	}
}

// Len returns the positions cached for seq (in slot 0).
func (c *KVCache) Len(id int) int {
	if s, ok := c.seqs[id]; ok && len(s.n) > 0 {
		return s.n[0]
	}
	return 0
}

// Write implements ops.KVStore. Positions are appended in order; a write
// at an earlier position (a step re-run) overwrites in place.
func (c *KVCache) Write(slot, id, pos int, k, v []float32) error {
	if slot < 0 || slot >= len(c.dims) {
		return fmt.Errorf("kv cache: slot %d of %d", slot, len(c.dims))
	}
	d := c.dims[slot]
	if len(k) != d || len(v) != d {
		return fmt.Errorf("kv cache: slot %d rows are %d wide, got %d/%d", slot, d, len(k), len(v))
	}
	if c.limit > 0 && pos >= c.limit {
		return fmt.Errorf("kv cache: position %d is past the context size %d", pos, c.limit)
	}
	s := c.seq(id)
	if pos < s.n[slot] {
		seg, r := locate(s.slots[slot], pos)
		if seg.frozen {
			return fmt.Errorf("kv cache: position %d of sequence %d is shared and read-only", pos, id)
		}
		copy(seg.k[r*d:(r+1)*d], k)
		copy(seg.v[r*d:(r+1)*d], v)
		return nil
	}
	if pos != s.n[slot] {
		return fmt.Errorf("kv cache: sequence %d slot %d: write at position %d, next is %d", id, slot, pos, s.n[slot])
	}
	segs := s.slots[slot]
	var last *segment
	if len(segs) > 0 {
		last = segs[len(segs)-1]
	}
	if last == nil || last.frozen || last.rows == last.cap {
		last = c.newBlock(slot)
		s.slots[slot] = append(segs, last)
	}
	r := last.rows
	copy(last.k[r*d:(r+1)*d], k)
	copy(last.v[r*d:(r+1)*d], v)
	last.rows++
	s.n[slot]++
	return nil
}

func (c *KVCache) newBlock(slot int) *segment {
	d := c.dims[slot]
	f := c.free[slot]
	if len(f) >= 2 {
		k, v := f[len(f)-2], f[len(f)-1]
		c.free[slot] = f[:len(f)-2]
		return &segment{k: k, v: v, cap: BlockRows}
	}
	return &segment{k: make([]float32, BlockRows*d), v: make([]float32, BlockRows*d), cap: BlockRows}
}

func locate(segs []*segment, pos int) (*segment, int) {
	for _, s := range segs {
		if pos < s.rows {
			return s, pos
		}
		pos -= s.rows
	}
	return nil, 0
}

// View implements ops.KVStore.
func (c *KVCache) View(slot, id, n int, kv *cpu.KV) error {
	s, ok := c.seqs[id]
	if !ok || slot >= len(s.slots) {
		return fmt.Errorf("kv cache: no sequence %d", id)
	}
	if n > s.n[slot] {
		return fmt.Errorf("kv cache: sequence %d slot %d holds %d positions, %d asked", id, slot, s.n[slot], n)
	}
	kv.K, kv.V, kv.Len = kv.K[:0], kv.V[:0], kv.Len[:0]
	for _, seg := range s.slots[slot] {
		if n <= 0 {
			break
		}
		r := min(seg.rows, n)
		kv.K = append(kv.K, seg.k)
		kv.V = append(kv.V, seg.v)
		kv.Len = append(kv.Len, r)
		n -= r
	}
	return nil
}

// Fork makes child share all of parent's cached positions (beam search):
// the shared segments freeze and both sequences continue in new blocks.
func (c *KVCache) Fork(parent, child int) error {
	p, ok := c.seqs[parent]
	if !ok {
		return fmt.Errorf("kv cache: fork of unknown sequence %d", parent)
	}
	ch := &seqState{slots: make([][]*segment, len(c.dims)), n: append([]int(nil), p.n...)}
	for slot, segs := range p.slots {
		for _, s := range segs {
			s.frozen = true
		}
		ch.slots[slot] = append([]*segment(nil), segs...)
	}
	c.seqs[child] = ch
	return nil
}

// Truncate drops positions ≥ n of seq (speculative decoding rollback).
func (c *KVCache) Truncate(id, n int) {
	s, ok := c.seqs[id]
	if !ok {
		return
	}
	for slot := range s.slots {
		if n >= s.n[slot] {
			continue
		}
		keep := n
		var segs []*segment
		for _, seg := range s.slots[slot] {
			if keep <= 0 {
				break
			}
			if seg.rows > keep {
				if seg.frozen {
					// copy the kept part out of the shared segment
					d := c.dims[slot]
					ns := &segment{k: append([]float32(nil), seg.k[:keep*d]...), v: append([]float32(nil), seg.v[:keep*d]...), rows: keep, cap: keep}
					segs = append(segs, ns)
				} else {
					seg.rows = keep
					segs = append(segs, seg)
				}
				keep = 0
				break
			}
			segs = append(segs, seg)
			keep -= seg.rows
		}
		s.slots[slot] = segs
		s.n[slot] = n
	}
}

// Drop forgets seq, recycling its private blocks.
func (c *KVCache) Drop(id int) {
	s, ok := c.seqs[id]
	if !ok {
		return
	}
	for slot, segs := range s.slots {
		for _, seg := range segs {
			if !seg.frozen && seg.cap == BlockRows {
				c.free[slot] = append(c.free[slot], seg.k, seg.v)
			}
		}
	}
	delete(c.seqs, id)
}

// Bytes returns the memory held by cached positions.
func (c *KVCache) Bytes() int64 {
	var n int64
	seen := map[*segment]bool{}
	for _, s := range c.seqs {
		for _, segs := range s.slots {
			for _, seg := range segs {
				if !seen[seg] {
					seen[seg] = true
					n += int64(len(seg.k)+len(seg.v)) * 4
				}
			}
		}
	}
	return n
}
