package cpu

import (
	"math/rand/v2"
	"testing"
)

func TestXorRead(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	b := make([]byte, 4096+256)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for _, l := range Levels() {
		k := Detect().Limit(l)
		for _, n := range []int{0, 256, 512, 1024, 3072, 4096} {
			if got, want := k.xorRead(b[:n]), xorReadGo(b[:n]); got != want {
				t.Errorf("%s: xorRead(%d bytes) = %#x, want %#x", l, n, got, want)
			}
		}
	}
}

func TestMemBandwidth(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	bw := MemBandwidth(p, 8<<20)
	if !(bw > 0.1 && bw < 1e4) {
		t.Fatalf("MemBandwidth = %v GB/s, not plausible", bw)
	}
}

func BenchmarkMemBandwidth(b *testing.B) {
	for _, th := range []int{1, 2} {
		b.Run(map[int]string{1: "1thread", 2: "2threads"}[th], func(b *testing.B) {
			p := NewPool(th)
			defer p.Close()
			var bw float64
			for b.Loop() {
				bw = MemBandwidth(p, 1<<30)
			}
			b.ReportMetric(bw, "GB/s")
		})
	}
}
