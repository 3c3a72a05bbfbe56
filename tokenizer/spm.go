package tokenizer

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// spaceMark is U+2581, which SentencePiece writes for a space.
const spaceMark = "\u2581"

// spmEncoder is SentencePiece's BPE as llama.cpp runs it: the text (spaces
// written as U+2581, a space put in front of a first fragment) is split into
// UTF-8 characters, then the adjacent pair whose concatenation is the
// highest-scoring vocabulary piece is merged, leftmost first on ties, until
// no pair forms a piece. Characters that are no piece become byte tokens.
type spmEncoder struct {
	v              *vocab
	addSpacePrefix bool
	byteTok        [256]int32
	unk            int32
	// mergeable marks pieces that text may turn into: normal, user-defined,
	// unused and untyped ones (not control, unknown or byte tokens).
	mergeable []bool
	// beforeSpace holds the characters some piece has right before a U+2581.
	beforeSpace map[string]bool
	cache       wordCache
	pool        sync.Pool // *spmScratch
}

type spmSym struct {
	start, end int32 // bytes of the escaped text
	prev, next int32
}

type spmBigram struct {
	left, right int32
	score       float32
	size        int32
}

type spmScratch struct {
	text []byte
	syms []spmSym
	heap []spmBigram
}

func newSPMEncoder(v *vocab, addSpacePrefix bool, unk int) *spmEncoder {
	e := &spmEncoder{v: v, addSpacePrefix: addSpacePrefix, byteTok: v.byteTokens(), unk: int32(unk)}
	e.mergeable = make([]bool, len(v.pieces))
	e.beforeSpace = map[string]bool{}
	for i, t := range v.types {
		e.mergeable[i] = t == typeNormal || t == typeUserDefined || t == typeUnused || t == typeUndefined
		if !e.mergeable[i] {
			continue
		}
		p := v.pieces[i]
		for k := 1; k < len(p); k++ {
			if strings.HasPrefix(p[k:], spaceMark) {
				_, n := utf8.DecodeLastRuneInString(p[:k])
				e.beforeSpace[p[k-n:k]] = true
			}
		}
	}
	e.pool.New = func() any { return new(spmScratch) }
	return e
}

// charLen is the length of the UTF-8 character at b[0]. An invalid byte is
// a character of its own (llama.cpp would take the length its first byte
// announces, swallowing what follows; for valid UTF-8 both agree).
func charLen(b []byte) int {
	if b[0] < utf8.RuneSelf {
		return 1
	}
	_, n := utf8.DecodeRune(b)
	return n
}

func (e *spmEncoder) piece(s []byte) (int32, bool) {
	id, ok := e.v.ids[string(s)]
	if !ok || !e.mergeable[id] {
		return 0, false
	}
	return id, true
}

// encode escapes and merges one fragment. Every fragment opens the text or
// follows a special token, so, as in llama.cpp, each gets the space prefix.
//
// The escaped text is cut into chunks before each U+2581 that no piece can
// join to the character in front of it: no merge can cross such a point,
// since every merge makes a piece, so the chunks can be merged (and cached)
// one by one with the same result as the whole text at once.
func (e *spmEncoder) encode(dst []int, text string, _ bool) ([]int, error) {
	sc := e.pool.Get().(*spmScratch)
	defer e.pool.Put(sc)

	// Escape: optional leading space, then every ' ' becomes U+2581.
	buf := sc.text[:0]
	if e.addSpacePrefix {
		buf = append(buf, spaceMark...)
	}
	for i := 0; i < len(text); i++ {
		if text[i] == ' ' {
			buf = append(buf, spaceMark...)
		} else {
			buf = append(buf, text[i])
		}
	}
	sc.text = buf

	var err error
	chunk, prev := 0, -1
	for off := 0; off < len(buf); {
		n := charLen(buf[off:])
		if n == 3 && buf[off] == 0xE2 && buf[off+1] == 0x96 && buf[off+2] == 0x81 && prev >= 0 && !e.beforeSpace[string(buf[prev:off])] {
			if dst, err = e.chunk(dst, buf[chunk:off], sc); err != nil {
				return nil, err
			}
			chunk = off
		}
		prev = off
		off += n
	}
	if chunk < len(buf) {
		dst, err = e.chunk(dst, buf[chunk:], sc)
	}
	return dst, err
}

// chunk merges one chunk of escaped text.
func (e *spmEncoder) chunk(dst []int, buf []byte, sc *spmScratch) ([]int, error) {
	if ids, ok := e.cache.getBytes(buf); ok {
		for _, id := range ids {
			dst = append(dst, int(id))
		}
		return dst, nil
	}
	n0 := len(dst)
	syms := sc.syms[:0]
	for off := 0; off < len(buf); {
		n := charLen(buf[off:])
		i := int32(len(syms))
		syms = append(syms, spmSym{start: int32(off), end: int32(off + n), prev: i - 1, next: i + 1})
		off += n
	}
	syms[len(syms)-1].next = -1
	sc.syms = syms

	h := spmHeap(sc.heap[:0])
	for i := 1; i < len(syms); i++ {
		h = e.tryAdd(h, buf, syms, int32(i-1), int32(i))
	}
	for len(h) > 0 {
		b := h.pop()
		l, r := &syms[b.left], &syms[b.right]
		// Skip pairs whose symbols changed since they were queued.
		if l.end == l.start || r.end == r.start || (l.end-l.start)+(r.end-r.start) != b.size || l.end != r.start {
			continue
		}
		l.end = r.end
		r.end = r.start // mark merged away
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		h = e.tryAdd(h, buf, syms, l.prev, b.left)
		h = e.tryAdd(h, buf, syms, b.left, l.next)
	}
	sc.heap = h

	for i := int32(0); i != -1; i = syms[i].next {
		s := buf[syms[i].start:syms[i].end]
		if id, ok := e.piece(s); ok {
			dst = append(dst, int(id))
			continue
		}
		for _, c := range s {
			id, err := e.byteToken(c)
			if err != nil {
				return nil, err
			}
			dst = append(dst, int(id))
		}
	}
	if len(buf) <= wordCacheMaxLen {
		ids := make([]int32, len(dst)-n0)
		for i, id := range dst[n0:] {
			ids[i] = int32(id)
		}
		e.cache.put(string(buf), ids)
	}
	return dst, nil
}

// byteToken is the token for a byte no piece covers: <0xNN>, else the
// one-byte piece, else the unknown token.
func (e *spmEncoder) byteToken(c byte) (int32, error) {
	if id := e.byteTok[c]; id >= 0 {
		return id, nil
	}
	if id, ok := e.v.ids[string([]byte{c})]; ok {
		return id, nil
	}
	if e.unk >= 0 {
		return e.unk, nil
	}
	return 0, fmt.Errorf("no token for byte 0x%02X and no unknown token", c)
}

func (e *spmEncoder) tryAdd(h spmHeap, buf []byte, syms []spmSym, left, right int32) spmHeap {
	if left < 0 || right < 0 {
		return h
	}
	s := buf[syms[left].start:syms[right].end]
	id, ok := e.piece(s)
	if !ok {
		return h
	}
	var score float32
	if e.v.scores != nil {
		score = e.v.scores[id]
	}
	return h.push(spmBigram{left: left, right: right, score: score, size: int32(len(s))})
}

// spmHeap is a max-heap: higher score first, then the leftmost pair.
type spmHeap []spmBigram

func (h spmHeap) less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score > h[j].score
	}
	return h[i].left < h[j].left
}

func (h spmHeap) push(b spmBigram) spmHeap {
	h = append(h, b)
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

func (h *spmHeap) pop() spmBigram {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
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
