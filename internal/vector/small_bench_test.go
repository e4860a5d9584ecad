package vector

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSearchSmall times top-100 searches on stores of the peers
// benchmark's sizes (JSQuAD 1,145 and SciFact 5,183 documents, 256
// dimensions), where the fixed cost of a query, not the scan, dominates.
func BenchmarkSearchSmall(b *testing.B) {
	for _, n := range []int{1145, 5183, 20000} {
		r := rand.New(rand.NewPCG(uint64(n), 13))
		vecs := clustered(r, n, 256, max(10, n/200), 0.6)
		f := mustFlat(b, 256, vecs)
		qs := make([][]float32, 200)
		for i := range qs {
			qs[i] = clustered(r, 1, 256, 1, 0.1)[0]
			if i%2 == 0 {
				qs[i] = vecs[r.IntN(n)]
			}
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			c0 := cpuTime()
			for i := 0; b.Loop(); i++ {
				if _, err := f.Search(qs[i%len(qs)], 100); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/1000/float64(b.N), "cpu-µs/op")
			rescored := 0
			for _, q := range qs {
				_, st, _ := f.search(q, 100)
				rescored += st.rescored
			}
			b.ReportMetric(float64(rescored)/float64(len(qs)), "rescored/op")
		})
	}
}

// BenchmarkTopByHistogram times the candidate selection of a one-worker
// search over 5,183 estimates.
func BenchmarkTopByHistogram(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 5))
	est := make([]float32, 5183)
	for i := range est {
		est[i] = float32(0.3 + 0.1*r.NormFloat64())
	}
	var hist [histBuckets]int32
	out := make([]entry, 0, 1024)
	c0 := cpuTime()
	for b.Loop() {
		out = topByHistogram(est, 132, out[:0], &hist)
	}
	b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/1000/float64(b.N), "cpu-µs/op")
}
