package index

import (
	"context"
	"fmt"

	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/embed"
)

// The methods in this file are the read side of a store as retrieve.Store
// declares it: every leg takes a context and may fail, because the other
// implementation of the interface (internal/pgstore) reads a database. For
// the in-memory index they cannot fail.

// LexicalHits is Lexical behind the store interface.
func (ix *Index) LexicalHits(ctx context.Context, terms []string, n int) ([]Hit, float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	hs, ub := ix.Lexical(terms, n)
	return hs, ub, nil
}

// DenseHits is Dense behind the store interface.
func (ix *Index) DenseHits(ctx context.Context, q []float32, n int) ([]Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return ix.Dense(q, n), nil
}

// Chunks returns the chunks with the given positions, in order.
func (ix *Index) Chunks(ctx context.Context, ids []int) ([]chunk.Chunk, error) {
	out := make([]chunk.Chunk, len(ids))
	for i, id := range ids {
		out[i] = ix.Chunk(id)
	}
	return out, nil
}

// IDFs returns the BM25 inverse document frequency (see IDF) of each term.
func (ix *Index) IDFs(ctx context.Context, terms []string) (map[string]float64, error) {
	out := make(map[string]float64, len(terms))
	for _, t := range terms {
		out[t] = ix.IDF(t)
	}
	return out, nil
}

// ChunkTerms returns the analysed terms of every chunk, recomputed with the
// index's analyser; a store built from this index's chunks (pgstore) gets
// exactly the same postings.
func (ix *Index) ChunkTerms() [][]string {
	terms := make([][]string, ix.Len())
	parallelFor(ix.Len(), func(i int) { terms[i] = ix.analyzer.Terms(ix.Chunk(i).Text) })
	return terms
}

// Embedding is the fitted vector leg of a corpus: one vector per chunk and,
// for the local embedder, the model that embeds queries.
type Embedding struct {
	Vectors [][]float32
	Local   *embed.Local // nil for the openai embedder
	Info    EmbedderInfo
}

// EmbedCorpus embeds chunks whose analysed terms are given exactly as a
// build does (the local model fitted on this corpus, or the remote model),
// so that another store holding the same chunks returns the same cosines.
func EmbedCorpus(ctx context.Context, opt MemoryOptions, terms [][]string, chunks []chunk.Chunk) (Embedding, error) {
	if opt.Embedder == "" {
		opt.Embedder = "local"
	}
	vecs, local, info, err := embedChunks(ctx, opt.Embedder, opt.EmbeddingModel, opt.Remote, terms, chunks)
	return Embedding{Vectors: vecs, Local: local, Info: info}, err
}

// RemoteQueryVector embeds a query with a remote embedder: one text, one
// vector.
func RemoteQueryVector(ctx context.Context, e TextEmbedder, query string) ([]float32, error) {
	vs, err := e.EmbedTexts(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embed query: got %d vectors for 1 text", len(vs))
	}
	return vs[0], nil
}

// QueryVector embeds a query with a local model the way Index.EmbedQuery
// does (terms are the query's analysed terms).
func QueryVector(m *embed.Local, terms []string, query string) []float32 {
	return m.Embed(featuresOf(terms, query))
}
