package scheduler

import (
	"github.com/weftrun/weft/backend"
)

// BlockRows is the KV cache's block size in positions: a sequence's
// response grows 16 positions at a time, and the prefix cache shares
// prompts in whole blocks of 16.
const BlockRows = 16

// KV is the engine's KV cache: a block manager over the KV stores of the
// plan's devices. Blocks are reference-counted; a block may hold fewer
// rows than BlockRows (a prompt's last, partial block is sized to it) or
// more (a beam group's response block holds BlockRows positions of every
// beam). Full prompt blocks are kept after their last reader, keyed by a
// hash of (parent hash, tokens), for the prefix cache; they are evicted
// least recently used first when memory runs short.
type KV struct {
	stores   []backend.KVStore
	typ      backend.KVType
	posBytes int64 // one position over every slot of every device
	budget   int64 // bytes (0: no limit)
	held     int64 // bytes of blocks with memory (in use or cached)
	cached   int64 // bytes of cached blocks no sequence holds

	rows []int32 // capacity per block id; 0: a free id
	ref  []int32
	// Prefix cache: the hashed blocks, with their tokens (checked on a
	// hit), and an LRU list of those no sequence holds.
	hash       []uint64
	hashed     []bool
	toks       [][BlockRows]int32
	byHash     map[uint64]int32
	prev, next []int32 // LRU links; -1 ends
	head, tail int32   // head: least recently used
	freeIDs    []int32

	// Prefix-cache counters.
	lookups, hits int64 // prompt blocks looked up, and found
	saved         int64 // prompt tokens not prefilled thanks to hits
	peak          int64 // the most bytes in use since ResetPeak
}

// PeakBytes returns the most memory blocks in use held at once since the
// last ResetPeak (cached prompt blocks no sequence holds not counted).
func (c *KV) PeakBytes() int64 { return c.peak }

// ResetPeak starts a new PeakBytes measurement.
func (c *KV) ResetPeak() { c.peak = c.Bytes() }

func newKV(stores []backend.KVStore, typ backend.KVType, budget int64) *KV {
	c := &KV{stores: stores, typ: typ, budget: budget, byHash: map[uint64]int32{}, head: -1, tail: -1}
	for _, s := range stores {
		c.posBytes += s.PositionBytes()
	}
	return c
}

// Type returns the element type.
func (c *KV) Type() backend.KVType { return c.typ }

// PositionBytes returns the memory one position of one sequence takes,
// over all devices.
func (c *KV) PositionBytes() int64 { return c.posBytes }

// Bytes returns the memory held by blocks in use (not counting cached
// prompt blocks no sequence holds).
func (c *KV) Bytes() int64 { return c.held - c.cached }

// HeldBytes returns all the memory the cache holds, cached blocks too.
func (c *KV) HeldBytes() int64 { return c.held }

// Budget returns the byte budget (0: no limit).
func (c *KV) Budget() int64 { return c.budget }

// PrefixStats reports the prefix cache: prompt blocks looked up and found,
// and prompt tokens whose prefill the hits saved.
func (c *KV) PrefixStats() (lookups, hits, savedTokens int64) { return c.lookups, c.hits, c.saved }

// alloc returns a new block of rows positions with one reference, evicting
// cached blocks as the budget requires; ok is false when it cannot fit.
func (c *KV) alloc(rows int) (int32, bool) {
	need := int64(rows) * c.posBytes
	for c.budget > 0 && c.held+need > c.budget {
		if c.head < 0 {
			return -1, false
		}
		c.evict(c.head)
	}
	var id int32
	if n := len(c.freeIDs); n > 0 {
		id = c.freeIDs[n-1]
		c.freeIDs = c.freeIDs[:n-1]
	} else {
		id = int32(len(c.rows))
		c.rows = append(c.rows, 0)
		c.ref = append(c.ref, 0)
		c.hash = append(c.hash, 0)
		c.hashed = append(c.hashed, false)
		c.toks = append(c.toks, [BlockRows]int32{})
		c.prev = append(c.prev, -1)
		c.next = append(c.next, -1)
	}
	c.rows[id], c.ref[id] = int32(rows), 1
	c.held += need
	c.peak = max(c.peak, c.Bytes())
	for _, s := range c.stores {
		s.SetBlock(int(id), rows)
	}
	return id, true
}

// retain adds a reference to a block (taking it off the LRU list).
func (c *KV) retain(id int32) {
	if c.ref[id] == 0 {
		c.unlink(id)
	}
	c.ref[id]++
}

// release drops a reference; an unreferenced hashed block stays cached,
// any other is freed.
func (c *KV) release(id int32) {
	c.ref[id]--
	if c.ref[id] > 0 {
		return
	}
	if c.hashed[id] {
		c.pushLRU(id)
		return
	}
	c.free(id)
}

func (c *KV) free(id int32) {
	c.held -= int64(c.rows[id]) * c.posBytes
	for _, s := range c.stores {
		s.FreeBlock(int(id))
	}
	c.rows[id] = 0
	c.freeIDs = append(c.freeIDs, id)
}

func (c *KV) evict(id int32) {
	c.unlink(id)
	delete(c.byHash, c.hash[id])
	c.hashed[id] = false
	c.free(id)
}

func (c *KV) pushLRU(id int32) {
	c.cached += int64(c.rows[id]) * c.posBytes
	c.prev[id], c.next[id] = c.tail, -1
	if c.tail >= 0 {
		c.next[c.tail] = id
	} else {
		c.head = id
	}
	c.tail = id
}

func (c *KV) unlink(id int32) {
	if !c.hashed[id] || c.ref[id] > 0 {
		return // not on the LRU list
	}
	c.cached -= int64(c.rows[id]) * c.posBytes
	p, n := c.prev[id], c.next[id]
	if p >= 0 {
		c.next[p] = n
	} else if c.head == id {
		c.head = n
	}
	if n >= 0 {
		c.prev[n] = p
	} else if c.tail == id {
		c.tail = p
	}
	c.prev[id], c.next[id] = -1, -1
}

// blockHash chains a block's tokens onto its parent's hash (FNV-1a).
func blockHash(parent uint64, toks []int) uint64 {
	h := parent ^ 14695981039346656037
	for _, t := range toks {
		for k := 0; k < 4; k++ {
			h ^= uint64(byte(t >> (8 * k)))
			h *= 1099511628211
		}
	}
	return h
}

// lookup returns the cached block holding toks after parent, if any,
// with a reference taken.
func (c *KV) lookup(h uint64, toks []int) (int32, bool) {
	c.lookups++
	id, ok := c.byHash[h]
	if !ok {
		return -1, false
	}
	for i, t := range toks {
		if c.toks[id][i] != int32(t) {
			return -1, false
		}
	}
	c.hits++
	c.retain(id)
	return id, true
}

// publish makes a full prompt block findable by later requests.
func (c *KV) publish(id int32, h uint64, toks []int) {
	if c.hashed[id] {
		return
	}
	if _, taken := c.byHash[h]; taken {
		return // another copy of the same prefix is cached already
	}
	c.hashed[id], c.hash[id] = true, h
	for i, t := range toks {
		c.toks[id][i] = int32(t)
	}
	c.byHash[h] = id
}

// shared reports whether writing to block id would change what another
// reader sees.
func (c *KV) shared(id int32) bool { return c.ref[id] > 1 || c.hashed[id] }

// cow returns a private copy of the first n rows of block id (dropping
// the reference to id), for a write or a rotation into a shared block.
func (c *KV) cow(id int32, n int) (int32, bool) {
	nb, ok := c.alloc(int(c.rows[id]))
	if !ok {
		return -1, false
	}
	for _, s := range c.stores {
		s.CopyRows(int(nb), 0, int(id), 0, n)
	}
	c.release(id)
	return nb, true
}

// AddressWhole fills st's KV addressing for a step that holds its
// sequences whole: st.Seq[i] names token i's sequence and st.Pos[i] its
// position, from 0 up. Each sequence gets new blocks (which the caller
// releases with Reset). It serves one-shot runs: an encoder's pass, a
// test of a graph.
func (c *KV) AddressWhole(st *backend.Step) error {
	blocks := map[int32][]int32{}
	views := map[int32]int32{}
	st.Loc, st.View, st.Len, st.Views = st.Loc[:0], st.View[:0], st.Len[:0], st.Views[:0]
	for i, s := range st.Seq {
		p := int(st.Pos[i])
		bs := blocks[s]
		for len(bs) <= p/BlockRows {
			id, ok := c.alloc(BlockRows)
			if !ok {
				return errNoBlock
			}
			bs = append(bs, id)
		}
		blocks[s] = bs
		if _, ok := views[s]; !ok {
			views[s] = int32(len(st.Views))
			st.Views = append(st.Views, nil)
		}
		st.Loc = append(st.Loc, backend.KVLoc{Block: bs[p/BlockRows], Row: int32(p % BlockRows)})
		st.View = append(st.View, views[s])
		st.Len = append(st.Len, int32(p+1))
	}
	for s, v := range views {
		for _, id := range blocks[s] {
			st.Views[v] = append(st.Views[v], backend.KVRun{Block: id, Row: 0, N: BlockRows})
		}
	}
	return nil
}

// Reset frees every block, cached ones too.
func (c *KV) Reset() {
	for i := range c.rows {
		id := int32(i)
		if c.rows[id] > 0 {
			if c.hashed[id] {
				c.unlink(id)
				delete(c.byHash, c.hash[id])
				c.hashed[id] = false
			}
			c.ref[id] = 0
			c.free(id)
		}
	}
}
