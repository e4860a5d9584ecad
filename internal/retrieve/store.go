package retrieve

import (
	"context"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/index"
)

// Store is the index a Searcher reads. Two implementations exist: the
// embedded index (*index.Index, the .shirube/ directory loaded in memory)
// and the PostgreSQL store (*pgstore.Index). Both return the same hits and
// scores for the same chunks; fusion, evidence and everything above it do
// not know which one they read.
//
// Search calls LexicalHits and EmbedQuery/DenseHits from two goroutines at
// once (the legs run side by side), so a Store must be safe for concurrent
// use.
//
// Hit.Chunk is the store's identifier of a chunk (a position for the
// embedded index, a row id for PostgreSQL); equal scores are ordered by it.
type Store interface {
	Meta() index.Meta
	Len() int
	Analyzer() *analysis.Analyzer
	// Terms analyses text as the store's chunks were analysed.
	Terms(text string) []string
	// Pages lists every page identity, sorted, once each.
	Pages() []string
	// HasVectors reports whether queries can be embedded.
	HasVectors() bool
	EmbedQuery(ctx context.Context, query string, terms []string) ([]float32, error)
	// LexicalHits runs BM25 for analysed terms: up to n hits, best first,
	// and the query's upper bound.
	LexicalHits(ctx context.Context, terms []string, n int) ([]index.Hit, float64, error)
	// DenseHits returns up to n hits by cosine, best first.
	DenseHits(ctx context.Context, q []float32, n int) ([]index.Hit, error)
	// Chunks returns the chunks with the given identifiers, in order.
	Chunks(ctx context.Context, ids []int) ([]chunk.Chunk, error)
	// IDFs returns the BM25 idf of each term (a term no chunk contains gets
	// the largest value).
	IDFs(ctx context.Context, terms []string) (map[string]float64, error)
}
