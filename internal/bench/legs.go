package bench

import (
	"context"

	"github.com/shirube/shirube/internal/eval/beir"
	"github.com/shirube/shirube/internal/eval/ir"
	"github.com/shirube/shirube/internal/retrieve"
)

// LegsReport says how much the two legs of hybrid search could help each
// other on a dataset: how often each ranks a relevant document first when
// the other does not, and the nDCG@10 of an oracle that picks the better of
// the two rankings for every query. No fusion of the two legs can reach
// much beyond that oracle; when it is close to the BM25 figure, the vector
// leg has nothing to add.
type LegsReport struct {
	Dataset string `json:"dataset"`
	Queries int    `json:"queries"`
	// Top-1 outcomes: a relevant document ranked first by both legs, by
	// BM25 only, by the vector leg only, or by neither.
	Both       int `json:"top1_both"`
	BM25Only   int `json:"top1_bm25_only"`
	VectorOnly int `json:"top1_vector_only"`
	Neither    int `json:"top1_neither"`
	// nDCG@10 of each leg and of the per-query oracle.
	BM25NDCG   float64 `json:"bm25_ndcg@10"`
	VectorNDCG float64 `json:"vector_ndcg@10"`
	OracleNDCG float64 `json:"oracle_ndcg@10"`
	// VectorBetter is the number of queries whose vector ranking has the
	// higher nDCG@10, and VectorGain their mean gain over BM25 spread over
	// all queries (OracleNDCG − BM25NDCG).
	VectorBetter int     `json:"queries_vector_better"`
	VectorGain   float64 `json:"vector_gain_upper_bound"`
	Machine      Machine `json:"machine"`
}

// Legs runs every evaluated query through each leg alone (top 100) and
// compares them query by query.
func Legs(ctx context.Context, ds *beir.Dataset, ix retrieve.Store, maxQueries int) (LegsReport, error) {
	s := retrieve.New(ix)
	qs := ds.EvalQueries()
	if maxQueries > 0 && len(qs) > maxQueries {
		qs = qs[:maxQueries]
	}
	rep := LegsReport{Dataset: ds.Dir, Queries: len(qs), Machine: ThisMachine()}
	var sumB, sumV, sumO float64
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		judged := ds.Qrels[q.ID]
		leg := func(mode string) ([]string, error) {
			res, _, err := s.Search(ctx, q.Text, retrieve.Options{K: 100, Candidates: 100, Mode: mode, NoEvidence: true})
			ids := make([]string, len(res))
			for i, r := range res {
				ids[i] = r.ChunkID
			}
			return ids, err
		}
		b, err := leg("bm25")
		if err != nil {
			return rep, err
		}
		v, err := leg("vector")
		if err != nil {
			return rep, err
		}
		bTop := len(b) > 0 && judged[b[0]] > 0
		vTop := len(v) > 0 && judged[v[0]] > 0
		switch {
		case bTop && vTop:
			rep.Both++
		case bTop:
			rep.BM25Only++
		case vTop:
			rep.VectorOnly++
		default:
			rep.Neither++
		}
		nb := ir.NDCG(b, judged, 10, ir.GainLinear)
		nv := ir.NDCG(v, judged, 10, ir.GainLinear)
		sumB += nb
		sumV += nv
		sumO += max(nb, nv)
		if nv > nb {
			rep.VectorBetter++
		}
	}
	n := float64(max(1, len(qs)))
	rep.BM25NDCG = round(sumB / n)
	rep.VectorNDCG = round(sumV / n)
	rep.OracleNDCG = round(sumO / n)
	rep.VectorGain = round((sumO - sumB) / n)
	return rep, nil
}
