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
//
// shirube-bm25's Setup creates the analyser, which loads the kagome
// dictionary once per process (about 0.5 s); its builds reuse it, so the
// index time is analysis and BM25 alone, and the setup is reported apart.
func shirubeEngines() []Engine {
	var a *analysis.Analyzer
	setup := func(context.Context) error {
		var err error
		if a, err = analysis.New(analysis.DefaultOptions()); err != nil {
			return fmt.Errorf("analyser: %w", err)
		}
		return nil
	}
	bm25Build := func(ctx context.Context, in *Input) (Searcher, func() error, error) {
		if a == nil {
			return nil, nil, fmt.Errorf("analyser not set up")
		}
		return buildShirubeBM25(ctx, in, a)
	}
	return []Engine{
		{Name: "shirube-bm25", Kind: "lexical", Baseline: "bleve-bm25", Setup: setup, SetupNote: "kagome dictionary load (once per process)", Build: bm25Build},
		{Name: "shirube-vector", Kind: "vector", Baseline: "chromem-go", Build: buildShirubeVector},
	}
}

func buildShirubeBM25(ctx context.Context, in *Input, a *analysis.Analyzer) (Searcher, func() error, error) {
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
