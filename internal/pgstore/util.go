package pgstore

import (
	"math"
	"strconv"
)

// unit returns v scaled to unit length in float64 and rounded to float32,
// as the embedded vector store normalises what it holds.
func unit(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if ss == 0 {
		return out
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// vectorText renders a vector in pgvector's text form, "[x,y,…]", with the
// shortest representation that reads back as the same float32.
func vectorText(v []float32) string {
	b := make([]byte, 0, len(v)*12+2)
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	}
	return string(append(b, ']'))
}
