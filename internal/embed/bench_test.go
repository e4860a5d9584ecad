package embed

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// benchLocal fits and embeds n documents built from JSQuAD paragraphs
// (cycled, with a per-copy feature so copies differ) and reports throughput
// in documents per wall second and per CPU second.
//
//	go test -run '^$' -bench Local -benchtime 1x ./internal/embed/
func benchLocal(b *testing.B, n int, feat featurizer, opt LocalOptions) {
	d := loadDataset(b, "jsquad-valid")
	base := make([][]string, len(d.texts))
	for i, s := range d.texts {
		base[i] = feat(s)
	}
	docs := make([][]string, n)
	for i := range docs {
		docs[i] = append(base[i%len(base)][:len(base[i%len(base)]):len(base[i%len(base)])], fmt.Sprint("copy", i/len(base)))
	}
	ctx := context.Background()
	b.ResetTimer()
	var fitWall, embWall, fitCPU, embCPU time.Duration
	for b.Loop() {
		c0, t0 := cpuTime(), time.Now()
		m, err := FitLocal(ctx, docs, opt)
		if err != nil {
			b.Fatal(err)
		}
		c1, t1 := cpuTime(), time.Now()
		if _, err := m.EmbedAll(ctx, docs); err != nil {
			b.Fatal(err)
		}
		fitWall += t1.Sub(t0)
		embWall += time.Since(t1)
		fitCPU += c1 - c0
		embCPU += cpuTime() - c1
	}
	per := func(d time.Duration) float64 { return float64(n) * float64(b.N) / d.Seconds() }
	b.ReportMetric(per(fitWall+embWall), "docs/s")
	b.ReportMetric(per(fitCPU+embCPU), "docs/cpu-s")
	b.ReportMetric(fitCPU.Seconds()/float64(b.N), "fit-cpu-s")
	b.ReportMetric(embCPU.Seconds()/float64(b.N), "embed-cpu-s")
}

func BenchmarkLocalJSQuADBigrams(b *testing.B) {
	benchLocal(b, 1145, jaBigrams, LocalOptions{})
}

func BenchmarkLocalJSQuADBiTrigrams(b *testing.B) {
	benchLocal(b, 1145, jaFeatures, LocalOptions{})
}

func BenchmarkLocal100kBigrams(b *testing.B) {
	benchLocal(b, 100_000, jaBigrams, LocalOptions{})
}
