package cpudev

import (
	"fmt"
	"math"
	"testing"

	"github.com/weftrun/weft/backend"
	"github.com/weftrun/weft/kernels/cpu"
	"github.com/weftrun/weft/kernels/quant"
)

var kvTypes = []KVType{KVF32, KVF16}

func row(d int, v float32) []float32 {
	r := make([]float32, d)
	for i := range r {
		r[i] = v
	}
	return r
}

// rowsAt reads back element i of every key and value of a view's first n
// rows, as float32 whatever the cache's element type.
func rowsAt(t *testing.T, c *KVCache, runs []backend.KVRun, n, i int) (keys, vals []float32) {
	t.Helper()
	var kv cpu.KV
	if err := c.View(0, runs, n, &kv); err != nil {
		t.Fatal(err)
	}
	d := c.dims[0]
	for s := range kv.Len {
		for r := 0; r < kv.Len[s]; r++ {
			if c.typ == KVF16 {
				keys = append(keys, quant.FromF16(kv.K16[s][r*d+i]))
				vals = append(vals, quant.FromF16(kv.V16[s][r*d+i]))
			} else {
				keys = append(keys, kv.K[s][r*d+i])
				vals = append(vals, kv.V[s][r*d+i])
			}
		}
	}
	return keys, vals
}

// TestKVCacheBlocks writes rows into blocks and reads them back through
// views that skip and reorder rows (a beam's history), and checks that a
// copy-on-write copies the rows it names.
func TestKVCacheBlocks(t *testing.T) {
	for _, typ := range kvTypes {
		c := NewKVCache([]int{2}, typ)
		c.SetBlock(0, 16)
		c.SetBlock(1, 3)
		for r := 0; r < 16; r++ {
			if err := c.Write(0, backend.KVLoc{Block: 0, Row: int32(r)}, row(2, float32(r)), row(2, float32(-r))); err != nil {
				t.Fatal(err)
			}
		}
		for r := 0; r < 3; r++ {
			c.Write(0, backend.KVLoc{Block: 1, Row: int32(r)}, row(2, float32(100+r)), row(2, 0))
		}
		view := []backend.KVRun{{Block: 1, Row: 0, N: 3}, {Block: 0, Row: 4, N: 2}, {Block: 0, Row: 9, N: 1}}
		k, v := rowsAt(t, c, view, 6, 1)
		if fmt.Sprint(k) != "[100 101 102 4 5 9]" || fmt.Sprint(v) != "[0 0 0 -4 -5 -9]" {
			t.Errorf("%s: view reads keys %v values %v", typ, k, v)
		}
		if k, _ := rowsAt(t, c, view, 4, 0); fmt.Sprint(k) != "[100 101 102 4]" {
			t.Errorf("%s: the first 4 rows of the view are %v", typ, k)
		}
		var kv cpu.KV
		if err := c.View(0, view, 7, &kv); err == nil {
			t.Errorf("%s: a view of 6 rows gave 7", typ)
		}
		if err := c.Write(0, backend.KVLoc{Block: 1, Row: 3}, row(2, 0), row(2, 0)); err == nil {
			t.Errorf("%s: a write past a block's rows succeeded", typ)
		}
		c.SetBlock(2, 16)
		c.CopyRows(2, 0, 0, 8, 4)
		if k, _ := rowsAt(t, c, []backend.KVRun{{Block: 2, N: 4}}, 4, 0); fmt.Sprint(k) != "[8 9 10 11]" {
			t.Errorf("%s: copied rows read %v", typ, k)
		}
	}
}

// TestKVCacheF16 checks that an f16 cache rounds to the nearest half
// (ties to even), ±Inf beyond the half range, and takes half the memory.
func TestKVCacheF16(t *testing.T) {
	in := []float32{1 + 1.0/4096, 1 + 3.0/2048, 0.1, -2049, 70000, 3e-8}
	// The nearest halves, worked out by hand: 1+2⁻¹² is below half a step
	// (2⁻¹⁰) above 1; 1+3·2⁻¹¹ is a tie between 1+2⁻¹⁰ and 1+2⁻⁹, to the
	// even 1+2⁻⁹; 0.1 → 1638·2⁻¹⁴; -2049 a tie, to -2048; 70000 > 65504
	// overflows; 3·10⁻⁸ → the smallest subnormal 2⁻²⁴ ≈ 5.96·10⁻⁸ (above
	// half of it).
	want := []float32{1, 1 + 1.0/512, float32(math.Ldexp(1638, -14)), -2048, float32(math.Inf(1)), float32(math.Ldexp(1, -24))}
	d := len(in)
	c := NewKVCache([]int{d}, KVF16)
	c.SetBlock(0, 1)
	neg := make([]float32, d)
	for i, v := range in {
		neg[i] = -v
	}
	if err := c.Write(0, backend.KVLoc{}, in, neg); err != nil {
		t.Fatal(err)
	}
	for i := range in {
		k, v := rowsAt(t, c, []backend.KVRun{{N: 1}}, 1, i)
		if k[0] != want[i] || v[0] != -want[i] {
			t.Errorf("%v is stored as %v/%v, want %v", in[i], k[0], v[0], want[i])
		}
	}
	dims := []int{64, 64, 128}
	f32, f16 := NewKVCache(dims, KVF32), NewKVCache(dims, KVF16)
	if f32.PositionBytes() != 2*4*256 || f16.PositionBytes() != 2*2*256 {
		t.Errorf("a position takes %d (f32) and %d (f16) bytes, want %d and %d", f32.PositionBytes(), f16.PositionBytes(), 2*4*256, 2*2*256)
	}
}

// TestShiftKeys: re-rotating a key cached at position p by Δ gives the
// key rotated at p+Δ (RoPE's angles add), for both element types.
func TestShiftKeys(t *testing.T) {
	const heads, hd = 2, 8
	r := ropeSpec{headDim: hd, dim: hd, base: 10000, pairing: cpu.RoPEAdjacent}
	for _, typ := range kvTypes {
		c := NewKVCache([]int{heads * hd}, typ)
		c.SetBlock(0, 16)
		raw := make([]float32, heads*hd)
		for i := range raw {
			raw[i] = float32(i%5) - 1.5
		}
		at := func(p int32) []float32 {
			x := append([]float32(nil), raw...)
			r.apply(x, 1, heads, []int32{p})
			return x
		}
		c.Write(0, backend.KVLoc{Row: 5}, at(40), row(heads*hd, 0))
		if err := c.shiftKeys(0, []backend.KVShift{{Runs: []backend.KVRun{{Row: 5, N: 1}}, Delta: -17}}, r, heads); err != nil {
			t.Fatal(err)
		}
		want := at(23)
		tol := 1e-5
		if typ == KVF16 {
			tol = 4e-3 // two f16 roundings of values below 4
		}
		for i := range want {
			k, _ := rowsAt(t, c, []backend.KVRun{{Row: 5, N: 1}}, 1, i)
			if math.Abs(float64(k[0]-want[i])) > tol {
				t.Errorf("%s: element %d after the shift is %v, at position 23 %v", typ, i, k[0], want[i])
			}
		}
	}
}

func TestParseKVType(t *testing.T) {
	for _, typ := range kvTypes {
		if got, err := backend.ParseKVType(typ.String()); err != nil || got != typ {
			t.Errorf("backend.ParseKVType(%q) = %v, %v", typ, got, err)
		}
	}
	for _, s := range []string{"", "auto", "F16", "q8_0"} {
		if _, err := backend.ParseKVType(s); err == nil {
			t.Errorf("backend.ParseKVType(%q) succeeded", s)
		}
	}
	if s := fmt.Sprint(KVType(9)); s != "KVType(9)" {
		t.Errorf("KVType(9) prints as %q", s)
	}
}
