package main

import (
	"flag"
	"fmt"

	"github.com/weftrun/weft/kernels/cpu"
)

// kernelsUsage describes --kernels.
const kernelsUsage = "CPU kernel level, at most the machine's: avx2, avx512 or avx512vnni (amd64), neon or dotprod (arm64); default the best this CPU runs"

// repackUsage describes --repack.
const repackUsage = "also keep K-quant, IQ4_NL, Q5_0, Q4_1 and Q5_1 weights as Q8_0 (34 bytes per 32 weights more) for batches of 4+ tokens: faster prefill, logits no longer llama.cpp's bits (docs/kernels.md)"

// addKernelsFlag adds --kernels and --repack to fs; the returned function turns its
// value into the kernel set to use after parsing.
func addKernelsFlag(fs *flag.FlagSet) func() (cpu.Kernels, error) {
	name := fs.String("kernels", "", kernelsUsage)
	repack := fs.Bool("repack", false, repackUsage)
	return func() (cpu.Kernels, error) {
		k, err := parseKernels(*name)
		return k.WithRepack(*repack), err
	}
}

// parseKernels returns the kernel set named by a --kernels value: the
// machine's best for "", an error for a level it cannot run (rather than
// quietly measuring another one). The pure-Go set is the build tag
// noasm's job, not this flag's.
func parseKernels(name string) (cpu.Kernels, error) {
	best := cpu.Detect()
	if name == "" {
		return best, nil
	}
	l, err := cpu.ParseLevel(name)
	if err != nil {
		return best, fmt.Errorf("%w: --kernels: %v", errUsage, err)
	}
	if l == cpu.Generic {
		return best, fmt.Errorf("%w: --kernels generic: build with -tags noasm for the pure-Go kernels", errUsage)
	}
	if k := best.Limit(l); k.Level() != l {
		return best, fmt.Errorf("%w: --kernels %s: this CPU runs at most %s", errUsage, name, best)
	}
	return best.Limit(l), nil
}
