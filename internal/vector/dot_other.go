//go:build !amd64 || purego

package vector

// dotsInt8 computes out[r] = Σ_j u[j]·codes[r·stride+j] for each row of the
// block (see dotsInt8Generic); this build has no assembly kernel.
func dotsInt8(u []int16, codes []int8, stride int, out []int32) {
	dotsInt8Generic(u, codes, stride, out)
}

// exactDots sets out[i] to the exact score of row ids[i] (see Flat.exact).
func exactDots(q []float64, data []float32, ids []int32, out []float64) {
	exactDotsGeneric(q, data, ids, out)
}

// dotsF32 sets out[r] to the float32 dot product of q and row r of rows.
func dotsF32(q, rows []float32, out []float32) {
	dotsF32Generic(q, rows, out)
}

// quantEst sets est[r] = float32(dots[r])·t·scale[r] and up[r] = est[r] +
// errs[r]·k1 + k0 for every r.
func quantEst(dots []int32, scale, errs []float32, t, k1, k0 float32, est, up []float32) {
	quantEstGeneric(dots, scale, errs, t, k1, k0, est, up)
}
