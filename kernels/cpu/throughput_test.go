package cpu

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/weftrun/weft/tensor"
)

// bestOf runs f reps times per trial and returns the fastest per-call
// time over trials: a robust estimate on a machine shared with others.
func bestOf(trials, reps int, f func()) time.Duration {
	best := time.Duration(1 << 62)
	for range trials {
		s := time.Now()
		for range reps {
			f()
		}
		if d := time.Since(s) / time.Duration(reps); d < best {
			best = d
		}
	}
	return best
}

func TestKernelThroughput(t *testing.T) {
	if os.Getenv("WEFT_KBENCH") == "" {
		t.Skip("set WEFT_KBENCH=1 to print single-thread kernel throughput")
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.Q8_0, tensor.Q4_0} {
		w := benchMatrix(nil, dt, 256, 2048)
		x := make([]float32, 2048*64)
		for i := range x {
			x[i] = float32(i%11) - 5
		}
		dst := make([]float32, 256*64)
		for _, l := range Levels() {
			p := NewPoolKernels(1, Detect().Limit(l))
			d1 := bestOf(20, 20, func() { MatMul(p, dst, w, x, 1) })
			d4 := bestOf(10, 2, func() { MatMul(p, dst, w, x, 64) })
			fmt.Printf("%-5s %-10s matvec %6.1f GB/s  n=64 %6.1f GFLOP/s\n", dt, l,
				float64(len(w.Data))/d1.Seconds()/1e9, 2*64*256*2048/d4.Seconds()/1e9)
			p.Close()
		}
	}
}

func TestDRAMThroughput(t *testing.T) {
	if os.Getenv("WEFT_KBENCH") == "" {
		t.Skip("set WEFT_KBENCH=1 to print DRAM-bound matvec throughput")
	}
	for _, th := range []int{1, 2} {
		p := NewPool(th)
		fmt.Printf("threads %d: membw %.1f GB/s\n", th, MemBandwidth(p, 512<<20))
		for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.F16} {
			rows := (400 << 20) / (2048 * 2) // ~400 MB of F16
			if dt != tensor.F16 {
				rows = (400 << 20) / 2304 // ~400 MB of Q4_0 / 2 for Q8_0
			}
			w := benchMatrix(nil, dt, rows, 2048)
			x := make([]float32, 2048)
			dst := make([]float32, rows)
			d := bestOf(5, 1, func() { MatMul(p, dst, w, x, 1) })
			fmt.Printf("threads %d: %s matvec %.1f GB/s\n", th, dt, float64(len(w.Data))/d.Seconds()/1e9)
		}
		p.Close()
	}
}

func TestPanelKernelSpeed(t *testing.T) {
	k := Detect()
	if os.Getenv("WEFT_KBENCH") == "" || !k.hasPanelGEMM() {
		t.Skip("set WEFT_KBENCH=1 on an AVX-512 machine to print the GEMM tile throughput")
	}
	const kc = panelKC
	w := make([]float32, tileLen(kc))
	xp := make([]float32, 32*kc)
	buf := make([]float32, tileBufLen)
	d := bestOf(50, 100, func() { k.panelTile(w, xp, kc, buf, true, nil) })
	fmt.Printf("12x32 panel tile, %d-element chunk (L1): %.1f GFLOP/s\n", kc, 2*12*32*kc/d.Seconds()/1e9)
	src := make([]byte, 192*4096)
	d = bestOf(20, 20, func() {
		for g := 0; g < 192; g += 12 {
			k.widenTile(ftF16, w, src[g*4096:], 4096, 12, kc)
		}
	})
	fmt.Printf("widen 192x%d F16 (L2) to tile layout: %v\n", kc, d)
	x := make([]float32, 4*kc)
	dst := make([]float32, 4*64)
	d = bestOf(50, 100, func() { k.floatTile(ftF32, f32AsBytes(w), 4*kc, x, kc, kc, dst, 64, false) })
	fmt.Printf("4x4 dot tile (L1): %.1f GFLOP/s\n", 2*4*4*kc/d.Seconds()/1e9)
	xs := make([]float32, 128*2048)
	pt := panelTask{k: k, x: xs, cols: 2048, n: 128, xp: make([]float32, 128*2048)}
	d = bestOf(5, 2, func() { pt.Run(0, 4) })
	fmt.Printf("transpose 128x2048 into panels: %v\n", d)
}
