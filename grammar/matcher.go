package grammar

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// A Matcher follows one generation under a grammar: it masks the tokens
// that may come next and advances on the token that was chosen.
//
// Its state is a set of parse stacks (a pushdown automaton over code
// points) plus any unfinished UTF-8 sequence. Sets of stacks are interned,
// and the transition of each (set, byte) pair is computed once and cached,
// so masking is a walk over the vocabulary's prefix tree with a table look-up
// per tree node, skipping every subtree whose prefix the grammar rejects and
// taking whole every subtree it surely accepts; each state's mask is cached.
// Caches are bounded: past their limits they are dropped, keeping the
// current state.
//
// A Matcher is not safe for concurrent use.
type Matcher struct {
	g *Grammar
	v *Vocab

	// Interned stacks: node i is the stack with elems[pos] on top and
	// stack parent below; node 0 is the empty stack.
	nodes   []snode
	nodeIdx map[uint64]int32
	mark    []uint32
	gen     uint32

	// Interned states of the lazily built byte automaton; 0 is dead, 1
	// (tooComplex) is where a transition went that needed too many stacks.
	// trans[s<<8|b] is the state after byte b from state s, or unknown.
	states    []*dstate
	trans     []uint32
	maskWords int // words held by cached masks
	stateIdx  map[string]uint32
	cur       uint32
	finished  bool

	// Limits (maxStates, maxNodes, maxStacks; lowered by tests).
	limStates, limNodes, limStacks int
	limSkip                        int32 // minSkip
	// overflow is set when a transition needed more than limStacks
	// stacks (see ErrTooComplex).
	overflow bool

	out  []int32  // closure output
	bits []uint64 // Mask's bitset
	key  []byte   // state key scratch
	walk []uint32 // state per tree depth during a mask walk
}

type snode struct{ pos, parent int32 }

type dstate struct {
	stacks []int32 // sorted; 0 (the empty stack) means the input may end
	val    uint32  // bits of an unfinished UTF-8 sequence (a representative if shared)
	shared bool    // val is a representative (see partialState)
	need   uint8   // continuation bytes still needed
	total  uint8   // length of that sequence
	accept bool    // a complete sentence: need == 0 and stacks has 0
	final  bool    // nothing can follow: stacks == [0]
	// mask caches this state's mask (nil until computed, or when over
	// the cache's budget); maskN is its number of allowed tokens.
	mask  []uint64
	maskN int
	// Once loopKnown: loop is the set of ASCII bytes that lead back to
	// this state; uni the set of those that lead to succ, the live state
	// most ASCII bytes lead to (this one if it is among the most).
	loop      [2]uint64
	uni       [2]uint64
	succ      uint32
	loopHigh  bool // every non-ASCII character leads back here
	loopKnown bool
	// done is, for a shared unfinished sequence, the state once the
	// character is complete (all completions lead there); 0 until known.
	done uint32
}

// Caches are dropped (keeping the current state) past these sizes.
const (
	maxStates = 1 << 13
	maxNodes  = 1 << 18
	// maxStacks bounds the stacks of one state. Ambiguous grammars can
	// need a number of stacks exponential in the length of the output
	// (S ::= "a" S "b" | "a" S "c" | ""); past this the matcher gives
	// ErrTooComplex instead of slowing down without bound.
	maxStacks = 1 << 14
)

const (
	tooComplex = 1
	unknown    = ^uint32(0)
	// maxMaskWords bounds the memory of cached masks (4 MiB).
	maxMaskWords = 1 << 19
)

// NewMatcher returns a Matcher at the start of g over vocabulary v.
func (g *Grammar) NewMatcher(v *Vocab) *Matcher {
	m := &Matcher{g: g, v: v, limStates: maxStates, limNodes: maxNodes, limStacks: maxStacks, limSkip: minSkip}
	m.clearCaches()
	m.cur = m.initial()
	return m
}

func (m *Matcher) clearCaches() {
	// New slices: maybeCompact still reads the old ones.
	m.nodes = []snode{{-1, -1}}
	m.mark = []uint32{0}
	m.nodeIdx = make(map[uint64]int32)
	m.states = []*dstate{{}, {}}
	if m.trans == nil {
		m.trans = make([]uint32, 512, 128<<8)
	}
	m.trans = m.trans[:512] // maybeCompact needs the old states, not these
	for i := range 256 {
		m.trans[i] = 0              // dead stays dead
		m.trans[256+i] = tooComplex // and so does tooComplex
	}
	m.stateIdx = make(map[string]uint32)
	m.maskWords = 0
}

// initial returns the start state.
func (m *Matcher) initial() uint32 {
	m.gen++
	m.out = m.out[:0]
	for _, a := range m.g.rules[m.g.root].alts {
		m.close(a, 0)
	}
	return m.state(m.sortOut(), 0, 0, 0)
}

// Reset puts m back at the start of the grammar; caches are kept.
func (m *Matcher) Reset() {
	m.finished = false
	m.cur = m.initial()
}

func (m *Matcher) intern(pos, parent int32) int32 {
	k := uint64(uint32(pos))<<32 | uint64(uint32(parent))
	if id, ok := m.nodeIdx[k]; ok {
		return id
	}
	id := int32(len(m.nodes))
	m.nodes = append(m.nodes, snode{pos, parent})
	m.mark = append(m.mark, 0)
	m.nodeIdx[k] = id
	return id
}

// close adds to m.out every stack that the stack (pos over parent) can
// become without consuming input and that has a terminal on top (or is
// empty). Nodes are visited once per generation m.gen; left recursion was
// rejected at compile time, so this terminates.
func (m *Matcher) close(pos, parent int32) {
	el := m.g.elems
	for el[pos].kind == kEnd {
		if parent == 0 {
			m.out = append(m.out, 0)
			return
		}
		pos, parent = m.nodes[parent].pos, m.nodes[parent].parent
	}
	id := m.intern(pos, parent)
	if m.mark[id] == m.gen {
		return
	}
	m.mark[id] = m.gen
	e := el[pos]
	if e.kind == kTerm {
		m.out = append(m.out, id)
		return
	}
	cont := parent
	if el[pos+1].kind != kEnd {
		cont = m.intern(pos+1, parent)
	}
	for _, a := range m.g.rules[e.arg].alts {
		m.close(a, cont)
	}
}

func (m *Matcher) sortOut() []int32 {
	slices.Sort(m.out)
	return slices.Compact(m.out)
}

// advance computes into m.out the stacks after code point c.
func (m *Matcher) advance(stacks []int32, c rune) []int32 {
	m.gen++
	m.out = m.out[:0]
	for _, id := range stacks {
		if id == 0 {
			continue
		}
		n := m.nodes[id]
		if m.g.classes[m.g.elems[n.pos].arg].has(c) {
			m.close(n.pos+1, n.parent)
		}
	}
	return m.sortOut()
}

// advanceState is the state after code point c, or tooComplex.
func (m *Matcher) advanceState(stacks []int32, c rune) uint32 {
	out := m.advance(stacks, c)
	if len(out) > m.limStacks {
		return tooComplex
	}
	return m.state(out, 0, 0, 0)
}

// state interns a state; stacks may be scratch.
func (m *Matcher) state(stacks []int32, val uint32, need, total uint8) uint32 {
	return m.intern3(stacks, val, val, need, total)
}

// partialState interns an unfinished UTF-8 sequence whose completions all
// behave alike: val is a representative, left out of the key.
func (m *Matcher) partialState(stacks []int32, val uint32, need, total uint8) uint32 {
	return m.intern3(stacks, ^uint32(0), val, need, total)
}

func (m *Matcher) intern3(stacks []int32, keyVal, val uint32, need, total uint8) uint32 {
	if len(stacks) == 0 {
		return 0
	}
	k := binary.LittleEndian.AppendUint32(m.key[:0], keyVal)
	k = append(k, need, total)
	for _, s := range stacks {
		k = binary.LittleEndian.AppendUint32(k, uint32(s))
	}
	m.key = k
	if id, ok := m.stateIdx[string(k)]; ok {
		return id
	}
	id := uint32(len(m.states))
	st := &dstate{stacks: slices.Clone(stacks), val: val, need: need, total: total, shared: keyVal != val}
	st.accept = need == 0 && stacks[0] == 0
	st.final = st.accept && len(stacks) == 1
	m.states = append(m.states, st)
	for range 256 {
		m.trans = append(m.trans, unknown)
	}
	m.stateIdx[string(k)] = id
	return id
}

// step returns the state after byte b from state s (0: rejected).
func (m *Matcher) step(s uint32, b byte) uint32 {
	if t := m.trans[s<<8|uint32(b)]; t != unknown {
		return t
	}
	t := m.computeStep(m.states[s], b)
	m.trans[s<<8|uint32(b)] = t
	return t
}

var utf8Min = [5]rune{0, 0, 0x80, 0x800, 0x10000}
var utf8Max = [5]rune{0, 0x7f, 0x7ff, 0xffff, 0x10ffff}

func (m *Matcher) computeStep(st *dstate, b byte) uint32 {
	var val uint32
	var need, total uint8
	switch {
	case st.need > 0:
		if b&0xc0 != 0x80 {
			return 0
		}
		val, need, total = st.val<<6|uint32(b&0x3f), st.need-1, st.total
		if need == 0 {
			c := rune(val)
			if c < utf8Min[total] || c > maxRune || (0xd800 <= c && c <= 0xdfff) {
				return 0
			}
			return m.advanceState(st.stacks, c)
		}
	case b < 0x80:
		return m.advanceState(st.stacks, rune(b))
	case b&0xe0 == 0xc0:
		val, need, total = uint32(b&0x1f), 1, 2
	case b&0xf0 == 0xe0:
		val, need, total = uint32(b&0x0f), 2, 3
	case b&0xf8 == 0xf0:
		val, need, total = uint32(b&0x07), 3, 4
	default:
		return 0
	}
	// An unfinished sequence. Keep only the stacks whose terminal matches
	// a valid code point the sequence can still complete to; none: dead.
	sh := 6 * uint(need)
	lo0, hi0 := rune(val<<sh), rune(val<<sh|(1<<sh-1))
	lo, hi := max(lo0, utf8Min[total]), min(hi0, utf8Max[total])
	if lo > hi {
		return 0
	}
	// uniform: every completion is valid and every kept stack matches all
	// of them. Then the state does not depend on val: all such sequences
	// share one state (val is just a representative), which keeps the
	// number of states down for grammars like JSON strings that accept
	// any non-ASCII character.
	uniform := lo == lo0 && hi == hi0 && (hi < 0xd800 || lo > 0xdfff)
	kept := m.out[:0]
	for _, id := range st.stacks {
		if id == 0 {
			continue
		}
		c := &m.g.classes[m.g.elems[m.nodes[id].pos].arg]
		if lo <= 0xd7ff && c.intersects(lo, min(hi, 0xd7ff)) ||
			hi >= 0xe000 && c.intersects(max(lo, 0xe000), hi) {
			kept = append(kept, id)
			uniform = uniform && c.covers(lo, hi)
		}
	}
	m.out = kept
	if len(kept) == 0 {
		return 0
	}
	if uniform {
		return m.partialState(kept, val, need, total)
	}
	return m.state(kept, val, need, total)
}

// maybeCompact drops the caches when they have grown too large, keeping the
// current state. Called only between operations.
func (m *Matcher) maybeCompact() {
	if len(m.states) <= m.limStates && len(m.nodes) <= m.limNodes {
		return
	}
	old := m.states[m.cur]
	oldNodes := m.nodes
	m.clearCaches()
	var copyNode func(id int32) int32
	copyNode = func(id int32) int32 {
		if id == 0 {
			return 0
		}
		n := oldNodes[id]
		return m.intern(n.pos, copyNode(n.parent))
	}
	stacks := make([]int32, len(old.stacks))
	for i, id := range old.stacks {
		stacks[i] = copyNode(id)
	}
	slices.Sort(stacks)
	if old.shared {
		m.cur = m.partialState(stacks, old.val, old.need, old.total)
	} else {
		m.cur = m.state(stacks, old.val, old.need, old.total)
	}
}

// FillMask sets bit id%64 of mask[id/64] for every token id that may come
// next and clears the others; mask needs (v.Size()+63)/64 words. It returns
// the number of allowed tokens. When none is allowed and the output is
// incomplete it returns an error wrapping ErrDeadEnd; when the output is
// complete and no token (nor end-of-generation id) can follow it returns 0
// and no error, and Done reports true. An error wrapping ErrTooComplex
// means the grammar was too ambiguous to decide some tokens (they are left
// out of the mask).
func (m *Matcher) FillMask(mask []uint64) (int, error) {
	if need := (m.v.size + 63) / 64; len(mask) < need {
		return 0, fmt.Errorf("grammar: mask has %d words, vocabulary needs %d", len(mask), need)
	}
	return m.fill(mask[:(m.v.size+63)/64])
}

// Mask is FillMask into a slice of bools: dst[id] tells whether token id
// may come next. dst needs v.Size() entries.
func (m *Matcher) Mask(dst []bool) (int, error) {
	if len(dst) < m.v.size {
		return 0, fmt.Errorf("grammar: mask has %d entries, vocabulary has %d", len(dst), m.v.size)
	}
	if need := (m.v.size + 63) / 64; len(m.bits) < need {
		m.bits = make([]uint64, need)
	}
	n, err := m.fill(m.bits)
	clear(dst)
	for w, x := range m.bits {
		for x != 0 {
			dst[w<<6|bits.TrailingZeros64(x)] = true
			x &= x - 1
		}
	}
	return n, err
}

// MaskLogits sets logits[id] to -Inf for every token id that may not come
// next, leaving the others, so that any sampler picks an allowed token.
// logits needs v.Size() entries. It returns what FillMask returns; on
// ErrDeadEnd every logit is -Inf.
func (m *Matcher) MaskLogits(logits []float32) (int, error) {
	if len(logits) < m.v.size {
		return 0, fmt.Errorf("grammar: %d logits, vocabulary has %d", len(logits), m.v.size)
	}
	if need := (m.v.size + 63) / 64; len(m.bits) < need {
		m.bits = make([]uint64, need)
	}
	n, err := m.fill(m.bits)
	if err != nil && !errors.Is(err, ErrDeadEnd) && !errors.Is(err, ErrTooComplex) {
		return n, err
	}
	inf := float32(math.Inf(-1))
	for w, x := range m.bits {
		base := w << 6
		if x == ^uint64(0) {
			continue
		}
		for j := 0; j < 64 && base+j < m.v.size; j++ {
			if x&(1<<j) == 0 {
				logits[base+j] = inf
			}
		}
	}
	return n, err
}

// fill computes the mask of the current state into bits, from the state's
// cached mask when it has one.
func (m *Matcher) fill(bits []uint64) (int, error) {
	clear(bits)
	if m.finished {
		return 0, ErrFinished
	}
	m.maybeCompact()
	st := m.states[m.cur]
	if st.mask != nil {
		copy(bits, st.mask)
		return st.maskN, nil
	}
	n := 0
	if st.accept {
		for _, id := range m.v.eogs {
			bits[id>>6] |= 1 << (id & 63)
		}
		n += len(m.v.eogs)
	}
	m.overflow = false
	if !st.final {
		n += m.walkTree(bits)
	}
	if m.overflow {
		return n, fmt.Errorf("%w: mask incomplete", ErrTooComplex)
	}
	if n == 0 && !st.accept {
		return 0, ErrDeadEnd
	}
	if m.maskWords+len(bits) <= maxMaskWords {
		st.mask, st.maskN = slices.Clone(bits), n
		m.maskWords += len(bits)
	}
	return n, nil
}

// walkTree walks the prefix tree from the current state, setting the bits
// of the tokens of every node whose bytes the grammar accepts and skipping
// the subtree of every node it rejects. It returns the number of bits set.
func (m *Matcher) walkTree(bits []uint64) int {
	nodes := m.v.nodes
	toks := m.v.toks
	if cap(m.walk) < m.v.depth+1 {
		m.walk = make([]uint32, m.v.depth+1)
	}
	walk := m.walk[:m.v.depth+1]
	walk[0] = m.cur
	trans := m.trans
	// The tree's byte paths start on a character boundary only when the
	// current state does (see Vocab.clean).
	rootBoundary := m.states[m.cur].need == 0
	n := 0
	for i := 1; i < len(nodes)-1; {
		nd := &nodes[i]
		s := walk[nd.depth-1]
		t := trans[s<<8|uint32(nd.b)]
		if t == unknown {
			t = m.step(s, nd.b)
			trans = m.trans // step may have grown it
		}
		if t <= tooComplex {
			m.overflow = m.overflow || t == tooComplex
			i = int(nd.skip)
			continue
		}
		walk[nd.depth] = t
		next := i + 1
		// A large subtree that the grammar surely accepts whole: every
		// token in it is allowed, no need to walk it.
		if nd.skip-int32(next) >= m.limSkip && m.acceptsSubtree(t, i, rootBoundary) {
			next = int(nd.skip)
		}
		trans = m.trans
		for _, id := range toks[nd.tokLo:nodes[next].tokLo] {
			bits[id>>6] |= 1 << (id & 63)
			n++
		}
		i = next
	}
	return n
}

// minSkip is the smallest subtree (in nodes) worth checking for a skip.
const minSkip = 16

// acceptsSubtree reports whether every path below tree node i, read from
// state t, stays alive, so that all of the subtree's tokens are allowed.
// It holds when
//   - the bytes below are ASCII and, from t, lead each time to one live
//     state (for as many bytes as the subtree is deep): inside a JSON
//     string every ordinary character leads back to the same state, and
//     inside a string with a maximum length to the state one character
//     further;
//   - or the bytes below are valid UTF-8 whose ASCII bytes and whole
//     non-ASCII characters all lead the state back to itself (t, or inside
//     a character whose completions behave alike, the state once the
//     character is complete).
func (m *Matcher) acceptsSubtree(t uint32, i int, rootBoundary bool) bool {
	st := m.looping(t)
	if st == nil {
		return false
	}
	b := m.v.below[i]
	w, bit := i>>6, uint64(1)<<(i&63)
	if m.v.high[w]&bit == 0 && m.states[t].need == 0 {
		// ASCII only: follow the uniform successors.
		s := t
		for h := int(m.v.height[i]); h > 0; h-- {
			if b[0]&^st.uni[0] != 0 || b[1]&^st.uni[1] != 0 {
				return false
			}
			if st.succ == s {
				return true // loops from here on
			}
			s = st.succ
			st = m.loop(s)
		}
		return true
	}
	// Bytes below must be valid UTF-8, read from a character boundary (the
	// tree's paths start on one only when the current state does).
	valid := rootBoundary && m.v.clean[w]&bit != 0
	return valid && st.loopHigh && b[0]&^st.loop[0] == 0 && b[1]&^st.loop[1] == 0
}

// looping returns the state whose loops decide whether a subtree below a
// node in state s can be skipped: s itself on a character boundary; inside
// a character whose completions all behave alike, the state once it is
// complete (a subtree of valid UTF-8 then only adds whole characters);
// otherwise nil.
func (m *Matcher) looping(s uint32) *dstate {
	st := m.states[s]
	if st.need == 0 {
		return m.loop(s)
	}
	if !st.shared {
		return nil
	}
	if st.done == 0 {
		t := s
		for m.states[t].need > 0 && t > tooComplex {
			t = m.step(t, 0x80) // any continuation: all alike
		}
		st.done = t
	}
	if st.done <= tooComplex {
		return nil
	}
	return m.loop(st.done)
}

// loop returns state s with its loop fields filled in: the ASCII bytes
// that lead s back to itself, and whether every non-ASCII character does.
// It fills the state's ASCII transitions, computing one transition per set
// of stacks that match a byte (bytes matched by the same stacks lead to
// the same state).
func (m *Matcher) loop(s uint32) *dstate {
	st := m.states[s]
	if st.loopKnown {
		return st
	}
	st.loopKnown = true
	if st.need > 0 {
		return st // no character can start inside a UTF-8 sequence
	}
	var seen map[uint64]uint32
	if len(st.stacks) <= 64 {
		seen = make(map[uint64]uint32, 8)
	}
	var counts []struct{ t, n uint32 }
	for b := range 128 {
		i := s<<8 | uint32(b)
		t := m.trans[i]
		if t == unknown {
			var sig uint64
			if seen != nil {
				for j, id := range st.stacks {
					if id != 0 && m.g.classes[m.g.elems[m.nodes[id].pos].arg].has(rune(b)) {
						sig |= 1 << j
					}
				}
				if r, ok := seen[sig]; ok {
					t = r
					m.trans[i] = t
				}
			}
			if t == unknown {
				t = m.step(s, byte(b))
				if seen != nil {
					seen[sig] = t
				}
			}
		}
		if t == s {
			st.loop[b>>6] |= 1 << (b & 63)
		}
		if t > tooComplex {
			k := 0
			for k < len(counts) && counts[k].t != t {
				k++
			}
			if k == len(counts) {
				counts = append(counts, struct{ t, n uint32 }{t, 0})
			}
			counts[k].n++
		}
	}
	best := uint32(0)
	for _, c := range counts {
		if c.n > best || c.n == best && c.t == s {
			best, st.succ = c.n, c.t
		}
	}
	for b := range 128 {
		if best > 0 && m.trans[s<<8|uint32(b)] == st.succ {
			st.uni[b>>6] |= 1 << (b & 63)
		}
	}
	// Non-ASCII: if every stack's class takes all of it or none of it, all
	// non-ASCII characters lead to one state; see whether it is s.
	for _, id := range st.stacks {
		if id == 0 {
			continue
		}
		c := &m.g.classes[m.g.elems[m.nodes[id].pos].arg]
		all := c.covers(0x80, 0xd7ff) && c.covers(0xe000, maxRune)
		none := !c.intersects(0x80, 0xd7ff) && !c.intersects(0xe000, maxRune)
		if !all && !none {
			return st
		}
	}
	if p := m.step(s, 0xc2); p > tooComplex && m.step(p, 0x80) == s { // U+0080
		st.loopHigh = true
	}
	return st
}

// Allows reports whether token id may come next. It is cheaper than a mask
// when only the sampled token needs checking.
func (m *Matcher) Allows(id int) bool {
	if m.finished || id < 0 || id >= m.v.size {
		return false
	}
	if m.v.eog[id] {
		return m.states[m.cur].accept
	}
	t := m.v.bytes[id]
	if t == nil {
		return false
	}
	s := m.cur
	for _, b := range t {
		if s = m.step(s, b); s <= tooComplex {
			return false
		}
	}
	return true
}

// Accept advances past token id. A token the grammar does not allow gives
// an error wrapping ErrRejected and leaves m unchanged; an
// end-of-generation id is allowed only where the output is complete and
// finishes the matcher.
func (m *Matcher) Accept(id int) error {
	if m.finished {
		return ErrFinished
	}
	if id < 0 || id >= m.v.size {
		return fmt.Errorf("grammar: token %d out of range [0, %d)", id, m.v.size)
	}
	m.maybeCompact()
	if m.v.eog[id] {
		if !m.states[m.cur].accept {
			return fmt.Errorf("%w: end-of-generation token %d before the output is complete", ErrRejected, id)
		}
		m.finished = true
		return nil
	}
	t := m.v.bytes[id]
	if t == nil {
		return fmt.Errorf("%w: token %d is special or empty", ErrRejected, id)
	}
	s, err := m.run(t)
	if err != nil {
		return fmt.Errorf("token %d %q: %w", id, t, err)
	}
	m.cur = s
	return nil
}

// AcceptBytes advances past text that is not a token (for example a forced
// prefix). Like Accept, it leaves m unchanged on error.
func (m *Matcher) AcceptBytes(text []byte) error {
	if m.finished {
		return ErrFinished
	}
	m.maybeCompact()
	s, err := m.run(text)
	if err != nil {
		return err
	}
	m.cur = s
	return nil
}

func (m *Matcher) run(text []byte) (uint32, error) {
	s := m.cur
	for i, b := range text {
		if s = m.step(s, b); s == tooComplex {
			return 0, fmt.Errorf("%w (at byte %d)", ErrTooComplex, i)
		} else if s == 0 {
			return 0, fmt.Errorf("%w: byte %d (%#02x) does not fit the grammar", ErrRejected, i, b)
		}
	}
	return s, nil
}

// CanEnd reports whether the output so far is a complete sentence of the
// grammar, so that an end-of-generation token is allowed.
func (m *Matcher) CanEnd() bool { return !m.finished && m.states[m.cur].accept }

// Done reports whether generation is over: an end-of-generation token was
// accepted, or the output is complete and the grammar allows nothing after
// it.
func (m *Matcher) Done() bool { return m.finished || m.states[m.cur].final }
