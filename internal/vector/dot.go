package vector

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
