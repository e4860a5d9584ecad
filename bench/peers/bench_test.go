package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/shirube/shirube/internal/eval/beir"
)

// BenchmarkVectorEngines times each vector engine's Searcher alone (not
// interleaved) on the peers benchmark's own vectors, for profiling:
//
//	go test -run '^$' -bench VectorEngines -benchmem -cpuprofile /tmp/cpu.prof .
//
// It runs on the datasets found under ../../../shared/datasets and skips
// the others.
func BenchmarkVectorEngines(b *testing.B) {
	ctx := context.Background()
	for _, ds := range []string{"jsquad-valid", "scifact"} {
		dir := filepath.Join("..", "..", "..", "shared", "datasets", ds)
		if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl")); err != nil {
			continue
		}
		data, err := beir.LoadSplit(ctx, dir, "test")
		if err != nil {
			b.Fatal(err)
		}
		in := &Input{Data: data, Queries: data.EvalQueries(), K: 100, Dims: embedDims}
		in.DocVecs = make([][]float32, len(data.Corpus))
		for i := range data.Corpus {
			in.DocVecs[i] = hashEmbed(in.DocText(i), embedDims)
		}
		in.QueryVecs = make([][]float32, len(in.Queries))
		for i, q := range in.Queries {
			in.QueryVecs[i] = hashEmbed(q.Text, embedDims)
		}
		for _, e := range []Engine{chromemEngine(), shirubeEngines()[1]} {
			search, _, err := e.Build(ctx, in)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(ds+"/"+e.Name, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, err := search(ctx, i%len(in.Queries)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
