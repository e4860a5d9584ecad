// Package retrieve answers a query with ranked chunks by fusing the BM25 and
// vector legs of an index (seed 002 §4.3).
package retrieve

import "strings"

// Result is one retrieved chunk with its scores.
//
// Score is the fused score used for ranking. BM25Score and VectorScore are
// each leg's score normalised to 0–1 within this query (min-max), so the top
// hit of a leg is always 1.0. EvidenceScore is absolute: comparable across
// queries (BM25 relative to the query's own upper bound, blended with the raw
// cosine), and is what the insufficient-evidence guard thresholds.
type Result struct {
	ChunkID       string  `json:"chunk_id"`
	File          string  `json:"file"`
	Source        string  `json:"source"`
	Page          int     `json:"page"`
	Heading       string  `json:"heading"`
	Text          string  `json:"text"`
	UpdatedAt     string  `json:"updated_at"`
	Score         float64 `json:"score"`
	BM25Score     float64 `json:"bm25_score"`
	VectorScore   float64 `json:"vector_score"`
	EvidenceScore float64 `json:"evidence_score"`
}

// Section returns the innermost heading of the chunk's heading path (「2.8
// 供給ソフトウェア」 of 「ガイド > 2. 用語 > 2.8 供給ソフトウェア」), "" before the
// first heading.
func (r Result) Section() string {
	i := strings.LastIndex(r.Heading, " > ")
	if i < 0 {
		return r.Heading
	}
	return r.Heading[i+len(" > "):]
}
