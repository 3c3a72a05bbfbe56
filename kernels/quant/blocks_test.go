package quant

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// Each case below builds one block by hand from the layout as ggml-common.h
// documents it and writes out the expected values by the format's formula.
// The scales are chosen so that every product is exact in float32, which
// makes the expected values independent of evaluation order.

type handBlock struct {
	dt    tensor.DType
	block []byte
	want  []float32
}

func le16(b []byte, v uint16) { binary.LittleEndian.PutUint16(b, v) }

func handQ4_0() handBlock {
	const d = 0.0999755859375 // f16 0x2e66
	b := make([]byte, 18)
	le16(b, 0x2e66)
	want := make([]float32, 32)
	for j := range 16 {
		lo, hi := j, 15-j // element j in the low nibble, j+16 in the high
		b[2+j] = byte(lo) | byte(hi)<<4
		want[j] = float32(lo-8) * d
		want[16+j] = float32(hi-8) * d
	}
	return handBlock{tensor.Q4_0, b, want}
}

func handQ4_1() handBlock {
	const d, m = 0.5, -2.5 // f16 0x3800, 0xc100
	b := make([]byte, 20)
	le16(b, 0x3800)
	le16(b[2:], 0xc100)
	want := make([]float32, 32)
	for j := range 16 {
		lo, hi := j%16, (3*j+1)%16
		b[4+j] = byte(lo) | byte(hi)<<4
		want[j] = float32(lo)*d + m
		want[16+j] = float32(hi)*d + m
	}
	return handBlock{tensor.Q4_1, b, want}
}

func handQ5_0() handBlock {
	const d = 0.25 // f16 0x3400
	const qh = 0xa5a5f00f
	b := make([]byte, 22)
	le16(b, 0x3400)
	binary.LittleEndian.PutUint32(b[2:], qh)
	want := make([]float32, 32)
	for j := range 16 {
		lo, hi := j, j^5
		b[6+j] = byte(lo) | byte(hi)<<4
		// Bit e of qh is the fifth bit of element e.
		q0 := lo | int(qh>>j&1)<<4
		q1 := hi | int(qh>>(16+j)&1)<<4
		want[j] = float32(q0-16) * d
		want[16+j] = float32(q1-16) * d
	}
	return handBlock{tensor.Q5_0, b, want}
}

func handQ5_1() handBlock {
	const d, m = 0.75, 5.0 // f16 0x3a00, 0x4500
	const qh = 0x0ff0c33c
	b := make([]byte, 24)
	le16(b, 0x3a00)
	le16(b[2:], 0x4500)
	binary.LittleEndian.PutUint32(b[4:], qh)
	want := make([]float32, 32)
	for j := range 16 {
		lo, hi := (j*7)%16, 15-j
		b[8+j] = byte(lo) | byte(hi)<<4
		q0 := lo | int(qh>>j&1)<<4
		q1 := hi | int(qh>>(16+j)&1)<<4
		want[j] = float32(q0)*d + m
		want[16+j] = float32(q1)*d + m
	}
	return handBlock{tensor.Q5_1, b, want}
}

func handQ8_0() handBlock {
	const d = -0.25 // f16 0xb400
	b := make([]byte, 34)
	le16(b, 0xb400)
	want := make([]float32, 32)
	for j := range 32 {
		q := j*8 - 128
		b[2+j] = byte(int8(q))
		want[j] = float32(q) * d
	}
	return handBlock{tensor.Q8_0, b, want}
}

func handQ8_1() handBlock {
	const d = 2.0 // f16 0x4000
	b := make([]byte, 36)
	le16(b, 0x4000)
	le16(b[2:], 0x7bff) // s is not used to decode
	want := make([]float32, 32)
	for j := range 32 {
		q := 127 - j*5
		b[4+j] = byte(int8(q))
		want[j] = float32(q) * d
	}
	return handBlock{tensor.Q8_1, b, want}
}

func handQ8_K() handBlock {
	const d = 0.03125
	b := make([]byte, 292)
	binary.LittleEndian.PutUint32(b, math.Float32bits(d))
	want := make([]float32, 256)
	for j := range 256 {
		q := j - 128
		b[4+j] = byte(int8(q))
		want[j] = float32(q) * d
	}
	// bsums[g] = Σ q over elements 16g..16g+15 = 256g - 1928.
	for g := range 16 {
		le16(b[260+2*g:], uint16(int16(256*g-1928)))
	}
	return handBlock{tensor.Q8_K, b, want}
}

func handQ2_K() handBlock {
	const d, dmin = 0.5, 0.25 // f16 0x3800, 0x3400
	b := make([]byte, 84)
	le16(b[80:], 0x3800)
	le16(b[82:], 0x3400)
	for j := range 16 {
		b[j] = byte(j) | byte(15-j)<<4 // scale j low, min 15-j high
	}
	want := make([]float32, 256)
	for p := range 256 {
		v := (p*7 + p/5) % 4
		// 2-bit quants: byte 32·(p/128) + p%32 of qs, bit pair (p%128)/32.
		b[16+32*(p/128)+p%32] |= byte(v) << (2 * (p % 128 / 32))
		sub := p / 16
		want[p] = d*float32(sub)*float32(v) - dmin*float32(15-sub)
	}
	return handBlock{tensor.Q2_K, b, want}
}

func handQ3_K() handBlock {
	const d = 0.125 // f16 0x3000
	b := make([]byte, 110)
	le16(b[108:], 0x3000)
	sc := b[96:108]
	scale := func(j int) int { return (j*5 + 3) % 64 }
	for j := range 16 {
		s := scale(j)
		// Low four bits: nibble j%8 of bytes 0..7 (low for j<8, high
		// otherwise); top two bits: pair j/4 of byte 8+j%4.
		if j < 8 {
			sc[j] |= byte(s & 15)
		} else {
			sc[j-8] |= byte(s&15) << 4
		}
		sc[8+j%4] |= byte(s>>4) << (2 * (j / 4))
	}
	want := make([]float32, 256)
	for p := range 256 {
		v := (p*3 + 1) % 8 // 3-bit quant, value v-4
		b[32+32*(p/128)+p%32] |= byte(v&3) << (2 * (p % 128 / 32))
		if v&4 != 0 {
			b[p%32] |= 1 << (p / 32) // hmask
		}
		want[p] = d * float32(scale(p/16)-32) * float32(v-4)
	}
	return handBlock{tensor.Q3_K, b, want}
}

// packK4 writes 6-bit scales and mins in the Q4_K/Q5_K layout: j<4 in the
// low six bits of bytes j and j+4; j≥4 with low nibbles in byte j+4 (scale
// low, min high) and top two bits in the top of bytes j-4 and j.
func packK4(q []byte, sc, m func(int) int) {
	for j := range 8 {
		s, mm := byte(sc(j)), byte(m(j))
		if j < 4 {
			q[j] |= s
			q[j+4] |= mm
			continue
		}
		q[j+4] = s&15 | (mm&15)<<4
		q[j-4] |= s >> 4 << 6
		q[j] |= mm >> 4 << 6
	}
}

func handQ4_K() handBlock {
	const d, dmin = 0.5, 1.0 // f16 0x3800, 0x3c00
	b := make([]byte, 144)
	le16(b, 0x3800)
	le16(b[2:], 0x3c00)
	sc := func(j int) int { return 40 + 3*j }
	mn := func(j int) int { return 63 - 5*j }
	packK4(b[4:16], sc, mn)
	want := make([]float32, 256)
	for p := range 256 {
		v := (p * 11) % 16
		// 4-bit quants: byte 32·(p/64) + p%32, low nibble for the first
		// 32 of each 64.
		b[16+32*(p/64)+p%32] |= byte(v) << (4 * (p % 64 / 32))
		want[p] = d*float32(sc(p/32))*float32(v) - dmin*float32(mn(p/32))
	}
	return handBlock{tensor.Q4_K, b, want}
}

func handQ5_K() handBlock {
	const d, dmin = 0.25, 0.5 // f16 0x3400, 0x3800
	b := make([]byte, 176)
	le16(b, 0x3400)
	le16(b[2:], 0x3800)
	sc := func(j int) int { return 63 - 7*j }
	mn := func(j int) int { return 17 + 6*j }
	packK4(b[4:16], sc, mn)
	want := make([]float32, 256)
	for p := range 256 {
		v := (p*13 + 7) % 32
		b[48+32*(p/64)+p%32] |= byte(v&15) << (4 * (p % 64 / 32))
		if v&16 != 0 {
			b[16+p%32] |= 1 << (p / 32) // qh
		}
		want[p] = d*float32(sc(p/32))*float32(v) - dmin*float32(mn(p/32))
	}
	return handBlock{tensor.Q5_K, b, want}
}

func handQ6_K() handBlock {
	const d = 0.0625 // f16 0x2c00
	b := make([]byte, 210)
	le16(b[208:], 0x2c00)
	sc := func(j int) int { return j*13 - 90 }
	for j := range 16 {
		b[192+j] = byte(int8(sc(j)))
	}
	want := make([]float32, 256)
	for p := range 256 {
		v := (p*5 + 3) % 64 // 6-bit quant, value v-32
		h, k, l := p/128, p%128/32, p%32
		// Low nibble: ql[64h + l + 32·(k odd)], low half for k<2; top
		// two bits: bit pair k of qh[32h + l].
		b[64*h+l+32*(k&1)] |= byte(v&15) << (4 * (k / 2))
		b[128+32*h+l] |= byte(v>>4) << (2 * k)
		want[p] = d * float32(sc(p/16)) * float32(v-32)
	}
	return handBlock{tensor.Q6_K, b, want}
}

func handF16() handBlock {
	b := []byte{0x00, 0x3c, 0x00, 0xc0, 0x55, 0x35, 0x01, 0x00}
	return handBlock{tensor.F16, b, []float32{1, -2, 0.333251953125, 1.0 / (1 << 24)}}
}

func handBF16() handBlock {
	b := []byte{0x80, 0x3f, 0x00, 0xc0, 0x49, 0x40, 0x80, 0xff}
	return handBlock{tensor.BF16, b, []float32{1, -2, 3.140625, float32(math.Inf(-1))}}
}

var handBlocks = []func() handBlock{
	handQ4_0, handQ4_1, handQ5_0, handQ5_1, handQ8_0, handQ8_1, handQ8_K,
	handQ2_K, handQ3_K, handQ4_K, handQ5_K, handQ6_K, handF16, handBF16,
}

func TestDequantizeHandBuiltBlocks(t *testing.T) {
	for _, mk := range handBlocks {
		hb := mk()
		t.Run(hb.dt.String(), func(t *testing.T) {
			if len(hb.block) != hb.dt.TypeSize()*len(hb.want)/hb.dt.BlockSize() {
				t.Fatalf("test block is %d bytes, want %d", len(hb.block), hb.dt.TypeSize())
			}
			// Two copies: the second block checks the stride.
			src := append(append([]byte(nil), hb.block...), hb.block...)
			got := make([]float32, 2*len(hb.want))
			if err := Dequantize(hb.dt, got, src); err != nil {
				t.Fatal(err)
			}
			for i, g := range got {
				w := hb.want[i%len(hb.want)]
				if math.Float32bits(g) != math.Float32bits(w) {
					t.Errorf("element %d = %v, want %v", i, g, w)
				}
			}
		})
	}
}

// TestQuantizeHandBuiltBlocks checks that quantizing the decoded values of
// a hand-built block reproduces its quants when the block is one the
// quantizer would choose (the symmetric formats take their scale from the
// largest magnitude, which the blocks below contain).
func TestQuantizeHandBuiltBlocks(t *testing.T) {
	tests := []struct {
		dt   tensor.DType
		x    []float32
		want []byte
	}{
		{
			// The first value of largest magnitude is -1.6 (1.6 at index 6
			// does not replace it), so d = -1.6/-8 = 0.2 (f16 0x3266) and
			// q = min(15, trunc(x/d + 8.5)): -1.6→0, 0→8, 0.2→9, 0.4→10,
			// -0.2→7, 1.4→15, 1.6→16→15, 0.1→9, 0.3→10, 0.6→11, -0.6→5,
			// 0.29→9. Byte j holds q[j] low and q[j+16] high.
			dt:   tensor.Q4_0,
			x:    []float32{-1.6, 0, 0.2, 0.4, -0.2, 1.4, 1.6, 0.1, 0.3, 0, 0, 0, 0, 0, 0, 0, 0.6, -0.6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.29},
			want: []byte{0x66, 0x32, 0xb0, 0x58, 0x89, 0x8a, 0x87, 0x8f, 0x8f, 0x89, 0x8a, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x98},
		},
		{
			// amax = 127 → d = 1, q = round(x) half away from zero.
			dt:   tensor.Q8_0,
			x:    []float32{127, -127, 0.5, -0.5, 1.5, -1.5, 2.49, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
			want: append([]byte{0x00, 0x3c, 0x7f, 0x81, 0x01, 0xff, 0x02, 0xfe, 0x02, 0x03}, make([]byte, 24)...),
		},
	}
	for _, tt := range tests {
		got := make([]byte, len(tt.want))
		if err := Quantize(tt.dt, got, tt.x); err != nil {
			t.Fatal(err)
		}
		if string(got) != string(tt.want) {
			t.Errorf("Quantize(%s) =\n% x\nwant\n% x", tt.dt, got, tt.want)
		}
	}
}
