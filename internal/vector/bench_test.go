package vector

import (
	"bufio"
	"bytes"
	"math"
	"math/rand/v2"
	"os"
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

// BenchmarkSearch100k reports per-query latency percentiles for top-100 at
// 100k × 256, with the int8 first pass and with the float32 one
// (go test -bench Search100k -run ^$ ./internal/vector/). rescored/op is
// how many rows beyond the candidate pool the exact pass re-scored, and
// pass1-recall@100 the share of the exact top 100 already in the first
// pass's pool (the result itself is always exact).
func BenchmarkSearch100k(b *testing.B) {
	f, qs := benchStore(b)
	benchPaths(b, f, qs)
}

// BenchmarkSearchFile is BenchmarkSearch100k over a saved store, the
// vectors.bin of an index generation (skipped without the variable):
//
//	SHIRUBE_BENCH_VECTORS=/tmp/law/idx/gen-000001/vectors.bin go test -run '^$' -bench SearchFile ./internal/vector/
//
// Each query is the sum of two random stored vectors, so it is near real
// rows without being one.
func BenchmarkSearchFile(b *testing.B) {
	path := os.Getenv("SHIRUBE_BENCH_VECTORS")
	if path == "" {
		b.Skip("SHIRUBE_BENCH_VECTORS is not set")
	}
	fh, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	f, err := ReadFlat(bufio.NewReaderSize(fh, 1<<20))
	if err != nil {
		b.Fatal(err)
	}
	f.ensureCodes()
	r := rand.New(rand.NewPCG(12, 12))
	qs := make([][]float32, 200)
	for i := range qs {
		a, c := f.Vector(r.IntN(f.n)), f.Vector(r.IntN(f.n))
		for j := range a {
			a[j] += c[j]
		}
		qs[i] = a
	}
	b.ReportMetric(float64(f.n), "rows")
	benchPaths(b, f, qs)
}

// benchPaths times top-100 searches with each first pass.
func benchPaths(b *testing.B, f *Flat, qs [][]float32) {
	for _, path := range []struct {
		name string
		min  int
	}{{"int8", 0}, {"float32", math.MaxInt}} {
		b.Run(path.name, func(b *testing.B) {
			f.quantMin = path.min
			var lat []time.Duration
			rescored, found := 0, 0
			c0 := cpuTime()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				hits, st, err := f.search(qs[i%len(qs)], 100)
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				rescored += st.rescored
				found += poolRecall(hits, st.pool)
			}
			b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
			b.ReportMetric(float64(rescored)/float64(len(lat)), "rescored/op")
			b.ReportMetric(float64(found)/float64(100*len(lat)), "pass1-recall@100")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}

// poolRecall counts the hits found in the first pass's pool.
func poolRecall(hits []Hit, pool []int32) int {
	in := make(map[int32]bool, len(pool))
	for _, id := range pool {
		in[id] = true
	}
	n := 0
	for _, h := range hits {
		if in[int32(h.ID)] {
			n++
		}
	}
	return n
}

// BenchmarkScan100k compares the first-pass kernels alone over 100k rows of
// 256 dimensions: the int8 kernels (1 byte per dimension) and gonum's
// float32 matrix–vector product (4 bytes). SetBytes is the data scanned.
func BenchmarkScan100k(b *testing.B) {
	f, qs := benchStore(b)
	q, _ := normalised(qs[0])
	u := make([]int16, f.codes.stride)
	quantQuery(q, u, f.codes.maxNorm)
	out := make([]int32, f.n)
	for name, k := range kernels() {
		b.Run("int8-"+name, func(b *testing.B) {
			b.SetBytes(int64(len(f.codes.data)))
			for b.Loop() {
				for lo := 0; lo < f.n; lo += scanBlock {
					hi := min(lo+scanBlock, f.n)
					k(u, f.codes.data[lo*f.codes.stride:hi*f.codes.stride], f.codes.stride, out[lo:hi])
				}
			}
		})
	}
	b.Run("float32-gonum", func(b *testing.B) {
		b.SetBytes(int64(4 * len(f.data)))
		approx := make([]float32, f.n)
		for b.Loop() {
			dotsF32Generic(q, f.data, approx)
		}
	})
	b.Run("float32-dispatch", func(b *testing.B) {
		b.SetBytes(int64(4 * len(f.data)))
		approx := make([]float32, f.n)
		for b.Loop() {
			dotsF32(q, f.data, approx)
		}
	})
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
