//go:build amd64 && !purego

package vector

import "golang.org/x/sys/cpu"

// dotsInt8 computes out[r] = Σ_j u[j]·codes[r·stride+j] for each row of the
// block: the AVX-512 or AVX2 kernel when the CPU has it, else the portable
// one. All give the same integers.
func dotsInt8(u []int16, codes []int8, stride int, out []int32) {
	if len(out) == 0 {
		return
	}
	// Bounds the assembly relies on.
	_ = u[stride-1]
	_ = codes[len(out)*stride-1]
	switch {
	case stride%32 != 0:
		dotsInt8Generic(u, codes, stride, out)
	case cpu.X86.HasAVX512BW && cpu.X86.HasAVX512F:
		dotsInt8AVX512(&u[0], &codes[0], stride, len(out), &out[0])
	case cpu.X86.HasAVX2:
		dotsInt8AVX2(&u[0], &codes[0], stride, len(out), &out[0])
	default:
		dotsInt8Generic(u, codes, stride, out)
	}
}

// dotsInt8AVX2 sign-extends 32 codes at a time to int16 (VPMOVSXBW),
// multiplies them with the query and adds adjacent pairs (VPMADDWD) into
// two int32 accumulators, then sums the lanes of each row.
//
//go:noescape
func dotsInt8AVX2(u *int16, codes *int8, stride, rows int, out *int32)

// dotsInt8AVX512 is dotsInt8AVX2 with 512-bit registers: 64 codes a step.
//
//go:noescape
func dotsInt8AVX512(u *int16, codes *int8, stride, rows int, out *int32)

// exactDots sets out[i] to the exact score of row ids[i] (see Flat.exact)
// for the query widened to float64: the AVX2 kernel when the CPU has it
// and the dimension is a multiple of 4, else the portable loop. Both give
// the same float64 values, bit for bit.
func exactDots(q []float64, data []float32, ids []int32, out []float64) {
	dim := len(q)
	if len(ids) == 0 {
		return
	}
	if dim%4 != 0 || !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		exactDotsGeneric(q, data, ids, out)
		return
	}
	// Bounds the assembly relies on.
	_ = out[len(ids)-1]
	for _, id := range ids {
		_ = data[(int(id)+1)*dim-1]
	}
	exactDotsAVX2(&q[0], &data[0], dim, &ids[0], len(ids), &out[0])
}

// dotsF32 sets out[r] to the float32 dot product of q and row r of rows
// (len(out) rows of len(q) values), in any summation order: the AVX-512 or
// AVX2 kernel when the CPU has it and the dimension suits, else gonum's.
func dotsF32(q, rows []float32, out []float32) {
	dim := len(q)
	if len(out) == 0 {
		return
	}
	_ = rows[len(out)*dim-1]
	switch {
	case dim%16 == 0 && cpu.X86.HasAVX512F:
		dotsF32AVX512(&q[0], &rows[0], dim, len(out), &out[0])
	case dim%8 == 0 && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		dotsF32AVX2(&q[0], &rows[0], dim, len(out), &out[0])
	default:
		dotsF32Generic(q, rows, out)
	}
}

//go:noescape
func exactDotsAVX2(q *float64, data *float32, dim int, ids *int32, n int, out *float64)

//go:noescape
func dotsF32AVX512(q *float32, rows *float32, dim, n int, out *float32)

//go:noescape
func dotsF32AVX2(q *float32, rows *float32, dim, n int, out *float32)

// quantEst sets est[r] = float32(dots[r])·t·scale[r] and up[r] = est[r] +
// errs[r]·k1 + k0 for every r, with the AVX2 kernel for whole groups of
// eight when the CPU has it; both ways round identically.
func quantEst(dots []int32, scale, errs []float32, t, k1, k0 float32, est, up []float32) {
	n := len(dots)
	scale, errs, est, up = scale[:n], errs[:n], est[:n], up[:n]
	done := 0
	if cpu.X86.HasAVX2 && n >= 8 {
		done = n &^ 7
		quantEstAVX2(&dots[0], &scale[0], &errs[0], done, t, k1, k0, &est[0], &up[0])
	}
	quantEstGeneric(dots[done:], scale[done:], errs[done:], t, k1, k0, est[done:], up[done:])
}

//go:noescape
func quantEstAVX2(dots *int32, scale, errs *float32, n int, t, k1, k0 float32, est, up *float32)
