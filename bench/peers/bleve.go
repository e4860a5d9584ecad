package main

import (
	"context"
	"fmt"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"
)

// bleveEngine indexes title+text into one field of an in-memory scorch
// index with BM25 scoring (k1 1.2, b 0.75). Japanese uses the CJK analyzer
// (Unicode tokens, width folding, lower-casing, character bigrams); English
// uses the "en" analyzer (possessives, lower-casing, stop words, Porter).
//
// Two details matter for a fair comparison:
//   - BM25 needs scorch: the upsidedown store behind bleve.NewMemOnly has no
//     field statistics and silently falls back to TF-IDF. Scorch with an
//     empty path is memory-only.
//   - Everything goes in one batch, so the index is one segment; in-memory
//     scorch has no merger, and many small batches would leave many
//     segments and slow every query.
//
// bleve estimates BM25's average document length as distinct terms in the
// field ÷ documents, not mean tokens per document; that is its behaviour and
// is measured as is.
func bleveEngine() Engine {
	return Engine{Name: "bleve-bm25", Kind: "lexical", Build: buildBleve}
}

func buildBleve(ctx context.Context, in *Input) (Searcher, func() error, error) {
	analyzer := en.AnalyzerName
	if in.Lang == "ja" {
		analyzer = cjk.AnalyzerName
	}
	body := bleve.NewTextFieldMapping()
	body.Analyzer = analyzer
	body.Store = false
	body.IncludeInAll = false
	body.IncludeTermVectors = false
	body.DocValues = false
	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt("body", body)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.DefaultAnalyzer = analyzer
	m.ScoringModel = bindex.BM25Scoring

	idx, err := bleve.NewUsing("", m, scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("create in-memory scorch index: %w", err)
	}
	batch := idx.NewBatch()
	for i, d := range in.Data.Corpus {
		if err := batch.Index(d.ID, map[string]any{"body": in.DocText(i)}); err != nil {
			idx.Close()
			return nil, nil, fmt.Errorf("index document %s: %w", d.ID, err)
		}
	}
	if err := ctx.Err(); err != nil {
		idx.Close()
		return nil, nil, err
	}
	if err := idx.Batch(batch); err != nil {
		idx.Close()
		return nil, nil, fmt.Errorf("index batch: %w", err)
	}

	search := func(ctx context.Context, i int) ([]Hit, error) {
		q := bleve.NewMatchQuery(in.Queries[i].Text)
		q.SetField("body")
		req := bleve.NewSearchRequestOptions(q, in.K, 0, false)
		res, err := idx.SearchInContext(ctx, req)
		if err != nil {
			return nil, err
		}
		hits := make([]Hit, len(res.Hits))
		for j, h := range res.Hits {
			hits[j] = Hit{ID: h.ID, Score: h.Score}
		}
		return hits, nil
	}
	return search, idx.Close, nil
}
