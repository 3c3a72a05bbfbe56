package grammar

import (
	"bytes"
	"sort"
)

// Vocab is a tokenizer's vocabulary prepared for masking: the bytes of each
// token id in a prefix tree. Build it once per tokenizer and share it; it is
// immutable and safe for concurrent use.
type Vocab struct {
	size  int
	bytes [][]byte // per id, nil for a token that is never allowed
	eog   []bool   // per id
	eogs  []int
	nodes []tnode // preorder; nodes[0] is the root (no byte)
	toks  []int32 // token ids grouped by the node they end at, then eogs
	depth int     // longest token, in bytes
}

// tnode is a prefix-tree node: the byte on the edge into it, its depth,
// the index just past its subtree (to skip it), and the tokens that end at
// it (toks[tokLo:tokHi]).
type tnode struct {
	b            byte
	depth        int32
	skip         int32
	tokLo, tokHi int32
}

// NewVocab indexes a vocabulary. tokens[id] is the text of token id as
// bytes (for byte-level BPE, the decoded bytes, not the printable
// "Ġ"-style form; for SentencePiece, with "▁" turned into a space and
// <0xNN> into the byte). Give nil for special and control tokens: they are
// never allowed. The ids in eog end generation: they are allowed only
// where the output is a complete sentence of the grammar, whatever their
// bytes. Empty tokens are never allowed. NewVocab copies what it keeps.
func NewVocab(tokens [][]byte, eog []int) *Vocab {
	v := &Vocab{size: len(tokens), bytes: make([][]byte, len(tokens)), eog: make([]bool, len(tokens))}
	for _, id := range eog {
		if id >= 0 && id < len(tokens) && !v.eog[id] {
			v.eog[id] = true
			v.eogs = append(v.eogs, id)
		}
	}
	total := 0
	for id, t := range tokens {
		if !v.eog[id] {
			total += len(t)
		}
	}
	buf := make([]byte, 0, total)
	ids := make([]int32, 0, len(tokens))
	for id, t := range tokens {
		if v.eog[id] || len(t) == 0 {
			continue
		}
		start := len(buf)
		buf = append(buf, t...)
		v.bytes[id] = buf[start:len(buf):len(buf)]
		ids = append(ids, int32(id))
		v.depth = max(v.depth, len(t))
	}
	sort.SliceStable(ids, func(i, j int) bool { return bytes.Compare(v.bytes[ids[i]], v.bytes[ids[j]]) < 0 })

	// Build the tree in preorder from the sorted tokens: path holds the
	// node indices along the current token's prefix.
	v.nodes = append(v.nodes, tnode{})
	path := []int32{0}
	var prev []byte
	v.toks = make([]int32, 0, len(ids))
	for _, id := range ids {
		t := v.bytes[id]
		lcp := 0
		for lcp < len(prev) && lcp < len(t) && prev[lcp] == t[lcp] {
			lcp++
		}
		for len(path) > lcp+1 {
			v.nodes[path[len(path)-1]].skip = int32(len(v.nodes))
			path = path[:len(path)-1]
		}
		for d := lcp; d < len(t); d++ {
			path = append(path, int32(len(v.nodes)))
			v.nodes = append(v.nodes, tnode{b: t[d], depth: int32(d + 1)})
		}
		n := &v.nodes[path[len(path)-1]]
		if n.tokHi == 0 {
			n.tokLo = int32(len(v.toks))
		}
		v.toks = append(v.toks, id)
		n.tokHi = int32(len(v.toks))
		prev = t
	}
	for _, i := range path {
		v.nodes[i].skip = int32(len(v.nodes))
	}
	// The end-of-generation ids go last, outside the tree, so that a mask
	// can set them like any node's tokens.
	for _, id := range v.eogs {
		v.toks = append(v.toks, int32(id))
	}
	return v
}

// Size returns the number of token ids.
func (v *Vocab) Size() int { return v.size }
