package shm

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Copies of at least parallelMin bytes are split into chunks of
// chunkMin to chunkMax bytes, about chunksPerWorker per CPU, which the
// CPUs take in turn: one core alone does not saturate memory bandwidth,
// and a core slowed down by other work takes fewer chunks.
const (
	parallelMin     = 2 << 20
	chunkMin        = 1 << 20
	chunkMax        = 4 << 20
	chunksPerWorker = 4
)

// Copy copies min(len(dst), len(src)) bytes from src to dst, like the
// built-in copy, on every CPU when the copy is large. dst and src must not
// overlap. It returns the number of bytes copied.
//
// A copy whose source and destination together exceed the last-level
// cache is made, where the CPU allows (amd64 with AVX2), with stores that
// bypass the caches: caching the destination would only evict the data
// still to be read, and the stores then cost no read of the destination
// line first.
func Copy(dst, src []byte) int {
	return copyOn(runtime.GOMAXPROCS(0), streamMin(), dst, src)
}

// copyOn is Copy on at most workers goroutines, with stores that bypass
// the caches when at least stream bytes are copied.
func copyOn(workers, stream int, dst, src []byte) int {
	n := min(len(dst), len(src))
	cp := copyCached
	if canStream && n >= stream {
		cp = streamCopy
	}
	if n < parallelMin || workers < 2 {
		cp(dst[:n], src[:n])
		return n
	}
	// Chunk boundaries are multiples of 4 KiB, so that a page-aligned
	// destination stays aligned in every chunk.
	chunk := min(max(n/(chunksPerWorker*workers), chunkMin), chunkMax) &^ (4<<10 - 1)
	chunks := (n + chunk - 1) / chunk
	workers = min(workers, chunks)
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= chunks {
				return
			}
			lo := i * chunk
			hi := min(lo+chunk, n)
			cp(dst[lo:hi], src[lo:hi])
		}
	}
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for range workers - 1 {
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	return n
}

func copyCached(dst, src []byte) { copy(dst, src) }

// streamMin is the size from which Copy bypasses the caches: half the
// last-level cache, or 32 MiB where its size is unknown.
var streamMin = sync.OnceValue(func() int {
	if c := lastLevelCache("/sys/devices/system/cpu/cpu0/cache"); c > 0 {
		return c / 2
	}
	return 32 << 20
})

// lastLevelCache returns the size in bytes of the largest data or unified
// cache listed in dir (Linux's sysfs layout: index*/{type,size}), or 0.
func lastLevelCache(dir string) int {
	idx, _ := filepath.Glob(filepath.Join(dir, "index*"))
	best := 0
	for _, d := range idx {
		typ, err := os.ReadFile(filepath.Join(d, "type"))
		if err != nil || strings.TrimSpace(string(typ)) == "Instruction" {
			continue
		}
		size, err := os.ReadFile(filepath.Join(d, "size"))
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(size))
		mul := 1
		switch {
		case strings.HasSuffix(s, "K"):
			s, mul = s[:len(s)-1], 1<<10
		case strings.HasSuffix(s, "M"):
			s, mul = s[:len(s)-1], 1<<20
		}
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			best = max(best, v*mul)
		}
	}
	return best
}
