package tokenizer

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"unicode/utf8"
)

// GGUF keys of the unigram (T5) tokenizer.
const (
	keyRemoveExtraWS = "tokenizer.ggml.remove_extra_whitespaces"
	keyCharsMap      = "tokenizer.ggml.precompiled_charsmap"
)

// ugmEncoder is SentencePiece's unigram language model (Kudo, 2018), the
// tokenizer of T5 GGUFs (tokenizer.ggml.model "t5"), as llama.cpp runs
// it: the text is normalised (the model's precompiled character map,
// then whitespace: runs merged, U+2581 for each space, one before the
// text), and the tokenization with the highest sum of token scores
// (log-probabilities) is found by Viterbi over the normalised bytes. A
// character no token covers is the unknown token, scored ten below the
// lowest normal token; neighbouring unknowns become one.
type ugmEncoder struct {
	v        *vocab
	pieces   byteTrie // normal, user-defined and unused tokens
	user     byteTrie // user-defined tokens: never normalised
	charsmap *charsMap
	unk      int
	unkScore float32

	spacePrefix bool // add_space_prefix: a space before the text
	mergeSpaces bool // remove_extra_whitespaces

	pool sync.Pool // *ugmScratch
}

type ugmScratch struct {
	norm []byte
	best []ugmBest
}

// ugmBest is the best tokenization of a prefix of the normalised text:
// its last token, where that token starts, and the summed score.
type ugmBest struct {
	id    int32
	start int32
	score float32
}

func newUGMEncoder(v *vocab, unk int, spacePrefix, mergeSpaces bool, charsmap []byte) (*ugmEncoder, error) {
	if unk < 0 || unk >= len(v.pieces) {
		return nil, fmt.Errorf("the unigram model needs an unknown token")
	}
	e := &ugmEncoder{v: v, unk: unk, spacePrefix: spacePrefix, mergeSpaces: mergeSpaces}
	if len(charsmap) > 0 {
		cm, err := parseCharsMap(charsmap)
		if err != nil {
			return nil, err
		}
		e.charsmap = cm
	}
	lo := float32(math.MaxFloat32)
	for i, t := range v.types {
		if t == typeNormal {
			lo = min(lo, v.scores[i])
		}
		if t == typeNormal || t == typeUserDefined || t == typeUnused {
			e.pieces.insert(v.pieces[i], int32(i))
		}
		if t == typeUserDefined {
			e.user.insert(v.pieces[i], int32(i))
		}
	}
	e.unkScore = lo - 10
	e.pool.New = func() any { return new(ugmScratch) }
	return e, nil
}

// encode implements fragmentEncoder.
func (e *ugmEncoder) encode(dst []int, text string, _ bool) ([]int, error) {
	sc := e.pool.Get().(*ugmScratch)
	defer e.pool.Put(sc)
	sc.norm = e.normalize(sc.norm[:0], text)
	s := sc.norm
	n := len(s)
	if n == 0 {
		return dst, nil
	}
	if cap(sc.best) < n+1 {
		sc.best = make([]ugmBest, n+1)
	}
	best := sc.best[:n+1]
	for i := range best {
		best[i] = ugmBest{id: int32(e.unk), score: -math.MaxFloat32}
	}
	best[0].score = 0
	for at := 0; at < n; {
		cl := min(utf8LenOf(s[at]), n-at)
		base := float64(best[at].score)
		whole := false // a token covers exactly this character
		node := 0
		for end := at; end < n; end++ {
			if node = e.pieces.next(node, s[end]); node < 0 {
				break
			}
			id := e.pieces.nodes[node].id
			if id < 0 {
				continue
			}
			if end+1-at == cl {
				whole = true
			}
			// Sums in float64, kept as float32: llama.cpp's arithmetic,
			// which gives SentencePiece's results.
			score := float64(e.v.scores[id])
			if e.v.types[id] == typeUserDefined {
				score = 0
			}
			if c := base + score; c > float64(best[end+1].score) {
				best[end+1] = ugmBest{id: id, start: int32(at), score: float32(c)}
			}
		}
		if !whole {
			if c := base + float64(e.unkScore); c > float64(best[at+cl].score) {
				best[at+cl] = ugmBest{id: int32(e.unk), start: int32(at), score: float32(c)}
			}
		}
		at += cl
	}
	// Walk back from the end; the tokens come out last first.
	first := len(dst)
	prevUnk := false
	for at := n; ; {
		b := best[at]
		isUnk := int(b.id) == e.unk
		if !(prevUnk && isUnk) {
			dst = append(dst, int(b.id))
		}
		prevUnk = isUnk
		if b.start == 0 {
			break
		}
		at = int(b.start)
	}
	for i, j := first, len(dst)-1; i < j; i, j = i+1, j-1 {
		dst[i], dst[j] = dst[j], dst[i]
	}
	return dst, nil
}

// utf8LenOf is the length of the UTF-8 sequence its first byte announces
// (1 for a stray continuation byte).
func utf8LenOf(b byte) int {
	switch {
	case b < 0xC0:
		return 1
	case b < 0xE0:
		return 2
	case b < 0xF0:
		return 3
	}
	return 4
}

// normalize appends the normalised text to dst: each prefix is a
// user-defined token (kept as is), or else the longest match of the
// character map (replaced), or else one UTF-8 character (kept; an invalid
// byte becomes U+FFFD); then spaces become U+2581, with runs of spaces
// merged (remove_extra_whitespaces) and one before the first word
// (add_space_prefix).
func (e *ugmEncoder) normalize(dst []byte, text string) []byte {
	w := spaceWriter{dst: dst, spacePrefix: e.spacePrefix, mergeSpaces: e.mergeSpaces}
	for at := 0; at < len(text); {
		if n := e.user.longest(text[at:]); n > 0 {
			w.writeString(text[at : at+n])
			at += n
			continue
		}
		if e.charsmap != nil {
			if repl, n := e.charsmap.longest(text[at:]); n > 0 {
				w.write(repl)
				at += n
				continue
			}
		}
		r, n := utf8.DecodeRuneInString(text[at:])
		if r == utf8.RuneError && n <= 1 {
			w.writeString("\uFFFD")
			at++
			continue
		}
		w.writeString(text[at : at+n])
		at += n
	}
	return w.dst
}

// spaceWriter appends normalised text with SentencePiece's whitespace
// rules: each space becomes U+2581, or with mergeSpaces a run of spaces
// becomes one U+2581 before the next word; with spacePrefix one U+2581
// goes before the first word.
type spaceWriter struct {
	dst                      []byte
	spacePrefix, mergeSpaces bool
	prepended, inWord        bool
}

func (w *spaceWriter) writeByte(c byte) {
	if c == ' ' {
		w.inWord = false
		if !w.mergeSpaces {
			w.dst = append(w.dst, spaceMark...)
		}
		return
	}
	if !w.inWord {
		w.inWord = true
		if (w.spacePrefix && !w.prepended) || w.mergeSpaces {
			w.dst = append(w.dst, spaceMark...)
			w.prepended = true
		}
	}
	w.dst = append(w.dst, c)
}

func (w *spaceWriter) write(p []byte) {
	for _, c := range p {
		w.writeByte(c)
	}
}

func (w *spaceWriter) writeString(p string) {
	for i := 0; i < len(p); i++ {
		w.writeByte(p[i])
	}
}

// byteTrie is a trie over the bytes of token pieces.
type byteTrie struct {
	nodes []trieNode
}

type trieNode struct {
	id       int32 // the token ending here, -1 for none
	children map[byte]int32
}

func (t *byteTrie) insert(p string, id int32) {
	if len(t.nodes) == 0 {
		t.nodes = append(t.nodes, trieNode{id: -1})
	}
	n := 0
	for i := 0; i < len(p); i++ {
		c, ok := t.nodes[n].children[p[i]]
		if !ok {
			c = int32(len(t.nodes))
			t.nodes = append(t.nodes, trieNode{id: -1})
			if t.nodes[n].children == nil {
				t.nodes[n].children = map[byte]int32{}
			}
			t.nodes[n].children[p[i]] = c
		}
		n = int(c)
	}
	if t.nodes[n].id < 0 {
		t.nodes[n].id = id
	}
}

// next returns the child of node along b, or -1.
func (t *byteTrie) next(node int, b byte) int {
	if node >= len(t.nodes) {
		return -1
	}
	c, ok := t.nodes[node].children[b]
	if !ok {
		return -1
	}
	return int(c)
}

// longest returns the length of the longest piece that prefixes s (0 for
// none).
func (t *byteTrie) longest(s string) int {
	best, node := 0, 0
	for i := 0; i < len(s); i++ {
		if node = t.next(node, s[i]); node < 0 {
			break
		}
		if t.nodes[node].id >= 0 {
			best = i + 1
		}
	}
	return best
}

// charsMap is SentencePiece's precompiled character map: a little-endian
// uint32 byte count, that many bytes of a double-array trie over input
// byte sequences (XOR-compressed, Kanda 2018: each 32-bit unit packs a
// BASE offset, a leaf flag and the label checked on entry), and the
// NUL-terminated replacement strings the leaves point into.
type charsMap struct {
	units []uint32
	repl  []byte
}

func parseCharsMap(b []byte) (*charsMap, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("precompiled_charsmap: %d bytes, too short", len(b))
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n%4 != 0 || n < 4 || 4+n > len(b) {
		return nil, fmt.Errorf("precompiled_charsmap: a trie of %d bytes in %d", n, len(b)-4)
	}
	cm := &charsMap{units: make([]uint32, n/4), repl: b[4+n:]}
	for i := range cm.units {
		cm.units[i] = binary.LittleEndian.Uint32(b[4+4*i:])
	}
	return cm, nil
}

// Unit fields: BASE in bits 10..30 (shifted left by 8 when bit 9 is set),
// the leaf flag in bit 8, the label in bits 0..7 (with bit 31, set on
// value units, so that no label check passes on one), and a value unit's
// replacement offset in bits 0..30.
func (m *charsMap) unit(i uint32) (uint32, bool) {
	if int(i) >= len(m.units) {
		return 0, false
	}
	return m.units[i], true
}

func unitBase(u uint32) uint32  { return (u >> 10) << ((u & (1 << 9)) >> 6) }
func unitLabel(u uint32) uint32 { return u & (1<<31 | 0xff) }
func unitLeaf(u uint32) bool    { return u>>8&1 == 1 }
func unitValue(u uint32) uint32 { return u & (1<<31 - 1) }

// longest returns the replacement of the longest prefix of s the map
// holds, and that prefix's length (0 for none).
func (m *charsMap) longest(s string) ([]byte, int) {
	root, ok := m.unit(0)
	if !ok {
		return nil, 0
	}
	node := unitBase(root)
	bestLen, bestOff := 0, uint32(0)
	for i := 0; i < len(s); i++ {
		c := uint32(s[i])
		if c == 0 {
			break
		}
		node ^= c
		u, ok := m.unit(node)
		if !ok || unitLabel(u) != c {
			break
		}
		node ^= unitBase(u)
		if unitLeaf(u) {
			v, ok := m.unit(node)
			if !ok {
				break
			}
			bestLen, bestOff = i+1, unitValue(v)
		}
	}
	if bestLen == 0 || int(bestOff) >= len(m.repl) {
		return nil, 0
	}
	r := m.repl[bestOff:]
	end := 0
	for end < len(r) && r[end] != 0 {
		end++
	}
	return r[:end], bestLen
}
