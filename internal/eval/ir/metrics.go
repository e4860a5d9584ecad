package ir

import (
	"math"
	"slices"
	"sort"
)

// Gain maps a relevance grade to the gain used by nDCG.
type Gain int

const (
	// GainLinear uses the grade itself (trec_eval, pytrec_eval, BEIR). It is
	// the default because it reproduces the published BEIR and JQaRA figures.
	GainLinear Gain = iota
	// GainExponential uses 2^grade − 1 (Burges et al.), which rewards highly
	// relevant documents more. Equal to GainLinear for grades 0 and 1.
	GainExponential
)

func (g Gain) of(grade int) float64 {
	if grade <= 0 {
		return 0
	}
	if g == GainExponential {
		return math.Exp2(float64(grade)) - 1
	}
	return float64(grade)
}

// NDCG returns nDCG@k of ranking against the judged documents of one query:
//
//	DCG@k  = Σ_{i=1..k} gain(grade(doc_i)) / log2(i+1)
//	nDCG@k = DCG@k / IDCG@k
//
// where IDCG@k is the DCG@k of the judged documents sorted by grade. Unjudged
// documents have grade 0. It returns 0 when no judged document is relevant.
func NDCG(ranking []string, judged map[string]int, k int, g Gain) float64 {
	if k <= 0 {
		return 0
	}
	var dcg float64
	for i, id := range ranking[:min(k, len(ranking))] {
		dcg += g.of(judged[id]) / math.Log2(float64(i+2))
	}
	grades := make([]int, 0, len(judged))
	for _, grade := range judged {
		if grade > 0 {
			grades = append(grades, grade)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	var idcg float64
	for i, grade := range grades[:min(k, len(grades))] {
		idcg += g.of(grade) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// ReciprocalRank returns 1/i for the first relevant document at 1-based rank
// i ≤ k, or 0 when none of the top k is relevant (MRR@k averages this).
func ReciprocalRank(ranking []string, judged map[string]int, k int) float64 {
	for i, id := range ranking[:min(max(k, 0), len(ranking))] {
		if judged[id] > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// Recall returns the fraction of the query's relevant documents found in the
// top k of ranking, or 0 when the query has no relevant document.
func Recall(ranking []string, judged map[string]int, k int) float64 {
	relevant := 0
	for _, grade := range judged {
		if grade > 0 {
			relevant++
		}
	}
	if relevant == 0 {
		return 0
	}
	found := 0
	for _, id := range ranking[:min(max(k, 0), len(ranking))] {
		if judged[id] > 0 {
			found++
		}
	}
	return float64(found) / float64(relevant)
}

// Scores are the metrics of one query, or their means, at one cutoff k.
type Scores struct {
	NDCG   float64 `json:"ndcg"`
	MRR    float64 `json:"mrr"`
	Recall float64 `json:"recall"`
}

// QueryResult holds one query's metrics.
type QueryResult struct {
	ID string `json:"id"`
	// InRun reports whether the run retrieved anything for the query; if
	// not, every metric is 0.
	InRun bool `json:"in_run"`
	// At maps each evaluated cutoff k to the metrics at k.
	At map[int]Scores `json:"at"`
}

// Result summarises a run against qrels. The four named fields are the means
// printed by the bench commands; At holds the means at every cutoff.
type Result struct {
	NDCG10    float64 `json:"ndcg@10"`
	MRR10     float64 `json:"mrr@10"`
	Recall10  float64 `json:"recall@10"`
	Recall100 float64 `json:"recall@100"`

	// At maps each cutoff to the mean metrics over the evaluated queries.
	At map[int]Scores `json:"at"`
	// Queries is the number of evaluated queries: those in the qrels with at
	// least one relevant document. Means divide by it.
	Queries int `json:"queries"`
	// Missing counts evaluated queries the run has no documents for; they
	// score 0.
	Missing int `json:"missing"`
	// Skipped counts qrels queries with no relevant document, which are not
	// evaluated.
	Skipped int `json:"skipped"`
	// PerQuery lists the evaluated queries in id order.
	PerQuery []QueryResult `json:"per_query"`
}

// Evaluate scores run against q at the cutoffs 10 and 100 plus any extra ks
// (non-positive values are ignored), with linear-gain nDCG. See the package
// documentation for how missing and unjudged queries count.
func Evaluate(q Qrels, run Run, ks ...int) Result {
	return EvaluateGain(q, run, GainLinear, ks...)
}

// EvaluateGain is Evaluate with a chosen nDCG gain.
func EvaluateGain(q Qrels, run Run, g Gain, ks ...int) Result {
	cutoffs := []int{10, 100}
	for _, k := range ks {
		if k > 0 {
			cutoffs = append(cutoffs, k)
		}
	}
	slices.Sort(cutoffs)
	cutoffs = slices.Compact(cutoffs)

	qids := make([]string, 0, len(q))
	for qid := range q {
		qids = append(qids, qid)
	}
	sort.Strings(qids)

	res := Result{At: make(map[int]Scores, len(cutoffs))}
	for _, qid := range qids {
		judged := q[qid]
		if !hasRelevant(judged) {
			res.Skipped++
			continue
		}
		ranking := run.Ranking(qid)
		qr := QueryResult{ID: qid, InRun: len(ranking) > 0, At: make(map[int]Scores, len(cutoffs))}
		if !qr.InRun {
			res.Missing++
		}
		for _, k := range cutoffs {
			s := Scores{
				NDCG:   NDCG(ranking, judged, k, g),
				MRR:    ReciprocalRank(ranking, judged, k),
				Recall: Recall(ranking, judged, k),
			}
			qr.At[k] = s
			m := res.At[k]
			m.NDCG += s.NDCG
			m.MRR += s.MRR
			m.Recall += s.Recall
			res.At[k] = m
		}
		res.PerQuery = append(res.PerQuery, qr)
	}
	res.Queries = len(res.PerQuery)
	if res.Queries > 0 {
		n := float64(res.Queries)
		for k, m := range res.At {
			res.At[k] = Scores{NDCG: m.NDCG / n, MRR: m.MRR / n, Recall: m.Recall / n}
		}
	}
	res.NDCG10 = res.At[10].NDCG
	res.MRR10 = res.At[10].MRR
	res.Recall10 = res.At[10].Recall
	res.Recall100 = res.At[100].Recall
	return res
}

func hasRelevant(judged map[string]int) bool {
	for _, grade := range judged {
		if grade > 0 {
			return true
		}
	}
	return false
}
