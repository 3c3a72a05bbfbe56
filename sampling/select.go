package sampling

import "slices"

// The orders candidates are sorted in. Both are strict total orders (ties
// fall back to the token id), so every partial sort is deterministic.
type order uint8

const (
	byLogit order = iota // descending logit, then ascending id
	byKey                // ascending key, then byLogit
)

// better reports whether a ranks before b by logit.
func better(a, b *cand) bool {
	if a.logit != b.logit {
		return a.logit > b.logit
	}
	return a.id < b.id
}

func (o order) less(a, b *cand) bool {
	if o == byKey && a.key != b.key {
		return a.key < b.key
	}
	return better(a, b)
}

func cmpLogit(a, b cand) int {
	switch {
	case better(&a, &b):
		return -1
	case better(&b, &a):
		return 1
	}
	return 0
}

func cmpKey(a, b cand) int {
	switch {
	case byKey.less(&a, &b):
		return -1
	case byKey.less(&b, &a):
		return 1
	}
	return 0
}

// sortTop makes c[:m] the first m elements of c under o, in order, given
// that c[:done] already are the first done. It selects (quickselect) before
// sorting, so a short head of a long list costs O(len(c)) plus O(m log m).
func sortTop(c []cand, done, m int, o order) {
	if m > len(c) {
		m = len(c)
	}
	if m <= done {
		return
	}
	rest := c[done:]
	if m-done < len(rest) {
		nth(rest, m-done-1, o)
	}
	head := c[done:m]
	if o == byKey {
		slices.SortFunc(head, cmpKey)
	} else {
		slices.SortFunc(head, cmpLogit)
	}
}

// nth rearranges c so that c[k] is the element that sorting would put
// there, with every element before it ranking before it.
func nth(c []cand, k int, o order) {
	lo, hi := 0, len(c)-1
	for hi-lo > 8 {
		mid := lo + (hi-lo)/2
		// median of three at mid; c[lo] ≤ c[mid] ≤ c[hi] are sentinels
		if o.less(&c[mid], &c[lo]) {
			c[mid], c[lo] = c[lo], c[mid]
		}
		if o.less(&c[hi], &c[mid]) {
			c[hi], c[mid] = c[mid], c[hi]
			if o.less(&c[mid], &c[lo]) {
				c[mid], c[lo] = c[lo], c[mid]
			}
		}
		pivot := c[mid]
		i, j := lo, hi
		for i <= j {
			for o.less(&c[i], &pivot) {
				i++
			}
			for o.less(&pivot, &c[j]) {
				j--
			}
			if i <= j {
				c[i], c[j] = c[j], c[i]
				i++
				j--
			}
		}
		// c[lo..j] rank before or equal to the pivot, c[i..hi] after or equal
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
	for i := lo + 1; i <= hi; i++ { // insertion sort of the short rest
		for j := i; j > lo && o.less(&c[j], &c[j-1]); j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}

// headByKey rearranges c so that c[:n] is the shortest head of c in byKey
// order whose probability mass reaches target (exceeds it if strict), and
// returns n (len(c) if the whole mass falls short). Keys must be ≥ 0 (or
// +inf). Instead of sorting, it spreads the tokens over buckets of key
// width 1/8 by one pass, finds the bucket where the running mass crosses
// the target, and sorts that bucket only: O(len(c)) — what top-p (key:
// distance to the largest logit) and typical need without ordering the
// vocabulary.
func headByKey(c []cand, target float64, strict bool) int {
	const nb, scale = 256, 8 // keys [0, 32) in steps of 1/8; the rest share the last
	bucket := func(k float64) int {
		if k = k * scale; k < nb-1 {
			return int(k)
		}
		return nb - 1 // also +inf and NaN
	}
	reached := func(m float64) bool {
		if strict {
			return m > target
		}
		return m >= target
	}
	var mass [nb]float64
	for i := range c {
		mass[bucket(c[i].key)] += c[i].p
	}
	var acc float64
	cross := -1
	for b := range mass {
		if reached(acc + mass[b]) {
			cross = b
			break
		}
		acc += mass[b]
	}
	if cross < 0 {
		return len(c)
	}
	j := 0 // c[:j]: buckets before cross, then c[j:k]: bucket cross
	for i := range c {
		if bucket(c[i].key) < cross {
			c[i], c[j] = c[j], c[i]
			j++
		}
	}
	k := j
	for i := j; i < len(c); i++ {
		if bucket(c[i].key) == cross {
			c[i], c[k] = c[k], c[i]
			k++
		}
	}
	slices.SortFunc(c[j:k], cmpKey)
	for i := j; i < k; i++ {
		acc += c[i].p
		if reached(acc) {
			return i + 1
		}
	}
	return k
}
