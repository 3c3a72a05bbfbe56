package scheduler

import "github.com/weftrun/weft/backend"

// AddressSequence fills st's KV addressing for a step of one sequence
// that grows from step to step (an encoder-decoder model's decoder, run
// outside the engine): st.Pos[i] is token i's position, and blocks are the
// sequence's blocks so far, grown as the positions need and returned. The
// caller releases them with Reset.
func (c *KV) AddressSequence(st *backend.Step, blocks []int32) ([]int32, error) {
	st.Loc, st.View, st.Len, st.Views = st.Loc[:0], st.View[:0], st.Len[:0], st.Views[:0]
	for i := range st.Pos {
		p := int(st.Pos[i])
		for len(blocks) <= p/BlockRows {
			id, ok := c.alloc(BlockRows)
			if !ok {
				return blocks, errNoBlock
			}
			blocks = append(blocks, id)
		}
		st.Loc = append(st.Loc, backend.KVLoc{Block: blocks[p/BlockRows], Row: int32(p % BlockRows)})
		st.View = append(st.View, 0)
		st.Len = append(st.Len, int32(p+1))
	}
	var runs []backend.KVRun
	if cap(st.Views) > 0 {
		runs = st.Views[:1][0][:0] // reuse the last step's runs
	}
	for _, id := range blocks {
		runs = append(runs, backend.KVRun{Block: id, Row: 0, N: BlockRows})
	}
	st.Views = append(st.Views[:0], runs)
	return blocks, nil
}
