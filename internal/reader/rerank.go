package reader

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/shirube/shirube/internal/retrieve"
)

// RerankVersion is the version of the re-ranking feature columns.
const RerankVersion = 1

// RerankProvenance is what the shipped re-ranker says of its origin.
const RerankProvenance = "Trained by `shirube train` on JaQuAD train (SkelterLabsInc/JaQuAD, 31,748 questions on 691 Japanese Wikipedia articles), licensed CC BY-SA 3.0; validation = the articles whose FNV-32a title hash is 0 mod 10."

// Reranker is the learned passage re-ranker: a linear model over the
// features retrieve computes for each of a search's best results
// (retrieve.RerankFeatureNames), trained as a conditional logit so that
// the softmax over one question's results puts its mass on the paragraph
// that answers it.
type Reranker struct {
	Version    int           `json:"version"`
	Provenance string        `json:"provenance"`
	Model      Linear        `json:"model"`
	Report     *RerankReport `json:"report,omitempty"`
}

// RerankReport is what training measured on the validation articles.
type RerankReport struct {
	Depth          int     `json:"depth"`
	TrainQuestions int     `json:"train_questions"`
	ValQuestions   int     `json:"validation_questions"`
	Found          float64 `json:"validation_found"` // share whose paragraph is within the depth
	SearchNDCG10   float64 `json:"search_ndcg10"`    // the search's order, all validation questions
	RerankNDCG10   float64 `json:"rerank_ndcg10"`
	SearchMRR10    float64 `json:"search_mrr10"`
	RerankMRR10    float64 `json:"rerank_mrr10"`
	Seconds        float64 `json:"seconds"`
}

// Score is the re-ranker's score of one passage's features.
func (r *Reranker) Score(x []float64) float64 { return r.Model.Score(x) }

// Check reports an error unless the re-ranker's columns are exactly the
// given feature names, in order.
func (r *Reranker) Check(names []string) error {
	if !slices.Equal(r.Model.Names, names) {
		return fmt.Errorf("re-ranker: features %v, the code computes %v — retrain with `shirube train --only rerank`", r.Model.Names, names)
	}
	l := &r.Model
	if len(l.W) != len(l.Names) || len(l.Mean) != len(l.Names) || len(l.Std) != len(l.Names) {
		return errors.New("re-ranker: weight, mean and std columns differ in length")
	}
	for _, s := range l.Std {
		if !(s > 0) {
			return errors.New("re-ranker: a feature's standard deviation is not positive")
		}
	}
	return nil
}

//go:embed rerank.json
var shippedRerank []byte

// DefaultReranker returns the shipped re-ranker (a new copy each call),
// checked against the code's feature columns.
func DefaultReranker() (*Reranker, error) {
	r, err := DecodeReranker(shippedRerank)
	if err != nil {
		return nil, err
	}
	if err := r.Check(retrieve.RerankFeatureNames()); err != nil {
		return nil, err
	}
	return r, nil
}

// DecodeReranker reads a re-ranker from its JSON form.
func DecodeReranker(b []byte) (*Reranker, error) { return decodeJSON[Reranker](b, "re-ranker") }

// LoadReranker reads a re-ranker file.
func LoadReranker(path string) (*Reranker, error) { return loadJSON[Reranker](path, "re-ranker") }

// Save writes r to path as indented JSON.
func (r *Reranker) Save(path string) error { return saveJSON(path, r) }

// rerankGroup is one question's search results: their features, the
// position of its own paragraph (-1 when the search did not return it)
// and whether it belongs to the validation articles.
type rerankGroup struct {
	x   [][]float64
	pos int
	val bool
}

// TrainRerank learns the passage re-ranker from a SQuAD-layout file: the
// paragraphs become an in-memory index; every question is searched the
// way `ask` searches (hybrid, automatic weight) to retrieve.RerankDepth
// results, and the conditional logit learns to put the question's own
// paragraph first among them.
func TrainRerank(ctx context.Context, opt TrainOptions) (*Reranker, error) {
	start := time.Now()
	logf := opt.logf
	ds, tc, err := opt.corpus(ctx)
	if err != nil {
		return nil, err
	}
	logf("re-ranker: %d paragraphs, %d questions indexed; searching", len(tc.chunks), len(tc.qs))
	s := retrieve.New(tc.ix)
	// The legs draw what `ask` draws for its 4 results (see
	// retrieve.SearchReranked), so the scores are scaled as there.
	sopt := retrieve.Options{K: retrieve.RerankDepth, Candidates: 100, BM25Weight: 0.6, Fusion: retrieve.FusionMinMax, AutoWeight: true, NoEvidence: true}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	groups := make([]*rerankGroup, len(tc.qs))
	err = parallel(ctx, len(tc.qs), workers, func(i int) error {
		q := tc.qs[i]
		res, _, err := s.Search(ctx, q.qa.Question, sopt)
		if err != nil || len(res) == 0 {
			return nil // a question the analyser leaves empty
		}
		x, err := s.RerankFeatures(ctx, q.qa.Question, res)
		if err != nil {
			return err
		}
		g := &rerankGroup{x: x, pos: -1, val: opt.Validate(ds.Data[q.art].Title)}
		for k, r := range res {
			if r.ChunkID == tc.chunks[q.chunk].ID {
				g.pos = k
			}
		}
		groups[i] = g
		return nil
	})
	if err != nil {
		return nil, err
	}
	var train, val []Group
	var valAll []*rerankGroup
	for _, g := range groups {
		if g == nil {
			continue
		}
		if g.val {
			valAll = append(valAll, g)
		}
		if g.pos < 0 || len(g.x) < 2 {
			continue
		}
		if g.val {
			val = append(val, Group{X: g.x, Pos: g.pos})
		} else {
			train = append(train, Group{X: g.x, Pos: g.pos})
		}
	}
	if len(train) == 0 || len(val) == 0 {
		return nil, fmt.Errorf("training data %s: too few questions whose paragraph the search finds (%d train, %d validation)", opt.Data, len(train), len(val))
	}
	logf("re-ranker: searched in %.0f s; fitting on %d questions", time.Since(start).Seconds(), len(train))
	names := retrieve.RerankFeatureNames()
	r := &Reranker{Version: RerankVersion, Provenance: RerankProvenance,
		Model: FitSentence(names, train, -1, FitOptions{Epochs: opt.Epochs})}
	rep := &RerankReport{Depth: retrieve.RerankDepth, TrainQuestions: len(train), ValQuestions: len(valAll),
		Found: float64(len(val)) / float64(len(valAll))}
	for _, g := range valAll {
		if g.pos < 0 {
			continue
		}
		rank := rankOf(&r.Model, g.x, g.pos)
		rep.SearchNDCG10 += dcg10(g.pos)
		rep.RerankNDCG10 += dcg10(rank)
		rep.SearchMRR10 += rr10(g.pos)
		rep.RerankMRR10 += rr10(rank)
	}
	n := float64(len(valAll))
	rep.SearchNDCG10, rep.RerankNDCG10 = rep.SearchNDCG10/n, rep.RerankNDCG10/n
	rep.SearchMRR10, rep.RerankMRR10 = rep.SearchMRR10/n, rep.RerankMRR10/n
	rep.Seconds = math.Round(time.Since(start).Seconds())
	r.Report = rep
	logf("re-ranker: validation nDCG@10 %.4f → %.4f, MRR@10 %.4f → %.4f on %d questions", rep.SearchNDCG10, rep.RerankNDCG10, rep.SearchMRR10, rep.RerankMRR10, len(valAll))
	return r, nil
}

// rankOf is the 0-based rank of row pos when rows are ordered by l's score
// (ties keep their order, as retrieve.Rerank does).
func rankOf(l *Linear, rows [][]float64, pos int) int {
	s := l.Score(rows[pos])
	rank := 0
	for k, x := range rows {
		if v := l.Score(x); v > s || v == s && k < pos {
			rank++
		}
	}
	return rank
}

// dcg10 is the nDCG@10 of one relevant passage at 0-based rank.
func dcg10(rank int) float64 {
	if rank < 0 || rank >= 10 {
		return 0
	}
	return 1 / math.Log2(float64(rank)+2)
}

// rr10 is the reciprocal rank cut at 10.
func rr10(rank int) float64 {
	if rank < 0 || rank >= 10 {
		return 0
	}
	return 1 / float64(rank+1)
}
