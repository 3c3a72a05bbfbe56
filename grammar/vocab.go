package grammar

import (
	"bytes"
	"sort"
)

// maxTokenLen bounds the bytes of a token (longer ones are never allowed).
const maxTokenLen = 1<<16 - 1

// Vocab is a tokenizer's vocabulary prepared for masking: the bytes of each
// token id in a prefix tree. Build it once per tokenizer and share it; it is
// immutable and safe for concurrent use.
type Vocab struct {
	size  int
	bytes [][]byte // per id, nil for a token that is never allowed
	eog   []bool   // per id
	eogs  []int
	nodes []tnode // preorder; nodes[0] is the root (no byte); a sentinel ends it
	toks  []int32 // token ids grouped by the node they end at
	// below[i] is the set of ASCII bytes on the edges below node i; bit i
	// of high is set when a byte >= 0x80 is among them, and bit i of
	// clean when every path below node i continues its path as valid
	// UTF-8 (perhaps ending inside a character). A walk skips a subtree
	// whose characters all lead a state back to itself.
	below  [][2]uint64
	high   []uint64
	clean  []uint64
	height []uint16 // bytes on the longest path below node i
	depth  int      // longest token, in bytes
}

// tnode is a prefix-tree node: the index just past its subtree (to skip
// it), where its tokens start in toks (they end where the next node's
// start: tokens are stored in preorder), its depth, and the byte on the
// edge into it. 12 bytes, so that a walk streams through memory.
type tnode struct {
	skip  int32
	tokLo int32
	depth uint16
	b     byte
}

// NewVocab indexes a vocabulary. tokens[id] is the text of token id as
// bytes (for byte-level BPE, the decoded bytes, not the printable
// "Ġ"-style form; for SentencePiece, with "▁" turned into a space and
// <0xNN> into the byte). Give nil for special and control tokens: they are
// never allowed. The ids in eog end generation: they are allowed only
// where the output is a complete sentence of the grammar, whatever their
// bytes. Empty tokens, and tokens over 65535 bytes, are never allowed.
// NewVocab copies what it keeps.
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
		v.depth = max(v.depth, min(len(t), maxTokenLen))
	}
	sort.SliceStable(ids, func(i, j int) bool { return bytes.Compare(v.bytes[ids[i]], v.bytes[ids[j]]) < 0 })

	// Build the tree in preorder from the sorted tokens: path holds the
	// node indices along the current token's prefix. Tokens equal to a
	// prefix sort before its extensions, so each node's tokens are added
	// right after it is created, and the token list follows preorder.
	v.nodes = append(v.nodes, tnode{})
	path := []int32{0}
	dec := []utf8Dec{{}} // decoder state after each node's path
	var prev []byte
	v.toks = make([]int32, 0, len(ids))
	for _, id := range ids {
		t := v.bytes[id]
		if len(t) > maxTokenLen {
			v.bytes[id] = nil // never allowed
			continue
		}
		lcp := 0
		for lcp < len(prev) && lcp < len(t) && prev[lcp] == t[lcp] {
			lcp++
		}
		for len(path) > lcp+1 {
			v.nodes[path[len(path)-1]].skip = int32(len(v.nodes))
			path = path[:len(path)-1]
		}
		for d := lcp; d < len(t); d++ {
			dec = append(dec, dec[path[len(path)-1]].next(t[d]))
			path = append(path, int32(len(v.nodes)))
			v.nodes = append(v.nodes, tnode{b: t[d], depth: uint16(d + 1), tokLo: int32(len(v.toks))})
		}
		v.toks = append(v.toks, id)
		prev = t
	}
	for _, i := range path {
		v.nodes[i].skip = int32(len(v.nodes))
	}
	// A sentinel gives the last node's token end.
	v.nodes = append(v.nodes, tnode{tokLo: int32(len(v.toks))})
	v.below = make([][2]uint64, len(v.nodes))
	v.height = make([]uint16, len(v.nodes))
	v.high = make([]uint64, (len(v.nodes)+63)/64)
	v.clean = make([]uint64, (len(v.nodes)+63)/64)
	bad := make([]bool, len(v.nodes)) // an invalid sequence at or below
	for i := len(v.nodes) - 2; i >= 0; i-- {
		bad[i] = dec[i].invalid()
		cleanBelow := true
		for c := int32(i + 1); c < v.nodes[i].skip; c = v.nodes[c].skip {
			bad[i] = bad[i] || bad[c]
			cleanBelow = cleanBelow && !bad[c]
			v.height[i] = max(v.height[i], v.height[c]+1)
			b := v.nodes[c].b
			v.below[i][0] |= v.below[c][0]
			v.below[i][1] |= v.below[c][1]
			hi := v.high[c>>6]&(1<<(c&63)) != 0
			if b < 128 {
				v.below[i][b>>6] |= 1 << (b & 63)
			} else {
				hi = true
			}
			if hi {
				v.high[i>>6] |= 1 << (i & 63)
			}
		}
		if cleanBelow && !dec[i].invalid() {
			v.clean[i>>6] |= 1 << (i & 63)
		}
	}
	return v
}

// Size returns the number of token ids.
func (v *Vocab) Size() int { return v.size }

// utf8Dec is a UTF-8 decoder's state: the continuation bytes still
// needed, and the range the next one must fall in (which excludes overlong
// forms, surrogates and values past U+10FFFF). need 0xff: invalid.
type utf8Dec struct {
	need   uint8
	lo, hi byte
}

func (d utf8Dec) invalid() bool { return d.need == 0xff }

func (d utf8Dec) next(b byte) utf8Dec {
	bad := utf8Dec{need: 0xff}
	switch {
	case d.invalid():
		return bad
	case d.need > 0:
		if b < d.lo || b > d.hi {
			return bad
		}
		return utf8Dec{d.need - 1, 0x80, 0xbf}
	case b < 0x80:
		return utf8Dec{}
	case 0xc2 <= b && b <= 0xdf:
		return utf8Dec{1, 0x80, 0xbf}
	case b == 0xe0:
		return utf8Dec{2, 0xa0, 0xbf}
	case b == 0xed:
		return utf8Dec{2, 0x80, 0x9f}
	case 0xe1 <= b && b <= 0xef:
		return utf8Dec{2, 0x80, 0xbf}
	case b == 0xf0:
		return utf8Dec{3, 0x90, 0xbf}
	case b == 0xf4:
		return utf8Dec{3, 0x80, 0x8f}
	case 0xf1 <= b && b <= 0xf3:
		return utf8Dec{3, 0x80, 0xbf}
	}
	return bad
}
