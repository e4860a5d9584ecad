package bm25

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"
)

// Synthetic corpus shaped like 500-rune Japanese chunks analysed with words
// plus character bigrams: ~330 terms per chunk drawn from a Zipf
// distribution over a 300,000-term vocabulary.
const (
	synthDocs    = 100_000
	synthVocab   = 300_000
	synthDocLen  = 330
	synthQueries = 500
	synthQLen    = 20 // a 20-character question gives ~4 words + ~16 bigrams
)

func synthTerm(i uint64) string { return fmt.Sprintf("t%x", i) }

func synthIndex(b *testing.B) (*Index, [][]string) {
	b.Helper()
	r := rand.New(rand.NewPCG(7, 8))
	z := rand.NewZipf(r, 1.07, 2, synthVocab-1)
	names := make([]string, synthVocab)
	for i := range names {
		names[i] = synthTerm(uint64(i))
	}
	bd := NewBuilder(DefaultParams())
	doc := make([]string, synthDocLen)
	for range synthDocs {
		for i := range doc {
			doc[i] = names[z.Uint64()]
		}
		bd.Add(doc)
	}
	qs := make([][]string, synthQueries)
	for i := range qs {
		q := make([]string, synthQLen)
		for j := range q {
			q[j] = names[z.Uint64()]
		}
		qs[i] = q
	}
	return bd.Build(), qs
}

// BenchmarkIndex100k builds a 100k-chunk index once and reports its encoded
// size, load time (ReadIndex from memory) and query latency percentiles.
// Figures are reported, not asserted.
func BenchmarkIndex100k(b *testing.B) {
	if testing.Short() {
		b.Skip("large synthetic index skipped in -short mode")
	}
	ix, qs := synthIndex(b)
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	var postings int
	for _, df := range ix.df {
		postings += int(df)
	}
	b.Logf("postings %d, vocabulary %d, encoded %.1f MB", postings, ix.VocabularySize(), float64(buf.Len())/1e6)

	b.Run("load", func(b *testing.B) {
		b.SetBytes(int64(buf.Len()))
		cpu0, n := cpuTime(), 0
		defer func() {
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(n), "cpu-ms/op")
		}()
		for b.Loop() {
			n++
			if _, err := ReadIndex(bytes.NewReader(buf.Bytes())); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("search", func(b *testing.B) {
		var durs []time.Duration
		var scanned int
		for _, q := range qs {
			for _, qt := range ix.resolve(q) {
				scanned += int(ix.df[qt.id])
			}
		}
		i := 0
		cpu0 := cpuTime()
		for b.Loop() {
			t0 := time.Now()
			ix.Search(qs[i%len(qs)], 50)
			durs = append(durs, time.Since(t0))
			i++
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(i), "cpu-ms/op")
		b.ReportMetric(float64(scanned)/float64(len(qs)), "postings/query")
		slices.Sort(durs)
		pct := func(p float64) float64 {
			return float64(durs[int(p*float64(len(durs)-1))].Microseconds()) / 1000
		}
		b.ReportMetric(pct(0.50), "p50-ms")
		b.ReportMetric(pct(0.95), "p95-ms")
	})
}

// cpuTime is the user+system CPU time of the process so far: on a shared,
// oversubscribed machine it is steadier than wall-clock time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
