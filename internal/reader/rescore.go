package reader

import (
	"slices"
	"sync"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/retrieve"
)

// readout is what training keeps of one reading taken without a reader
// (the rules'): every candidate's sentence features and passage, the
// passages' retrieval scores and the answerability features. The
// answerability features a reader would compute differ only in the columns
// that follow the sentence model's best candidate, so answerFeatures
// recomputes those instead of reading the evidence again.
type readout struct {
	feats    [][]float64
	passages []int
	scores   []float64 // retrieval score per passage
	answer   []float64
}

func newReadout(rd *answer.Reading, results []retrieve.Result) *readout {
	r := &readout{answer: rd.AnswerFeatures, feats: make([][]float64, len(rd.Candidates)), passages: make([]int, len(rd.Candidates)), scores: make([]float64, len(results))}
	for k, c := range rd.Candidates {
		r.feats[k], r.passages[k] = c.Features, c.Passage
	}
	for k, res := range results {
		r.scores[k] = res.Score
	}
	return r
}

// answerFeatures returns the answerability features the extractive reader
// with sentence model m computes for this evidence (see
// answer.Extractive's answerFeatures: the best candidate is the first with
// the highest logit).
func (r *readout) answerFeatures(m *Model) []float64 {
	out := slices.Clone(r.answer)
	if len(r.feats) == 0 {
		return out
	}
	sn, an := answer.SentenceFeatureNames(), answer.AnswerFeatureNames()
	col := func(names []string, name string) int { return slices.Index(names, name) }
	top, second, best := -20.0, -20.0, -1
	for k, x := range r.feats {
		s := m.SentenceScore(x)
		switch {
		case best < 0 || s > top:
			second = top
			top, best = s, k
		case s > second:
			second = s
		}
	}
	x := r.feats[best]
	out[col(an, "top_score")], out[col(an, "second_score")] = top, second
	out[col(an, "top_typed")] = x[col(sn, "typed")]
	out[col(an, "top_frac")] = x[col(sn, "frac")]
	out[col(an, "top_retrieval")] = r.scores[r.passages[best]]
	out[col(an, "top_rule_rel")] = x[col(sn, "rule_rel")]
	return out
}

// memoTokenizer remembers the terms of every text it has analysed. Training
// reads each paragraph for many questions (every question whose search
// returns it); analysing its sentences once is most of the reading's time
// saved. Safe for concurrent use; each caller gets its own copy.
type memoTokenizer struct {
	tok   answer.Tokenizer
	mu    sync.RWMutex
	terms map[string][]string
}

func newMemoTokenizer(tok answer.Tokenizer) *memoTokenizer {
	return &memoTokenizer{tok: tok, terms: map[string][]string{}}
}

func (m *memoTokenizer) Terms(text string) []string {
	m.mu.RLock()
	t, ok := m.terms[text]
	m.mu.RUnlock()
	if !ok {
		t = m.tok.Terms(text)
		m.mu.Lock()
		m.terms[text] = t
		m.mu.Unlock()
	}
	return slices.Clone(t)
}
