package main

import (
	"context"
	"fmt"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/bm25"
	"github.com/shirube/shirube/internal/vector"
)

// shirubeEngines lists shirube's engines so that one run reports them next
// to the peers, with ratio rows.
//
// shirube-bm25 is shirube's lexical leg (kagome + Snowball + character
// bigrams, Okapi BM25) on the same title+text documents bleve indexes;
// shirube-vector is shirube's exact flat vector store searched with the same
// precomputed vectors chromem-go gets, so that ratio measures search speed
// alone.
func shirubeEngines() []Engine {
	return []Engine{
		{Name: "shirube-bm25", Kind: "lexical", Baseline: "bleve-bm25", Build: buildShirubeBM25},
		{Name: "shirube-vector", Kind: "vector", Baseline: "chromem-go", Build: buildShirubeVector},
	}
}

func buildShirubeBM25(ctx context.Context, in *Input) (Searcher, func() error, error) {
	a, err := analysis.New(analysis.DefaultOptions())
	if err != nil {
		return nil, nil, fmt.Errorf("analyser: %w", err)
	}
	terms := make([][]string, len(in.Data.Corpus))
	done := make(chan struct{})
	const workers = 2
	for w := 0; w < workers; w++ {
		go func(w int) {
			for i := w; i < len(terms); i += workers {
				terms[i] = a.Terms(in.DocText(i))
			}
			done <- struct{}{}
		}(w)
	}
	for w := 0; w < workers; w++ {
		<-done
	}
	b := bm25.NewBuilder(bm25.DefaultParams())
	for _, t := range terms {
		b.Add(t)
	}
	ix := b.Build()
	search := func(ctx context.Context, i int) ([]Hit, error) {
		hs := ix.Search(a.Terms(in.Queries[i].Text), in.K)
		out := make([]Hit, len(hs))
		for j, h := range hs {
			out[j] = Hit{ID: in.Data.Corpus[h.Doc].ID, Score: h.Score}
		}
		return out, nil
	}
	return search, nil, nil
}

func buildShirubeVector(ctx context.Context, in *Input) (Searcher, func() error, error) {
	f, err := vector.NewFlat(in.Dims)
	if err != nil {
		return nil, nil, err
	}
	for _, v := range in.DocVecs {
		if _, err := f.Add(v); err != nil {
			return nil, nil, err
		}
	}
	search := func(ctx context.Context, i int) ([]Hit, error) {
		hs, err := f.Search(in.QueryVecs[i], in.K)
		if err != nil {
			return nil, err
		}
		out := make([]Hit, len(hs))
		for j, h := range hs {
			out[j] = Hit{ID: in.Data.Corpus[h.ID].ID, Score: h.Score}
		}
		return out, nil
	}
	return search, nil, nil
}
