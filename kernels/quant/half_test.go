package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"
)

func TestF16KnownValues(t *testing.T) {
	tests := []struct {
		bits uint16
		val  float32
	}{
		{0x0000, 0},
		{0x3c00, 1},
		{0xc000, -2},
		{0x3555, 0.333251953125},
		{0x2e66, 0.0999755859375},
		{0x7bff, 65504},
		{0x0400, 1.0 / (1 << 14)},               // smallest normal
		{0x0001, 1.0 / (1 << 24)},               // smallest subnormal
		{0x03ff, 1023.0 / (1 << 24)},            // largest subnormal
		{0x8001, -1.0 / (1 << 24)},              // negative subnormal
		{0x7c00, float32(math.Inf(1))},          // +Inf
		{0xfc00, float32(math.Inf(-1))},         // -Inf
		{0x3bff, 1 - 1.0/(1<<11)},               // largest below one
		{0x3c01, 1 + 1.0/(1<<10)},               // smallest above one
		{0x5640, 100},                           // 100 = 1.5625 × 2⁶
		{0xd640, -100},                          //
		{0x1400, 1.0 / (1 << 10)},               // 2⁻¹⁰
		{0x0200, 512.0 / (1 << 24)},             // 2⁻¹⁵, subnormal
		{0x4248, 3.140625},                      // π rounded to f16
		{0x7800, 32768},                         //
		{0x3800, 0.5},                           //
		{0xb400, -0.25},                         //
		{0x6400, 1024},                          //
		{0x0002, 2.0 / (1 << 24)},               //
		{0x8000, float32(math.Copysign(0, -1))}, // -0
	}
	for _, tt := range tests {
		got := FromF16(tt.bits)
		if math.Float32bits(got) != math.Float32bits(tt.val) {
			t.Errorf("FromF16(%#04x) = %v, want %v", tt.bits, got, tt.val)
		}
		if back := ToF16(tt.val); back != tt.bits {
			t.Errorf("ToF16(%v) = %#04x, want %#04x", tt.val, back, tt.bits)
		}
	}
	for _, tt := range []struct {
		in   float32
		want uint16
	}{
		{65519.99, 0x7bff},            // below the rounding boundary
		{65520, 0x7c00},               // ties to even: rounds up to Inf
		{1e10, 0x7c00},                //
		{-1e10, 0xfc00},               //
		{1.0 / (1 << 25), 0x0000},     // exactly half the smallest subnormal: ties to even (0)
		{1.5 / (1 << 25), 0x0001},     // above half: rounds up
		{3.0 / (1 << 25), 0x0002},     // 1.5 subnormal steps: ties to even (2)
		{1 + 1.0/(1<<11), 0x3c00},     // halfway between 1 and next: even (1)
		{1 + 3.0/(1<<11), 0x3c02},     // halfway between next and next-next: even
		{1e-10, 0x0000},               //
		{float32(math.NaN()), 0x7e00}, //
	} {
		if got := ToF16(tt.in); got != tt.want {
			t.Errorf("ToF16(%g) = %#04x, want %#04x", tt.in, got, tt.want)
		}
	}
}

// TestF16MatchesX448 checks both conversions against github.com/x448/float16:
// every half value, the float32 values at and next to every rounding
// boundary, and random float32s.
func TestF16MatchesX448(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		got := FromF16(uint16(h))
		want := float16.Frombits(uint16(h)).Float32()
		if got != want && !(got != got && want != want) {
			t.Fatalf("FromF16(%#04x) = %v, x448 says %v", h, got, want)
		}
		if math.Float32bits(got)>>31 != uint32(h>>15) {
			t.Fatalf("FromF16(%#04x) = %v: wrong sign", h, got)
		}
	}
	check := func(f float32) {
		if f != f {
			return
		}
		got := ToF16(f)
		want := float16.Fromfloat32(f).Bits()
		if got != want {
			t.Fatalf("ToF16(%g = %#08x) = %#04x, x448 says %#04x", f, math.Float32bits(f), got, want)
		}
	}
	for h := 0; h < 0x7c00; h++ {
		lo := FromF16(uint16(h))
		hi := FromF16(uint16(h + 1))
		mid := float32((float64(lo) + float64(hi)) / 2) // exact in float32
		for _, s := range []float32{1, -1} {
			mb := math.Float32bits(mid * s)
			for d := -2; d <= 2; d++ {
				check(math.Float32frombits(uint32(int64(mb) + int64(d))))
			}
			check(lo * s)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		check(math.Float32frombits(r.Uint32()))
	}
}

func TestBF16(t *testing.T) {
	tests := []struct {
		in   float32
		want uint16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{3.140625, 0x4049}, // exact in bf16
		{math.Float32frombits(0x3f808000), 0x3f80},               // halfway, even below: stays
		{math.Float32frombits(0x3f818000), 0x3f82},               // halfway, odd below: rounds up
		{math.Float32frombits(0x3f808001), 0x3f81},               // just above halfway
		{math.Float32frombits(0x7f7fffff), 0x7f80},               // max float32 rounds to Inf
		{math.Float32frombits(0x00000001), 0x0000},               // subnormal rounds to zero
		{math.Float32frombits(0x00018000), 0x0002},               // subnormals are kept, not flushed
		{float32(math.Inf(-1)), 0xff80},                          //
		{math.Float32frombits(0x7f800001), 0x7fc0},               // signalling NaN is quieted
		{math.Float32frombits(0xffc12345), 0xffc1},               // quiet NaN keeps its top bits
		{float32(math.Copysign(0, -1)), 0x8000},                  //
		{math.Float32frombits(0x477fffff), 0x4780},               // carries into the exponent
		{math.Float32frombits(0x3dcccccd) /* 0.1 */, 0x3dcd},     //
		{math.Float32frombits(0xbeaaaaab) /* -1/3 */, 0xbeab},    //
		{math.Float32frombits(0x42f6e979) /* 123.456 */, 0x42f7}, //
	}
	for _, tt := range tests {
		if got := ToBF16(tt.in); got != tt.want {
			t.Errorf("ToBF16(%#08x) = %#04x, want %#04x", math.Float32bits(tt.in), got, tt.want)
		}
	}
	for h := 0; h < 1<<16; h++ {
		f := FromBF16(uint16(h))
		if math.Float32bits(f) != uint32(h)<<16 {
			t.Fatalf("FromBF16(%#04x) = %#08x", h, math.Float32bits(f))
		}
		if f == f && ToBF16(f) != uint16(h) {
			t.Fatalf("ToBF16(FromBF16(%#04x)) = %#04x", h, ToBF16(f))
		}
	}
}

func TestRowConverters(t *testing.T) {
	src := []float32{0, 1, -2, 0.5, 65504, 1.0 / (1 << 24)}
	b := make([]byte, 2*len(src))
	F32ToF16(b, src)
	want := []byte{0x00, 0x00, 0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38, 0xff, 0x7b, 0x01, 0x00}
	if string(b) != string(want) {
		t.Errorf("F32ToF16 = % x, want % x", b, want)
	}
	back := make([]float32, len(src))
	F16ToF32(back, b)
	for i := range src {
		if back[i] != src[i] {
			t.Errorf("F16ToF32[%d] = %v, want %v", i, back[i], src[i])
		}
	}
	F32ToBF16(b, src[:4])
	wantBF := []byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0xc0, 0x00, 0x3f}
	if string(b[:8]) != string(wantBF) {
		t.Errorf("F32ToBF16 = % x, want % x", b[:8], wantBF)
	}
	BF16ToF32(back[:4], b)
	for i := range 4 {
		if back[i] != src[i] {
			t.Errorf("BF16ToF32[%d] = %v, want %v", i, back[i], src[i])
		}
	}
}

func TestNearestInt(t *testing.T) {
	for _, tt := range []struct {
		in   float32
		want int
	}{{0, 0}, {0.5, 0}, {1.5, 2}, {2.5, 2}, {-0.5, 0}, {-1.5, -2}, {-2.5, -2}, {2.49, 2}, {-7.51, -8}, {4194303, 4194303}, {-4194303, -4194303}} {
		if got := nearestInt(tt.in); got != tt.want {
			t.Errorf("nearestInt(%v) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
