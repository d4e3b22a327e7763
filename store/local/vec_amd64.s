//go:build amd64 && !purego

#include "textflag.h"

// func dotAVX2(a, b []float32) float32
//
// Four 8-lane accumulators hide the latency of the fused multiply-add; a
// single-lane loop handles the tail. b must be at least as long as a.
TEXT ·dotAVX2(SB), NOSPLIT, $0-52
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ b_base+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

loop32:
	CMPQ CX, $32
	JLT  loop8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  loop32

loop8:
	CMPQ CX, $8
	JLT  reduce
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop8

reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0

tail:
	TESTQ CX, CX
	JEQ   done
	VMOVSS (SI), X1
	VFMADD231SS (DI), X1, X0
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP  tail

done:
	VZEROUPPER
	MOVSS X0, ret+48(FP)
	RET

// func prefetchBytes(p *int8, n int)
//
// Asks the CPU to start loading the n cache lines at p, so that the next
// vector is on its way while the current one is scored.
TEXT ·prefetchBytes(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX

more:
	TESTQ CX, CX
	JEQ   out
	PREFETCHT0 (AX)
	ADDQ $64, AX
	DECQ CX
	JMP  more

out:
	RET

// func dotInt8AVX2(a, b []int8) int32
//
// 32 bytes at a time: VPMADDUBSW multiplies unsigned by signed bytes and
// adds neighbouring products into 16-bit lanes, so a is made unsigned
// (|a|) and its sign moved onto b. Codes lie within ±127, so a pair sums to
// at most 2·127·127 and never saturates. VPMADDWD by ones then widens to
// 32-bit lanes. A 16-byte step and a byte loop handle the tail. b must be
// at least as long as a.
TEXT ·dotInt8AVX2(SB), NOSPLIT, $0-52
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ b_base+24(FP), DI
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	MOVL $0x00010001, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7

i8loop64:
	CMPQ CX, $64
	JLT  i8loop32
	VMOVDQU    (SI), Y2
	VMOVDQU    (DI), Y3
	VPSIGNB    Y2, Y3, Y3
	VPABSB     Y2, Y2
	VPMADDUBSW Y3, Y2, Y2
	VPMADDWD   Y7, Y2, Y2
	VPADDD     Y2, Y0, Y0
	VMOVDQU    32(SI), Y4
	VMOVDQU    32(DI), Y5
	VPSIGNB    Y4, Y5, Y5
	VPABSB     Y4, Y4
	VPMADDUBSW Y5, Y4, Y4
	VPMADDWD   Y7, Y4, Y4
	VPADDD     Y4, Y1, Y1
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $64, CX
	JMP  i8loop64

i8loop32:
	CMPQ CX, $32
	JLT  i8loop16
	VMOVDQU    (SI), Y2
	VMOVDQU    (DI), Y3
	VPSIGNB    Y2, Y3, Y3
	VPABSB     Y2, Y2
	VPMADDUBSW Y3, Y2, Y2
	VPMADDWD   Y7, Y2, Y2
	VPADDD     Y2, Y0, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $32, CX

i8loop16:
	CMPQ CX, $16
	JLT  i8reduce
	VPMOVSXBW (SI), Y2
	VPMOVSXBW (DI), Y3
	VPMADDWD  Y3, Y2, Y2
	VPADDD    Y2, Y0, Y0
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $16, CX

i8reduce:
	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPHADDD      X0, X0, X0
	VPHADDD      X0, X0, X0
	VMOVD        X0, AX

i8tail:
	TESTQ CX, CX
	JEQ   i8done
	MOVBQSX (SI), DX
	MOVBQSX (DI), R8
	IMULQ   R8, DX
	ADDL    DX, AX
	INCQ    SI
	INCQ    DI
	DECQ    CX
	JMP     i8tail

i8done:
	VZEROUPPER
	MOVL AX, ret+48(FP)
	RET
