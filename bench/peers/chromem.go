package main

import (
	"context"
	"fmt"
	"runtime"

	chromem "github.com/philippgille/chromem-go"
)

// chromemEngine loads the precomputed document vectors into an in-memory
// chromem-go collection and answers with QueryEmbedding: an exhaustive
// dot-product scan (vectors are normalised) spread over all CPUs, with a
// top-k heap. No embedding function runs inside chromem; both build and
// query time are pure vector-store cost.
func chromemEngine() Engine {
	return Engine{Name: "chromem-go", Kind: "vector", Build: buildChromem}
}

func buildChromem(ctx context.Context, in *Input) (Searcher, func() error, error) {
	db := chromem.NewDB()
	noEmbed := func(context.Context, string) ([]float32, error) {
		return nil, fmt.Errorf("chromem-go bench: documents must carry precomputed embeddings")
	}
	col, err := db.CreateCollection("corpus", nil, noEmbed)
	if err != nil {
		return nil, nil, fmt.Errorf("create collection: %w", err)
	}
	docs := make([]chromem.Document, len(in.Data.Corpus))
	for i, d := range in.Data.Corpus {
		docs[i] = chromem.Document{ID: d.ID, Embedding: in.DocVecs[i]}
	}
	if err := col.AddDocuments(ctx, docs, runtime.GOMAXPROCS(0)); err != nil {
		return nil, nil, fmt.Errorf("add documents: %w", err)
	}
	k := min(in.K, col.Count())
	search := func(ctx context.Context, i int) ([]Hit, error) {
		res, err := col.QueryEmbedding(ctx, in.QueryVecs[i], k, nil, nil)
		if err != nil {
			return nil, err
		}
		hits := make([]Hit, len(res))
		for j, r := range res {
			hits[j] = Hit{ID: r.ID, Score: float64(r.Similarity)}
		}
		return hits, nil
	}
	return search, nil, nil
}
