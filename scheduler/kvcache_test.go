package scheduler

import (
	"testing"

	"github.com/weftrun/weft/kernels/cpu"
)

func row(d int, v float32) []float32 {
	r := make([]float32, d)
	for i := range r {
		r[i] = v
	}
	return r
}

// positions reads back the first element of every cached key of seq.
func positions(t *testing.T, c *KVCache, seq, n int) []float32 {
	t.Helper()
	var kv cpu.KV
	if err := c.View(0, seq, n, &kv); err != nil {
		t.Fatal(err)
	}
	var out []float32
	for s := range kv.K {
		for r := 0; r < kv.Len[s]; r++ {
			out = append(out, kv.K[s][r*2])
		}
	}
	return out
}

func TestKVCacheSegments(t *testing.T) {
	c := NewKVCache([]int{2}, 100)
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
	got := positions(t, c, 0, 5+BlockRows+3)
	for i, v := range got {
		if v != float32(i) {
			t.Fatalf("position %d holds %v", i, v)
		}
	}
	if err := c.Write(0, 0, 30, row(2, 0), row(2, 0)); err == nil {
		t.Error("a write past the next position was accepted")
	}
	if err := c.Write(0, 0, 100, row(2, 0), row(2, 0)); err == nil {
		t.Error("a write past the context was accepted")
	}
}

func TestKVCacheForkShares(t *testing.T) {
	c := NewKVCache([]int{2}, 100)
	c.Reserve(0, 4)
	for p := 0; p < 4; p++ {
		c.Write(0, 0, p, row(2, float32(p)), row(2, 0))
	}
	if err := c.Fork(0, 1); err != nil {
		t.Fatal(err)
	}
	before := c.Bytes()
	// Each beam continues on its own.
	c.Write(0, 0, 4, row(2, 40), row(2, 0))
	c.Write(0, 1, 4, row(2, 41), row(2, 0))
	if a, b := positions(t, c, 0, 5), positions(t, c, 1, 5); a[4] != 40 || b[4] != 41 || a[0] != 0 || b[3] != 3 {
		t.Errorf("beams read %v and %v", a, b)
	}
	// The prompt is stored once: forking added only the two new blocks.
	if grown := c.Bytes() - before; grown != 2*2*BlockRows*2*4 {
		t.Errorf("fork + 2 writes grew the cache by %d bytes", grown)
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
}
