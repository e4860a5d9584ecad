//go:build !amd64 || purego

package vector

// dotsInt8 computes out[r] = Σ_j u[j]·codes[r·stride+j] for each row of the
// block (see dotsInt8Generic); this build has no assembly kernel.
func dotsInt8(u []int16, codes []int8, stride int, out []int32) {
	dotsInt8Generic(u, codes, stride, out)
}
