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

// rowsAt reads back element i of every cached key and value of seq, as
// float32 whatever the cache's element type.
func rowsAt(t *testing.T, c *KVCache, seq, n, i int) (keys, vals []float32) {
	t.Helper()
	var kv cpu.KV
	if err := c.View(0, seq, n, &kv); err != nil {
		t.Fatal(err)
	}
	d := c.dims[0]
	for s := range kv.Len {
		for r := 0; r < kv.Len[s]; r++ {
			if c.typ == KVF16 {
				if len(kv.K) != 0 || len(kv.V) != 0 {
					t.Fatal("an f16 view has float32 segments")
				}
				keys = append(keys, quant.FromF16(kv.K16[s][r*d+i]))
				vals = append(vals, quant.FromF16(kv.V16[s][r*d+i]))
			} else {
				if len(kv.K16) != 0 || len(kv.V16) != 0 {
					t.Fatal("an f32 view has f16 segments")
				}
				keys = append(keys, kv.K[s][r*d+i])
				vals = append(vals, kv.V[s][r*d+i])
			}
		}
	}
	return keys, vals
}

// positions reads back the first element of every cached key of seq.
func positions(t *testing.T, c *KVCache, seq, n int) []float32 {
	t.Helper()
	k, _ := rowsAt(t, c, seq, n, 0)
	return k
}

func TestKVCacheSegments(t *testing.T) {
	for _, typ := range kvTypes {
		t.Run(typ.String(), func(t *testing.T) {
			c := NewKVCache([]int{2}, 100, typ)
			c.Reserve(0, 5) // a prompt of 5 in one segment
			for p := 0; p < 5+BlockRows+3; p++ {
				if err := c.Write(0, 0, p, row(2, float32(p)), row(2, float32(-p))); err != nil {
					t.Fatal(err)
				}
			}
			s := c.seqs[0]
			if got := len(s.slots[0]); got != 3 {
				t.Fatalf("segments = %d, want prompt + 2 blocks", got)
			}
			if s.slots[0][0].cap != 5 || s.slots[0][1].cap != BlockRows {
				t.Errorf("segment capacities %d, %d", s.slots[0][0].cap, s.slots[0][1].cap)
			}
			keys, vals := rowsAt(t, c, 0, 5+BlockRows+3, 1)
			for i := range keys {
				if keys[i] != float32(i) || vals[i] != float32(-i) {
					t.Fatalf("position %d holds %v/%v", i, keys[i], vals[i])
				}
			}
			// A re-run step overwrites in place.
			if err := c.Write(0, 0, 3, row(2, 33), row(2, -33)); err != nil {
				t.Fatal(err)
			}
			if got := positions(t, c, 0, 5); got[3] != 33 {
				t.Errorf("overwritten position 3 holds %v", got[3])
			}
			if err := c.Write(0, 0, 30, row(2, 0), row(2, 0)); err == nil {
				t.Error("a write past the next position was accepted")
			}
			if err := c.Write(0, 0, 100, row(2, 0), row(2, 0)); err == nil {
				t.Error("a write past the context was accepted")
			}
			if err := c.Write(0, 0, 24, row(3, 0), row(3, 0)); err == nil {
				t.Error("a row of the wrong width was accepted")
			}
		})
	}
}

func TestKVCacheForkShares(t *testing.T) {
	for _, typ := range kvTypes {
		t.Run(typ.String(), func(t *testing.T) {
			c := NewKVCache([]int{2}, 100, typ)
			c.Reserve(0, 4)
			for p := 0; p < 4; p++ {
				c.Write(0, 0, p, row(2, float32(p)), row(2, 0))
			}
			if err := c.Fork(0, 1); err != nil {
				t.Fatal(err)
			}
			before := c.Bytes()
			if want := int64(2 * 2 * 4 * typ.ElemSize()); before != want {
				t.Errorf("a 4-position prompt of 2-wide rows takes %d bytes, want %d", before, want)
			}
			// Each beam continues on its own.
			c.Write(0, 0, 4, row(2, 40), row(2, 0))
			c.Write(0, 1, 4, row(2, 41), row(2, 0))
			if a, b := positions(t, c, 0, 5), positions(t, c, 1, 5); a[4] != 40 || b[4] != 41 || a[0] != 0 || b[3] != 3 {
				t.Errorf("beams read %v and %v", a, b)
			}
			// The prompt is stored once: forking added only the two new blocks.
			if grown, want := c.Bytes()-before, int64(2*2*BlockRows*2*typ.ElemSize()); grown != want {
				t.Errorf("fork + 2 writes grew the cache by %d bytes, want %d", grown, want)
			}
			if err := c.Write(0, 1, 2, row(2, 9), row(2, 9)); err == nil {
				t.Error("overwriting a shared prompt position was accepted")
			}
			c.Truncate(1, 2)
			if got := positions(t, c, 1, 2); len(got) != 2 || got[1] != 1 {
				t.Errorf("after truncate: %v", got)
			}
			if got := positions(t, c, 0, 5); got[4] != 40 {
				t.Errorf("truncating a beam changed its sibling: %v", got)
			}
			// The truncated beam continues past its private copy.
			if err := c.Write(0, 1, 2, row(2, 22), row(2, 0)); err != nil {
				t.Fatal(err)
			}
			if got := positions(t, c, 1, 3); got[2] != 22 || got[1] != 1 {
				t.Errorf("after truncate and write: %v", got)
			}
			// Dropping both recycles the private blocks: a new sequence
			// reuses them, with nothing left of the old rows.
			c.Drop(0)
			c.Drop(1)
			if c.Bytes() != 0 {
				t.Errorf("dropped sequences leave %d bytes", c.Bytes())
			}
			c.Write(0, 7, 0, row(2, 5), row(2, 6))
			if got := positions(t, c, 7, 1); len(got) != 1 || got[0] != 5 {
				t.Errorf("a recycled block reads %v", got)
			}
		})
	}
}

// TestKVCacheF16 checks what an f16 cache stores: each element rounded
// to the nearest half (ties to even), ±Inf beyond the half range; and
// that it takes half the memory of an f32 cache.
func TestKVCacheF16(t *testing.T) {
	in := []float32{1 + 1.0/4096, 1 + 3.0/2048, 0.1, -2049, 70000, 3e-8}
	// The nearest halves, worked out by hand: 1+2⁻¹² is below half a step
	// (2⁻¹⁰) above 1; 1+3·2⁻¹¹ is a tie between 1+2⁻¹⁰ and 1+2⁻⁹, to the
	// even 1+2⁻⁹; 0.1 → 1638·2⁻¹⁴; -2049 a tie, to -2048; 70000 > 65504
	// overflows; 3·10⁻⁸ → the smallest subnormal 2⁻²⁴ ≈ 5.96·10⁻⁸ (above
	// half of it).
	want := []float32{1, 1 + 1.0/512, float32(math.Ldexp(1638, -14)), -2048, float32(math.Inf(1)), float32(math.Ldexp(1, -24))}
	d := len(in)
	c := NewKVCache([]int{d}, 0, KVF16)
	c.Reserve(0, 1)
	neg := make([]float32, d)
	for i, v := range in {
		neg[i] = -v
	}
	if err := c.Write(0, 0, 0, in, neg); err != nil {
		t.Fatal(err)
	}
	for i := range in {
		k, v := rowsAt(t, c, 0, 1, i)
		if k[0] != want[i] || v[0] != -want[i] {
			t.Errorf("%v is stored as %v/%v, want %v", in[i], k[0], v[0], want[i])
		}
	}

	// Memory: the same positions take half the bytes.
	dims := []int{64, 64, 128}
	var bytes [2]int64
	for i, typ := range kvTypes {
		c := NewKVCache(dims, 0, typ)
		c.Reserve(0, 7)
		for p := range 7 + BlockRows + 1 {
			for slot, w := range dims {
				if err := c.Write(slot, 0, p, row(w, 1), row(w, 2)); err != nil {
					t.Fatal(err)
				}
			}
		}
		bytes[i] = c.Bytes()
		if want := (7 + 2*BlockRows) * c.PositionBytes(); bytes[i] != int64(want) {
			t.Errorf("%s: %d bytes, want %d", typ, bytes[i], want)
		}
	}
	if bytes[1]*2 != bytes[0] {
		t.Errorf("f16 cache %d bytes, f32 %d: not half", bytes[1], bytes[0])
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
