// Package grammar constrains generated text to a formal grammar.
//
// A grammar is written in GBNF, the format of llama.cpp's grammars
// (Parse), compiled from a JSON Schema (FromJSONSchema), or the built-in
// "any JSON value" grammar (JSON). A Matcher follows one generation: for
// each step it fills a mask of the token ids that keep the output a prefix
// of some sentence of the grammar (Mask, FillMask), and is told which token
// was sampled (Accept). The vocabulary is given once, as the bytes of each
// token (NewVocab), and is indexed in a prefix tree that every Matcher of
// that vocabulary shares.
//
// The grammar works on Unicode code points: a token may end inside a UTF-8
// sequence, and the next token must complete it. Output is always valid
// UTF-8.
//
// See docs/grammar.md for the format, the JSON Schema subset and the cost of
// masking.
package grammar

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Errors a Matcher returns. Test with errors.Is: the returned errors wrap
// these with the token or position involved.
var (
	// ErrDeadEnd means that no token of the vocabulary can continue the
	// output and the output is not a complete sentence of the grammar
	// either. Generation cannot go on under the grammar; a server reports
	// it as its own finish reason.
	ErrDeadEnd = errors.New("grammar: dead end: no token can continue the output")
	// ErrRejected means that Accept was given a token the grammar does not
	// allow at this point; the matcher's state is unchanged.
	ErrRejected = errors.New("grammar: token not allowed")
	// ErrTooComplex means that the grammar is so ambiguous that following
	// it needs more than 16384 parse stacks at once; the mask or token
	// involved could not be decided. Rewrite the grammar to be less
	// ambiguous.
	ErrTooComplex = errors.New("grammar: too ambiguous: too many parse stacks")
	// ErrFinished means that an end-of-generation token was already
	// accepted.
	ErrFinished = errors.New("grammar: generation already finished")
)

// Limits that keep a hostile grammar from exhausting memory.
const (
	// maxElems bounds the compiled size of a grammar, in elements, after
	// repetitions are expanded.
	maxElems = 1 << 20
	// maxRepeat bounds the numbers in {m,n}.
	maxRepeat = 1 << 16
	// maxNesting bounds nested parentheses.
	maxNesting = 1000
	maxRune    = utf8.MaxRune
)

// Grammar is a compiled grammar. It is immutable and safe for concurrent
// use; each generation gets its own Matcher (NewMatcher).
type Grammar struct {
	// elems is the program: each alternative of each rule is a run of
	// terminal and rule-reference elements closed by an end element.
	elems   []elem
	rules   []crule
	classes []class
	root    int32
}

type elemKind uint8

const (
	kEnd  elemKind = iota // end of an alternative
	kTerm                 // one code point from classes[arg]
	kRef                  // rule arg
)

type elem struct {
	kind elemKind
	arg  int32
}

// crule is a compiled rule: the positions in Grammar.elems where its
// alternatives start.
type crule struct {
	name string
	alts []int32
}

// NumRules returns the number of rules, counting those synthesized for
// groups and repetitions.
func (g *Grammar) NumRules() int { return len(g.rules) }

// rng is an inclusive range of code points.
type rng struct{ lo, hi rune }

// class is a set of code points: sorted disjoint ranges, with a bitmap for
// ASCII.
type class struct {
	ascii  [2]uint64
	ranges []rng
}

func newClass(rs []rng, negate bool) class {
	rs = normalizeRanges(rs)
	if negate {
		var out []rng
		next := rune(0)
		for _, r := range rs {
			if r.lo > next {
				out = append(out, rng{next, r.lo - 1})
			}
			next = r.hi + 1
		}
		if next <= maxRune {
			out = append(out, rng{next, maxRune})
		}
		rs = out
	}
	c := class{ranges: rs}
	for _, r := range rs {
		for x := r.lo; x <= r.hi && x < 128; x++ {
			c.ascii[x>>6] |= 1 << (x & 63)
		}
	}
	return c
}

func normalizeRanges(rs []rng) []rng {
	rs = append([]rng(nil), rs...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].lo < rs[j].lo })
	var out []rng
	for _, r := range rs {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			if r.hi > out[n-1].hi {
				out[n-1].hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// has reports whether c contains code point r.
func (c *class) has(r rune) bool {
	if r < 128 {
		return c.ascii[r>>6]&(1<<(r&63)) != 0
	}
	rs := c.ranges
	i := sort.Search(len(rs), func(i int) bool { return rs[i].hi >= r })
	return i < len(rs) && rs[i].lo <= r
}

// intersects reports whether c contains a code point in [lo, hi].
func (c *class) intersects(lo, hi rune) bool {
	rs := c.ranges
	i := sort.Search(len(rs), func(i int) bool { return rs[i].hi >= lo })
	return i < len(rs) && rs[i].lo <= hi
}

// covers reports whether c contains every code point in [lo, hi].
func (c *class) covers(lo, hi rune) bool {
	rs := c.ranges
	i := sort.Search(len(rs), func(i int) bool { return rs[i].hi >= lo })
	return i < len(rs) && rs[i].lo <= lo && hi <= rs[i].hi
}

func (c *class) key() string {
	var b strings.Builder
	for _, r := range c.ranges {
		fmt.Fprintf(&b, "%x-%x,", r.lo, r.hi)
	}
	return b.String()
}

// nullable returns, for each rule, whether it can match the empty string.
// It is a worklist algorithm, linear in the size of the grammar: each
// alternative counts its elements not yet known to be nullable.
func (g *Grammar) nullable() []bool {
	null := make([]bool, len(g.rules))
	type alt struct {
		rule int32
		left int // elements not yet known nullable; -1: has a terminal
	}
	var alts []alt
	users := make([][]int32, len(g.rules)) // rule -> alternatives using it, once per use
	var work []int32
	for i, r := range g.rules {
		for _, a := range r.alts {
			ai := int32(len(alts))
			x := alt{rule: int32(i)}
			for p := a; g.elems[p].kind != kEnd; p++ {
				e := g.elems[p]
				if e.kind == kTerm {
					x.left = -1
					break
				}
				x.left++
				users[e.arg] = append(users[e.arg], ai)
			}
			alts = append(alts, x)
			if x.left == 0 && !null[i] {
				null[i] = true
				work = append(work, int32(i))
			}
		}
	}
	for len(work) > 0 {
		r := work[len(work)-1]
		work = work[:len(work)-1]
		for _, ai := range users[r] {
			a := &alts[ai]
			if a.left <= 0 {
				continue
			}
			if a.left--; a.left == 0 && !null[a.rule] {
				null[a.rule] = true
				work = append(work, a.rule)
			}
		}
	}
	return null
}

// leftCycle finds a rule that can reach itself without consuming input
// (left recursion, which a pushdown matcher cannot run). It returns the
// cycle as rule indices, first == last, or nil.
func (g *Grammar) leftCycle() []int32 {
	null := g.nullable()
	// edges[r] = rules that r can call before consuming anything.
	edges := make([][]int32, len(g.rules))
	for i, r := range g.rules {
		for _, a := range r.alts {
			for p := a; g.elems[p].kind == kRef; p++ {
				edges[i] = append(edges[i], g.elems[p].arg)
				if !null[g.elems[p].arg] {
					break
				}
			}
		}
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, len(g.rules))
	type frame struct {
		r int32
		i int
	}
	for start := range g.rules {
		if color[start] != white {
			continue
		}
		stack := []frame{{int32(start), 0}}
		color[start] = grey
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.i == len(edges[f.r]) {
				color[f.r] = black
				stack = stack[:len(stack)-1]
				continue
			}
			next := edges[f.r][f.i]
			f.i++
			switch color[next] {
			case grey:
				var cyc []int32
				for j := len(stack) - 1; j >= 0; j-- {
					cyc = append(cyc, stack[j].r)
					if stack[j].r == next {
						break
					}
				}
				// reverse to call order, then close the cycle
				for a, b := 0, len(cyc)-1; a < b; a, b = a+1, b-1 {
					cyc[a], cyc[b] = cyc[b], cyc[a]
				}
				return append(cyc, next)
			case white:
				color[next] = grey
				stack = append(stack, frame{next, 0})
			}
		}
	}
	return nil
}
