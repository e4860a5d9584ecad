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

// func exactDotsAVX2(q *float64, data *float32, dim int, ids *int32, n int, out *float64)
// out[i] = Σ_j q[j]·data[ids[i]·dim + j] for i < n, summed exactly as
// Flat.exact does: four float64 lanes, lane k adding the products of the
// dimensions j ≡ k (mod 4) in order, combined as (l0+l1)+(l2+l3). A
// product of two widened float32 values is exact in float64, so the fused
// multiply-add rounds exactly as a multiply followed by an add. dim is a
// positive multiple of 4; n > 0. Four rows at a time hide the adds'
// latency.
TEXT ·exactDotsAVX2(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ data+8(FP), DI
	MOVQ dim+16(FP), BX
	MOVQ ids+24(FP), R12
	MOVQ n+32(FP), CX
	MOVQ out+40(FP), DX
	MOVQ BX, R13
	SHLQ $2, R13           // bytes per row

	CMPQ CX, $4
	JB   exone

exfour:
	MOVLQSX 0(R12), R8
	IMULQ   R13, R8
	ADDQ    DI, R8
	MOVLQSX 4(R12), R9
	IMULQ   R13, R9
	ADDQ    DI, R9
	MOVLQSX 8(R12), R10
	IMULQ   R13, R10
	ADDQ    DI, R10
	MOVLQSX 12(R12), R11
	IMULQ   R13, R11
	ADDQ    DI, R11
	VXORPD  Y0, Y0, Y0
	VXORPD  Y1, Y1, Y1
	VXORPD  Y2, Y2, Y2
	VXORPD  Y3, Y3, Y3
	XORQ    AX, AX

exfourcol:
	VMOVUPD     (SI)(AX*8), Y4
	VCVTPS2PD   (R8)(AX*4), Y5
	VFMADD231PD Y5, Y4, Y0
	VCVTPS2PD   (R9)(AX*4), Y6
	VFMADD231PD Y6, Y4, Y1
	VCVTPS2PD   (R10)(AX*4), Y7
	VFMADD231PD Y7, Y4, Y2
	VCVTPS2PD   (R11)(AX*4), Y8
	VFMADD231PD Y8, Y4, Y3
	ADDQ        $4, AX
	CMPQ        AX, BX
	JB          exfourcol

	VEXTRACTF128 $1, Y0, X9
	VHADDPD      X9, X0, X0
	VPERMILPD    $1, X0, X9
	VADDSD       X9, X0, X0
	VMOVSD       X0, 0(DX)
	VEXTRACTF128 $1, Y1, X9
	VHADDPD      X9, X1, X1
	VPERMILPD    $1, X1, X9
	VADDSD       X9, X1, X1
	VMOVSD       X1, 8(DX)
	VEXTRACTF128 $1, Y2, X9
	VHADDPD      X9, X2, X2
	VPERMILPD    $1, X2, X9
	VADDSD       X9, X2, X2
	VMOVSD       X2, 16(DX)
	VEXTRACTF128 $1, Y3, X9
	VHADDPD      X9, X3, X3
	VPERMILPD    $1, X3, X9
	VADDSD       X9, X3, X3
	VMOVSD       X3, 24(DX)

	ADDQ $16, R12
	ADDQ $32, DX
	SUBQ $4, CX
	CMPQ CX, $4
	JAE  exfour

exone:
	TESTQ CX, CX
	JEQ   exdone
	MOVLQSX 0(R12), R8
	IMULQ   R13, R8
	ADDQ    DI, R8
	VXORPD  Y0, Y0, Y0
	XORQ    AX, AX

exonecol:
	VMOVUPD     (SI)(AX*8), Y4
	VCVTPS2PD   (R8)(AX*4), Y5
	VFMADD231PD Y5, Y4, Y0
	ADDQ        $4, AX
	CMPQ        AX, BX
	JB          exonecol

	VEXTRACTF128 $1, Y0, X9
	VHADDPD      X9, X0, X0
	VPERMILPD    $1, X0, X9
	VADDSD       X9, X0, X0
	VMOVSD       X0, 0(DX)
	ADDQ         $4, R12
	ADDQ         $8, DX
	DECQ         CX
	JMP          exone

exdone:
	VZEROUPPER
	RET

// func dotsF32AVX512(q *float32, rows *float32, dim, n int, out *float32)
// out[r] = Σ_j q[j]·rows[r·dim + j] in float32 (any order: the first pass
// bounds its rounding), four rows at a time. dim is a positive multiple of
// 16; n > 0.
TEXT ·dotsF32AVX512(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ rows+8(FP), DI
	MOVQ dim+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), DX
	MOVQ BX, R13
	SHLQ $2, R13           // bytes per row

	CMPQ CX, $4
	JB   f5one

f5four:
	LEAQ   (DI)(R13*1), R8
	LEAQ   (R8)(R13*1), R9
	LEAQ   (R9)(R13*1), R10
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	XORQ   AX, AX

f5fourcol:
	VMOVUPS     (SI)(AX*4), Z4
	VFMADD231PS (DI)(AX*4), Z4, Z0
	VFMADD231PS (R8)(AX*4), Z4, Z1
	VFMADD231PS (R9)(AX*4), Z4, Z2
	VFMADD231PS (R10)(AX*4), Z4, Z3
	ADDQ        $16, AX
	CMPQ        AX, BX
	JB          f5fourcol

	VEXTRACTF64X4 $1, Z0, Y5
	VADDPS        Y5, Y0, Y0
	VEXTRACTF64X4 $1, Z1, Y5
	VADDPS        Y5, Y1, Y1
	VEXTRACTF64X4 $1, Z2, Y5
	VADDPS        Y5, Y2, Y2
	VEXTRACTF64X4 $1, Z3, Y5
	VADDPS        Y5, Y3, Y3
	VHADDPS       Y1, Y0, Y0
	VHADDPS       Y3, Y2, Y2
	VHADDPS       Y2, Y0, Y0
	VEXTRACTF128  $1, Y0, X5
	VADDPS        X5, X0, X0
	VMOVUPS       X0, (DX)

	LEAQ (R10)(R13*1), DI
	ADDQ $16, DX
	SUBQ $4, CX
	CMPQ CX, $4
	JAE  f5four

f5one:
	TESTQ  CX, CX
	JEQ    f5done
	VXORPS Z0, Z0, Z0
	XORQ   AX, AX

f5onecol:
	VMOVUPS     (SI)(AX*4), Z4
	VFMADD231PS (DI)(AX*4), Z4, Z0
	ADDQ        $16, AX
	CMPQ        AX, BX
	JB          f5onecol

	VEXTRACTF64X4 $1, Z0, Y5
	VADDPS        Y5, Y0, Y0
	VEXTRACTF128  $1, Y0, X5
	VADDPS        X5, X0, X0
	VHADDPS       X0, X0, X0
	VHADDPS       X0, X0, X0
	VMOVSS        X0, (DX)
	ADDQ          R13, DI
	ADDQ          $4, DX
	DECQ          CX
	JMP           f5one

f5done:
	VZEROUPPER
	RET

// func dotsF32AVX2(q *float32, rows *float32, dim, n int, out *float32)
// dotsF32AVX512 with 256-bit registers; dim is a positive multiple of 8.
TEXT ·dotsF32AVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ rows+8(FP), DI
	MOVQ dim+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), DX
	MOVQ BX, R13
	SHLQ $2, R13

	CMPQ CX, $4
	JB   f2one

f2four:
	LEAQ   (DI)(R13*1), R8
	LEAQ   (R8)(R13*1), R9
	LEAQ   (R9)(R13*1), R10
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX

f2fourcol:
	VMOVUPS     (SI)(AX*4), Y4
	VFMADD231PS (DI)(AX*4), Y4, Y0
	VFMADD231PS (R8)(AX*4), Y4, Y1
	VFMADD231PS (R9)(AX*4), Y4, Y2
	VFMADD231PS (R10)(AX*4), Y4, Y3
	ADDQ        $8, AX
	CMPQ        AX, BX
	JB          f2fourcol

	VHADDPS      Y1, Y0, Y0
	VHADDPS      Y3, Y2, Y2
	VHADDPS      Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X5
	VADDPS       X5, X0, X0
	VMOVUPS      X0, (DX)

	LEAQ (R10)(R13*1), DI
	ADDQ $16, DX
	SUBQ $4, CX
	CMPQ CX, $4
	JAE  f2four

f2one:
	TESTQ  CX, CX
	JEQ    f2done
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX

f2onecol:
	VMOVUPS     (SI)(AX*4), Y4
	VFMADD231PS (DI)(AX*4), Y4, Y0
	ADDQ        $8, AX
	CMPQ        AX, BX
	JB          f2onecol

	VEXTRACTF128 $1, Y0, X5
	VADDPS       X5, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, (DX)
	ADDQ         R13, DI
	ADDQ         $4, DX
	DECQ         CX
	JMP          f2one

f2done:
	VZEROUPPER
	RET

// func quantEstAVX2(dots *int32, scale, errs *float32, n int, t, k1, k0 float32, est, up *float32)
// For r < n (a multiple of 8): est[r] = float32(dots[r])·t·scale[r] and
// up[r] = (est[r] + errs[r]·k1) + k0, rounded step by step exactly as the
// Go loop in scanQuant computes them.
TEXT ·quantEstAVX2(SB), NOSPLIT, $0-64
	MOVQ         dots+0(FP), SI
	MOVQ         scale+8(FP), R8
	MOVQ         errs+16(FP), R9
	MOVQ         n+24(FP), CX
	VBROADCASTSS t+32(FP), Y5
	VBROADCASTSS k1+36(FP), Y6
	VBROADCASTSS k0+40(FP), Y7
	MOVQ         est+48(FP), DI
	MOVQ         up+56(FP), DX
	XORQ         AX, AX
	TESTQ        CX, CX
	JEQ          qedone

qeloop:
	VCVTDQ2PS (SI)(AX*4), Y0
	VMULPS    Y5, Y0, Y0
	VMULPS    (R8)(AX*4), Y0, Y0
	VMOVUPS   Y0, (DI)(AX*4)
	VMULPS    (R9)(AX*4), Y6, Y1
	VADDPS    Y1, Y0, Y0
	VADDPS    Y7, Y0, Y0
	VMOVUPS   Y0, (DX)(AX*4)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JB        qeloop

qedone:
	VZEROUPPER
	RET
