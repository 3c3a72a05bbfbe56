package shm

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// pattern is the byte the tests put at index i of a source.
func pattern(i int) byte { return byte(i*7 + i>>12) }

func TestCopy(t *testing.T) {
	const mb = 1 << 20
	never, always := math.MaxInt, 0 // stream thresholds
	for _, tc := range []struct {
		workers, stream int
		dst, src, off   int // off: the destination starts off bytes into its buffer
	}{
		{2, never, 0, 0, 0},
		{2, never, 100, 100, 0},
		{2, never, parallelMin - 1, parallelMin - 1, 0}, // below the threshold
		{2, never, parallelMin, parallelMin, 0},         // two 1 MiB chunks
		{2, never, 3*mb + 12345, 3*mb + 12345, 0},       // a short last chunk
		{3, never, 64*mb + 7, 64*mb + 7, 0},             // 4 MiB chunks, 3 workers
		{16, never, 5 * mb, 5 * mb, 0},                  // more workers than chunks
		{1, never, 8 * mb, 8 * mb, 0},                   // one worker
		{2, never, 5*mb + 1, 6 * mb, 0},                 // dst shorter
		{2, never, 6 * mb, 5*mb + 3, 0},                 // src shorter
		// Streaming stores (where the CPU has them): any alignment, any
		// length, small copies by the built-in copy.
		{1, always, 4095, 4095, 0},
		{1, always, 4096, 4096, 0},
		{1, always, 4096 + 255, 4096 + 255, 1},
		{1, always, 70001, 70001, 33},
		{1, always, 1 << 16, 1 << 16, 63},
		{2, always, 3*mb + 12345, 3*mb + 12345, 17},
		{2, always, 6 * mb, 5*mb + 3, 5},
		{2, 4 * mb, 4*mb - 1, 4*mb - 1, 0}, // just below the stream threshold
		{2, 4 * mb, 4 * mb, 4 * mb, 0},     // at it
	} {
		t.Run(fmt.Sprintf("%d/%d/%d/%d/%d", tc.workers, tc.stream, tc.dst, tc.src, tc.off), func(t *testing.T) {
			src := make([]byte, tc.src)
			for i := range src {
				src[i] = pattern(i)
			}
			buf := make([]byte, tc.off+tc.dst+64)
			for i := range buf {
				buf[i] = 0xAA
			}
			dst := buf[tc.off : tc.off+tc.dst]
			n := copyOn(tc.workers, tc.stream, dst, src)
			want := min(tc.dst, tc.src)
			if n != want {
				t.Errorf("copied %d bytes, want %d", n, want)
			}
			for i, b := range buf {
				w := byte(0xAA)
				if j := i - tc.off; j >= 0 && j < want {
					w = pattern(j)
				}
				if b != w {
					t.Fatalf("byte %d of the destination's buffer (dst[%d]) = %#x, want %#x", i, i-tc.off, b, w)
				}
			}
		})
	}
}

func TestLastLevelCache(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string // index*/file → contents
		want  int
	}{
		{"none", nil, 0},
		{"intel", map[string]string{
			"index0/type": "Data\n", "index0/size": "48K\n",
			"index1/type": "Instruction\n", "index1/size": "32K\n",
			"index2/type": "Unified\n", "index2/size": "2048K\n",
			"index3/type": "Unified\n", "index3/size": "107520K\n",
		}, 107520 << 10},
		{"instruction cache ignored", map[string]string{
			"index0/type": "Data\n", "index0/size": "32K\n",
			"index1/type": "Instruction\n", "index1/size": "64M\n",
		}, 32 << 10},
		{"megabytes", map[string]string{"index0/type": "Unified\n", "index0/size": "8M\n"}, 8 << 20},
		{"garbage", map[string]string{"index0/type": "Unified\n", "index0/size": "lots\n"}, 0},
		{"no size", map[string]string{"index0/type": "Unified\n"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range tc.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := lastLevelCache(dir); got != tc.want {
				t.Errorf("lastLevelCache = %d, want %d", got, tc.want)
			}
		})
	}
}

func BenchmarkCopy64MB(b *testing.B) {
	src := make([]byte, 64<<20)
	for i := range src {
		src[i] = pattern(i)
	}
	dst := make([]byte, len(src))
	for _, bc := range []struct {
		name   string
		stream int
	}{{"cached", math.MaxInt}, {"streaming", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for range b.N {
				copyOn(2, bc.stream, dst, src)
			}
		})
	}
}
