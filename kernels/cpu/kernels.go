package cpu

import "fmt"

// Level names a family of SIMD code paths, from none to the widest.
type Level uint8

// SIMD levels, in increasing order of capability.
const (
	// Generic is pure Go: the only level on other architectures and with
	// the noasm build tag.
	Generic Level = iota
	// AVX2 needs AVX2, FMA and F16C (Haswell, Zen and later).
	AVX2
	// AVX512 needs AVX-512 F, BW, DQ and VL (Skylake-SP and later). The
	// integer (quantized) kernels stay at AVX2 on this level.
	AVX512
	// AVX512VNNI adds AVX512_VNNI, AVX512_VBMI and GFNI (Ice Lake, Sapphire
	// Rapids, Zen 4 and later): VPDPBUSD integer dot products for the
	// quantized kernels.
	AVX512VNNI
	// AMX adds AMX-BF16 tiles (Sapphire Rapids and later), with the
	// operating system's permission to use them: the prefill GEMM of F16
	// and BF16 weights, exact in float32 (see amx.go).
	AMX

	// The arm64 levels follow the amd64 ones; a machine has levels of
	// one architecture only (see Levels).

	// NEON is arm64 Advanced SIMD (every arm64 CPU): integer dot products
	// of the quantized kernels by widening multiplies.
	NEON
	// DotProd adds the SDOT instruction (FEAT_DotProd: Apple M1,
	// Graviton 2, Ampere Altra and later).
	DotProd
	// I8MM adds the SMMLA int8 matrix instructions (FEAT_I8MM: Apple M2,
	// Graviton 3 and later): the Q4_0/Q8_0 prefill tiles; otherwise
	// DotProd's kernels.
	I8MM
)

var levelNames = [...]string{"generic", "avx2", "avx512", "avx512vnni", "amx", "neon", "dotprod", "i8mm"}

// isARM64 reports an arm64 level.
func (l Level) isARM64() bool { return l >= NEON }

// String returns the level's name: "generic", "avx2", "avx512",
// "avx512vnni", "amx", "neon", "dotprod" or "i8mm".
func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("level(%d)", uint8(l))
}

// ParseLevel parses a level name as written by String.
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if n == s {
			return Level(i), nil
		}
	}
	return 0, fmt.Errorf("unknown kernel level %q (want one of %v)", s, levelNames)
}

// Kernels is a set of kernel implementations: the code paths one process
// uses. It is a small value, chosen once by Detect and passed around (a
// Pool carries one); tests build weaker sets with Limit to exercise every
// path on one machine. The zero value is the pure-Go set.
type Kernels struct {
	level  Level
	repack bool // Q8_0 prefill copies of K-quant and IQ4_NL weights (repack.go)
}

// detected is the best set for this CPU, computed once at start-up and
// never written again.
var detected = Kernels{level: detectLevel()}

// Detect returns the best kernel set this CPU and build support.
func Detect() Kernels { return detected }

// Level reports the set's SIMD level.
func (k Kernels) Level() Level { return k.level }

// Limit returns the set restricted to at most level l. It never raises
// the level above what the CPU supports; a level of another architecture
// gives the Generic set.
func (k Kernels) Limit(l Level) Kernels {
	if l != Generic && l.isARM64() != k.level.isARM64() {
		l = Generic
	}
	if l < k.level {
		k.level = l
	}
	return k
}

// String describes the set, e.g. "avx512vnni", or "avx512vnni+repack"
// with WithRepack.
func (k Kernels) String() string {
	if k.repack {
		return k.level.String() + "+repack"
	}
	return k.level.String()
}

// Levels returns every level this machine can run, from Generic up to the
// detected one (the levels of this machine's architecture), for tests and
// benchmarks that compare paths.
func Levels() []Level {
	ls := make([]Level, 0, int(detected.level)+1)
	for l := Generic; l <= detected.level; l++ {
		if l == Generic || l.isARM64() == detected.level.isARM64() {
			ls = append(ls, l)
		}
	}
	return ls
}
