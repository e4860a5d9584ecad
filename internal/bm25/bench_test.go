package bm25

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
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
	return synthCorpus(b, synthDocs, synthVocab)
}

// synthCorpus builds docs synthetic chunks over a vocabulary of vocab terms
// and draws synthQueries queries from the same distribution.
func synthCorpus(b *testing.B, docs, vocab int) (*Index, [][]string) {
	b.Helper()
	r := rand.New(rand.NewPCG(7, 8))
	z := rand.NewZipf(r, 1.07, 2, uint64(vocab-1))
	names := make([]string, vocab)
	for i := range names {
		names[i] = synthTerm(uint64(i))
	}
	bd := NewBuilder(DefaultParams())
	doc := make([]string, synthDocLen)
	for range docs {
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
	for _, n := range []int{10, 50, 100} {
		b.Run(fmt.Sprintf("search-n%d", n), func(b *testing.B) { benchSearch(b, ix, qs, n, auto) })
		b.Run(fmt.Sprintf("exhaustive-n%d", n), func(b *testing.B) { benchSearch(b, ix, qs, n, exhaustive) })
	}
}

// BenchmarkSearchSmall is the fixed per-query cost on a corpus the size of
// JSQuAD's (1,145 chunks), at the retrieval's 100 candidates.
func BenchmarkSearchSmall(b *testing.B) {
	ix, qs := synthCorpus(b, 1145, 30_000)
	b.ReportAllocs()
	b.Run("search", func(b *testing.B) { benchSearch(b, ix, qs, 100, auto) })
	b.Run("exhaustive", func(b *testing.B) { benchSearch(b, ix, qs, 100, exhaustive) })
	b.Run("pruned", func(b *testing.B) { benchSearch(b, ix, qs, 100, pruned) })
}

// BenchmarkReal times Search on a real index: BM25_BENCH lists prefixes,
// comma-separated, of a written index (PREFIX.bin) and its analysed queries
// (PREFIX.queries: one query a line, terms separated by tabs). Skipped when
// unset.
func BenchmarkReal(b *testing.B) {
	spec := os.Getenv("BM25_BENCH")
	if spec == "" {
		b.Skip("BM25_BENCH not set")
	}
	for _, prefix := range strings.Split(spec, ",") {
		data, err := os.ReadFile(prefix + ".bin")
		if err != nil {
			b.Fatal(err)
		}
		ix, err := Decode(data)
		if err != nil {
			b.Fatal(err)
		}
		text, err := os.ReadFile(prefix + ".queries")
		if err != nil {
			b.Fatal(err)
		}
		var qs [][]string
		for _, l := range strings.Split(strings.TrimSpace(string(text)), "\n") {
			qs = append(qs, strings.Split(l, "\t"))
		}
		name := filepath.Base(prefix)
		for _, n := range []int{10, 100} {
			for _, how := range []struct {
				name string
				how  int
			}{{"search", auto}, {"exhaustive", exhaustive}, {"pruned", pruned}} {
				b.Run(fmt.Sprintf("%s/%s-n%d", name, how.name, n), func(b *testing.B) {
					b.ReportAllocs()
					benchSearch(b, ix, qs, n, how.how)
				})
			}
		}
	}
}

// benchSearch times Search over qs round-robin and reports CPU time, p50
// and p95 per query.
func benchSearch(b *testing.B, ix *Index, qs [][]string, n, how int) {
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
		ix.search(qs[i%len(qs)], n, how)
		durs = append(durs, time.Since(t0))
		i++
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/1e6/float64(i), "cpu-ms/op")
	b.ReportMetric(float64(scanned)/float64(len(qs)), "postings/query")
	slices.Sort(durs)
	pct := func(p float64) float64 {
		return float64(durs[int(p*float64(len(durs)-1))].Nanoseconds()) / 1e6
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
}

// BenchmarkRealCPU measures each query of BM25_BENCH (see BenchmarkReal)
// by the CPU time of its thread, the minimum of 3 rounds of 2 searches, for
// the exhaustive and the pruned search interleaved: on a shared machine this
// is steadier than wall-clock percentiles. Run it with -benchtime 1x. Reported: p50, p95 and max over
// the queries, in CPU milliseconds per search.
func BenchmarkRealCPU(b *testing.B) {
	spec := os.Getenv("BM25_BENCH")
	if spec == "" {
		b.Skip("BM25_BENCH not set")
	}
	for _, prefix := range strings.Split(spec, ",") {
		data, err := os.ReadFile(prefix + ".bin")
		if err != nil {
			b.Fatal(err)
		}
		ix, err := Decode(data)
		if err != nil {
			b.Fatal(err)
		}
		text, err := os.ReadFile(prefix + ".queries")
		if err != nil {
			b.Fatal(err)
		}
		var qs [][]string
		for _, l := range strings.Split(strings.TrimSpace(string(text)), "\n") {
			qs = append(qs, strings.Split(l, "\t"))
		}
		for _, n := range []int{10, 100} {
			b.Run(fmt.Sprintf("%s/n%d", filepath.Base(prefix), n), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var per [2][]float64
				for b.Loop() {
					per = [2][]float64{}
					for _, q := range qs {
						best := [2]time.Duration{time.Hour, time.Hour}
						for range 3 {
							for k, how := range []int{exhaustive, pruned} {
								c0 := threadCPU()
								for range 2 {
									ix.search(q, n, how)
								}
								best[k] = min(best[k], (threadCPU()-c0)/2)
							}
						}
						for k := range best {
							per[k] = append(per[k], float64(best[k].Nanoseconds())/1e6)
						}
					}
				}
				for k, name := range []string{"exhaustive", "pruned"} {
					slices.Sort(per[k])
					x := per[k]
					b.ReportMetric(x[len(x)/2], name+"-p50-ms")
					b.ReportMetric(x[int(0.95*float64(len(x)-1))], name+"-p95-ms")
					b.ReportMetric(x[len(x)-1], name+"-max-ms")
				}
			})
		}
	}
}

// threadCPU is the CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
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
