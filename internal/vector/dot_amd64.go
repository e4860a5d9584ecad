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
