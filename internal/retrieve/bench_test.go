package retrieve

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/index"
)

// BenchmarkIndexQueries measures searches over a saved index, for query
// speed at scale (docs/BENCHMARKS.md, "Query speed at scale"):
//
//	SHIRUBE_BENCH_INDEX=/tmp/law/idx go test -run '^$' -bench IndexQueries -benchtime 1x ./internal/retrieve/
//
// Queries are drawn from the corpus — one sentence (cut to 40 characters)
// of every len/SHIRUBE_BENCH_QUERIES-th chunk, default 500 — and each is
// timed as the CLI runs it (k = 4, the default weight chosen per query),
// after one untimed pass. The legs are timed separately. Without the
// variable the benchmark is skipped.
func BenchmarkIndexQueries(b *testing.B) {
	dir := os.Getenv("SHIRUBE_BENCH_INDEX")
	if dir == "" {
		b.Skip("SHIRUBE_BENCH_INDEX is not set")
	}
	ctx := context.Background()
	ix, err := index.Open(ctx, dir, index.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	qs := benchQueries(ix, 500)
	s := New(ix)
	opt := Options{K: 4, BM25Weight: 0.6, AutoWeight: true}
	for _, q := range qs { // warm-up
		if _, _, err := s.Search(ctx, q, opt); err != nil {
			b.Fatal(err)
		}
	}
	var hybrid, lex, dense []time.Duration
	b.ResetTimer()
	for b.Loop() {
		for _, q := range qs {
			t0 := time.Now()
			if _, _, err := s.Search(ctx, q, opt); err != nil {
				b.Fatal(err)
			}
			hybrid = append(hybrid, time.Since(t0))
			terms := ix.Terms(q)
			t0 = time.Now()
			ix.LexicalHits(ctx, terms, 100)
			lex = append(lex, time.Since(t0))
			v, err := ix.EmbedQuery(ctx, q, terms)
			if err != nil {
				b.Fatal(err)
			}
			t0 = time.Now()
			ix.DenseHits(ctx, v, 100)
			dense = append(dense, time.Since(t0))
		}
	}
	b.ReportMetric(float64(ix.Len()), "chunks")
	for _, m := range []struct {
		name string
		lat  []time.Duration
	}{{"hybrid", hybrid}, {"bm25", lex}, {"vector", dense}} {
		slices.Sort(m.lat)
		b.ReportMetric(float64(m.lat[len(m.lat)/2].Microseconds())/1000, m.name+"-p50-ms")
		b.ReportMetric(float64(m.lat[len(m.lat)*95/100].Microseconds())/1000, m.name+"-p95-ms")
	}
}

// benchQueries draws about n queries from the index's chunks: the longest
// sentence of every len/n-th chunk, cut to 40 characters, so a query is a
// piece of the corpus's language rather than a chunk verbatim.
func benchQueries(ix *index.Index, n int) []string {
	step := max(1, ix.Len()/n)
	var qs []string
	for i := step / 2; i < ix.Len() && len(qs) < n; i += step {
		best := ""
		for _, line := range strings.Split(ix.Chunk(i).Text, "\n") {
			for _, s := range analysis.Sentences(line) {
				if len([]rune(s)) > len([]rune(best)) {
					best = s
				}
			}
		}
		if r := []rune(strings.TrimSpace(best)); len(r) > 40 {
			best = string(r[:40])
		}
		if strings.TrimSpace(best) != "" && !strings.HasPrefix(best, "#") {
			qs = append(qs, best)
		}
	}
	return qs
}

// BenchmarkIndexHybrid times only the default hybrid search (k = 4,
// evidence scores) over a saved index, one query per op, for profiling
// the work a search does besides its two legs:
//
//	SHIRUBE_BENCH_INDEX=/tmp/law/idx go test -run '^$' -bench IndexHybrid -cpuprofile /tmp/cpu.prof ./internal/retrieve/
func BenchmarkIndexHybrid(b *testing.B) {
	dir := os.Getenv("SHIRUBE_BENCH_INDEX")
	if dir == "" {
		b.Skip("SHIRUBE_BENCH_INDEX is not set")
	}
	ctx := context.Background()
	ix, err := index.Open(ctx, dir, index.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	qs := benchQueries(ix, 500)
	s := New(ix)
	opt := Options{K: 4, BM25Weight: 0.6, AutoWeight: true}
	for _, q := range qs[:50] { // warm-up (builds the int8 codes)
		if _, _, err := s.Search(ctx, q, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, _, err := s.Search(ctx, qs[i%len(qs)], opt); err != nil {
			b.Fatal(err)
		}
	}
}
