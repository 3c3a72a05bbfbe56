package quant

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// The block builders below restate Inferflow's layouts (quant_types.h) the
// way its quantizers fill them, group by group, independently of the
// per-element pack functions under test. q holds one block's quants.

func ifHeader(b []byte, base, scale uint16) {
	binary.LittleEndian.PutUint16(b, base)
	binary.LittleEndian.PutUint16(b[2:], scale)
}

// buildQ6_B64T1: 16 groups of 4 values; group r's low nibbles fill
// data[2r] (values 0, 1) and data[2r+1] (values 2, 3), their top bit pairs
// data_h[r] from bit 0 up.
func buildQ6_B64T1(base, scale uint16, q []uint8) []byte {
	b := make([]byte, 52)
	ifHeader(b, base, scale)
	dataH, data := b[4:20], b[20:52]
	for r := range 16 {
		g := q[4*r : 4*r+4]
		data[2*r] = g[0]&15 | g[1]&15<<4
		data[2*r+1] = g[2]&15 | g[3]&15<<4
		dataH[r] = g[0]>>4 | g[1]>>4<<2 | g[2]>>4<<4 | g[3]>>4<<6
	}
	return b
}

// buildQ5_B64T1: 8 groups of 8 values; group r's low nibbles fill
// data[4r..4r+3] two to a byte, its fifth bits data_h[r].
func buildQ5_B64T1(base, scale uint16, q []uint8) []byte {
	b := make([]byte, 44)
	ifHeader(b, base, scale)
	dataH, data := b[4:12], b[12:44]
	for r := range 8 {
		g := q[8*r : 8*r+8]
		var h byte
		for k := range 4 {
			data[4*r+k] = g[2*k]&15 | g[2*k+1]&15<<4
		}
		for k := range 8 {
			h |= g[k] >> 4 << k
		}
		dataH[r] = h
	}
	return b
}

// buildNibbles: byte r holds values 2r (low nibble) and 2r+1.
func buildNibbles(base, scale uint16, q []uint8) []byte {
	b := make([]byte, 4+len(q)/2)
	ifHeader(b, base, scale)
	for r := range len(q) / 2 {
		b[4+r] = q[2*r] | q[2*r+1]<<4
	}
	return b
}

// buildQ3H_B64T1: 8 groups of 8 values = 4 pairs p = q0 + 11·q1; group r's
// low nibbles fill data[2r], data[2r+1], bits 4-5 data_m[r], and bit 6
// goes to data_h[r/2], low nibble for even r, high for odd.
func buildQ3H_B64T1(base, scale uint16, q []uint8) []byte {
	b := make([]byte, 32)
	ifHeader(b, base, scale)
	dataH, dataM, data := b[4:8], b[8:16], b[16:32]
	for r := range 8 {
		var p [4]byte
		for k := range 4 {
			p[k] = q[8*r+2*k] + 11*q[8*r+2*k+1]
		}
		data[2*r] = p[0]&15 | p[1]&15<<4
		data[2*r+1] = p[2]&15 | p[3]&15<<4
		dataM[r] = p[0]>>4&3 | (p[1]>>4&3)<<2 | (p[2]>>4&3)<<4 | (p[3]>>4&3)<<6
		h := p[0]>>6 | p[1]>>6<<1 | p[2]>>6<<2 | p[3]>>6<<3
		dataH[r/2] |= h << (4 * (r % 2))
	}
	return b
}

// buildQ3_B32T1: 4 groups of 8; group r's low bit pairs fill data[2r]
// (values 0-3) and data[2r+1] (values 4-7), its third bits h_data[r].
func buildQ3_B32T1(base, scale uint16, q []uint8) []byte {
	b := make([]byte, 16)
	ifHeader(b, base, scale)
	hData, data := b[4:8], b[8:16]
	for r := range 4 {
		g := q[8*r : 8*r+8]
		data[2*r] = g[0]&3 | g[1]&3<<2 | g[2]&3<<4 | g[3]&3<<6
		data[2*r+1] = g[4]&3 | g[5]&3<<2 | g[6]&3<<4 | g[7]&3<<6
		for k := range 8 {
			hData[r] |= g[k] >> 2 << k
		}
	}
	return b
}

// buildQ2_B32T1: byte r holds values 4r..4r+3 from bit 0 up.
func buildQ2_B32T1(base, scale uint16, q []uint8) []byte {
	b := make([]byte, 12)
	ifHeader(b, base, scale)
	for r := range 8 {
		b[4+r] = q[4*r] | q[4*r+1]<<2 | q[4*r+2]<<4 | q[4*r+3]<<6
	}
	return b
}

type ifHand struct {
	dt     tensor.DType
	levels int // quants 0..levels-1 are valid
	build  func(base, scale uint16, q []uint8) []byte
}

var ifHands = []ifHand{
	{Q6_B64T1, 64, buildQ6_B64T1},
	{Q5_B64T1, 32, buildQ5_B64T1},
	{Q4_B32T1, 16, buildNibbles},
	{Q4_B64T1, 16, buildNibbles},
	{Q3H_B64T1, 11, buildQ3H_B64T1},
	{Q3_B32T1, 8, buildQ3_B32T1},
	{Q2_B32T1, 4, buildQ2_B32T1},
}

func mustInferflow(t testing.TB, dt tensor.DType) InferflowFormat {
	t.Helper()
	f, ok := LookupInferflow(dt)
	if !ok {
		t.Fatalf("no Inferflow format %d", uint32(dt))
	}
	return f
}

func TestInferflowLayout(t *testing.T) {
	// Bits per weight from the layouts: (header + quant bytes)·8 / values.
	want := []struct {
		name          string
		elems, bytes  int
		bitsPerWeight float64
	}{
		{"q8_b32t2", 32, 2 + 32, 8.5},
		{"q6_b64t1", 64, 4 + 16 + 32, 6.5},
		{"q5_b64t1", 64, 4 + 8 + 32, 5.5},
		{"q4_b32t1", 32, 4 + 16, 5},
		{"q4_b64t1", 64, 4 + 32, 4.5},
		{"q3h_b64t1", 64, 4 + 4 + 8 + 16, 4},
		{"q3_b32t1", 32, 4 + 4 + 8, 4},
		{"q2_b32t1", 32, 4 + 8, 3},
	}
	fs := InferflowFormats()
	if len(fs) != len(want) {
		t.Fatalf("%d formats, want %d", len(fs), len(want))
	}
	for i, f := range fs {
		w := want[i]
		if f.Name != w.name || f.BlockElems != w.elems || f.BlockBytes != w.bytes || f.BitsPerWeight() != w.bitsPerWeight {
			t.Errorf("format %d = %s %d values %d bytes %.4g bpw, want %s %d %d %.4g",
				i, f.Name, f.BlockElems, f.BlockBytes, f.BitsPerWeight(), w.name, w.elems, w.bytes, w.bitsPerWeight)
		}
		// weft's ids, from 4096 up, known to tensor with the same layout.
		if f.Type < 4096 || f.Type.String() != f.Name || f.Type.BlockSize() != f.BlockElems || f.Type.TypeSize() != f.BlockBytes {
			t.Errorf("%s: type id %d is %s with blocks of %d values in %d bytes", f.Name, uint32(f.Type), f.Type, f.Type.BlockSize(), f.Type.TypeSize())
		}
		if g, ok := LookupInferflow(f.Type); !ok || g.Name != f.Name {
			t.Errorf("LookupInferflow(%d) = %v, %v", uint32(f.Type), g.Name, ok)
		}
		if n, err := f.RowBytes(4 * f.BlockElems); err != nil || n != 4*f.BlockBytes {
			t.Errorf("%s: RowBytes(%d) = %d, %v", f.Name, 4*f.BlockElems, n, err)
		}
		if _, err := f.RowBytes(f.BlockElems + 16); err == nil {
			t.Errorf("%s: RowBytes accepts a partial block", f.Name)
		}
	}
	if _, ok := LookupInferflow(tensor.Q4_0); ok {
		t.Error("LookupInferflow accepts a ggml type")
	}
}

// TestInferflowHandBuiltBlocks decodes blocks built group by group from
// Inferflow's struct layouts, with base -2 (f16 0xc000) and scale 0.25
// (0x3400), so q·0.25 - 2 is exact and must come back bit for bit.
func TestInferflowHandBuiltBlocks(t *testing.T) {
	const base, scale = -2, 0.25
	for _, h := range ifHands {
		f := mustInferflow(t, h.dt)
		t.Run(f.Name, func(t *testing.T) {
			q := make([]uint8, f.BlockElems)
			want := make([]float32, 2*f.BlockElems)
			for i := range q {
				q[i] = uint8((7*i + i/3) % h.levels)
				want[i] = float32(q[i])*scale + base
			}
			blk := h.build(0xc000, 0x3400, q)
			if len(blk) != f.BlockBytes {
				t.Fatalf("built %d bytes, want %d", len(blk), f.BlockBytes)
			}
			// A second block with other header fields checks the stride:
			// base 1.5 (0x3e00), scale 0.5 (0x3800), quants reversed.
			q2 := slices.Clone(q)
			slices.Reverse(q2)
			for i, v := range q2 {
				want[f.BlockElems+i] = float32(v)*0.5 + 1.5
			}
			src := append(blk, h.build(0x3e00, 0x3800, q2)...)
			got := make([]float32, len(want))
			if err := DequantizeInferflow(h.dt, got, src); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Errorf("value %d = %v, want %v", i, got[i], want[i])
				}
			}
		})
	}
	// Q8_B32T2: f16 scale then 32 int8 quants.
	b := make([]byte, 34)
	le16(b, 0xb400) // -0.25
	want := make([]float32, 32)
	for j := range 32 {
		b[2+j] = byte(int8(j*8 - 128))
		want[j] = float32(j*8-128) * -0.25
	}
	got := make([]float32, 32)
	if err := DequantizeInferflow(Q8_B32T2, got, b); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("q8_b32t2 = %v, want %v", got, want)
	}
}

// TestInferflowLiteralBlocks decodes blocks written out byte by byte.
func TestInferflowLiteralBlocks(t *testing.T) {
	// Q3H_B64T1, base 0, scale 1. Pair 0 is values (3, 7): code
	// 3 + 11·7 = 80 = 0b1010000, so low nibble 0, bits 4-5 = 01, bit 6 = 1.
	// Pair 1 is (10, 10): code 120 = 0b1111000: nibble 8, bits 4-5 = 11,
	// bit 6 = 1. Pair 31 is (1, 0): code 1, the high nibble of data[15].
	// data[0] = 0x80, data_m[0] = 0b1101, data_h[0] = 0b11.
	q3h := []byte{
		0x00, 0x00, 0x00, 0x3c, // base 0, scale 1
		0x03, 0, 0, 0, // data_h
		0x0d, 0, 0, 0, 0, 0, 0, 0, // data_m
		0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, // data
	}
	want := make([]float32, 64)
	copy(want, []float32{3, 7, 10, 10})
	want[62] = 1
	got := make([]float32, 64)
	DequantizeRowQ3H_B64T1(got, q3h)
	if !slices.Equal(got, want) {
		t.Errorf("q3h_b64t1 literal block = %v\nwant %v", got, want)
	}
	// Codes 121..127 are never written; they decode by the same
	// arithmetic: 127 = 6 + 11·11.
	q3h[4], q3h[8], q3h[16] = 0x01, 0x03, 0x0f // pair 0 = 127
	DequantizeRowQ3H_B64T1(got, q3h)
	if got[0] != 6 || got[1] != 11 {
		t.Errorf("code 127 decodes to %v, %v, want 6, 11", got[0], got[1])
	}

	// Q2_B32T1, base -1 (0xbc00), scale 0.5 (0x3800); data[0] = 0b11100100
	// holds quants 0, 1, 2, 3; data[7] = 0x40 makes value 31 quant 1.
	q2 := []byte{0x00, 0xbc, 0x00, 0x38, 0xe4, 0, 0, 0, 0, 0, 0, 0x40}
	want = slices.Repeat([]float32{-1}, 32)
	copy(want, []float32{-1, -0.5, 0, 0.5})
	want[31] = -0.5
	got = make([]float32, 32)
	DequantizeRowQ2_B32T1(got, q2)
	if !slices.Equal(got, want) {
		t.Errorf("q2_b32t1 literal block = %v\nwant %v", got, want)
	}
}

// TestInferflowQuantizeHandBuilt quantizes inputs whose quants follow by
// hand from the rules, and compares the bytes with blocks built from the
// layouts.
func TestInferflowQuantizeHandBuilt(t *testing.T) {
	// Q3H: values i%11 have min 0 and max 10, so scale = 1, base = 0 and
	// q = x exactly.
	x := make([]float32, 64)
	q := make([]uint8, 64)
	for i := range x {
		q[i] = uint8(i % 11)
		x[i] = float32(q[i])
	}
	checkQuantize(t, Q3H_B64T1, x, buildQ3H_B64T1(0x0000, 0x3c00, q))

	// Q4_B32T1 (rule A): min 0, max 15, scale 1. Round half up:
	// 2.5→3 and 3.5→4 (ties to even would give 2 and 4), 0.49→0,
	// 14.5→15, 15→15.
	x = make([]float32, 32)
	q = make([]uint8, 32)
	x[1], q[1] = 15, 15
	x[2], q[2] = 2.5, 3
	x[3], q[3] = 3.5, 4
	x[4], q[4] = 0.49, 0
	x[5], q[5] = 14.5, 15
	x[6], q[6] = 7.25, 7
	checkQuantize(t, Q4_B32T1, x, buildNibbles(0x0000, 0x3c00, q))

	// Q4_B64T1: min -1, max 6, scale 7/14 = 0.5 (0x3800), base -1
	// (0xbc00): q = round half up((x+1)·2), 15 levels 0..14.
	x = make([]float32, 64)
	q = make([]uint8, 64)
	for i := range x {
		q[i] = uint8((i * 5) % 15)
		x[i] = float32(q[i])/2 - 1
	}
	x[63], q[63] = 6, 14
	x[62], q[62] = -1, 0
	x[61], q[61] = 0.26, 3 // (1.26·2 = 2.52) → 3
	checkQuantize(t, Q4_B64T1, x, buildNibbles(0xbc00, 0x3800, q))

	// Q3_B32T1 (rule B, mid-rise): min 0, max 8, scale 1 (0x3c00), base
	// 0.5 (0x3800), q = trunc(x + 0.0001) clamped to 7: 3→3, 2.99995→3
	// (the 0.0001 fudge), 2.9998→2, 8→7, 7.9→7.
	x = make([]float32, 32)
	q = make([]uint8, 32)
	x[1], q[1] = 8, 7
	x[2], q[2] = 3, 3
	x[3], q[3] = 2.99995, 3
	x[4], q[4] = 2.9998, 2
	x[5], q[5] = 7.9, 7
	x[6], q[6] = 5.5, 5
	checkQuantize(t, Q3_B32T1, x, buildQ3_B32T1(0x3800, 0x3c00, q))

	// Q2_B32T1 (rule B): min -2, max 2, scale 1, base -1.5 (0xbe00):
	// q = trunc(x + 2 + 0.0001): -2→0, -0.5→1, 0→2, 1.999→3, 2→3.
	x = make([]float32, 32)
	q = make([]uint8, 32)
	for i := range x {
		x[i], q[i] = -2, 0
	}
	x[1], q[1] = 2, 3
	x[2], q[2] = -0.5, 1
	x[3], q[3] = 0, 2
	x[4], q[4] = 1.999, 3
	checkQuantize(t, Q2_B32T1, x, buildQ2_B32T1(0xbe00, 0x3c00, q))

	// The same values with rule A: scale 4/3, base -2; q = round half
	// up((x+2)·0.75): -0.5→1 (1.125), 0→2 (1.5), 1.999→3 (2.999).
	q[2], q[3], q[4] = 1, 2, 3
	got := make([]byte, 12)
	QuantizeRowQ2_B32T1A(got, x)
	if want := buildQ2_B32T1(0xc000, ToF16(4.0/3), q); string(got) != string(want) {
		t.Errorf("q2_b32t1 rule A =\n% x\nwant\n% x", got, want)
	}

	// Q8_B32T2: amax 127 gives scale 1 (0x3c00) and q = round half away
	// from zero.
	x = make([]float32, 32)
	x[0], x[1], x[2], x[3], x[4], x[5] = 127, -127, 0.5, -0.5, 2.5, -1.49
	want := make([]byte, 34)
	le16(want, 0x3c00)
	copy(want[2:], []byte{0x7f, 0x81, 0x01, 0xff, 0x03, 0xff})
	checkQuantize(t, Q8_B32T2, x, want)
}

func checkQuantize(t *testing.T, dt tensor.DType, x []float32, want []byte) {
	t.Helper()
	got := make([]byte, len(want))
	if err := QuantizeInferflow(dt, got, x); err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s: quantized\n% x\nwant\n% x", mustInferflow(t, dt).Name, got, want)
	}
}

// ifRuleOf returns the rule a format's default quantizer uses.
func ifRuleOf(dt tensor.DType) ifRule {
	switch dt {
	case Q6_B64T1:
		return ifRule{div: 62, qmax: 63}
	case Q5_B64T1:
		return ifRule{div: 30, qmax: 31}
	case Q4_B32T1:
		return ifRule{div: 15, qmax: 15}
	case Q4_B64T1:
		return ifRule{div: 14, qmax: 15}
	case Q3H_B64T1:
		return ifRule{div: 10, qmax: 10}
	case Q3_B32T1:
		return ifRule{div: 8, qmax: 7, midRise: true}
	case Q2_B32T1:
		return ifRule{div: 4, qmax: 3, midRise: true}
	}
	return ifRule{div: 127, qmax: 127} // Q8_B32T2, by amax
}

// f16Err bounds the error of rounding v to an f16: half an ulp, relative
// 2⁻¹¹ for normal values and 2⁻²⁵ absolute for subnormal ones.
func f16Err(v float32) float32 { return max(abs32(v)/2048, 0x1p-25) }

// ifBound returns the largest error allowed for a value of block x.
//
// Asymmetric rules, step s = (max−min)/div: rounding half up to a level
// errs by at most s/2; the mid-rise rule by s/2 too (a value is at most
// half a bin from the bin's centre; the top value clamps to the centre of
// the last bin, s/2 below it), plus the 0.0001·s fudge. The stored f16
// scale errs by f16Err(s), multiplied by up to qmax levels; the stored
// base by f16Err(base). Float32 arithmetic adds a few ulps of the
// magnitudes involved. When s < 1e-5 every quant is 0 and the block
// decodes to its base: the error is at most the range.
//
// Q8_B32T2, step s = amax/127: s/2, plus 127·f16Err(s); when s < 1e-5
// everything decodes to 0 and the error is at most amax.
func ifBound(dt tensor.DType, x []float32) float32 {
	st := stats(x)
	r := ifRuleOf(dt)
	float := 0x1p-22 * (abs32(st.lo) + abs32(st.hi))
	if dt == Q8_B32T2 {
		s := st.amax / 127
		if s < ifMinScale {
			return st.amax
		}
		return s/2 + 127*f16Err(s) + float
	}
	s := (st.hi - st.lo) / r.div
	base := st.lo
	if r.midRise {
		base += s / 2
	}
	if s < ifMinScale {
		return (st.hi - st.lo) + f16Err(base) + float
	}
	return s*0.5002 + float32(r.qmax)*f16Err(s) + f16Err(base) + float
}

func TestInferflowRoundTripErrorBounds(t *testing.T) {
	const n = 4096
	data := testData(n)
	// Blocks whose range is below 1e-5 per step, and blocks mixing the two.
	r := rand.New(rand.NewPCG(5, 8))
	tiny := make([]float32, n)
	for i := range tiny {
		tiny[i] = 1 + float32(r.Float64()*3e-5)
		if i/64%2 == 1 {
			tiny[i] = float32(r.NormFloat64() * 1e-6)
		}
	}
	data["tiny"] = tiny
	for _, f := range InferflowFormats() {
		t.Run(f.Name, func(t *testing.T) {
			var worst float32
			var worstAt string
			for name, x := range data {
				nb, err := f.RowBytes(n)
				if err != nil {
					t.Fatal(err)
				}
				q := make([]byte, nb)
				if err := QuantizeInferflow(f.Type, q, x); err != nil {
					t.Fatal(err)
				}
				y := make([]float32, n)
				if err := DequantizeInferflow(f.Type, y, q); err != nil {
					t.Fatal(err)
				}
				for b := 0; b < n; b += f.BlockElems {
					lim := ifBound(f.Type, x[b:b+f.BlockElems])
					for i := b; i < b+f.BlockElems; i++ {
						e := abs32(x[i] - y[i])
						if !(e <= lim) {
							t.Fatalf("%s: value %d = %v decodes to %v: error %g > bound %g", name, i, x[i], y[i], e, lim)
						}
						if lim > 0 && e/lim > worst {
							worst, worstAt = e/lim, fmt.Sprintf("%s value %d", name, i)
						}
					}
				}
			}
			t.Logf("worst error %.3f of the bound (%s)", worst, worstAt)
		})
	}
}

// TestInferflowEdgeCases covers constant, zero and sub-threshold blocks,
// non-finite and out-of-range inputs and wrong lengths.
func TestInferflowEdgeCases(t *testing.T) {
	for _, f := range InferflowFormats() {
		t.Run(f.Name, func(t *testing.T) {
			n := 2 * f.BlockElems
			nb, _ := f.RowBytes(n)
			q := make([]byte, nb)
			y := make([]float32, n)
			roundTrip := func(x []float32) []float32 {
				t.Helper()
				if err := QuantizeInferflow(f.Type, q, x); err != nil {
					t.Fatal(err)
				}
				if err := DequantizeInferflow(f.Type, y, q); err != nil {
					t.Fatal(err)
				}
				return y
			}
			// Zeros decode to zeros.
			for i, v := range roundTrip(make([]float32, n)) {
				if v != 0 || math.Signbit(float64(v)) {
					t.Fatalf("zeros: value %d decodes to %v", i, v)
				}
			}
			// A constant block has scale 0: the asymmetric formats decode
			// every value to the f16 base exactly.
			x := slices.Repeat([]float32{0.7}, n)
			want := FromF16(ToF16(0.7))
			if f.Type == Q8_B32T2 {
				want = 127 * FromF16(ToF16(0.7/127)) // q = 127
			}
			for i, v := range roundTrip(x) {
				if v != want {
					t.Fatalf("constant 0.7: value %d decodes to %v, want %v", i, v, want)
				}
			}
			// A range below the threshold decodes to the base (asymmetric)
			// or to 0 (Q8_B32T2, amax/127 < 1e-5).
			for i := range x {
				x[i] = 1 + float32(i%7)*1e-6
			}
			want = 1
			if f.Type == Q8_B32T2 {
				for i := range x {
					x[i] = float32(i%5-2) * 5e-4
				}
				want = 0
			}
			for i, v := range roundTrip(x) {
				if v != want {
					t.Fatalf("sub-threshold block: value %d decodes to %v, want %v", i, v, want)
				}
			}
			// Non-finite values and values an f16 base cannot hold are
			// rejected.
			for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
				x := make([]float32, n)
				x[n-3] = bad
				err := QuantizeInferflow(f.Type, q, x)
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("value %d", n-3)) {
					t.Errorf("%v: err = %v", bad, err)
				}
				// The row function does not check, but stays defined.
				f.Quantize(q, x)
			}
			x = make([]float32, n)
			x[f.BlockElems+1] = -1e7 // beyond an f16 base, and beyond 127 f16 scales
			if err := QuantizeInferflow(f.Type, q, x); err == nil || !strings.Contains(err.Error(), "block 1 ") {
				t.Errorf("-1e7: err = %v", err)
			}
			// Lengths.
			if err := QuantizeInferflow(f.Type, q[:nb-1], make([]float32, n)); err == nil {
				t.Error("short dst accepted")
			}
			if err := QuantizeInferflow(f.Type, q, make([]float32, n-1)); err == nil {
				t.Error("partial block accepted")
			}
			if err := DequantizeInferflow(f.Type, y, q[:nb-2]); err == nil {
				t.Error("short src accepted")
			}
		})
	}
	if err := QuantizeInferflow(tensor.Q4_0, make([]byte, 18), make([]float32, 32)); err == nil {
		t.Error("QuantizeInferflow accepts Q4_0")
	}
}

// TestInferflowQ8MatchesQ8_0 checks that Q8_B32T2's quantizer is ggml's
// Q8_0 reference quantizer except on blocks whose amax/127 is below 1e-5.
func TestInferflowQ8MatchesQ8_0(t *testing.T) {
	for name, x := range testData(4096) {
		a, b := make([]byte, 4096/32*34), make([]byte, 4096/32*34)
		QuantizeRowQ8_B32T2(a, x)
		QuantizeRowQ8_0(b, x)
		for blk := range len(a) / 34 {
			ya, yb := a[34*blk:34*blk+34], b[34*blk:34*blk+34]
			if stats(x[32*blk:32*blk+32]).amax/127 >= ifMinScale {
				if string(ya) != string(yb) {
					t.Errorf("%s block %d: q8_b32t2\n% x\nq8_0\n% x", name, blk, ya, yb)
				}
				continue
			}
			if string(ya[:2]) != string(yb[:2]) || slices.ContainsFunc(ya[2:], func(q byte) bool { return q != 0 }) {
				t.Errorf("%s block %d below the threshold: q8_b32t2 % x, want q8_0's scale and zero quants", name, blk, ya)
			}
		}
	}
}

func TestInferflowDotMatchesDequantized(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for _, f := range InferflowFormats() {
		for _, n := range []int{64, 4096} {
			for trial := range 4 {
				w := make([]float32, n)
				a := make([]float32, n)
				for i := range w {
					w[i] = float32(r.NormFloat64()) * float32(trial+1) * 0.02
					a[i] = float32(r.NormFloat64()) + 0.3*float32(trial)
				}
				wb := make([]byte, n/f.BlockElems*f.BlockBytes)
				f.Quantize(wb, w)
				wd := make([]float32, n)
				f.Dequantize(wd, wb)

				// Float activations: products rounded to float32, summed in
				// float64, one final rounding: within 2⁻²³·Σ|w·a|.
				var ref, mag float64
				for i := range wd {
					ref += float64(wd[i]) * float64(a[i])
					mag += math.Abs(float64(wd[i]) * float64(a[i]))
				}
				if got := f.DotF32(wb, tensor.F32ToBytes(a), n); math.Abs(float64(got)-ref) > 0x1p-23*mag {
					t.Errorf("%s n=%d trial %d: DotF32 = %v, dequantized dot = %v (Σ|wa| = %g)", f.Name, n, trial, got, ref, mag)
				}

				// Q8_0 activations, from both activation quantizers.
				for _, quant := range []func([]byte, []float32){QuantizeActivationQ8_0, QuantizeRowQ8_B32T2} {
					ab := make([]byte, n/32*34)
					quant(ab, a)
					ad := make([]float32, n)
					DequantizeRowQ8_0(ad, ab)
					ref, mag = 0, 0
					for i := range wd {
						ref += float64(wd[i]) * float64(ad[i])
						mag += math.Abs(float64(wd[i]) * float64(ad[i]))
					}
					if got := f.DotQ8_0(wb, ab, n); math.Abs(float64(got)-ref) > 2e-6*mag {
						t.Errorf("%s n=%d trial %d: DotQ8_0 = %v, dequantized dot = %v (diff %g, Σ|wa| = %g)",
							f.Name, n, trial, got, ref, float64(got)-ref, mag)
					}
				}
			}
		}
	}
}

// TestInferflowDotHandBuilt multiplies the hand-built weight blocks (values
// q/4 - 2) by hand-built activations. Every product and partial sum is
// exact in float32, so both dot products must equal the exact sum.
func TestInferflowDotHandBuilt(t *testing.T) {
	act := handQ8_0() // values (8j-128)·-0.25
	act2 := handQ8_0()
	le16(act2.block, 0x3800) // the same quants with scale 0.5
	for j := range act2.want {
		act2.want[j] = float32(j*8-128) * 0.5
	}
	for _, h := range ifHands {
		f := mustInferflow(t, h.dt)
		q := make([]uint8, f.BlockElems)
		w := make([]float32, f.BlockElems)
		for i := range q {
			q[i] = uint8((5*i + 3) % h.levels)
			w[i] = float32(q[i])*0.25 - 2
		}
		blk := h.build(0xc000, 0x3400, q)
		ab := slices.Clone(act.block)
		a := slices.Clone(act.want)
		if f.BlockElems == 64 {
			ab = append(ab, act2.block...)
			a = append(a, act2.want...)
		}
		var want float64
		for i := range w {
			want += float64(w[i]) * float64(a[i])
		}
		if got := f.DotQ8_0(blk, ab, f.BlockElems); float64(got) != want {
			t.Errorf("%s·q8_0 = %v, want %v", f.Name, got, want)
		}
		if got := f.DotF32(blk, tensor.F32ToBytes(a), f.BlockElems); float64(got) != want {
			t.Errorf("%s·f32 = %v, want %v", f.Name, got, want)
		}
	}
}

// TestInferflowRMSTable measures each format's RMS error on a fixed
// Gaussian sample next to ggml's formats, checks the Inferflow formats
// against the error their step sizes predict, and logs the table in
// docs/quantization.md. Run with -v to see it.
func TestInferflowRMSTable(t *testing.T) {
	const n = 1 << 16
	r := rand.New(rand.NewPCG(2024, 117))
	x := make([]float32, n)
	var sx float64
	for i := range x {
		x[i] = float32(r.NormFloat64())
		sx += float64(x[i]) * float64(x[i])
	}
	type row struct {
		name string
		bpw  float64
		rel  float64
		note string
	}
	var rows []row
	measure := func(quantize func([]byte, []float32), dequantize func([]float32, []byte), bytes int) float64 {
		q := make([]byte, bytes)
		quantize(q, x)
		y := make([]float32, n)
		dequantize(y, q)
		var se float64
		for i := range x {
			d := float64(x[i]) - float64(y[i])
			se += d * d
		}
		return math.Sqrt(se / sx)
	}
	for _, f := range InferflowFormats() {
		rel := measure(f.Quantize, f.Dequantize, n/f.BlockElems*f.BlockBytes)
		// Predicted mean square error: s²/12 for values inside the range
		// (the error is close to uniform over a step), except each
		// block's min and max: exact under the rounding rules, s/2 off
		// under the mid-rise rule. Q8_B32T2: s = amax/127 for all 32
		// values but the largest, which is exact.
		var pred float64
		rule := ifRuleOf(f.Type)
		for b := 0; b < n; b += f.BlockElems {
			st := stats(x[b : b+f.BlockElems])
			var s, edge float64
			if f.Type == Q8_B32T2 {
				s = float64(st.amax) / 127
			} else {
				s = float64(st.hi-st.lo) / float64(rule.div)
				if rule.midRise {
					edge = s * s / 4
				}
			}
			m := float64(f.BlockElems)
			if f.Type == Q8_B32T2 {
				pred += (m - 1) * s * s / 12
			} else {
				pred += (m-2)*s*s/12 + 2*edge
			}
		}
		predRel := math.Sqrt(pred / sx)
		if ratio := rel / predRel; ratio < 0.95 || ratio > 1.05 {
			t.Errorf("%s: relative RMS error %.5f, %.3f× the %.5f its step predicts", f.Name, rel, ratio, predRel)
		}
		rows = append(rows, row{f.Name, f.BitsPerWeight(), rel, fmt.Sprintf("Inferflow (step predicts %.4f)", predRel)})
	}
	for _, alt := range []struct {
		name string
		dt   tensor.DType
		fn   func([]byte, []float32)
	}{
		{"q4_b32t1 (rule B)", Q4_B32T1, QuantizeRowQ4_B32T1B},
		{"q3_b32t1 (rule A)", Q3_B32T1, QuantizeRowQ3_B32T1A},
		{"q2_b32t1 (rule A)", Q2_B32T1, QuantizeRowQ2_B32T1A},
	} {
		f := mustInferflow(t, alt.dt)
		rows = append(rows, row{alt.name, f.BitsPerWeight(), measure(alt.fn, f.Dequantize, n/f.BlockElems*f.BlockBytes), "Inferflow, other rule"})
	}
	for _, dt := range []tensor.DType{tensor.Q8_0, tensor.Q6_K, tensor.Q5_0, tensor.Q5_1, tensor.Q5_K,
		tensor.Q4_0, tensor.Q4_1, tensor.Q4_K, tensor.Q3_K, tensor.Q2_K} {
		nb, _ := dt.RowBytes(n)
		quantize := func(q []byte, x []float32) {
			if err := Quantize(dt, q, x); err != nil {
				t.Fatal(err)
			}
		}
		dequantize := func(y []float32, q []byte) {
			if err := Dequantize(dt, y, q); err != nil {
				t.Fatal(err)
			}
		}
		rows = append(rows, row{dt.String(), float64(8*dt.TypeSize()) / float64(dt.BlockSize()), measure(quantize, dequantize, nb), "ggml"})
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		if a.bpw != b.bpw {
			return -cmpFloat(a.bpw, b.bpw)
		}
		return cmpFloat(a.rel, b.rel)
	})
	var sb strings.Builder
	sb.WriteString("\n| Format | Bits per weight | RMS error (σ = 1) | |\n|---|---:|---:|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&sb, "| %s | %.4g | %.4f | %s |\n", r.name, r.bpw, r.rel, r.note)
	}
	t.Log(sb.String())
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestInferflowQ4_B32T1IsPermutedQ4_1 checks that Q4_B32T1's default rule
// is ggml's Q4_1 reference quantizer: the blocks differ only in the order
// of the header fields (base, scale against d, m) and of the nibbles
// (consecutive values against j and j+16), on every block whose scale is at
// least 1e-5.
func TestInferflowQ4_B32T1IsPermutedQ4_1(t *testing.T) {
	for name, x := range testData(4096) {
		a, b := make([]byte, 4096/32*20), make([]byte, 4096/32*20)
		QuantizeRowQ4_B32T1(a, x)
		QuantizeRowQ4_1(b, x)
		for blk := range len(a) / 20 {
			st := stats(x[32*blk : 32*blk+32])
			if (st.hi-st.lo)/15 < ifMinScale {
				continue
			}
			ya := a[20*blk : 20*blk+20]
			perm := make([]byte, 20)
			copy(perm, ya[2:4]) // d = scale
			copy(perm[2:], ya[0:2])
			for j := range 16 {
				lo := ya[4+j/2] >> (4 * (j % 2)) & 15
				hi := ya[4+(j+16)/2] >> (4 * (j % 2)) & 15
				perm[4+j] = lo | hi<<4
			}
			if yb := b[20*blk : 20*blk+20]; string(perm) != string(yb) {
				t.Errorf("%s block %d: permuted q4_b32t1\n% x\nq4_1\n% x", name, blk, perm, yb)
			}
		}
	}
}

// inferflowGoldenInput returns the 768 values the golden file was made
// from: twelve chunks of 64 shaped from a xorshift32 stream u in [0, 1)
// (multiples of 2⁻²⁴).
func inferflowGoldenInput() []float32 {
	s := uint32(2463534242)
	u := func() float32 {
		s ^= s << 13
		s ^= s >> 17
		s ^= s << 5
		return float32(s>>8) * 0x1p-24
	}
	x := make([]float32, 12*64)
	for c := range 12 {
		for i := range 64 {
			v := u()
			var r float32
			switch c {
			case 1:
				r = v + 1 // one-sided
			case 2:
				r = -(v * v) // negative, skewed
			case 3:
				r = (v - 0.5) * 0.01 // small values and one outlier
				if i == 5 {
					r = 3
				}
			case 4:
				r = 0
			case 5:
				r = float32(1e-6) * (v - 0.5) // below the 1e-5 scale threshold
			case 6:
				r = 0.7 // constant
			case 7:
				r = float32(math.Ldexp(float64(v-0.5), i%8-4)) // mixed scales
			case 8:
				r = float32(i%31) * 0.5 // on the levels and halfway between
			case 9:
				r = (v - 0.5) * 0.05 // LLM-sized weights
			case 10, 11:
				// Multiples of Q3_B32T1's and Q2_B32T1's steps, some of
				// which land an ulp below a bin edge: the 0.0001 fudge
				// of the mid-rise rule decides them.
				k, steps, span := float32(i%9), float32(8), float32(0.21)
				if c == 11 {
					k, steps, span = float32(i%5), 4, 0.21
				}
				r = k * (span / steps)
			default:
				r = (v - 0.5) * 2
			}
			x[64*c+i] = r
		}
	}
	return x
}

// TestInferflowMatchesInferflow compares every quantizer and decoder with
// the output of Inferflow's own C++ code (testdata/inferflow_golden.txt):
// the blocks byte for byte and the decoded values bit for bit.
func TestInferflowMatchesInferflow(t *testing.T) {
	golden, err := os.ReadFile("testdata/inferflow_golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	type section struct {
		blocks []byte
		fnv    string
	}
	sections := map[string]*section{}
	var cur *section
	for _, line := range strings.Split(string(golden), "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "dequant fnv "):
			cur.fnv = strings.TrimPrefix(line, "dequant fnv ")
		case strings.HasPrefix(line, "q"):
			cur = &section{}
			sections[line] = cur
		default:
			b, err := hex.DecodeString(line)
			if err != nil {
				t.Fatal(err)
			}
			cur.blocks = append(cur.blocks, b...)
		}
	}
	x := inferflowGoldenInput()
	for _, tt := range []struct {
		name string
		dt   tensor.DType
		fn   func([]byte, []float32)
	}{
		{"q8_b32t2", Q8_B32T2, QuantizeRowQ8_B32T2},
		{"q6_b64t1", Q6_B64T1, QuantizeRowQ6_B64T1},
		{"q5_b64t1", Q5_B64T1, QuantizeRowQ5_B64T1},
		{"q4_b32t1", Q4_B32T1, QuantizeRowQ4_B32T1},
		{"q4_b32t1b", Q4_B32T1, QuantizeRowQ4_B32T1B},
		{"q4_b64t1", Q4_B64T1, QuantizeRowQ4_B64T1},
		{"q3h_b64t1", Q3H_B64T1, QuantizeRowQ3H_B64T1},
		{"q3_b32t1", Q3_B32T1, QuantizeRowQ3_B32T1},
		{"q3_b32t1a", Q3_B32T1, QuantizeRowQ3_B32T1A},
		{"q2_b32t1", Q2_B32T1, QuantizeRowQ2_B32T1},
		{"q2_b32t1a", Q2_B32T1, QuantizeRowQ2_B32T1A},
	} {
		want := sections[tt.name]
		if want == nil {
			t.Errorf("%s: not in the golden file", tt.name)
			continue
		}
		f := mustInferflow(t, tt.dt)
		got := make([]byte, len(x)/f.BlockElems*f.BlockBytes)
		tt.fn(got, x)
		if len(want.blocks) != len(got) {
			t.Fatalf("%s: golden has %d bytes, want %d", tt.name, len(want.blocks), len(got))
		}
		for b := 0; b < len(got); b += f.BlockBytes {
			if g, w := got[b:b+f.BlockBytes], want.blocks[b:b+f.BlockBytes]; string(g) != string(w) {
				t.Errorf("%s block %d (values %d..):\n got % x\nwant % x", tt.name, b/f.BlockBytes, b/f.BlockBytes*f.BlockElems, g, w)
			}
		}
		y := make([]float32, len(x))
		f.Dequantize(y, want.blocks)
		h := fnv.New64a()
		h.Write(tensor.F32ToBytes(y))
		if sum := fmt.Sprintf("%016x", h.Sum64()); sum != want.fnv {
			t.Errorf("%s: decoded values hash to %s, Inferflow's to %s", tt.name, sum, want.fnv)
		}
	}
}
