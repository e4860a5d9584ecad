package vector

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// benchStore builds the 100k × 256 store of the performance target, with
// clustered vectors so the first pass meets realistic near-ties.
func benchStore(b *testing.B) (*Flat, [][]float32) {
	b.Helper()
	r := rand.New(rand.NewPCG(11, 11))
	const n, dim = 100_000, 256
	vecs := clustered(r, n, dim, 500, 0.6)
	f := mustFlat(b, dim, vecs)
	qs := make([][]float32, 200)
	for i := range qs {
		qs[i] = clustered(r, 1, dim, 1, 0.1)[0]
		if i%2 == 0 {
			qs[i] = vecs[r.IntN(n)]
		}
	}
	return f, qs
}

// BenchmarkSearch100k reports per-query latency percentiles for top-50 at
// 100k × 256 (go test -bench Search100k -run ^$ ./internal/vector/).
func BenchmarkSearch100k(b *testing.B) {
	f, qs := benchStore(b)
	var lat []time.Duration
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := f.Search(qs[i%len(qs)], 50); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
}

// BenchmarkBruteForce100k is the scalar exact baseline (all vectors, float64 sums).
func BenchmarkBruteForce100k(b *testing.B) {
	f, qs := benchStore(b)
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		bruteForce(f, qs[i%len(qs)], 50)
	}
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkReadFlat100k measures loading a 100k × 256 store from memory.
func BenchmarkReadFlat100k(b *testing.B) {
	f, _ := benchStore(b)
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	c0 := cpuTime()
	for b.Loop() {
		if _, err := ReadFlat(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
