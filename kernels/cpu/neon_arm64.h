// Instructions the Go arm64 assembler does not know, encoded with WORD
// from the Arm Architecture Reference Manual (A64 Advanced SIMD); the
// arguments are register numbers. Each was checked against llvm-mc
// (-triple=aarch64 -mattr=+dotprod -show-encoding).

// SDOT Vd.4S, Vn.16B, Vm.16B (FEAT_DotProd): each int32 lane of Vd adds
// the four products of the signed bytes in the lane.
#define SDOT(vd, vn, vm) WORD $(0x4e809400 | (vm)<<16 | (vn)<<5 | (vd))

// SMULL Vd.8H, Vn.8B, Vm.8B and SMULL2 (upper halves): signed widening
// multiplies of bytes to halfwords.
#define SMULL(vd, vn, vm) WORD $(0x0e20c000 | (vm)<<16 | (vn)<<5 | (vd))
#define SMULL2(vd, vn, vm) WORD $(0x4e20c000 | (vm)<<16 | (vn)<<5 | (vd))

// SMLAL Vd.8H, Vn.8B, Vm.8B and SMLAL2: the same, accumulating into Vd.
#define SMLAL(vd, vn, vm) WORD $(0x0e208000 | (vm)<<16 | (vn)<<5 | (vd))
#define SMLAL2(vd, vn, vm) WORD $(0x4e208000 | (vm)<<16 | (vn)<<5 | (vd))

// SADDLP Vd.4S, Vn.8H: pairwise sums of signed halfwords to words;
// SADALP adds them to Vd.
#define SADDLP(vd, vn) WORD $(0x4e602800 | (vn)<<5 | (vd))
#define SADALP(vd, vn) WORD $(0x4e606800 | (vn)<<5 | (vd))

// SCVTF Vd.4S, Vn.4S: int32 lanes to float32 (exact below 2^24).
#define SCVTF(vd, vn) WORD $(0x4e21d800 | (vn)<<5 | (vd))

// FCVTL Vd.4S, Vn.4H and FCVTL2 Vd.4S, Vn.8H: float16 lanes (lower,
// upper half) to float32, exactly.
#define FCVTL(vd, vn) WORD $(0x0e217800 | (vn)<<5 | (vd))
#define FCVTL2(vd, vn) WORD $(0x4e217800 | (vn)<<5 | (vd))

// FMUL, FADD and FADDP Vd.4S, Vn.4S, Vm.4S: float32 lanes, one rounding
// each (FADDP adds adjacent pairs of Vn, then of Vm).
#define FMUL(vd, vn, vm) WORD $(0x6e20dc00 | (vm)<<16 | (vn)<<5 | (vd))
#define FADD(vd, vn, vm) WORD $(0x4e20d400 | (vm)<<16 | (vn)<<5 | (vd))
#define FADDP(vd, vn, vm) WORD $(0x6e20d400 | (vm)<<16 | (vn)<<5 | (vd))

// FCVTL Vd.2D, Vn.2S and FCVTL2 Vd.2D, Vn.4S: float32 lanes (lower,
// upper half) to float64, exactly; FADD Vd.2D, Vn.2D, Vm.2D.
#define FCVTLD(vd, vn) WORD $(0x0e617800 | (vn)<<5 | (vd))
#define FCVTL2D(vd, vn) WORD $(0x4e617800 | (vn)<<5 | (vd))
#define FADDD(vd, vn, vm) WORD $(0x4e60d400 | (vm)<<16 | (vn)<<5 | (vd))

// SMMLA Vd.4S, Vn.16B, Vm.16B (FEAT_I8MM): Vn and Vm each hold two rows
// of 8 signed bytes; lane 2i+j of Vd adds the dot product of Vn's row i
// with Vm's row j.
#define SMMLA(vd, vn, vm) WORD $(0x4e80a400 | (vm)<<16 | (vn)<<5 | (vd))

// FCVTN Vd.4H, Vn.4S and FCVTN2 Vd.8H, Vn.4S: float32 lanes to float16
// (lower, upper half of Vd), rounded to nearest even (the default FPCR
// mode), beyond the range to ±Inf.
#define FCVTN(vd, vn) WORD $(0x0e216800 | (vn)<<5 | (vd))
#define FCVTN2(vd, vn) WORD $(0x4e216800 | (vn)<<5 | (vd))

// More float32 lane operations (Vd.4S, Vn.4S, Vm.4S unless noted):
// FSUB Vn−Vm, FDIV Vn/Vm, FMIN and FMAX (NaN if either is), FABS, FNEG,
// FCMGT (all ones where Vn > Vm), FCMGTZ (where Vn > 0), FCVTZS (to int32,
// toward zero, saturating), BSL Vd.16B (Vd ? Vn : Vm, bit by bit), FMAXV
// Sd, Vn.4S (the largest lane), FADD2 Vd.2S and FADDPS Sd, Vn.2S (the sum
// of the two lanes).
#define FSUB(vd, vn, vm) WORD $(0x4ea0d400 | (vm)<<16 | (vn)<<5 | (vd))
#define FDIV(vd, vn, vm) WORD $(0x6e20fc00 | (vm)<<16 | (vn)<<5 | (vd))
#define FMIN(vd, vn, vm) WORD $(0x4ea0f400 | (vm)<<16 | (vn)<<5 | (vd))
#define FMAX(vd, vn, vm) WORD $(0x4e20f400 | (vm)<<16 | (vn)<<5 | (vd))
#define FABS(vd, vn) WORD $(0x4ea0f800 | (vn)<<5 | (vd))
#define FNEG(vd, vn) WORD $(0x6ea0f800 | (vn)<<5 | (vd))
#define FCMGT(vd, vn, vm) WORD $(0x6ea0e400 | (vm)<<16 | (vn)<<5 | (vd))
#define FCMGTZ(vd, vn) WORD $(0x4ea0c800 | (vn)<<5 | (vd))
#define FCVTZS(vd, vn) WORD $(0x4ea1b800 | (vn)<<5 | (vd))
#define BSL(vd, vn, vm) WORD $(0x6e601c00 | (vm)<<16 | (vn)<<5 | (vd))
#define FMAXV(vd, vn) WORD $(0x6e30f800 | (vn)<<5 | (vd))
#define FADD2(vd, vn, vm) WORD $(0x0e20d400 | (vm)<<16 | (vn)<<5 | (vd))
#define FADDPS(vd, vn) WORD $(0x7e30d800 | (vn)<<5 | (vd))

// FCVTNS Vd.4S, Vn.4S: float32 lanes to int32, rounded to nearest even.
// XTN Vd.4H, Vn.4S and XTN2 Vd.8H, Vn.4S (upper half); XTNB Vd.8B,
// Vn.8H and XTNB2 Vd.16B, Vn.8H: narrowing by truncation.
#define FCVTNS(vd, vn) WORD $(0x4e21a800 | (vn)<<5 | (vd))
#define XTN(vd, vn) WORD $(0x0e612800 | (vn)<<5 | (vd))
#define XTN2(vd, vn) WORD $(0x4e612800 | (vn)<<5 | (vd))
#define XTNB(vd, vn) WORD $(0x0e212800 | (vn)<<5 | (vd))
#define XTNB2(vd, vn) WORD $(0x4e212800 | (vn)<<5 | (vd))

// MLAE Vd.4S, Vn.4S, Vm.S[i]: int32 multiply-accumulate by element;
// FMLAE Vd.4S, Vn.4S, Vm.S[i]: float32 fused multiply-add by element.
#define MLAE(vd, vn, vm, i) WORD $(0x6f800000 | ((i)&1)<<21 | (vm)<<16 | ((i)>>1)<<11 | (vn)<<5 | (vd))
#define FMLAE(vd, vn, vm, i) WORD $(0x4f801000 | ((i)&1)<<21 | (vm)<<16 | ((i)>>1)<<11 | (vn)<<5 | (vd))

// USHLL Vd.8H, Vn.8B, #0 (UXTLB; USHLL2, UXTLB2), USHLL Vd.4S, Vn.4H and USHLL2 Vd.4S,
// Vn.8H: zero-extending widenings; SSHLL and SSHLL2 the sign-extending
// ones (8B to 8H: SXTLB, SXTLB2; 4H to 4S: SXTL, SXTL2). MULS Vd.4S:
// int32 lane products.
#define UXTLB(vd, vn) WORD $(0x2f08a400 | (vn)<<5 | (vd))
#define UXTLB2(vd, vn) WORD $(0x6f08a400 | (vn)<<5 | (vd))
#define UXTL(vd, vn) WORD $(0x2f10a400 | (vn)<<5 | (vd))
#define UXTL2(vd, vn) WORD $(0x6f10a400 | (vn)<<5 | (vd))
#define SXTLB(vd, vn) WORD $(0x0f08a400 | (vn)<<5 | (vd))
#define SXTLB2(vd, vn) WORD $(0x4f08a400 | (vn)<<5 | (vd))
#define SXTL(vd, vn) WORD $(0x0f10a400 | (vn)<<5 | (vd))
#define SXTL2(vd, vn) WORD $(0x4f10a400 | (vn)<<5 | (vd))
#define MULS(vd, vn, vm) WORD $(0x4ea09c00 | (vm)<<16 | (vn)<<5 | (vd))

// SMULLH Vd.4S, Vn.4H, Vm.4H and SMULLH2 (upper halves): signed widening
// multiplies of halfwords to words.
#define SMULLH(vd, vn, vm) WORD $(0x0e60c000 | (vm)<<16 | (vn)<<5 | (vd))
#define SMULLH2(vd, vn, vm) WORD $(0x4e60c000 | (vm)<<16 | (vn)<<5 | (vd))

// SMIN Vd.4S (int32 lanes), ADDV Sd, Vn.4S (the sum of the int32 lanes),
// FMAXNM Vd.4S and FMAXNMV Sd, Vn.4S (maximum, a NaN lane ignored), FCMEQ
// Vd.4S (all ones where Vn = Vm).
#define SMIN(vd, vn, vm) WORD $(0x4ea06c00 | (vm)<<16 | (vn)<<5 | (vd))
#define ADDV(vd, vn) WORD $(0x4eb1b800 | (vn)<<5 | (vd))
#define FMAXNM(vd, vn, vm) WORD $(0x4e20c400 | (vm)<<16 | (vn)<<5 | (vd))
#define FMAXNMV(vd, vn) WORD $(0x6e30c800 | (vn)<<5 | (vd))
#define FCMEQ(vd, vn, vm) WORD $(0x4e20e400 | (vm)<<16 | (vn)<<5 | (vd))
