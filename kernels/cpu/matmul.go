package cpu

import (
	"fmt"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// Matrix is a weight matrix of Rows×Cols elements in its stored type:
// row r occupies Data[r*RowBytes : (r+1)*RowBytes].
type Matrix struct {
	DType      tensor.DType
	Rows, Cols int
	Data       []byte
}

// MatrixOf views a 2-D tensor (or a 1-D one as a single row) as a Matrix.
func MatrixOf(t *tensor.Tensor) (Matrix, error) {
	var rows, cols int
	switch len(t.Shape) {
	case 1:
		rows, cols = 1, t.Shape[0]
	case 2:
		rows, cols = t.Shape[0], t.Shape[1]
	default:
		return Matrix{}, fmt.Errorf("tensor %q: shape %v is not a matrix", t.Name, t.Shape)
	}
	rb, err := t.DType.RowBytes(cols)
	if err != nil {
		return Matrix{}, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if len(t.Data) != rb*rows {
		return Matrix{}, fmt.Errorf("tensor %q: %d bytes of data, shape %v of %s needs %d", t.Name, len(t.Data), t.Shape, t.DType, rb*rows)
	}
	return Matrix{DType: t.DType, Rows: rows, Cols: cols, Data: t.Data}, nil
}

// RowBytes is the stored size of one row (0 if Cols is not a whole number
// of blocks of DType).
func (m Matrix) RowBytes() int { n, _ := m.DType.RowBytes(m.Cols); return n }

// Row returns the stored bytes of row r.
func (m Matrix) Row(r int) []byte { rb := m.RowBytes(); return m.Data[r*rb : (r+1)*rb] }

// SupportsMatMul reports whether MatMul can read weights of type d.
func SupportsMatMul(d tensor.DType) bool {
	switch d {
	case tensor.F32, tensor.F16, tensor.BF16:
		return true
	}
	_, ok := quant.DotFor(d)
	return ok
}

// wkind is how a matmul reads one weight type.
type wkind uint8

const (
	wkFloat  wkind = iota // F32, F16, BF16 times float32 activations
	wkQ4_0                // SIMD Q4_0 × activations in layout A (or C, or Y at AVX2)
	wkQ8_0                // SIMD Q8_0 (and Q8_B32T2) × activations in layout B, P (or C, or Y)
	wkQ6_K                // SIMD Q6_K × Q8_K activations
	wkQ4_K                // SIMD Q4_K × Q8_K activations
	wkQ5_K                // SIMD Q5_K × Q8_K activations
	wkQ3_K                // SIMD Q3_K × Q8_K activations
	wkQ2_K                // SIMD Q2_K × Q8_K activations
	wkIfQ4                // SIMD Inferflow Q4_B64T1 × Q8_0 activations
	wkIfQ3H               // SIMD Inferflow Q3H_B64T1 × Q8_0 activations
	wkIfQ6                // SIMD Inferflow Q6_B64T1 × Q8_0 activations
	wkIfQ5                // SIMD Inferflow Q5_B64T1 × Q8_0 activations
	wkIfQ4S               // SIMD Inferflow Q4_B32T1 × Q8_0 activations
	wkIfQ3                // SIMD Inferflow Q3_B32T1 × Q8_0 activations
	wkIfQ2                // SIMD Inferflow Q2_B32T1 × Q8_0 activations
	wkIQ4NL               // SIMD IQ4_NL × Q8_0 activations
	wkIQ4NB               // wkIQ4NL for 2 or more tokens (ggml's batched order)
	wkQuant               // kernels/quant dot products, row by row
	wkBF16DP              // BF16 × bfloat16 activations on VDPBF16PS (bf16dp.go)
	wkQ5_0                // SIMD Q5_0 × Q8_0 activations (legacyq.go)
	wkQ4_1                // SIMD Q4_1 × Q8_1 activations
	wkQ5_1                // SIMD Q5_1 × Q8_1 activations
)

// ifMoreKind returns the SIMD kind of Inferflow's Q6_B64T1, Q5_B64T1,
// Q4_B32T1, Q3_B32T1 and Q2_B32T1 weights.
func ifMoreKind(d tensor.DType) (wkind, bool) {
	switch d {
	case tensor.Q6_B64T1:
		return wkIfQ6, true
	case tensor.Q5_B64T1:
		return wkIfQ5, true
	case tensor.Q4_B32T1:
		return wkIfQ4S, true
	case tensor.Q3_B32T1:
		return wkIfQ3, true
	case tensor.Q2_B32T1:
		return wkIfQ2, true
	}
	return 0, false
}

// actFormat is the form activations take for a weight type.
type actFormat uint8

const (
	afF32  actFormat = iota // the float32 input itself
	afQ8A                   // layout A (q8pack.go)
	afQ8B                   // layout B
	afQ8P                   // layout P
	afQ8_0                  // ggml Q8_0 blocks
	afQ8_K                  // ggml Q8_K blocks
	afQ8C                   // layout C (block-interleaved), prefill
	afQ8I                   // layout I (ifpack.go), Inferflow strips
	afBF16                  // bfloat16, rounded as ggml does
	afQ8Y                   // layout Y (q8tiley.go), AVX2 prefill
	afQ8_1                  // ggml Q8_1 blocks (Q4_1 and Q5_1 weights)
	afQ8T                   // layout T (legacyy_amd64.go), Q4_1/Q5_1 prefill
	nActFormats
)

// rowBytes is the size of one token's activations of cols values.
func (f actFormat) rowBytes(cols int) int {
	switch f {
	case afQ8A:
		return q8aRowBytes(cols)
	case afQ8B:
		return q8aRowBytes(cols)
	case afQ8P:
		return q8pRowBytes(cols)
	case afQ8_0:
		return cols / 32 * 34
	case afQ8_K:
		return cols / 256 * 292
	case afQ8C:
		return q8cRowBytes(cols)
	case afQ8I:
		return ifActBytes(cols)
	case afBF16:
		return 2 * cols
	case afQ8Y:
		return q8yRowBytes(cols)
	case afQ8_1:
		return cols / 32 * 36
	case afQ8T:
		return lyTRowBytes(cols)
	}
	return 4 * cols
}

// classify returns how the set k multiplies weights of type d.
func (k Kernels) classify(d tensor.DType) (wkind, floatType, actFormat) {
	switch d {
	case tensor.F32:
		return wkFloat, ftF32, afF32
	case tensor.F16:
		return wkFloat, ftF16, afF32
	case tensor.BF16:
		if k.hasBF16DP() {
			return wkBF16DP, ftBF16, afBF16
		}
		return wkFloat, ftBF16, afF32
	case tensor.Q4_0:
		if k.hasQ8() {
			return wkQ4_0, 0, afQ8A
		}
	case tensor.Q8_0, tensor.Q8_B32T2:
		// Q8_B32T2 blocks are Q8_0 blocks, and its dot product is Q8_0's
		// (kernels/quant): the same kernels serve both.
		if k.hasQ8() {
			if k.level >= AVX512VNNI {
				return wkQ8_0, 0, afQ8B
			}
			return wkQ8_0, 0, afQ8P
		}
	}
	if d == tensor.Q6_K && k.hasKQuant(wkQ6_K) {
		return wkQ6_K, 0, afQ8_K
	}
	if d == tensor.Q4_K && k.hasKQuant(wkQ4_K) {
		return wkQ4_K, 0, afQ8_K
	}
	if d == tensor.Q5_K && k.hasKQuant(wkQ5_K) {
		return wkQ5_K, 0, afQ8_K
	}
	if d == tensor.Q3_K && k.hasKQuant(wkQ3_K) {
		return wkQ3_K, 0, afQ8_K
	}
	if d == tensor.Q2_K && k.hasKQuant(wkQ2_K) {
		return wkQ2_K, 0, afQ8_K
	}
	if d == tensor.Q4_B64T1 && k.hasKQuant(wkIfQ4) {
		return wkIfQ4, 0, afQ8_0
	}
	if d == tensor.Q3H_B64T1 && k.hasKQuant(wkIfQ3H) {
		return wkIfQ3H, 0, afQ8_0
	}
	if kind, ok := ifMoreKind(d); ok && k.hasKQuant(kind) {
		return kind, 0, afQ8_0
	}
	if d == tensor.IQ4_NL && k.hasKQuant(wkIQ4NL) {
		return wkIQ4NL, 0, afQ8_0
	}
	if kind, ok := legacyKind(d); ok && k.hasLegacyQ() {
		if kind == wkQ5_0 {
			return kind, 0, afQ8_0
		}
		return kind, 0, afQ8_1
	}
	switch quant.ActivationType(d) {
	case tensor.Q8_K:
		return wkQuant, 0, afQ8_K
	case tensor.Q8_1:
		return wkQuant, 0, afQ8_1
	}
	return wkQuant, 0, afQ8_0
}

// maxJobs is how many weights one MatMulMulti dispatch handles; more are
// done in several dispatches.
const maxJobs = 8

// mmJob is one weight of a matmul dispatch.
type mmJob struct {
	w     Matrix
	rb    int // bytes per weight row
	dst   []float32
	kind  wkind
	ft    floatType
	af    actFormat
	act   []byte // quantized activations, ldx bytes per token
	ldx   int
	dot   quant.DotFunc
	u0    int       // first unit (row) of this job in the dispatch
	units int       // rows rounded up to a multiple of 4
	amx   bool      // F16/BF16 prefill on AMX tiles (floatRowsAMX)
	pack  *ifPacked // the weight in strips (Pool.PackWeight), or nil
}

// mmTask is a matmul dispatch: the rows of all jobs, in order, split over
// the pool's threads.
type mmTask struct {
	k       Kernels
	x       []float32
	xp      []float32 // x in panels of 32 tokens, k-major; nil if unused
	xa      []uint16  // x in AMX activation tiles; nil if unused
	n       int
	acc     bool
	jobs    [maxJobs]mmJob
	njobs   int
	scratch [][]byte // per thread: unpacked weights, prepared activations
}

// scratchFor returns thread w's scratch buffer of at least n bytes.
func (t *mmTask) scratchFor(w, n int) []byte { return growScratch(&t.scratch[w], n) }

// growScratch returns the first n bytes of *buf, which it first replaces
// by a new buffer of n bytes if it is shorter; with a nil buf it returns a
// new buffer. Kernels that need scratch of a size they compute take a
// *[]byte: in a matmul, their pool thread's scratch (mmTask.scratch), grown
// once to the largest shape and reused.
func growScratch(buf *[]byte, n int) []byte {
	if buf == nil {
		return make([]byte, n)
	}
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	return (*buf)[:n]
}

// mmState is the reusable state of a Pool's matmuls: it makes a matmul
// allocation-free once the buffers have grown to the largest shape.
type mmState struct {
	task    mmTask
	pack    packTask
	panels  panelTask
	amxX    amxXTask
	buf     [nActFormats][]byte
	xp      []float32
	xa      []uint16
	scratch [][]byte
}

// MatMul computes dst[n×Rows] = x[n×Cols] · wᵀ: dst[t*Rows+r] is the dot
// product of token t's activations with weight row r. Float weights (F32,
// F16, BF16) multiply x in float32; quantized ones multiply x quantized as
// ggml does (Q8_0 for the 32-element formats, Q8_K for the K-quants). A nil
// pool runs on the calling goroutine.
func MatMul(p *Pool, dst []float32, w Matrix, x []float32, n int) error {
	ws := [1]Matrix{w}
	ds := [1][]float32{dst}
	return p.matmul("matmul", ds[:], ws[:], x, n, false)
}

// MatMulAcc adds x · wᵀ to dst (dst[n×Rows] += x[n×Cols] · wᵀ), for fused
// residual connections.
func MatMulAcc(p *Pool, dst []float32, w Matrix, x []float32, n int) error {
	ws := [1]Matrix{w}
	ds := [1][]float32{dst}
	return p.matmul("matmul", ds[:], ws[:], x, n, true)
}

// MatMulMulti computes dsts[i] = x · ws[i]ᵀ for weights that share their
// input (the Q, K, V projections; gate and up), in one dispatch over the
// pool, quantizing x once per activation format.
func MatMulMulti(p *Pool, dsts [][]float32, ws []Matrix, x []float32, n int) error {
	if len(dsts) != len(ws) {
		return fmt.Errorf("matmul: %d outputs for %d weights", len(dsts), len(ws))
	}
	for len(ws) > maxJobs {
		if err := p.matmul("matmul", dsts[:maxJobs], ws[:maxJobs], x, n, false); err != nil {
			return err
		}
		dsts, ws = dsts[maxJobs:], ws[maxJobs:]
	}
	return p.matmul("matmul", dsts, ws, x, n, false)
}

// checkMatMul validates one weight of a matmul.
func checkMatMul(op string, i int, dst []float32, w Matrix, x []float32, n int) error {
	if n < 0 {
		return fmt.Errorf("%s: negative token count %d", op, n)
	}
	if w.Rows < 0 || w.Cols < 0 {
		return fmt.Errorf("%s: weight %d: bad shape %d×%d", op, i, w.Rows, w.Cols)
	}
	if !SupportsMatMul(w.DType) {
		return fmt.Errorf("%s: weight %d: type %s is not supported", op, i, w.DType)
	}
	rb, err := w.DType.RowBytes(w.Cols)
	if err != nil {
		return fmt.Errorf("%s: weight %d: %w", op, i, err)
	}
	if len(w.Data) < rb*w.Rows {
		return fmt.Errorf("%s: weight %d: %d bytes of data, %d×%d %s needs %d", op, i, len(w.Data), w.Rows, w.Cols, w.DType, rb*w.Rows)
	}
	if len(x) < n*w.Cols {
		return fmt.Errorf("%s: weight %d: x has %d floats, want %d×%d", op, i, len(x), n, w.Cols)
	}
	if len(dst) < n*w.Rows {
		return fmt.Errorf("%s: weight %d: dst has %d floats, want %d×%d", op, i, len(dst), n, w.Rows)
	}
	return nil
}

// matmul runs up to maxJobs weights sharing x in one dispatch.
func (p *Pool) matmul(op string, dsts [][]float32, ws []Matrix, x []float32, n int, acc bool) error {
	cols := -1
	for i := range ws {
		if err := checkMatMul(op, i, dsts[i], ws[i], x, n); err != nil {
			return err
		}
		if cols >= 0 && ws[i].Cols != cols {
			return fmt.Errorf("%s: weight %d has %d columns, weight 0 has %d", op, i, ws[i].Cols, cols)
		}
		cols = ws[i].Cols
	}
	if n == 0 || len(ws) == 0 {
		return nil
	}
	if cols == 0 {
		// Empty dot products.
		if !acc {
			for i := range ws {
				clear(dsts[i][:n*ws[i].Rows])
			}
		}
		return nil
	}
	var st *mmState
	locked := p != nil && p.mu.TryLock()
	if locked {
		defer p.mu.Unlock()
		st = &p.mm
	} else {
		// No pool, or it is busy (a nested or concurrent call): run on
		// this goroutine with private buffers.
		st = new(mmState)
	}
	k := p.Kernels()
	t := &st.task
	t.k, t.x, t.n, t.acc, t.njobs = k, x, n, acc, len(ws)
	if th := p.Threads(); len(st.scratch) < th {
		st.scratch = make([][]byte, th)
	}
	t.scratch = st.scratch

	// Quantize the activations once per format.
	var need [nActFormats]bool
	units, work, strips, iq4 := 0, 0, false, false
	for i := range ws {
		j := &t.jobs[i]
		w := ws[i]
		if n >= repackMinTokens && k.repacks(w.DType) {
			if c := p.q8CopyFor(w); c != nil {
				w = *c // the Q8_0 prefill copy (repack.go)
			}
		}
		j.w, j.dst = w, dsts[i]
		j.rb = w.RowBytes()
		j.kind, j.ft, j.af = k.classify(w.DType)
		if (j.kind == wkQ4_0 && n >= q4TileMinTokens || j.kind == wkQ8_0 && n >= q8TileMinTokens) && k.hasQ8Unpacked() {
			j.af = afQ8C // prefill tiles on interleaved blocks
		}
		if (j.kind == wkQ4_0 || j.kind == wkQ8_0) && n >= q8YMinTokens && k.hasQ8Y() {
			j.af = afQ8Y // AVX2 prefill tiles on strips of 8 rows
		}
		j.dot = nil
		if j.kind == wkQuant {
			j.dot, _ = quant.DotFor(w.DType)
		}
		if w.DType == tensor.IQ4_NL && n >= 2 {
			// ggml sums IQ4_NL matmuls of two or more tokens in
			// llamafile's order, not its dot product's.
			j.dot = quant.DotIQ4_NLQ8_0Batch
			if j.kind == wkIQ4NL {
				j.kind = wkIQ4NB
				iq4 = true // the tiles' 16-row strips
			}
			if j.kind == wkIQ4NB && n >= q8YMinTokens && k.hasQ8Y() {
				j.af = afQ8Y // AVX2 tiles (q8tiley.go)
			}
		}
		if k.legacyTiles(j.kind, n) {
			iq4 = true // the tiles' 16-row strips
		}
		if k.legacyTilesY(j.kind, n) {
			j.af = afQ8Y // AVX2 tiles (legacyy_amd64.go)
		}
		if k.legacyTilesT(j.kind, n) {
			j.af = afQ8T // Q4_1 and Q5_1 tiles (legacyy_amd64.go)
		}
		j.amx = j.kind == wkFloat && j.ft != ftF32 && n >= panelMinTokens && k.hasAMX()
		j.pack = nil
		if j.kind == wkIfQ4 || j.kind == wkIfQ3H {
			j.pack = p.packFor(w)
		}
		j.u0, j.units = units, (w.Rows+3)&^3
		if j.pack != nil {
			// Whole strips of 16 rows, from a multiple of 16.
			j.af, strips = afQ8I, true
			units = (units + 15) &^ 15
			j.u0, j.units = units, (w.Rows+15)&^15
		}
		units += j.units
		work += j.rb * w.Rows
		need[j.af] = true
	}
	for f := afQ8A; f < nActFormats; f++ {
		if !need[f] {
			continue
		}
		ldx := f.rowBytes(cols)
		rows := n
		if f == afQ8C {
			rows = (n + 15) &^ 15 // whole groups of 16 tokens
		}
		if f == afQ8T {
			rows = (n + 7) &^ 7 // whole groups of 8 tokens
		}
		size := rows*ldx + 64
		if cap(st.buf[f]) < size {
			st.buf[f] = make([]byte, size)
		}
		buf := alignedBytes(st.buf[f][:size], rows*ldx)
		if f == afQ8C {
			// Layout C interleaves 16 tokens: the tokens that pad the
			// last group must be zero.
			clear(buf[n/16*16*ldx:])
		} else if f == afQ8T {
			// Layout T interleaves 8 tokens; the tiles read the padding
			// tokens of the last group (and drop their sums).
			clear(buf[n/8*8*ldx:])
		} else {
			clear(buf[n*ldx:])
		}
		st.pack = packTask{k: k, f: f, x: x, cols: cols, dst: buf, ldx: ldx}
		if locked && n > 1 {
			p.runLocked(n, 1, &st.pack)
		} else {
			st.pack.Run(0, n)
		}
		for i := range ws {
			if t.jobs[i].af == f {
				t.jobs[i].act, t.jobs[i].ldx = buf, ldx
			}
		}
	}

	// Float weights and enough tokens: transpose x into panels for the
	// 12×32 GEMM tiles, or split it into AMX activation tiles.
	panels, amx := false, false
	for i := range ws {
		if j := &t.jobs[i]; j.kind == wkFloat {
			amx = amx || j.amx
			panels = panels || !j.amx
		}
	}
	t.xp, t.xa = nil, nil
	if panels && n >= panelMinTokens && k.hasPanelGEMM() {
		size := (n + 31) / 32 * 32 * cols
		if cap(st.xp) < size {
			st.xp = make([]float32, size)
		}
		t.xp = st.xp[:size]
		st.panels = panelTask{k: k, x: x, cols: cols, n: n, xp: t.xp}
		if locked {
			p.runLocked((n+31)/32, 1, &st.panels)
		} else {
			st.panels.Run(0, (n+31)/32)
		}
	}
	if amx {
		tiles := amxTokenTiles(n)
		size := tiles * amxXLen(cols)
		if cap(st.xa) < size {
			st.xa = make([]uint16, size)
		}
		t.xa = st.xa[:size]
		st.amxX = amxXTask{k: k, x: x, cols: cols, n: n, xa: t.xa}
		if locked {
			p.runLocked(tiles, 1, &st.amxX)
		} else {
			st.amxX.Run(0, tiles)
		}
	}

	// Split the rows into chunks of at least 64 KiB of weight reads (times
	// the tokens) and a 4-row tile: below that, handing work to another
	// core, whose caches do not hold these weights, costs more than it
	// saves.
	per := max(1, work/max(1, units)) * n
	grain := max(4, (64<<10)/max(1, per))
	grain = (grain + 3) &^ 3
	if amx {
		grain = (grain + 31) &^ 31 // whole pairs of 16-row AMX tiles
	} else if t.xp != nil {
		grain = (grain + 11) / 12 * 12 // whole 12-row panel tiles
	} else if need[afQ8C] || need[afQ8Y] || strips || iq4 {
		grain = (grain + 15) &^ 15 // whole 16-row strips
	}
	if locked && units > grain {
		if n > 1 {
			// Prefill: long, so shrinking chunks pay (at least 48
			// rows, a few hundred µs of work each).
			p.runGuidedLocked(units, grain, max(1, 48/grain), t)
		} else {
			p.runLocked(units, grain, t)
		}
	} else {
		t.Run(0, units)
	}
	t.x, t.xp, t.xa = nil, nil, nil
	st.panels = panelTask{}
	st.amxX = amxXTask{}
	for i := range ws {
		t.jobs[i] = mmJob{}
	}
	return nil
}

// q4TileMinTokens and q8TileMinTokens are the fewest tokens for which
// Q4_0 and Q8_0 matmuls use the 16-row tiles on unpacked strips (up to 8
// tokens, fused: each block unpacked in registers and used at once, the
// next strip prefetched as one sequential run). From cache, unpacking
// costs about as much as two (Q4_0) or one and a half (Q8_0) tokens'
// matrix-vector products, after which each token costs a small fraction
// of one (BenchmarkSmallBatch); with the weights streaming from memory two
// tokens already favour the tiles (weft bench --batch 1,2: 59.8 and 68.9
// tok/s against 64.7 and 62.7 with the products). A single token runs the
// matrix-vector product. Both paths give ggml's bits.
var (
	q4TileMinTokens = 2
	q8TileMinTokens = 2
)

// alignedBytes returns n bytes of b starting at a 64-byte boundary; b must
// have 64 bytes to spare.
func alignedBytes(b []byte, n int) []byte {
	off := int(-uintptrOf(b) & 63)
	return b[off : off+n : off+n]
}

// Run computes the rows of units [lo, hi).
func (t *mmTask) Run(lo, hi int) { t.runWorker(0, lo, hi) }

// runWorker computes the rows of units [lo, hi) on thread w.
func (t *mmTask) runWorker(w, lo, hi int) {
	for i := 0; i < t.njobs; i++ {
		j := &t.jobs[i]
		a := max(lo, j.u0) - j.u0
		b := min(hi, j.u0+j.units, j.u0+j.w.Rows) - j.u0
		if a >= b {
			continue
		}
		switch j.kind {
		case wkFloat:
			t.floatRows(w, j, a, b)
		case wkQ4_0, wkQ8_0:
			t.q8Rows(w, j, a, b)
		case wkQ6_K, wkQ5_K, wkQ4_K, wkQ3_K, wkQ2_K, wkIfQ4, wkIfQ3H, wkIfQ6, wkIfQ5, wkIfQ4S, wkIfQ3, wkIfQ2, wkIQ4NL, wkIQ4NB:
			if j.pack != nil {
				t.ifRows(j, a, b)
				break
			}
			t.kRows(w, j, a, b)
		case wkBF16DP:
			t.bf16dpRows(w, j, a, b)
		case wkQ5_0, wkQ4_1, wkQ5_1:
			t.legacyRows(w, j, a, b)
		default:
			t.quantRows(j, a, b)
		}
	}
}

// put stores or adds v at dst[i].
func put(dst []float32, i int, v float32, acc bool) {
	if acc {
		dst[i] += v
	} else {
		dst[i] = v
	}
}

// Cache blocking of the prefill (n > 1) loops: a block of rows is swept
// for every 4 tokens while it stays in L2, and the reduction is cut into
// chunks so that 4 tokens' activations stay in L1. The SIMD Q4_0/Q8_0
// prefill does not cut the reduction (each output is one chain over all
// its blocks): it unpacks q8RB rows whole and sweeps them for every 16
// tokens.
const (
	floatKC   = 1024 // elements per reduction chunk, float weights
	floatRB   = 64   // rows per block
	q8RB      = 32   // rows per block, SIMD Q8 (unpacked whole, 2 strips)
	quantRows = 16   // rows per block, kernels/quant path
)

// floatRows computes rows [r0, r1) of a float-weight job for all tokens,
// on thread w.
func (t *mmTask) floatRows(w int, j *mmJob, r0, r1 int) {
	k, n, cols, rb, ft := t.k, t.n, j.w.Cols, j.rb, j.ft
	wd, x, dst := j.w.Data, t.x, j.dst
	if n == 1 {
		// Four rows q apart at a time: four streams through memory keep
		// more reads in flight than one.
		var y [4]float32
		q := (r1 - r0) / 4
		for r := r0; r < r0+q; r++ {
			k.floatGemv4(ft, wd[r*rb:], q*rb, x[:cols], &y)
			for i, v := range y {
				put(dst, r+i*q, v, t.acc)
			}
		}
		for r := r0 + 4*q; r < r1; r++ {
			put(dst, r, k.floatDot(ft, wd[r*rb:(r+1)*rb], x[:cols]), t.acc)
		}
		return
	}
	if j.amx {
		t.floatRowsAMX(w, j, r0, r1)
		return
	}
	if t.xp != nil {
		t.floatRowsPanel(w, j, r0, r1)
		return
	}
	t.floatRowsTiles(w, j, r0, r1)
}

// floatRowsTiles computes rows [r0, r1) of a float-weight job for several
// tokens with 4-row × 4-token dot-product tiles.
func (t *mmTask) floatRowsTiles(w int, j *mmJob, r0, r1 int) {
	k, n, cols, ldd, rb, ft := t.k, t.n, j.w.Cols, j.w.Rows, j.rb, j.ft
	wd, x, dst := j.w.Data, t.x, j.dst
	es := ft.size()
	// F16 and BF16 blocks are widened to float32 once and reused for
	// every 4 tokens.
	widen := ft != ftF32 && k.level >= AVX2 && n >= 4
	var wide []float32
	if widen {
		b := t.scratchFor(w, 4*floatRB*(floatKC+16)+64)
		wide = bytesAsF32(alignedBytes(b, 4*floatRB*(floatKC+16)))
	}
	var y4 [4]float32
	for b0 := r0; b0 < r1; b0 += floatRB {
		b1 := min(b0+floatRB, r1)
		for c0 := 0; c0 < cols; c0 += floatKC {
			c1 := min(c0+floatKC, cols)
			kc := c1 - c0
			acc := t.acc || c0 > 0
			// The tile's weights: wt rows ldw bytes apart, of type tt.
			wt, ldw, tt, off := wd, rb, ft, c0*es
			if widen {
				// Rows 64 bytes longer than kc keep the 4 rows of a tile
				// out of each other's L1 sets.
				ld := kc + 16
				for r := b0; r < b1; r++ {
					k.toFloatRow(ft, wide[(r-b0)*ld:(r-b0)*ld+kc], wd[r*rb+c0*es:r*rb+c1*es])
				}
				wt, ldw, tt, off = f32AsBytes(wide[:(b1-b0)*ld]), 4*ld, ftF32, -b0*4*ld
			}
			tok := 0
			for ; tok+4 <= n; tok += 4 {
				r := b0
				for ; r+4 <= b1; r += 4 {
					k.floatTile(tt, wt[r*ldw+off:], ldw, x[tok*cols+c0:], cols, kc, dst[tok*ldd+r:], ldd, acc)
				}
				for ; r < b1; r++ {
					for tk := tok; tk < tok+4; tk++ {
						put(dst, tk*ldd+r, k.floatDot(ft, wd[r*rb+c0*es:r*rb+c1*es], x[tk*cols+c0:tk*cols+c1]), acc)
					}
				}
			}
			for ; tok < n; tok++ {
				xt := x[tok*cols+c0 : tok*cols+c1]
				r := b0
				for ; r+4 <= b1; r += 4 {
					k.floatGemv4(ft, wd[r*rb+c0*es:], rb, xt, &y4)
					for i, v := range y4 {
						put(dst, tok*ldd+r+i, v, acc)
					}
				}
				for ; r < b1; r++ {
					put(dst, tok*ldd+r, k.floatDot(ft, wd[r*rb+c0*es:r*rb+c1*es], xt), acc)
				}
			}
		}
	}
}

// kRows computes rows [r0, r1) of a SIMD K-quant, IQ4_NL or Inferflow
// job on pool thread w (whose scratch the tiles, and the kernels that
// prepare their activations, use): for several tokens
// the prefill kernels where the level has them (ifGemm, kqgemm, the
// IQ4_NL tiles, the AVX2 tiles of kGemmY), otherwise matrix-vector
// products swept over blocks of rows that stay in cache.
func (t *mmTask) kRows(w int, j *mmJob, r0, r1 int) {
	n, ldd, rb := t.n, j.w.Rows, j.rb
	nb := j.w.Cols / j.w.DType.BlockSize()
	if n > 1 && t.k.hasIfGemm(j.kind) {
		t.k.ifGemm(j.kind, j.w.Data[r0*rb:r1*rb], rb, j.act, j.ldx, nb, n, j.dst[r0:], ldd, r1-r0, t.acc, &t.scratch[w])
		return
	}
	if j.kind == wkIQ4NB && j.af == afQ8Y {
		// AVX2 tiles, 16 rows at a time so that they stay in cache for
		// all the tokens.
		for b0 := r0; b0 < r1; b0 += quantRows {
			b1 := min(b0+quantRows, r1)
			t.k.iq4nlGemmY(j.w.Data[b0*rb:b1*rb], rb, j.act, j.ldx, nb, n, j.dst[b0:], ldd, b1-b0, t.acc)
		}
		return
	}
	if j.kind == wkIQ4NB {
		t.k.iq4nlGemm(j.w.Data[r0*rb:r1*rb], rb, j.act, j.ldx, nb, n, j.dst[r0:], ldd, r1-r0, t.acc,
			t.scratchFor(w, iq4nlScratch(r1-r0, nb)))
		return
	}
	step := r1 - r0
	if n > 1 {
		step = quantRows
	}
	for b0 := r0; b0 < r1; b0 += step {
		b1 := min(b0+step, r1)
		if n >= q8YMinTokens && t.k.hasKGemmY(j.kind) {
			t.k.kGemmY(j.kind, j.w.Data[b0*rb:b1*rb], rb, j.act, j.ldx, nb, n, j.dst[b0:], ldd, b1-b0, t.acc)
			continue
		}
		if n > 1 && t.k.hasKQGemm(j.kind) {
			t.k.kqGemm(j.kind, j.w.Data[b0*rb:b1*rb], rb, j.act, j.ldx, nb, n, j.dst[b0:], ldd, b1-b0, t.acc, &t.scratch[w])
			continue
		}
		for tok := range n {
			t.k.kGemv(j.kind, j.w.Data[b0*rb:b1*rb], rb, j.act[tok*j.ldx:(tok+1)*j.ldx], nb, j.dst[tok*ldd+b0:tok*ldd+b1], t.acc, &t.scratch[w])
		}
	}
}

// quantRows computes rows [r0, r1) of a job that uses kernels/quant.
func (t *mmTask) quantRows(j *mmJob, r0, r1 int) {
	n, cols, ldd, rb := t.n, j.w.Cols, j.w.Rows, j.rb
	for b0 := r0; b0 < r1; b0 += quantRows {
		b1 := min(b0+quantRows, r1)
		for tok := range n {
			a := j.act[tok*j.ldx : (tok+1)*j.ldx]
			for r := b0; r < b1; r++ {
				put(j.dst, tok*ldd+r, j.dot(j.w.Data[r*rb:(r+1)*rb], a, cols), t.acc)
			}
		}
	}
}

// packTask quantizes tokens [lo, hi) of x into an activation format.
type packTask struct {
	k    Kernels
	f    actFormat
	x    []float32
	cols int
	dst  []byte
	ldx  int
}

func (t *packTask) Run(lo, hi int) {
	for tok := lo; tok < hi; tok++ {
		x := t.x[tok*t.cols : (tok+1)*t.cols]
		d := t.dst[tok*t.ldx : (tok+1)*t.ldx]
		if t.f == afQ8C {
			// Records of 16 tokens interleaved, q8cBlock bytes apart.
			d = t.dst[tok/16*16*t.ldx+tok%16*q8cRecord:]
		}
		switch t.f {
		case afQ8A:
			t.k.packQ8A(d, x)
		case afQ8B:
			t.k.packQ8B(d, x)
		case afQ8P:
			t.k.packQ8P(d, x)
		case afQ8_0:
			t.k.quantizeQ8_0(d, x)
		case afQ8_K:
			t.k.quantizeQ8_K(d, x)
		case afQ8C:
			t.k.packQ8C(d, x)
		case afQ8I:
			t.k.packQ8I(d, x)
		case afBF16:
			t.k.toBF16Row(bytesAsU16(d), x)
		case afQ8Y:
			t.k.packQ8Y(d, x)
		case afQ8_1:
			t.k.quantizeQ8_1(d, x)
		case afQ8T:
			// Groups of 8 tokens interleaved (legacyy_amd64.go).
			t.k.packQ8T(t.dst[tok/8*8*t.ldx:], x, tok%8)
		}
	}
}

// DotF32 returns Σ a[i]·b[i] over len(a); b must be at least as long.
func DotF32(a, b []float32) float32 { return detected.DotF32(a, b) }

// DotF32 returns Σ a[i]·b[i] over len(a) with the set's kernels.
func (k Kernels) DotF32(a, b []float32) float32 {
	b = b[:len(a)]
	return k.floatDot(ftF32, tensor.F32ToBytes(a), b)
}

// QuantizeRowQ8_0 quantizes activations x (a multiple of 32 values) into
// ggml Q8_0 blocks in dst (34 bytes per 32 values), bit-exactly as
// quant.QuantizeActivationQ8_0 does: as ggml's x86 CPU backend quantizes
// activations, which rounds some values differently from its reference
// quantizer (quant.QuantizeRowQ8_0, the one for weights).
func QuantizeRowQ8_0(dst []byte, x []float32) error {
	if len(x)%32 != 0 {
		return fmt.Errorf("quantize q8_0: %d values is not a multiple of 32", len(x))
	}
	if len(dst) < len(x)/32*34 {
		return fmt.Errorf("quantize q8_0: dst has %d bytes, %d values need %d", len(dst), len(x), len(x)/32*34)
	}
	detected.quantizeQ8_0(dst, x)
	return nil
}

// DequantizeRow writes row r of w as float32s into dst (len Cols).
func DequantizeRow(dst []float32, w Matrix, r int) error {
	rb, err := w.DType.RowBytes(w.Cols)
	if err != nil {
		return fmt.Errorf("dequantize: %w", err)
	}
	if r < 0 || r >= w.Rows || len(w.Data) < (r+1)*rb {
		return fmt.Errorf("dequantize: row %d of a %d-row %s matrix with %d bytes", r, w.Rows, w.DType, len(w.Data))
	}
	if len(dst) < w.Cols {
		return fmt.Errorf("dequantize: dst has %d floats, want %d", len(dst), w.Cols)
	}
	row := w.Data[r*rb : (r+1)*rb]
	switch w.DType {
	case tensor.F32:
		copy(dst[:w.Cols], tensor.BytesToF32(row))
	case tensor.F16:
		detected.f16ToF32(dst[:w.Cols], row)
	default:
		if err := quant.Dequantize(w.DType, dst[:w.Cols], row); err != nil {
			return fmt.Errorf("dequantize: %w", err)
		}
	}
	return nil
}
