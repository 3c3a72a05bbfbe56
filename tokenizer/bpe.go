package tokenizer

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// bpeMerges holds ranked merge rules over symbol ids. Symbols that are no
// vocabulary entry (a merge part or result a malformed or unusual
// vocabulary lacks) get synthetic ids from len(vocab) on, so the merge
// order stays that of the reference even then.
type bpeMerges struct {
	v      *vocab
	rules  map[uint64]bpeRule // key: left id << 32 | right id
	synth  []string           // text of synthetic symbol len(v.pieces)+i
	synthI map[string]int32
}

type bpeRule struct{ rank, id int32 }

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// symbol returns the id of text: its vocabulary id or a synthetic one.
func (b *bpeMerges) symbol(text string, create bool) (int32, bool) {
	if id, ok := b.v.ids[text]; ok {
		return id, true
	}
	if id, ok := b.synthI[text]; ok {
		return id, true
	}
	if !create {
		return -1, false
	}
	id := int32(len(b.v.pieces) + len(b.synth))
	b.synth = append(b.synth, text)
	b.synthI[text] = id
	return id, true
}

// text returns the text of a symbol id.
func (b *bpeMerges) text(id int32) string {
	if int(id) < len(b.v.pieces) {
		return b.v.pieces[id]
	}
	return b.synth[int(id)-len(b.v.pieces)]
}

// isReal reports whether id is a vocabulary token.
func (b *bpeMerges) isReal(id int32) bool { return id >= 0 && int(id) < len(b.v.pieces) }

// newBPEMerges parses merge rules "left right" (rank = position). contPrefix
// is a continuing-subword prefix (HF BPE's continuing_subword_prefix) that
// the right part loses when merged.
func newBPEMerges(v *vocab, merges [][2]string, contPrefix string) (*bpeMerges, error) {
	b := &bpeMerges{v: v, rules: make(map[uint64]bpeRule, len(merges)), synthI: map[string]int32{}}
	for i, mg := range merges {
		l, r := mg[0], mg[1]
		if l == "" || r == "" {
			return nil, fmt.Errorf("merge %d (%q %q) has an empty part", i, l, r)
		}
		a, _ := b.symbol(l, true)
		c, _ := b.symbol(r, true)
		merged := l + strings.TrimPrefix(r, contPrefix)
		id, _ := b.symbol(merged, true)
		k := pairKey(a, c)
		if _, dup := b.rules[k]; !dup {
			b.rules[k] = bpeRule{rank: int32(i), id: id}
		}
	}
	return b, nil
}

// splitMergeLines parses GGUF/HF merge lines "a b".
func splitMergeLines(lines []string) ([][2]string, error) {
	out := make([][2]string, len(lines))
	for i, ln := range lines {
		if len(ln) < 3 {
			return nil, fmt.Errorf("merge %d (%q) is not \"left right\"", i, ln)
		}
		j := strings.IndexByte(ln[1:], ' ')
		if j < 0 {
			return nil, fmt.Errorf("merge %d (%q) has no space between its parts", i, ln)
		}
		j++
		out[i] = [2]string{ln[:j], ln[j+1:]}
	}
	return out, nil
}

// bpeScratch is per-call working memory.
type bpeScratch struct {
	syms  []int32
	pos   []int32 // start byte (or character index) of each symbol
	ranks []int32
	heap  bpeHeap
	nodes []bpeNode
	word  []byte
	split splitScratch
	ids   []int32
}

type bpeNode struct {
	id         int32
	pos        int32
	prev, next int32
}

// apply merges syms (with start positions pos) in place by rank, lowest
// first and leftmost on ties, and returns the merged symbols.
func (b *bpeMerges) apply(sc *bpeScratch, syms, pos []int32) ([]int32, []int32) {
	if len(syms) < 2 {
		return syms, pos
	}
	if len(syms) > 64 {
		return b.applyHeap(sc, syms, pos)
	}
	ranks := sc.ranks[:0]
	for i := 0; i+1 < len(syms); i++ {
		ranks = append(ranks, b.rank(syms[i], syms[i+1]))
	}
	for {
		best := -1
		br := int32(-1)
		for i, r := range ranks {
			if r >= 0 && (best < 0 || r < br) {
				best, br = i, r
			}
		}
		if best < 0 {
			break
		}
		syms[best] = b.rules[pairKey(syms[best], syms[best+1])].id
		syms = append(syms[:best+1], syms[best+2:]...)
		pos = append(pos[:best+1], pos[best+2:]...)
		ranks = append(ranks[:best], ranks[best+1:]...)
		if best > 0 {
			ranks[best-1] = b.rank(syms[best-1], syms[best])
		}
		if best < len(ranks) {
			ranks[best] = b.rank(syms[best], syms[best+1])
		}
	}
	sc.ranks = ranks
	return syms, pos
}

func (b *bpeMerges) rank(l, r int32) int32 {
	if rule, ok := b.rules[pairKey(l, r)]; ok {
		return rule.rank
	}
	return -1
}

type bpeCand struct {
	rank        int32
	left, right int32
	lid, rid    int32 // the symbol ids the pair was queued with
}

// bpeHeap orders candidates by rank, then position.
type bpeHeap []bpeCand

func (h bpeHeap) less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].left < h[j].left
}

func (h bpeHeap) push(c bpeCand) bpeHeap {
	h = append(h, c)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

func (h *bpeHeap) pop() bpeCand {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && s.less(r, l) {
			c = r
		}
		if !s.less(c, i) {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}

// applyHeap is apply for long words: a linked list and a priority queue,
// O(n log n).
func (b *bpeMerges) applyHeap(sc *bpeScratch, syms, pos []int32) ([]int32, []int32) {
	nodes := sc.nodes[:0]
	for i := range syms {
		nodes = append(nodes, bpeNode{id: syms[i], pos: pos[i], prev: int32(i - 1), next: int32(i + 1)})
	}
	nodes[len(nodes)-1].next = -1
	h := sc.heap[:0]
	add := func(l, r int32) {
		if l < 0 || r < 0 {
			return
		}
		if rule, ok := b.rules[pairKey(nodes[l].id, nodes[r].id)]; ok {
			h = h.push(bpeCand{rank: rule.rank, left: l, right: r, lid: nodes[l].id, rid: nodes[r].id})
		}
	}
	for i := 1; i < len(nodes); i++ {
		add(int32(i-1), int32(i))
	}
	for len(h) > 0 {
		c := h.pop()
		l, r := &nodes[c.left], &nodes[c.right]
		if l.id < 0 || r.id < 0 || l.next != c.right || l.id != c.lid || r.id != c.rid {
			continue // stale
		}
		l.id = b.rules[pairKey(c.lid, c.rid)].id
		r.id = -1
		l.next = r.next
		if r.next >= 0 {
			nodes[r.next].prev = c.left
		}
		add(l.prev, c.left)
		add(c.left, l.next)
	}
	sc.heap, sc.nodes = h, nodes
	syms, pos = syms[:0], pos[:0]
	for i := int32(0); i >= 0; i = nodes[i].next {
		syms = append(syms, nodes[i].id)
		pos = append(pos, nodes[i].pos)
	}
	return syms, pos
}

// byteLevel maps bytes to the printable characters GPT-2's byte-level BPE
// writes them as, and back.
var byteLevel = func() (t struct {
	enc [256]rune
	dec map[rune]byte
}) {
	t.dec = make(map[rune]byte, 256)
	n := 0
	for b := 0; b < 256; b++ {
		if b >= 0x21 && b <= 0x7E || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			t.enc[b] = rune(b)
		} else {
			t.enc[b] = rune(256 + n)
			n++
		}
		t.dec[t.enc[b]] = byte(b)
	}
	return
}()

// byteLevelEncode appends the byte-level form of s to dst.
func byteLevelEncode(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		dst = utf8.AppendRune(dst, byteLevel.enc[s[i]])
	}
	return dst
}

// byteLevelDecode turns byte-level text back into bytes. Characters outside
// the map are kept as they are.
func byteLevelDecode(dst []byte, s string) []byte {
	for _, r := range s {
		if b, ok := byteLevel.dec[r]; ok {
			dst = append(dst, b)
		} else {
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

// wordCache remembers the ids of recent words. It is bounded: when full it
// starts over, which keeps the frequent words of the current text.
type wordCache struct {
	mu sync.Mutex
	m  map[string][]int32
}

const (
	wordCacheSize   = 1 << 16
	wordCacheMaxLen = 64 // longer words are not cached
)

func (c *wordCache) get(w string) ([]int32, bool) {
	c.mu.Lock()
	ids, ok := c.m[w]
	c.mu.Unlock()
	return ids, ok
}

// getBytes is get for a byte slice key, without copying it.
func (c *wordCache) getBytes(w []byte) ([]int32, bool) {
	c.mu.Lock()
	ids, ok := c.m[string(w)]
	c.mu.Unlock()
	return ids, ok
}

func (c *wordCache) put(w string, ids []int32) {
	if len(w) > wordCacheMaxLen {
		return
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= wordCacheSize {
		c.m = make(map[string][]int32, 1024)
	}
	c.m[strings.Clone(w)] = ids
	c.mu.Unlock()
}

// byteBPEEncoder is GPT-2 style byte-level BPE: the pre-tokenizer cuts the
// text into words, each word's bytes become the symbols of their
// byte-level characters, and merges are applied by rank.
type byteBPEEncoder struct {
	v       *vocab
	pre     *preTokenizer
	merges  *bpeMerges
	byteSym [256]int32
	cache   wordCache
	pool    sync.Pool
}

func newByteBPEEncoder(v *vocab, mergeLines []string, pre *preTokenizer) (*byteBPEEncoder, error) {
	mg, err := splitMergeLines(mergeLines)
	if err != nil {
		return nil, err
	}
	merges, err := newBPEMerges(v, mg, "")
	if err != nil {
		return nil, err
	}
	e := &byteBPEEncoder{v: v, pre: pre, merges: merges}
	for b := range e.byteSym {
		e.byteSym[b], _ = merges.symbol(string(byteLevel.enc[b]), true)
	}
	e.pool.New = func() any { return new(bpeScratch) }
	return e, nil
}

func (e *byteBPEEncoder) encode(dst []int, text string, _ bool) ([]int, error) {
	sc := e.pool.Get().(*bpeScratch)
	defer e.pool.Put(sc)
	words, err := e.pre.split(text, &sc.split)
	if err != nil {
		return nil, err
	}
	for _, w := range words {
		word := text[w.start:w.end]
		if ids, ok := e.cache.get(word); ok {
			for _, id := range ids {
				dst = append(dst, int(id))
			}
			continue
		}
		ids, err := e.encodeWord(sc, word)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			dst = append(dst, int(id))
		}
		e.cache.put(word, append([]int32(nil), ids...))
	}
	return dst, nil
}

// lossless reports whether every byte has a token.
func (e *byteBPEEncoder) lossless() bool {
	for _, b := range e.byteSym {
		if !e.merges.isReal(b) {
			return false
		}
	}
	return true
}

// encodeWord returns the ids of one pre-tokenized word (aliasing sc).
func (e *byteBPEEncoder) encodeWord(sc *bpeScratch, word string) ([]int32, error) {
	ids := sc.ids[:0]
	if e.pre.ignoreMerges {
		sc.word = byteLevelEncode(sc.word[:0], word)
		if id, ok := e.v.ids[string(sc.word)]; ok {
			sc.ids = append(ids, id)
			return sc.ids, nil
		}
	}
	syms, pos := sc.syms[:0], sc.pos[:0]
	for i := 0; i < len(word); i++ {
		syms = append(syms, e.byteSym[word[i]])
		pos = append(pos, int32(i))
	}
	syms, pos = e.merges.apply(sc, syms, pos)
	sc.syms, sc.pos = syms, pos
	for i, id := range syms {
		if e.merges.isReal(id) {
			ids = append(ids, id)
			continue
		}
		// Not a token: fall back to the tokens of its bytes.
		end := len(word)
		if i+1 < len(pos) {
			end = int(pos[i+1])
		}
		for j := int(pos[i]); j < end; j++ {
			// A byte the vocabulary has no token for is dropped, as
			// llama.cpp and Hugging Face tokenizers do (Falcon, for one,
			// lacks some control bytes).
			if b := e.byteSym[word[j]]; e.merges.isReal(b) {
				ids = append(ids, b)
			}
		}
	}
	sc.ids = ids
	return ids, nil
}

// byteLevelPiece decodes byte-level BPE tokens: normal tokens map their
// characters back to bytes, user-defined tokens are their text, <0xNN>
// byte tokens their byte.
func byteLevelPiece(v *vocab) func(id int) []byte {
	return func(id int) []byte {
		p := v.pieces[id]
		switch v.types[id] {
		case typeUserDefined:
			return []byte(p)
		case typeByte:
			if b, ok := parseByteToken(p); ok {
				return []byte{b}
			}
		}
		return byteLevelDecode(nil, p)
	}
}
