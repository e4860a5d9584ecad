package analysis_test

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/analysis"
)

// japaneseChunks returns 500-rune chunks of real Japanese text (JSQuAD
// paragraphs concatenated), or skips when the dataset is missing.
func japaneseChunks(b *testing.B) []string {
	b.Helper()
	ds := loadBEIR(b, "jsquad-valid")
	var all []rune
	for _, doc := range ds.docs {
		all = append(all, []rune(doc)...)
	}
	var chunks []string
	for i := 0; i+500 <= len(all) && len(chunks) < 400; i += 500 {
		chunks = append(chunks, string(all[i:i+500]))
	}
	return chunks
}

// BenchmarkTerms reports Terms throughput on 500-rune Japanese chunks on one
// goroutine, as chunks/s.
func BenchmarkTerms(b *testing.B) {
	chunks := japaneseChunks(b)
	for _, bc := range []struct {
		name string
		opt  analysis.Options
	}{
		{"default", analysis.DefaultOptions()},
		{"words", analysis.Options{}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			a, err := analysis.New(bc.opt)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			n := 0
			cpu0 := cpuTime()
			for b.Loop() {
				a.Terms(chunks[n%len(chunks)])
				n++
			}
			// Wall-clock throughput, and throughput per CPU-second, which
			// stays meaningful on a shared, oversubscribed machine.
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "chunks/s")
			if cpu := cpuTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(n)/cpu.Seconds(), "chunks/cpu-s")
			}
		})
	}
}

func BenchmarkNormalize(b *testing.B) {
	s := strings.Repeat("Ｓｅｃｕｒｉｔｙ インシデント対応 ⼈ ", 20)
	for b.Loop() {
		analysis.Normalize(s)
	}
}

// cpuTime is the user+system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTermsQuery reports Terms on JSQuAD questions (short texts, the
// query side of a search), one goroutine.
func BenchmarkTermsQuery(b *testing.B) {
	ds := loadBEIR(b, "jsquad-valid")
	qs := make([]string, 0, len(ds.queries))
	for _, q := range ds.queries {
		qs = append(qs, q)
	}
	slices.Sort(qs)
	a, err := analysis.New(analysis.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		a.Terms(qs[n%len(qs)])
		n++
	}
}
