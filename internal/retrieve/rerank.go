package retrieve

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/analysis"
)

// Reranker scores one passage of a search's results from its re-ranking
// features (RerankFeatureNames): internal/reader's learned re-ranker,
// trained on JaQuAD by `shirube train`.
type Reranker interface {
	Score(x []float64) float64
}

// RerankDepth is how many of a search's best results the re-ranker
// reorders.
const RerankDepth = 20

// RerankFeatureNames names the columns of a passage's re-ranking features,
// in order. A model trained on other columns is refused at load.
func RerankFeatureNames() []string {
	return []string{
		"score",         // the fused score
		"bm25",          // the BM25 leg's score (min-max within the query)
		"vector",        // the vector leg's score (min-max within the query)
		"log_rank",      // log(1 + rank) in the search's order
		"score_gap",     // fused score below the best result's
		"cover",         // IDF-weighted share of the question's words anywhere in the passage
		"cover_window",  // the best two adjacent sentences' share (heading half, asked kind missing scaled down): proximity
		"cover_heading", // share held by the passage's heading (the title)
		"bigram",        // share of the question's character bigrams in the passage
		"kind_present",  // the question asks for a kind of fact and the passage holds one
		"kind_missing",  // the question asks for a kind of fact and the passage holds none
		"log_runes",     // length
		"cover_gap",     // cover_window below the results' best
		"bigram_gap",    // bigram below the results' best
		"cover_rank",    // log(1 + rank) by cover_window
	}
}

// RerankFeatures returns the re-ranking features of every result for
// query, one row per result (see RerankFeatureNames).
func (s *Searcher) RerankFeatures(ctx context.Context, query string, results []Result) ([][]float64, error) {
	terms := s.ix.Terms(query)
	idf, err := s.ix.IDFs(ctx, terms)
	if err != nil {
		return nil, fmt.Errorf("read term statistics: %w", err)
	}
	qtype := analysis.QuestionType(query)
	kind := qtype.Kind != analysis.KindNone && qtype.Kind != analysis.KindProcedure
	grams := analysis.CharBigrams(analysis.Normalize(query))
	rows := make([][]float64, len(results))
	top := 0.0
	if len(results) > 0 {
		top = results[0].Score
	}
	for i, r := range results {
		norm := analysis.Normalize(r.Text)
		heading := analysis.Normalize(r.Heading)
		bigram := 0.0
		if len(grams) > 0 {
			hit := 0
			for _, g := range grams {
				if strings.Contains(norm, g) || strings.Contains(heading, g) {
					hit++
				}
			}
			bigram = float64(hit) / float64(len(grams))
		}
		present := kind && qtype.Satisfied(norm)
		rows[i] = []float64{
			r.Score, r.BM25Score, r.VectorScore, math.Log1p(float64(i)), top - r.Score,
			s.wordShare(terms, idf, heading+"\n"+norm),
			s.coverage(terms, idf, qtype, norm),
			s.wordShare(terms, idf, heading),
			bigram,
			b2f(present), b2f(kind && !present),
			math.Log1p(float64(utf8.RuneCountInString(r.Text))),
			0, 0, 0,
		}
	}
	// Listwise columns: each passage against the others.
	const cov, big, gap, bgap, crank = 6, 8, 12, 13, 14
	bestCov, bestBig := 0.0, 0.0
	for _, x := range rows {
		bestCov, bestBig = max(bestCov, x[cov]), max(bestBig, x[big])
	}
	for _, x := range rows {
		x[gap], x[bgap] = bestCov-x[cov], bestBig-x[big]
		above := 0
		for _, y := range rows {
			if y[cov] > x[cov] {
				above++
			}
		}
		x[crank] = math.Log1p(float64(above))
	}
	return rows, nil
}

// Rerank reorders the first RerankDepth results of a Japanese query by
// the model's score (ties keep the search's order); the results beyond
// them follow unchanged. A query without Japanese is returned as it came:
// the model learned from Japanese questions only. A nil model leaves the
// results alone.
func (s *Searcher) Rerank(ctx context.Context, query string, results []Result, m Reranker) ([]Result, error) {
	if m == nil || len(results) < 2 || !analysis.HasJapanese(query) {
		return results, nil
	}
	n := min(len(results), RerankDepth)
	rows, err := s.RerankFeatures(ctx, query, results[:n])
	if err != nil {
		return nil, err
	}
	type scored struct {
		r     Result
		score float64
	}
	top := make([]scored, n)
	for i := range n {
		top[i] = scored{results[i], m.Score(rows[i])}
	}
	// Highest score first; ties keep the fused order.
	slices.SortStableFunc(top, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	out := make([]Result, 0, len(results))
	for _, t := range top {
		out = append(out, t.r)
	}
	promoteDefiningSections(query, out[:n])
	return append(out, results[n:]...), nil
}

// promoteDefiningSections moves to the front, in their order, the results
// whose own section is titled by the term a definition question asks about
// (「2.8 供給ソフトウェア」, 「重大インシデントとは何か？」 for 「「重大インシデント」
// とは…」, see analysis.HeadingTerm): a glossary entry or an FAQ item set as
// a heading, whose body defines the term without naming it again. Neither
// the model nor the fused score sees that the body's subject is the
// heading, and a passage that repeats more of the question's other words
// outranks it.
func promoteDefiningSections(query string, results []Result) {
	if analysis.QuestionType(query).Kind != analysis.KindDefinition {
		return
	}
	term := analysis.DefinedTerm(query)
	if utf8.RuneCountInString(term) < 2 {
		return
	}
	titled := func(r Result) bool { return analysis.HeadingTerm(r.Section()) == term }
	slices.SortStableFunc(results, func(a, b Result) int {
		return cmp.Compare(b2f(titled(b)), b2f(titled(a)))
	})
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// SearchReranked is Search followed by the re-rank: with a model and a
// Japanese query, the search goes RerankDepth deep, the model reorders
// those results and the best opt.K are kept (reranked reports it ran).
// Otherwise it is Search.
func (s *Searcher) SearchReranked(ctx context.Context, query string, opt Options, m Reranker) (res []Result, info Info, reranked bool, err error) {
	if m == nil || !analysis.HasJapanese(query) {
		res, info, err = s.Search(ctx, query, opt)
		return res, info, false, err
	}
	k := opt.K
	if k <= 0 {
		k = 4
	}
	deep := opt
	deep.K = max(k, RerankDepth)
	if deep.Candidates <= 0 {
		// The legs draw what they would for K results, so the search's
		// own order (and its min-max scaling) is the one without re-rank.
		deep.Candidates = max(10*k, 100)
		if len(opt.Scope) > 0 {
			deep.Candidates *= 10
		}
	}
	if res, info, err = s.Search(ctx, query, deep); err != nil {
		return nil, info, false, err
	}
	if res, err = s.Rerank(ctx, query, res, m); err != nil {
		return nil, info, false, err
	}
	if len(res) > k {
		res = res[:k]
	}
	return res, info, true, nil
}
