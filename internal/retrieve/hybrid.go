package retrieve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/index"
	"unicode"
	"unicode/utf8"
)

// Fusion methods.
const (
	FusionMinMax = "minmax" // seed 002 §4.3: min-max normalise each leg, weighted sum
	FusionRRF    = "rrf"    // reciprocal rank fusion, k = 60
)

// RRFK is the rank constant of reciprocal rank fusion.
const RRFK = 60

// Options configure one search.
type Options struct {
	K          int     // results to return (default 4)
	BM25Weight float64 // weight of the BM25 leg in [0,1]; the vector leg gets 1 − w
	Fusion     string  // FusionMinMax (default) or FusionRRF
	// Candidates is how many hits each leg contributes before fusion
	// (default max(10·K, 100)).
	Candidates int
	// Mode restricts the search to one leg: "bm25", "vector" or "" (hybrid).
	Mode string
	// Exclude, when set, hides chunks as if they were not in the index
	// (leave-one-out evaluation). Hidden chunks are dropped before fusion.
	Exclude func(chunk int) bool
	// Scope, when set, limits the search to chunks of these folders or
	// documents: a chunk is in scope when its source (relative to the data
	// folder) or its page (database/…, with or without the database
	// folder) is one of them or lies under one ("/"-separated; see
	// InScope). Each leg then draws ten times its usual candidates, so
	// in-scope chunks ranked low overall are still found.
	Scope []string
	// SkipIDs hides the chunks it names by chunk id: the agent's novelty
	// signal, so a later round spends its results on chunks not yet taken.
	SkipIDs map[string]bool
	// AutoWeight lets the search choose the fusion weight (the default
	// when the user has not set one). Over an index with the local
	// embedder, each query is gated: BM25 alone when BM25's best passage
	// holds at least GateCoverage of the query's words, else BM25 at
	// GateHybridWeight (see gateWeight). With a neural embedder the fixed
	// BM25Weight (seed 002: 0.6) is kept. BM25Weight still blends the
	// evidence score, so the refusal threshold calibrated on it holds.
	AutoWeight bool
	// NoEvidence leaves EvidenceScore at 0: for callers that only rank
	// (the BEIR benchmarks), which would otherwise pay for measuring the
	// evidence of every result — most of a search's time at K = 100.
	NoEvidence bool
}

// The local-embedder gate of AutoWeight, chosen on half of JSQuAD's
// articles and half of SciFact's queries and checked on the other halves
// (docs/BENCHMARKS.md).
const (
	// GateCoverage is the IDF-weighted share of the query's words that
	// BM25's best passage must hold for the vector leg to be left out.
	GateCoverage = 0.6
	// GateHybridWeight is the BM25 weight when the vector leg is let in.
	GateHybridWeight = 0.8
)

// Info describes how a search went, for benchmarks and diagnostics.
type Info struct {
	Terms []string // analysed query terms
	// Expansion is the terms the synonyms of the query's words added to
	// the BM25 leg at ExpansionWeight (Searcher.WithSynonyms).
	Expansion []string
	// BM25Weight is the fusion weight this search used (1 = BM25 alone),
	// and AutoWeight whether the search chose it (Options.AutoWeight).
	BM25Weight float64
	AutoWeight bool
	// TopCoverage is the IDF-weighted share of the query's words held by
	// BM25's best passage, measured when the gate decided the weight.
	TopCoverage float64
	LexicalHits int           // candidates from BM25
	DenseHits   int           // candidates from the vector leg
	ZeroHit     bool          // the BM25 leg matched nothing
	VectorError error         // the vector leg failed and was skipped
	Elapsed     time.Duration // wall time of the search
}

// ErrEmptyQuery is returned by Search for a query with nothing to search
// for (Blank): there is nothing to rank by, so any result would be
// arbitrary.
var ErrEmptyQuery = errors.New("検索語が空です — 検索したい語句を指定してください (empty query: give the words to search for)")

// Blank reports whether query holds nothing to search for: only white
// space, control and format characters (NUL, escape sequences, zero-width
// spaces, byte order marks), bytes that are not UTF-8 and the replacement
// character that stands for them. Such a query is refused like an empty
// one; searched, its bytes analyse to no term or to noise, and the
// "results" would be arbitrary chunks.
func Blank(query string) bool {
	for _, r := range query {
		if !unicode.IsSpace(r) && !unicode.IsControl(r) && !unicode.Is(unicode.Cf, r) && r != utf8.RuneError {
			return false
		}
	}
	return true
}

// Searcher runs hybrid searches over one loaded index. It is safe for
// concurrent use.
type Searcher struct {
	ix  Store
	syn Synonyms // nil: the question's own terms only (WithSynonyms)
}

// New returns a Searcher over ix.
func New(ix Store) *Searcher { return &Searcher{ix: ix} }

// Index returns the searcher's index.
func (s *Searcher) Index() Store { return s.ix }

// Search returns the top K chunks for query.
//
// With min-max fusion each leg's candidate scores are scaled to 0–1 within
// this query (a chunk missing from a leg scores 0 there) and combined as
// bm25·w + vector·(1−w). With RRF each leg contributes w/(60+rank) and
// (1−w)/(60+rank). Ties are broken by chunk order, so results are
// reproducible. Every result also carries an absolute EvidenceScore (see
// evidence) unless opt.NoEvidence is set.
func (s *Searcher) Search(ctx context.Context, query string, opt Options) ([]Result, Info, error) {
	start := time.Now()
	if Blank(query) {
		return nil, Info{}, ErrEmptyQuery
	}
	if opt.K <= 0 {
		opt.K = 4
	}
	if opt.Fusion == "" {
		opt.Fusion = FusionMinMax
	}
	if opt.Fusion != FusionMinMax && opt.Fusion != FusionRRF {
		return nil, Info{}, fmt.Errorf("fusion %q: use minmax or rrf", opt.Fusion)
	}
	if opt.BM25Weight < 0 || opt.BM25Weight > 1 || math.IsNaN(opt.BM25Weight) {
		return nil, Info{}, fmt.Errorf("BM25 weight %g must be between 0.0 and 1.0", opt.BM25Weight)
	}
	if opt.Candidates <= 0 {
		opt.Candidates = max(10*opt.K, 100)
		if len(opt.Scope) > 0 {
			opt.Candidates *= 10
		}
	}
	w := opt.BM25Weight
	auto := false
	switch opt.Mode {
	case "bm25":
		w = 1
	case "vector":
		w = 0
	case "", "hybrid":
		auto = opt.AutoWeight && s.ix.Meta().Embedder.Kind != "openai"
	default:
		return nil, Info{}, fmt.Errorf("mode %q: use bm25, vector or hybrid", opt.Mode)
	}
	// The evidence score blends by the weight given (the seed's 0.6 unless
	// the user set one), not by the weight the gate picks per query.
	ew := w

	var info Info
	info.Terms = s.ix.Terms(query)
	qtype := analysis.QuestionType(query)
	// The vector leg runs beside the BM25 leg: on a database-backed store
	// each leg is a round trip, and in memory the scan takes the other core.
	// It is needed when the evidence blend uses cosines (ew < 1) or the
	// gate may lower the weight; an unused result is dropped.
	var denseCh <-chan denseResult
	if (ew < 1 || auto) && s.ix.HasVectors() {
		legCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		denseCh = s.denseLeg(legCtx, query, info.Terms, opt.Candidates)
	}
	// BM25 runs even in vector mode: its zero-hit signal is reported.
	lex, _, err := s.ix.LexicalHits(ctx, info.Terms, opt.Candidates)
	if err != nil {
		return nil, Info{}, fmt.Errorf("BM25 search: %w", err)
	}
	info.Expansion = s.Expansion(query, info.Terms)
	if lex, err = s.expandLexical(ctx, lex, info.Expansion, opt.Candidates); err != nil {
		return nil, Info{}, err
	}
	lex = exclude(lex, opt.Exclude)
	if lex, err = s.filter(ctx, lex, opt); err != nil {
		return nil, Info{}, err
	}
	idf, err := s.ix.IDFs(ctx, info.Terms)
	if err != nil {
		return nil, Info{}, fmt.Errorf("read term statistics: %w", err)
	}
	info.LexicalHits = len(lex)
	info.ZeroHit = len(lex) == 0
	// topNorm is the gate's normalised text of BM25's best chunk, reused
	// by its evidence score when it is among the results.
	var topNorm string
	if auto {
		if w, info.TopCoverage, topNorm, err = s.gateWeight(ctx, info.Terms, idf, lex); err != nil {
			return nil, Info{}, err
		}
	}
	info.BM25Weight, info.AutoWeight = w, opt.AutoWeight && opt.Mode != "bm25" && opt.Mode != "vector"
	var dense []index.Hit
	if denseCh != nil && (w < 1 || ew < 1) {
		r := <-denseCh
		info.VectorError = r.err
		dense = exclude(r.hits, opt.Exclude)
		if dense, err = s.filter(ctx, dense, opt); err != nil {
			return nil, Info{}, err
		}
	}
	info.DenseHits = len(dense)
	// Cosines of the dense candidates feed the evidence score even when
	// the fusion leaves the vector leg out.
	cosOf := make(map[int]float64, len(dense))
	for _, h := range dense {
		cosOf[h.Chunk] = h.Score
	}
	if w == 1 {
		dense = nil
	}

	// The candidates of both legs, in a slice indexed through a map (no
	// allocation per candidate, no map lookup while sorting).
	type cand struct {
		id               int
		lexNorm, vecNorm float64
		lexRaw, cos      float64
		inLex, inVec     bool
		score            float64
	}
	cands := make([]cand, 0, len(lex)+len(dense))
	at := make(map[int]int, len(lex)+len(dense))
	get := func(id int) *cand {
		i, ok := at[id]
		if !ok {
			i = len(cands)
			at[id] = i
			cands = append(cands, cand{id: id})
		}
		return &cands[i]
	}
	lexN := minmax(lex)
	vecN := minmax(dense)
	for i, h := range lex {
		c := get(h.Chunk)
		c.inLex, c.lexRaw, c.lexNorm = true, h.Score, lexN[i]
		if opt.Fusion == FusionRRF {
			c.score += w / float64(RRFK+i+1)
		}
	}
	for i, h := range dense {
		c := get(h.Chunk)
		c.inVec, c.cos, c.vecNorm = true, h.Score, vecN[i]
		if opt.Fusion == FusionRRF {
			c.score += (1 - w) / float64(RRFK+i+1)
		}
	}
	ranked := cands[:0]
	for _, c := range cands {
		if opt.Fusion == FusionMinMax {
			c.score = c.lexNorm*w + c.vecNorm*(1-w)
		}
		if w == 1 && !c.inLex || w == 0 && !c.inVec {
			continue
		}
		ranked = append(ranked, c)
	}
	slices.SortFunc(ranked, func(a, b cand) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return cmp.Compare(a.id, b.id)
	})
	if len(ranked) > opt.K {
		ranked = ranked[:opt.K]
	}
	ids := make([]int, len(ranked))
	for i, c := range ranked {
		ids[i] = c.id
	}
	chs, err := s.ix.Chunks(ctx, ids)
	if err != nil {
		return nil, Info{}, fmt.Errorf("read chunks: %w", err)
	}
	out := make([]Result, 0, len(ids))
	for i, id := range ids {
		c := ranked[i]
		ch := chs[i]
		var ev float64
		if !opt.NoEvidence {
			cos := cosOf[id] // 0 when the chunk is not among the dense candidates
			norm := topNorm
			if norm == "" || id != lex[0].Chunk {
				norm = analysis.Normalize(ch.Text)
			}
			ev = round4(s.evidenceNorm(info.Terms, idf, qtype, norm, cos, ew))
		}
		out = append(out, Result{
			ChunkID:       ch.ID,
			File:          ch.File,
			Source:        ch.Source,
			Page:          ch.Page,
			Heading:       ch.Heading,
			Text:          ch.Text,
			UpdatedAt:     ch.UpdatedAt,
			Score:         round4(c.score),
			BM25Score:     round4(c.lexNorm),
			VectorScore:   round4(c.vecNorm),
			EvidenceScore: ev,
		})
	}
	info.Elapsed = time.Since(start)
	return out, info, nil
}

// denseResult is the vector leg's outcome: its hits, or why it failed.
type denseResult struct {
	hits []index.Hit
	err  error
}

// denseLeg embeds the query and searches the vectors in its own goroutine;
// the channel receives exactly one result. Cancelling ctx stops a search
// whose result is no longer wanted.
func (s *Searcher) denseLeg(ctx context.Context, query string, terms []string, n int) <-chan denseResult {
	out := make(chan denseResult, 1)
	go func() {
		q, err := s.ix.EmbedQuery(ctx, query, terms)
		if err != nil {
			out <- denseResult{err: err}
			return
		}
		hs, err := s.ix.DenseHits(ctx, q, n)
		out <- denseResult{hits: hs, err: err}
	}()
	return out
}

// gateWeight is AutoWeight's fusion weight for one query over an index with
// the local embedder: 1 (BM25 alone) when BM25's best passage holds at least
// GateCoverage of the query's words, else GateHybridWeight. It also returns
// that share and the passage's normalised text (for its evidence score).
//
// The local vector leg is a compressed model of the same words BM25
// matches. When the best BM25 passage already holds the query's words, the
// lexical evidence is complete and the vector leg can only reorder it by
// noise (on JSQuAD, where questions reuse the passage's words, every fixed
// weight below 1 loses nDCG@10). When it does not (a paraphrase, as SciFact's
// claims are), the vector leg's word associations help find the passage.
func (s *Searcher) gateWeight(ctx context.Context, qterms []string, idf map[string]float64, lex []index.Hit) (w, cov float64, topNorm string, err error) {
	if len(lex) == 0 {
		return GateHybridWeight, 0, "", nil
	}
	top, err := s.ix.Chunks(ctx, []int{lex[0].Chunk})
	if err != nil {
		return 0, 0, "", fmt.Errorf("read chunks: %w", err)
	}
	topNorm = analysis.Normalize(top[0].Text)
	cov = s.wordShare(qterms, idf, topNorm)
	if cov >= GateCoverage {
		return 1, cov, topNorm, nil
	}
	return GateHybridWeight, cov, topNorm, nil
}

// wordShare is the IDF-weighted share of the query's distinct word terms
// (character n-grams and request words left out, as in coverage; a query
// with no word terms falls back to its n-grams) present in normalised text.
func (s *Searcher) wordShare(qterms []string, idfs map[string]float64, norm string) float64 {
	words := evidenceTerms(qterms)
	seen := map[string]bool{}
	var num, den float64
	for _, t := range words {
		if seen[t] {
			continue
		}
		seen[t] = true
		idf := idfs[t]
		den += idf
		if analysis.Present(norm, t) {
			num += idf
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// evidenceTerms are the query terms the evidence is measured on: its word
// terms without request words. A query whose words are all request words
// (「存在しない手順について教えて」) asks about nothing the evidence could
// hold and gets none; only a query without any word term (symbols, a script
// the analyser has no words for) falls back to its n-grams.
func evidenceTerms(qterms []string) []string {
	words := qterms[:0:0]
	hasWords := false
	for _, t := range qterms {
		if !strings.HasPrefix(t, analysis.NGramPrefix) {
			hasWords = true
			if !analysis.IsRequestWord(t) {
				words = append(words, t)
			}
		}
	}
	if hasWords {
		return words
	}
	return qterms
}

// evidence is the absolute evidence score of a chunk for a query, in 0–1 and
// comparable across queries (unlike min-max scores, where the top hit is
// always 1.0): the IDF-weighted share of the query's distinct terms that
// occur in the chunk (a term unknown to the corpus weighs as much as the
// rarest term, and counts as missing), blended with the chunk's cosine
// similarity by the same weights as the fusion. When the question asks for
// a kind of fact that a pattern can recognise — a number of days, a date, a
// penalty — and the best passage holds none, the coverage is scaled by
// MissingTypeFactor: a passage on the right topic that lacks the asked
// detail is the near miss the refusal must catch.
func (s *Searcher) evidence(qterms []string, idfs map[string]float64, qtype analysis.AnswerType, text string, cos, w float64) float64 {
	return s.evidenceNorm(qterms, idfs, qtype, analysis.Normalize(text), cos, w)
}

// evidenceNorm is evidence of a chunk whose text is already normalised
// (analysis.Normalize).
func (s *Searcher) evidenceNorm(qterms []string, idfs map[string]float64, qtype analysis.AnswerType, norm string, cos, w float64) float64 {
	cov := s.coverage(qterms, idfs, qtype, norm)
	if !s.ix.HasVectors() {
		return cov
	}
	if cos < 0 {
		cos = 0
	}
	return w*cov + (1-w)*cos
}

// MissingTypeFactor scales the coverage of a passage that lacks an
// expression of the kind of fact the question strictly asks for (see
// analysis.AnswerType.Strict).
const MissingTypeFactor = 0.6

// coverage is the IDF-weighted share of the query's distinct word terms
// found in norm, a chunk's text normalised by analysis.Normalize. Character
// n-gram terms are left out: the n-grams that span a particle and a word
// (「に感」「た端」) are rare, so they would weigh a lot while saying nothing
// about the evidence. A query with no word terms at all falls back to its
// n-grams.
func (s *Searcher) coverage(qterms []string, idfs map[string]float64, qtype analysis.AnswerType, norm string) float64 {
	qterms = evidenceTerms(qterms)
	if len(qterms) == 0 {
		return 0
	}
	// Distinct terms with their weights.
	type qt struct {
		term string
		idf  float64
	}
	var terms []qt
	seen := map[string]bool{}
	var den float64
	for _, t := range qterms {
		if seen[t] {
			continue
		}
		seen[t] = true
		idf := idfs[t]
		if analysis.IsPredicate(t) {
			idf *= analysis.PredicateWeight
		}
		den += idf
		terms = append(terms, qt{t, idf})
	}
	if den == 0 {
		return 0
	}
	// The evidence must sit together: coverage is measured over windows of
	// two consecutive sentences, and the best window counts. A term found
	// only in a heading line counts half. Passages that merely share a
	// topic (sibling sections of one document) spread the query's terms over
	// many sentences and score lower than the passage that answers it.
	var headings []string
	var sentences []string
	for _, line := range strings.Split(norm, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			headings = append(headings, line)
			continue
		}
		sentences = append(sentences, analysis.Sentences(line)...)
	}
	heading := strings.Join(headings, "\n")
	if len(sentences) == 0 {
		sentences = []string{""}
	}
	strict := qtype.Strict()
	best := 0.0
	for i := range sentences {
		window := sentences[i]
		if i+1 < len(sentences) {
			window += sentences[i+1]
		}
		var num float64
		for _, t := range terms {
			switch {
			case analysis.Present(window, t.term):
				num += t.idf
			case heading != "" && analysis.Present(heading, t.term):
				num += t.idf / 2
			}
		}
		cov := num / den
		if strict && !qtype.Satisfied(window) {
			cov *= MissingTypeFactor
		}
		best = max(best, cov)
		if i+1 >= len(sentences)-1 {
			break
		}
	}
	return best
}

// hitChunks reads the chunks of hits, in their order.
func (s *Searcher) hitChunks(ctx context.Context, hs []index.Hit) ([]chunk.Chunk, error) {
	ids := make([]int, len(hs))
	for i, h := range hs {
		ids[i] = h.Chunk
	}
	chs, err := s.ix.Chunks(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("read chunks: %w", err)
	}
	return chs, nil
}

func exclude(hs []index.Hit, drop func(int) bool) []index.Hit {
	if drop == nil {
		return hs
	}
	out := hs[:0:0]
	for _, h := range hs {
		if !drop(h.Chunk) {
			out = append(out, h)
		}
	}
	return out
}

// filter keeps the hits within opt.Scope and not named by opt.SkipIDs.
func (s *Searcher) filter(ctx context.Context, hs []index.Hit, opt Options) ([]index.Hit, error) {
	if len(hs) == 0 || len(opt.Scope) == 0 && len(opt.SkipIDs) == 0 {
		return hs, nil
	}
	chs, err := s.hitChunks(ctx, hs)
	if err != nil {
		return nil, err
	}
	out := hs[:0:0]
	for i, h := range hs {
		if opt.SkipIDs[chs[i].ID] || len(opt.Scope) > 0 && !InScope(chs[i], opt.Scope) {
			continue
		}
		out = append(out, h)
	}
	return out, nil
}

// InScope reports whether chunk c lies in one of the scopes: a scope names
// a folder or a document, relative to the data folder (matched against the
// source) or to the page database (matched against the page, whose first
// folder — the database folder — may be left out). Leading "./" and
// trailing "/" are ignored; separators are "/".
func InScope(c chunk.Chunk, scopes []string) bool {
	page := c.File
	_, inDB, _ := strings.Cut(page, "/")
	for _, sc := range scopes {
		sc = strings.Trim(strings.TrimPrefix(strings.ReplaceAll(strings.TrimSpace(sc), "\\", "/"), "./"), "/")
		if sc == "" {
			continue
		}
		for _, p := range []string{c.Source, page, inDB} {
			if p != "" && (p == sc || strings.HasPrefix(p, sc+"/")) {
				return true
			}
		}
	}
	return false
}

// minmax scales scores to 0–1 within the list; a single hit or a flat list
// scores 1.
func minmax(hs []index.Hit) []float64 {
	out := make([]float64, len(hs))
	if len(hs) == 0 {
		return out
	}
	lo, hi := hs[0].Score, hs[0].Score
	for _, h := range hs {
		lo = min(lo, h.Score)
		hi = max(hi, h.Score)
	}
	for i, h := range hs {
		if hi == lo {
			out[i] = 1
		} else {
			out[i] = (h.Score - lo) / (hi - lo)
		}
	}
	return out
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// Rescore recomputes the absolute evidence score of results against query,
// in place, with the same formula Search uses. Evidence gathered by several
// searches — the agentic loop's facet queries, each covering part of the
// question — is judged this way against the whole question, so that every
// retrieval strategy passes the same insufficient-evidence gate.
func (s *Searcher) Rescore(ctx context.Context, query string, results []Result, opt Options) {
	if len(results) == 0 {
		return
	}
	terms := s.ix.Terms(query)
	qtype := analysis.QuestionType(query)
	w := opt.BM25Weight
	cos := map[string]float64{}
	if w < 1 && s.ix.HasVectors() {
		if q, err := s.ix.EmbedQuery(ctx, query, terms); err == nil {
			if hs, err := s.ix.DenseHits(ctx, q, max(opt.Candidates, 10*opt.K, 100)); err == nil {
				if chs, err := s.hitChunks(ctx, hs); err == nil {
					for i, h := range hs {
						cos[chs[i].ID] = h.Score
					}
				}
			}
		}
	}
	idf, err := s.ix.IDFs(ctx, terms)
	if err != nil {
		return // the scores stay as their searches computed them
	}
	for i := range results {
		results[i].EvidenceScore = round4(s.evidence(terms, idf, qtype, results[i].Text, cos[results[i].ChunkID], w))
	}
}
