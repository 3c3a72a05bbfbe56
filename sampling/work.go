package sampling

import (
	"math"
	"slices"
)

// cand is one candidate token.
type cand struct {
	id    int32
	logit float32
	p     float64 // softmax over the list, valid while work.hasP
	key   float64 // scratch sort key (typical's |surprise - entropy|)
}

// work holds the candidates of one step. It starts dense — every token a
// candidate, logits indexed by id, read straight from the caller's slice
// until a sampler writes — and turns into a list when a sampler drops
// tokens or needs probabilities. The list is never sorted more than a
// sampler needs: nSorted leading entries are the largest, in order
// (descending logit, lower id first on ties).
type work struct {
	vocab   int       // len of the caller's logits
	dense   []float32 // logits by id while isDense
	own     bool      // dense is buf, not the caller's slice
	isDense bool
	buf     []float32 // dense copy
	pbuf    []float64 // dense probabilities for the draw
	tmp     []float32 // scratch
	heap    []cand    // scratch

	all     []cand // list storage
	c       []cand // the candidates, a window of all
	nSorted int
	hasP    bool // c[i].p is the softmax of the current logits of c
	// With hasP: ln c[i].p = (c[i].logit − maxL) − lnZ, no log needed.
	maxL float32
	lnZ  float64
}

// lnP returns ln p of a candidate (valid with hasP).
func (w *work) lnP(x *cand) float64 { return float64(x.logit-w.maxL) - w.lnZ }

// ninf is float32 -inf.
func ninf() float32 { return float32(math.Inf(-1)) }

func (w *work) reset(logits []float32) {
	w.vocab = len(logits)
	w.dense, w.own, w.isDense = logits, false, true
	w.c, w.nSorted, w.hasP = w.all[:0], 0, false
	for _, v := range logits { // NaN would break every ordering below
		if v != v {
			d := w.writable()
			for i, v := range d {
				if v != v {
					d[i] = ninf()
				}
			}
			break
		}
	}
}

// writable returns the dense logits, copied out of the caller's slice.
func (w *work) writable() []float32 {
	if !w.own {
		if cap(w.buf) < len(w.dense) {
			w.buf = make([]float32, len(w.dense))
		}
		w.buf = w.buf[:len(w.dense)]
		copy(w.buf, w.dense)
		w.dense, w.own = w.buf, true
	}
	return w.dense
}

func (w *work) size() int {
	if w.isDense {
		return len(w.dense)
	}
	return len(w.c)
}

func (w *work) grow(n int) {
	if cap(w.all) < n {
		w.all = make([]cand, n)
	}
}

// list turns a dense set into a list of every token, in id order.
func (w *work) list() {
	if !w.isDense {
		return
	}
	n := len(w.dense)
	w.grow(n)
	c := w.all[:n]
	for i, v := range w.dense {
		c[i] = cand{id: int32(i), logit: v}
	}
	w.c, w.isDense, w.nSorted, w.hasP = c, false, 0, false
}

// changed records that logits moved in a way that may break the order.
func (w *work) changed() { w.nSorted, w.hasP = 0, false }

// truncate keeps c[:n]; the probabilities no longer sum to one.
func (w *work) truncate(n int) {
	w.c = w.c[:n]
	w.nSorted = min(w.nSorted, n)
	w.hasP = false
}

// softmax sets c[i].p over the list.
func (w *work) softmax() {
	if w.hasP {
		return
	}
	maxL := maxLogit(w.c)
	if maxL == ninf() { // every logit -inf: treat them as equal
		for i := range w.c {
			w.c[i].p = 1 / float64(len(w.c))
		}
		w.hasP, w.maxL, w.lnZ = true, 0, math.Log(float64(len(w.c)))
		return
	}
	var z float64
	for i := range w.c {
		e := math.Exp(float64(w.c[i].logit - maxL))
		w.c[i].p = e
		z += e
	}
	for i := range w.c {
		w.c[i].p /= z
	}
	w.hasP, w.maxL, w.lnZ = true, maxL, math.Log(z)
}

// sortTo makes c[:m] the m largest in order.
func (w *work) sortTo(m int) {
	m = min(m, len(w.c))
	if m <= w.nSorted {
		return
	}
	rest, k := w.c[w.nSorted:], m-w.nSorted
	if k <= len(rest)/64 {
		// A short head of a long list: find the k-th best with a heap
		// (mostly one comparison per token), pull the k to the front.
		w.heap = heapTopCands(w.heap[:0], rest, k)
		kth := w.heap[0]
		j := 0
		for i := range rest {
			if !better(&kth, &rest[i]) {
				rest[i], rest[j] = rest[j], rest[i]
				j++
			}
		}
		slices.SortFunc(rest[:k], cmpLogit)
	} else {
		sortTop(w.c, w.nSorted, m, byLogit)
	}
	w.nSorted = m
}

// argmax returns the position of the largest logit (lowest id on ties).
func (w *work) argmax() int {
	if w.nSorted > 0 {
		return 0
	}
	best := 0
	for i := 1; i < len(w.c); i++ {
		if better(&w.c[i], &w.c[best]) {
			best = i
		}
	}
	return best
}

// keepOnly reduces the list to c[i].
func (w *work) keepOnly(i int) {
	w.c[0] = w.c[i]
	w.c = w.c[:1]
	w.nSorted, w.hasP = 1, false
}

// topNSigma masks (to -inf) the tokens whose logit is below
// max - n·σ, with the mean and σ over the finite logits (llama.cpp after
// its fix for -inf logits). The tokens stay candidates with probability 0.
func (w *work) topNSigma(n float64) {
	if n <= 0 || w.size() <= 1 {
		return
	}
	if w.isDense {
		lim := sigmaLimit(w.dense, n)
		d := w.writable()
		for i, v := range d {
			if v < lim {
				d[i] = ninf()
			}
		}
		return
	}
	c := w.c
	if cap(w.tmp) < len(c) {
		w.tmp = make([]float32, len(c))
	}
	l := w.tmp[:len(c)]
	for i := range c {
		l[i] = c[i].logit
	}
	lim := sigmaLimit(l, n)
	for i := range c {
		if c[i].logit < lim {
			c[i].logit = ninf()
			if i < w.nSorted { // masked tokens end the sorted head
				w.nSorted = i
			}
		}
	}
	w.hasP = false
}

// sigmaLimit returns max - n·σ over the finite values of l. One pass with
// four accumulators of Σx and Σx² (float64: the cancellation in
// Σx²/N − mean² costs nothing at logit scales) instead of llama.cpp's two.
func sigmaLimit(l []float32, n float64) float32 {
	inf := ninf()
	maxL := inf
	var s0, s1, s2, s3, q0, q1, q2, q3 float64
	cnt := len(l)
	one := func(v float32) {
		if v == inf {
			cnt--
			return
		}
		if v > maxL {
			maxL = v
		}
		x := float64(v)
		s0 += x
		q0 += x * x
	}
	i := 0
	for ; i+4 <= len(l); i += 4 {
		a, b, c, d := l[i], l[i+1], l[i+2], l[i+3]
		if a == inf || b == inf || c == inf || d == inf {
			one(a)
			one(b)
			one(c)
			one(d)
			continue
		}
		if a > maxL {
			maxL = a
		}
		if b > maxL {
			maxL = b
		}
		if c > maxL {
			maxL = c
		}
		if d > maxL {
			maxL = d
		}
		x0, x1, x2, x3 := float64(a), float64(b), float64(c), float64(d)
		s0, s1, s2, s3 = s0+x0, s1+x1, s2+x2, s3+x3
		q0, q1, q2, q3 = q0+x0*x0, q1+x1*x1, q2+x2*x2, q3+x3*x3
	}
	for ; i < len(l); i++ {
		one(l[i])
	}
	if cnt == 0 {
		return inf
	}
	mean := (s0 + s1 + s2 + s3) / float64(cnt)
	variance := max(0, (q0+q1+q2+q3)/float64(cnt)-mean*mean)
	return float32(float64(maxL) - n*math.Sqrt(variance))
}

// maxOf returns the largest of l (-inf if empty). The builtin max costs
// ten times more on float32: it orders NaN and signed zeros, which
// reset has already ruled out.
func maxOf(l []float32) float32 {
	m := ninf()
	for _, v := range l {
		if v > m {
			m = v
		}
	}
	return m
}

// maxLogit returns the largest logit of c (-inf if empty).
func maxLogit(c []cand) float32 {
	m := ninf()
	for i := range c {
		if c[i].logit > m {
			m = c[i].logit
		}
	}
	return m
}

// topK keeps the k largest logits; k ≤ 0 is off.
func (w *work) topK(k int) {
	if k <= 0 || k >= w.size() {
		return
	}
	if w.isDense {
		w.grow(k)
		c := heapTopK(w.all[:0], w.dense, k)
		slices.SortFunc(c, cmpLogit)
		w.c, w.isDense, w.nSorted, w.hasP = c, false, k, false
		return
	}
	w.sortTo(k)
	w.truncate(k)
}

// heapTopK appends the k best of dense to c (unordered) with a min-heap
// whose root is the worst kept token.
func heapTopK(c []cand, dense []float32, k int) []cand {
	floor := ninf() // the worst kept logit once the heap is full
	for i, v := range dense {
		if len(c) == k && v <= floor { // ties keep the lower id, seen first
			continue
		}
		x := cand{id: int32(i), logit: v}
		if len(c) < k {
			c = append(c, x)
			for j := len(c) - 1; j > 0; { // sift up
				p := (j - 1) / 2
				if !better(&c[p], &c[j]) {
					break
				}
				c[p], c[j] = c[j], c[p]
				j = p
			}
			floor = c[0].logit
			continue
		}
		c[0] = x
		for j := 0; ; { // sift down
			l, r, m := 2*j+1, 2*j+2, j
			if l < k && better(&c[m], &c[l]) {
				m = l
			}
			if r < k && better(&c[m], &c[r]) {
				m = r
			}
			if m == j {
				break
			}
			c[j], c[m] = c[m], c[j]
			j = m
		}
		floor = c[0].logit
	}
	return c
}

// heapTopCands is heapTopK over candidates.
func heapTopCands(h []cand, c []cand, k int) []cand {
	for i := range c {
		x := &c[i]
		if len(h) < k {
			h = append(h, *x)
			for j := len(h) - 1; j > 0; { // sift up
				p := (j - 1) / 2
				if !better(&h[p], &h[j]) {
					break
				}
				h[p], h[j] = h[j], h[p]
				j = p
			}
			continue
		}
		if !better(x, &h[0]) {
			continue
		}
		h[0] = *x
		for j := 0; ; { // sift down
			l, r, m := 2*j+1, 2*j+2, j
			if l < k && better(&h[m], &h[l]) {
				m = l
			}
			if r < k && better(&h[m], &h[r]) {
				m = r
			}
			if m == j {
				break
			}
			h[j], h[m] = h[m], h[j]
			j = m
		}
	}
	return h
}

// tailFree is llama.cpp's tail-free sampling (as of its removal, with
// min_keep 1): on the sorted probabilities, the absolute second
// differences are normalised to sum to one (uniform if their sum is at
// most 1e-6) and the list is cut at the first index i ≥ 1 where their
// running sum exceeds z, keeping c[:i].
func (w *work) tailFree(z float64) {
	if z <= 0 || z >= 1 || w.size() <= 2 {
		return
	}
	w.list()
	w.softmax()
	w.sortTo(len(w.c))
	c := w.c
	n := len(c) - 2
	d2 := func(i int) float64 {
		return math.Abs((c[i].p - c[i+1].p) - (c[i+1].p - c[i+2].p))
	}
	var sum float64
	for i := 0; i < n; i++ {
		sum += d2(i)
	}
	var cum float64
	for i := 0; i < n; i++ {
		if sum > 1e-6 {
			cum += d2(i) / sum
		} else {
			cum += 1 / float64(n)
		}
		if cum > z && i >= 1 {
			w.truncate(i)
			return
		}
	}
}

// typical is locally typical sampling: with H the entropy of the
// candidates, tokens are ranked by |−ln p − H| ascending and the head whose
// mass first exceeds p is kept, in that order.
func (w *work) typical(p float64) {
	if !typicalOn(p) {
		return
	}
	w.list()
	w.softmax()
	c := w.c
	var h float64
	for i := range c {
		c[i].key = w.lnP(&c[i])
		if c[i].p > 0 { // llama.cpp gets NaN from a -inf logit here
			h -= c[i].p * c[i].key
		}
	}
	for i := range c {
		if c[i].p > 0 {
			c[i].key = math.Abs(-c[i].key - h)
		} else {
			c[i].key = math.Inf(1)
		}
	}
	w.c = c[:headByKey(c, p, true)]
	w.nSorted, w.hasP = 0, false
}

// topP keeps the smallest head of the sorted distribution whose mass
// reaches p.
func (w *work) topP(p float64) {
	if p <= 0 || p >= 1 {
		return
	}
	w.list()
	w.softmax()
	if w.nSorted == len(w.c) { // after top-k: a short scan
		var cum float64
		for i := range w.c {
			cum += w.c[i].p
			if cum >= p {
				w.truncate(i + 1)
				return
			}
		}
		return
	}
	for i := range w.c { // byKey on this key is byLogit
		w.c[i].key = float64(w.maxL) - float64(w.c[i].logit)
	}
	n := headByKey(w.c, p, false)
	w.c = w.c[:n]
	w.nSorted, w.hasP = 0, false
}

// minP keeps the tokens with logit ≥ max + ln p (p_i ≥ p·p_max), in their
// order, computed in float32 as llama.cpp does.
func (w *work) minP(p float64) {
	if p <= 0 || w.size() == 0 {
		return
	}
	if w.isDense {
		lim := maxOf(w.dense) + float32(math.Log(float64(float32(p))))
		w.grow(len(w.dense))
		c := w.all[:0]
		for i, v := range w.dense {
			if v >= lim {
				c = append(c, cand{id: int32(i), logit: v})
			}
		}
		w.c, w.isDense, w.nSorted, w.hasP = c, false, 0, false
		return
	}
	lim := maxLogit(w.c) + float32(math.Log(float64(float32(p))))
	kept, sorted := 0, 0
	for i := range w.c {
		if w.c[i].logit >= lim {
			if i < w.nSorted {
				sorted++
			}
			w.c[kept] = w.c[i]
			kept++
		}
	}
	w.c = w.c[:kept]
	w.nSorted, w.hasP = sorted, false
}

// xtc is llama.cpp's exclude-top-choices: with probability prob it removes
// every token whose probability is at least threshold except the least
// likely of them. The coin is drawn only when XTC can act.
func (w *work) xtc(rng interface{ Float32() float32 }, prob, threshold float64) {
	if w.size() < 2 {
		return
	}
	if float64(rng.Float32()) > float64(float32(prob)) {
		return
	}
	w.list()
	w.softmax()
	th := float64(float32(threshold))
	above := 0
	for i := range w.c {
		if w.c[i].p >= th {
			above++
		}
	}
	if above < 2 {
		return
	}
	w.sortTo(above)
	cut := above - 1
	w.c = w.c[cut:]
	w.nSorted = max(w.nSorted-cut, 0)
	w.hasP = false
}

// dynatemp is llama.cpp's temperature sampler: plain temperature, or with
// delta > 0 a temperature between max(0, t−delta) and t+delta that grows
// with the normalised entropy of the candidates (raised to exponent).
func (w *work) dynatemp(t, delta, exponent float64) {
	if delta <= 0 {
		w.temperature(float32(t))
		return
	}
	if w.size() <= 1 {
		return
	}
	lo, hi := float32(max(0, t-delta)), float32(t+delta)
	w.list()
	maxH := -math.Log(1 / float64(len(w.c)))
	w.softmax()
	var h float64
	for i := range w.c {
		if p := w.c[i].p; p > 0 {
			h -= p * w.lnP(&w.c[i])
		}
	}
	norm := h / maxH
	dyn := lo + (hi-lo)*float32(math.Pow(norm, exponent))
	w.temperature(dyn)
}

// temperature divides the logits by t (in float32, as llama.cpp); t ≤ 0
// keeps only the largest logit.
func (w *work) temperature(t float32) {
	if t <= 0 {
		if w.isDense {
			g := Greedy(w.dense)
			w.grow(1)
			w.c = append(w.all[:0], cand{id: int32(g), logit: w.dense[g]})
			w.isDense, w.nSorted, w.hasP = false, 1, false
			return
		}
		w.keepOnly(w.argmax())
		return
	}
	if t == 1 {
		return
	}
	if w.isDense {
		d := w.writable()
		for i := range d {
			d[i] /= t
		}
		return
	}
	for i := range w.c {
		w.c[i].logit /= t
	}
	w.hasP = false // division keeps the order
}

// draw samples from the softmax of the candidates.
func (w *work) draw(rng interface{ Float64() float64 }) int {
	if w.isDense {
		d := w.dense
		maxL := maxOf(d)
		if maxL == ninf() { // every logit -inf: treat them as equal
			return min(int(rng.Float64()*float64(len(d))), len(d)-1)
		}
		if cap(w.pbuf) < len(d) {
			w.pbuf = make([]float64, len(d))
		}
		pb := w.pbuf[:len(d)]
		var z float64
		for i, v := range d {
			e := math.Exp(float64(v - maxL))
			pb[i] = e
			z += e
		}
		r := rng.Float64() * z
		last := 0
		for i, e := range pb {
			if e > 0 {
				last = i
				r -= e
				if r <= 0 {
					return i
				}
			}
		}
		return last
	}
	w.softmax()
	return int(w.c[pick(w.c, rng.Float64())].id)
}

// pick returns the index of the token that u ∈ [0,1) lands on.
func pick(c []cand, u float64) int {
	var z float64
	for i := range c {
		z += c[i].p
	}
	r := u * z
	last := 0
	for i := range c {
		if c[i].p > 0 {
			last = i
			r -= c[i].p
			if r <= 0 {
				return i
			}
		}
	}
	return last
}
