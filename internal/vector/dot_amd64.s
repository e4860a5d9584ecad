//go:build amd64 && !purego

#include "textflag.h"

// func dotsInt8AVX2(u *int16, codes *int8, stride, rows int, out *int32)
// stride is a multiple of 32 and > 0; rows > 0.
TEXT ·dotsInt8AVX2(SB), NOSPLIT, $0-40
	MOVQ u+0(FP), SI
	MOVQ codes+8(FP), DI
	MOVQ stride+16(FP), BX
	MOVQ rows+24(FP), CX
	MOVQ out+32(FP), DX

row2:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	XORQ  AX, AX

col2:
	VPMOVSXBW (DI)(AX*1), Y2
	VPMOVSXBW 16(DI)(AX*1), Y3
	VPMADDWD  (SI)(AX*2), Y2, Y2
	VPMADDWD  32(SI)(AX*2), Y3, Y3
	VPADDD    Y2, Y0, Y0
	VPADDD    Y3, Y1, Y1
	ADDQ      $32, AX
	CMPQ      AX, BX
	JB        col2

	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, (DX)
	ADDQ         BX, DI
	ADDQ         $4, DX
	DECQ         CX
	JNZ          row2
	VZEROUPPER
	RET

// func dotsInt8AVX512(u *int16, codes *int8, stride, rows int, out *int32)
// stride is a multiple of 32 and > 0; rows > 0. Steps of 64 codes, with a
// final step of 32 when stride is an odd multiple of 32.
TEXT ·dotsInt8AVX512(SB), NOSPLIT, $0-40
	MOVQ u+0(FP), SI
	MOVQ codes+8(FP), DI
	MOVQ stride+16(FP), BX
	MOVQ rows+24(FP), CX
	MOVQ out+32(FP), DX
	MOVQ BX, R8
	ANDQ $-64, R8          // codes covered by 64-wide steps

row5:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	XORQ   AX, AX
	CMPQ   R8, $0
	JEQ    tail5

col5:
	VPMOVSXBW (DI)(AX*1), Z2
	VPMOVSXBW 32(DI)(AX*1), Z3
	VPMADDWD  (SI)(AX*2), Z2, Z2
	VPMADDWD  64(SI)(AX*2), Z3, Z3
	VPADDD    Z2, Z0, Z0
	VPADDD    Z3, Z1, Z1
	ADDQ      $64, AX
	CMPQ      AX, R8
	JB        col5

tail5:
	CMPQ      AX, BX
	JAE       sum5
	VPMOVSXBW (DI)(AX*1), Z2
	VPMADDWD  (SI)(AX*2), Z2, Z2
	VPADDD    Z2, Z0, Z0

sum5:
	VPADDD        Z1, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDD        Y1, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPADDD        X1, X0, X0
	VPSHUFD       $0x4e, X0, X1
	VPADDD        X1, X0, X0
	VPSHUFD       $0xb1, X0, X1
	VPADDD        X1, X0, X0
	VMOVD         X0, (DX)
	ADDQ          BX, DI
	ADDQ          $4, DX
	DECQ          CX
	JNZ           row5
	VZEROUPPER
	RET
