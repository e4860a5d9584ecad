package vector

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// dotsInt8Generic is the portable kernel: out[r] = Σ_j u[j]·codes[r·stride+j]
// for every row r of the block. stride is a multiple of 32 (codeStride) and
// len(u) ≥ stride; the int32 sums cannot overflow (see quantQuery).
func dotsInt8Generic(u []int16, codes []int8, stride int, out []int32) {
	u = u[:stride]
	for r := range out {
		row := codes[r*stride : (r+1)*stride]
		var s0, s1, s2, s3 int32
		for j := 0; j+8 <= len(row); j += 8 {
			s0 += int32(u[j])*int32(row[j]) + int32(u[j+4])*int32(row[j+4])
			s1 += int32(u[j+1])*int32(row[j+1]) + int32(u[j+5])*int32(row[j+5])
			s2 += int32(u[j+2])*int32(row[j+2]) + int32(u[j+6])*int32(row[j+6])
			s3 += int32(u[j+3])*int32(row[j+3]) + int32(u[j+7])*int32(row[j+7])
		}
		out[r] = (s0 + s1) + (s2 + s3)
	}
}

// exactDotsGeneric is the portable exact kernel: out[i] is row ids[i]'s
// score summed as Flat.exact sums it (four float64 lanes by dimension mod
// 4, in order, combined as (l0+l1)+(l2+l3)).
func exactDotsGeneric(q []float64, data []float32, ids []int32, out []float64) {
	dim := len(q)
	for i, id := range ids {
		row := data[int(id)*dim : (int(id)+1)*dim]
		var s0, s1, s2, s3 float64
		j := 0
		for ; j+4 <= dim; j += 4 {
			s0 += q[j] * float64(row[j])
			s1 += q[j+1] * float64(row[j+1])
			s2 += q[j+2] * float64(row[j+2])
			s3 += q[j+3] * float64(row[j+3])
		}
		for ; j < dim; j++ {
			s0 += q[j] * float64(row[j])
		}
		out[i] = (s0 + s1) + (s2 + s3)
	}
}

// dotsF32Generic is the portable float32 first pass: one gonum SIMD dot
// product per row (a matrix–vector product), no per-row call overhead.
func dotsF32Generic(q, rows []float32, out []float32) {
	d := len(q)
	m := blas32.General{Rows: len(out), Cols: d, Stride: d, Data: rows[:len(out)*d]}
	blas32.Gemv(blas.NoTrans, 1, m, blas32.Vector{N: d, Inc: 1, Data: q}, 0, blas32.Vector{N: len(out), Inc: 1, Data: out})
}

// quantEstGeneric is the portable quantEst.
func quantEstGeneric(dots []int32, scale, errs []float32, t, k1, k0 float32, est, up []float32) {
	n := len(dots)
	scale, errs, est, up = scale[:n], errs[:n], est[:n], up[:n]
	for r, d := range dots {
		x := float32(d) * t * scale[r]
		est[r] = x
		up[r] = x + errs[r]*k1 + k0
	}
}
