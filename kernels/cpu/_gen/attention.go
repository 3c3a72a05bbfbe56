package main

// attentionz generates attentionz_amd64.s: the half-precision KV
// attention kernels, AVX-512 (VCVTPH2PS widens 16 halves to 16 floats;
// products and sums are float32): the f32 ones of rowsz with halves.
func attentionz(a *asm) {
	dotRowsZ(a, true)
	axpyRowsZ(a, true)
	a.convKernelZ(roundF16)
}

// attentiony generates attentiony_amd64.s: the AVX2 + F16C twins of
// attentionz's axpyRowsF16Z and roundF16Z (n rounded down to 8).
func attentiony(a *asm) {
	axpyRowsY(a, true)
	a.convKernelY(roundF16)
}
