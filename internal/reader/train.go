package reader

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/retrieve"
)

// AnsweredShare is the share of the validation articles' answerable
// evidence that the answerability threshold lets through.
const AnsweredShare = 0.975

// ModelVersion is the version of the feature columns the code computes.
const ModelVersion = 1

// Provenance is what the shipped model says of its origin.
const Provenance = "Trained by `shirube train` on JaQuAD train (SkelterLabsInc/JaQuAD, 31,748 questions on 691 Japanese Wikipedia articles), licensed CC BY-SA 3.0; validation = the articles whose FNV-32a title hash is 0 mod 10."

// TrainOptions configure Train.
type TrainOptions struct {
	Data    string // JaQuAD train, SQuAD layout (.json or .json.xz)
	Limit   int    // use at most this many questions (evenly spread); 0 = all
	Workers int    // parallel readers; 0 = the number of cores
	Epochs  int    // optimiser steps; 0 = FitOptions' default
	// Validate picks the held-out articles by title; nil means
	// Validation (a tenth of them).
	Validate func(title string) bool
	Log      func(string)
	// Reranker, when set, re-ranks every search of the reader's training
	// the way `ask` re-ranks its plain search, so that the reader learns
	// from evidence in the order it will be given.
	Reranker retrieve.Reranker
	// Shapes is the share of the training passages rendered in a
	// document shape (a list, a table, label lines, FAQ pairs: see Shape)
	// instead of as Wikipedia's prose; 0 keeps them all prose. The
	// validation articles stay prose for the reported accuracy, and are
	// measured shaped as well.
	Shapes float64
	// Laws, when set, adds questions on the definitions of the laws of
	// law-corpus-ja (LawQuestions; the development sets' laws are never
	// read). They are all used whatever Limit says, and measured apart.
	Laws *LawOptions
}

// logf logs a line of progress when the options have a Log.
func (opt *TrainOptions) logf(format string, a ...any) {
	if opt.Log != nil {
		opt.Log(fmt.Sprintf(format, a...))
	}
}

// corpus reads the training data and indexes its paragraphs, after
// filling in the default validation split.
func (opt *TrainOptions) corpus(ctx context.Context) (*SQuAD, *trainCorpus, error) {
	if opt.Validate == nil {
		opt.Validate = Validation
	}
	ds, err := LoadSQuAD(opt.Data)
	if err != nil {
		return nil, nil, err
	}
	main := len(ds.Data)
	if opt.Laws != nil {
		lq, err := LawQuestions(*opt.Laws)
		if err != nil {
			return nil, nil, err
		}
		ds.Data = append(ds.Data, lq.Data...)
	}
	tc, err := newCorpus(ctx, ds, opt.Limit, main)
	return ds, tc, err
}

// Report is what training measured on the validation articles (never
// trained on).
type Report struct {
	Articles           int                `json:"articles"`
	TrainQuestions     int                `json:"train_questions"`
	ValQuestions       int                `json:"validation_questions"`
	SentenceAccuracy   float64            `json:"sentence_accuracy"`      // learned: answer sentence ranked first
	RuleAccuracy       float64            `json:"rule_sentence_accuracy"` // the rule-based relevance, same candidates
	AnswerableAUC      float64            `json:"answerable_auc"`
	ECE                float64            `json:"answerable_ece"`
	Bins               []Bin              `json:"answerable_reliability"`
	ThresholdAnswered  float64            `json:"threshold_answered"` // answerable validation sets answered at Threshold
	ThresholdRefused   float64            `json:"threshold_refused"`  // unanswerable validation sets refused at Threshold
	NegativeKinds      string             `json:"negative_kinds"`
	Seconds            float64            `json:"seconds"`
	AnswerableByNegAUC map[string]float64 `json:"answerable_auc_by_negative"`
	// With Shapes > 0: the share, and the answer-sentence accuracy on the
	// validation articles' evidence rendered in shapes at that share.
	Shapes             float64 `json:"shapes,omitempty"`
	ShapedAccuracy     float64 `json:"shaped_sentence_accuracy,omitempty"`
	ShapedRuleAccuracy float64 `json:"shaped_rule_sentence_accuracy,omitempty"`
	// With Laws: the law questions trained on and the answer-sentence
	// accuracy on the validation laws' (the figures above are JaQuAD's).
	LawTrainQuestions int     `json:"law_train_questions,omitempty"`
	LawValQuestions   int     `json:"law_validation_questions,omitempty"`
	LawAccuracy       float64 `json:"law_sentence_accuracy,omitempty"`
	LawRuleAccuracy   float64 `json:"law_rule_sentence_accuracy,omitempty"`
}

// sample is one question of the training data with its evidence sets.
type sample struct {
	question string
	answer   string
	val      bool
	law      bool              // a law question (TrainOptions.Laws)
	pos      []retrieve.Result // evidence holding the answer paragraph
	own      int               // index of the answer paragraph in pos
	ansSent  string            // the sentence holding the answer
	neg      []retrieve.Result // evidence that does not hold the answer
	negKind  string
	// shaped is a validation question's evidence rendered in shapes, with
	// the line that holds its answer sentence.
	shaped     []retrieve.Result
	shapedSent string
}

// Train learns the reader from a SQuAD-layout file: the paragraphs become
// an in-memory index searched the way `ask` searches; every question's
// top results (its own paragraph put in when the search missed it) give
// the sentence model one group of candidates, and, with a near miss made
// from the data, the answerability model one positive and one negative
// example. Negatives are, in turn: the question's own evidence with the
// answer sentence removed; its evidence with its own paragraph left out
// (other paragraphs of the article come up); and its evidence with its
// whole article left out.
func Train(ctx context.Context, opt TrainOptions) (*Model, error) {
	start := time.Now()
	logf := opt.logf
	ds, tc, err := opt.corpus(ctx)
	if err != nil {
		return nil, err
	}
	chunks, qs, artOf, ix := tc.chunks, tc.qs, tc.artOf, tc.ix
	logf("%d articles, %d paragraphs, %d questions indexed", len(ds.Data), len(chunks), len(qs))
	s := retrieve.New(ix)
	sopt := retrieve.Options{K: 4, BM25Weight: 0.6, Fusion: retrieve.FusionMinMax, AutoWeight: true}

	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	samples := make([]*sample, len(qs))
	kinds := []string{"answer sentence removed", "own paragraph left out", "own article left out"}
	var sp *shaper
	if opt.Shapes > 0 {
		sp = newShaper(ds, tc, opt.Shapes)
	}
	err = parallel(ctx, len(qs), workers, func(i int) error {
		q := qs[i]
		ctxText := ds.Data[q.art].Paragraphs[q.para].Context
		sent, without, ok := splitAnswerSentence(ctxText, q.qa.Answers[0])
		if !ok {
			return nil
		}
		smp := &sample{question: q.qa.Question, answer: q.qa.Answers[0].Text, val: opt.Validate(ds.Data[q.art].Title), ansSent: sent, law: q.art >= tc.main}
		res, _, _, err := s.SearchReranked(ctx, q.qa.Question, sopt, opt.Reranker)
		if err != nil {
			return nil // a question the analyser leaves empty
		}
		smp.own = -1
		for k, r := range res {
			if r.ChunkID == chunks[q.chunk].ID {
				smp.own = k
			}
		}
		if smp.own < 0 {
			// The search missed the paragraph: it takes the last place, so
			// that the reader learns to read it wherever it ranks.
			own := retrieve.Result{ChunkID: chunks[q.chunk].ID, File: chunks[q.chunk].File, Source: chunks[q.chunk].Source,
				Page: 1, Heading: chunks[q.chunk].Heading, Text: chunks[q.chunk].Text}
			if len(res) == 4 {
				own.Score = res[3].Score
				res = res[:3]
			}
			res = append(res, own)
			smp.own = len(res) - 1
		}
		smp.pos = res
		kind := i % 3
		smp.negKind = kinds[kind]
		switch kind {
		case 0:
			neg := append([]retrieve.Result(nil), res...)
			neg[smp.own].Text = "# " + ds.Data[q.art].Title + "\n" + without
			smp.neg = neg
		case 1:
			o := sopt
			o.Exclude = func(c int) bool { return c == q.chunk }
			smp.neg, _, _, err = s.SearchReranked(ctx, q.qa.Question, o, opt.Reranker)
		case 2:
			o := sopt
			o.Exclude = func(c int) bool { return artOf[c] == q.art }
			smp.neg, _, _, err = s.SearchReranked(ctx, q.qa.Question, o, opt.Reranker)
		}
		if err != nil {
			return nil
		}
		if sp != nil {
			shaped, gold := sp.evidence(q, res, smp.own, sent, without, false)
			if smp.val {
				smp.shaped, smp.shapedSent = shaped, gold
			} else {
				// Every passage of the evidence and of its near miss is
				// shaped alike: structure never tells which answers.
				smp.pos, smp.ansSent = shaped, gold
				if kind == 0 {
					smp.neg, _ = sp.evidence(q, res, smp.own, sent, without, true)
				} else {
					smp.neg, _ = sp.evidence(q, smp.neg, -1, "", "", false)
				}
			}
		}
		samples[i] = smp
		return nil
	})
	if err != nil {
		return nil, err
	}
	logf("searched %d questions in %.0f s; reading the candidates", len(qs), time.Since(start).Seconds())

	tok := newMemoTokenizer(ix.Analyzer())
	rules := answer.NewExtractive(tok, answer.ExtractiveOptions{})
	// Every evidence set is read once, with the rules: the sentence model
	// learns from the candidates' features, and the answerability features
	// are then recomputed from the same readings with the learned sentence
	// model (rescored), not read again.
	posR := make([]*readout, len(samples))
	negR := make([]*readout, len(samples))
	groups := make([]*Group, len(samples))
	ruleHit := make([]bool, len(samples))
	shapedG := make([]*Group, len(samples))
	shapedHit := make([]bool, len(samples))
	err = parallel(ctx, len(samples), workers, func(i int) error {
		smp := samples[i]
		if smp == nil {
			return nil
		}
		rd := rules.Read(smp.question, smp.pos)
		posR[i] = newReadout(rd, smp.pos)
		if len(smp.neg) > 0 {
			negR[i] = newReadout(rules.Read(smp.question, smp.neg), smp.neg)
		}
		groups[i], ruleHit[i] = labelGroup(rd, smp.own, smp.answer, smp.ansSent)
		if smp.shaped != nil {
			shapedG[i], shapedHit[i] = labelGroup(rules.Read(smp.question, smp.shaped), smp.own, smp.answer, smp.shapedSent)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var trainG, valG, lawValG []Group
	var ruleVal, nVal, lawRule, lawTrain int
	for i, g := range groups {
		if g == nil {
			continue
		}
		switch {
		case samples[i].law && samples[i].val:
			lawValG = append(lawValG, *g)
			if ruleHit[i] {
				lawRule++
			}
			continue
		case samples[i].law:
			lawTrain++
		}
		if samples[i].val {
			valG = append(valG, *g)
			nVal++
			if ruleHit[i] {
				ruleVal++
			}
		} else {
			trainG = append(trainG, *g)
		}
	}
	if len(trainG) == 0 || len(valG) == 0 {
		return nil, fmt.Errorf("training data %s: too few labelled questions (%d train, %d validation)", opt.Data, len(trainG), len(valG))
	}
	fit := FitOptions{Epochs: opt.Epochs}
	m := &Model{Version: ModelVersion, Provenance: Provenance}
	if opt.Laws != nil {
		m.Provenance += " " + LawProvenance
	}
	m.Sentence = FitSentence(answer.SentenceFeatureNames(), trainG, slices.Index(answer.SentenceFeatureNames(), answer.PriorFeature), fit)
	rep := &Report{Articles: len(ds.Data), TrainQuestions: len(trainG), ValQuestions: len(valG),
		SentenceAccuracy: Accuracy(&m.Sentence, valG), RuleAccuracy: float64(ruleVal) / float64(nVal),
		NegativeKinds: strings.Join(kinds, "; ")}
	logf("sentence model: validation accuracy %.3f (rules %.3f) on %d questions", rep.SentenceAccuracy, rep.RuleAccuracy, len(valG))
	if opt.Laws != nil {
		rep.LawTrainQuestions, rep.LawValQuestions = lawTrain, len(lawValG)
		if len(lawValG) > 0 {
			rep.LawAccuracy, rep.LawRuleAccuracy = Accuracy(&m.Sentence, lawValG), float64(lawRule)/float64(len(lawValG))
		}
		logf("law questions: %d trained on; validation laws' accuracy %.3f (rules %.3f) on %d questions", lawTrain, rep.LawAccuracy, rep.LawRuleAccuracy, len(lawValG))
	}
	if sp != nil {
		var sg []Group
		var hits int
		for i, g := range shapedG {
			if g != nil && groups[i] != nil && !samples[i].law {
				sg = append(sg, *g)
				if shapedHit[i] {
					hits++
				}
			}
		}
		rep.Shapes = opt.Shapes
		if len(sg) > 0 {
			rep.ShapedAccuracy, rep.ShapedRuleAccuracy = Accuracy(&m.Sentence, sg), float64(hits)/float64(len(sg))
		}
		logf("shaped validation evidence (share %.2f): accuracy %.3f (rules %.3f) on %d questions", opt.Shapes, rep.ShapedAccuracy, rep.ShapedRuleAccuracy, len(sg))
	}

	// Answerability rescores every evidence set's reading with the
	// sentence model.
	posX := make([][]float64, len(samples))
	negX := make([][]float64, len(samples))
	for i, smp := range samples {
		// The law questions teach the sentence model only: asked from
		// templates, they word the question as no user does, and with them
		// the answerability model refused answerable questions of other
		// documents (docs/BENCHMARKS.md).
		if smp == nil || smp.law || groups[i] == nil || negR[i] == nil {
			continue
		}
		posX[i] = posR[i].answerFeatures(m)
		negX[i] = negR[i].answerFeatures(m)
	}
	var trainE, valE []Example
	var valKind []string
	for i := range samples {
		if posX[i] == nil {
			continue
		}
		pair := []Example{{X: posX[i], Y: true}, {X: negX[i], Y: false}}
		if samples[i].val {
			valE = append(valE, pair...)
			valKind = append(valKind, "", samples[i].negKind)
		} else {
			trainE = append(trainE, pair...)
		}
	}
	m.Answerable = FitBinary(answer.AnswerFeatureNames(), trainE, fit)
	p := make([]float64, len(valE))
	y := make([]bool, len(valE))
	var posP []float64
	for i, e := range valE {
		p[i], y[i] = m.Answerability(e.X), e.Y
		if e.Y {
			posP = append(posP, p[i])
		}
	}
	// The threshold refuses only what answerable evidence almost never
	// looks like: 97.5 % of the validation articles' answerable evidence
	// passes it. Documents other than Wikipedia answer with less of the
	// question's wording; a threshold at the classes' crossing would
	// refuse many of them.
	slices.Sort(posP)
	m.Threshold = posP[int(float64(len(posP))*(1-AnsweredShare))]
	var ans, ansN, refused, refN float64
	for i, e := range valE {
		if e.Y {
			ansN++
			if p[i] >= m.Threshold {
				ans++
			}
		} else {
			refN++
			if p[i] < m.Threshold {
				refused++
			}
		}
	}
	rep.AnswerableAUC = AUC(p, y)
	rep.Bins, rep.ECE = Calibration(p, y)
	rep.ThresholdAnswered, rep.ThresholdRefused = ans/math.Max(ansN, 1), refused/math.Max(refN, 1)
	rep.AnswerableByNegAUC = map[string]float64{}
	for _, k := range kinds {
		var pk []float64
		var yk []bool
		for i := range valE {
			if valE[i].Y || valKind[i] == k {
				pk, yk = append(pk, p[i]), append(yk, y[i])
			}
		}
		rep.AnswerableByNegAUC[k] = AUC(pk, yk)
	}
	rep.Seconds = math.Round(time.Since(start).Seconds())
	m.Report = rep
	logf("answerability: validation AUC %.3f, ECE %.3f; at %.2f: %.3f answered, %.3f refused", rep.AnswerableAUC, rep.ECE, m.Threshold, rep.ThresholdAnswered, rep.ThresholdRefused)
	return m, nil
}

// trainRef is one training question: its article, paragraph and chunk.
type trainRef struct {
	art, para, chunk int
	qa               QA
}

// trainCorpus is a SQuAD-layout set's paragraphs indexed in memory (one
// chunk per paragraph, its article's title as heading) with the questions
// to search.
type trainCorpus struct {
	chunks []chunk.Chunk
	qs     []trainRef
	main   int   // articles before this one are the main data (Limit thins their questions)
	artOf  []int // article of each chunk
	paraOf []int // paragraph (in its article) of each chunk
	ix     *index.Index
}

// newCorpus indexes the paragraphs of ds and lists its answered questions
// (at most limit of the first main articles', evenly spread, when limit >
// 0; every question of the articles after them).
func newCorpus(ctx context.Context, ds *SQuAD, limit, main int) (*trainCorpus, error) {
	tc := &trainCorpus{main: main}
	for ai, a := range ds.Data {
		for pi, p := range a.Paragraphs {
			file := fmt.Sprintf("jaquad/a%04d/p%03d.md", ai, pi)
			ci := len(tc.chunks)
			tc.chunks = append(tc.chunks, chunk.Chunk{
				ID: file + "_0", File: file, Source: fmt.Sprintf("jaquad/a%04d.md", ai), Page: 1,
				Heading: a.Title, Text: "# " + a.Title + "\n" + p.Context, Index: 0,
			})
			tc.artOf = append(tc.artOf, ai)
			tc.paraOf = append(tc.paraOf, pi)
			for _, qa := range p.QAs {
				if len(qa.Answers) > 0 && strings.TrimSpace(qa.Answers[0].Text) != "" {
					tc.qs = append(tc.qs, trainRef{ai, pi, ci, qa})
				}
			}
		}
	}
	extra := slices.IndexFunc(tc.qs, func(q trainRef) bool { return q.art >= main })
	if extra < 0 {
		extra = len(tc.qs)
	}
	if limit > 0 && limit < extra {
		step := float64(extra) / float64(limit)
		var kept []trainRef
		for i := range limit {
			kept = append(kept, tc.qs[int(float64(i)*step)])
		}
		tc.qs = append(kept, tc.qs[extra:]...)
	}
	ix, err := index.FromChunks(ctx, tc.chunks, index.MemoryOptions{Analyzer: analysis.DefaultOptions()})
	if err != nil {
		return nil, fmt.Errorf("index the training paragraphs: %w", err)
	}
	tc.ix = ix
	return tc, nil
}

// parallel runs f(0..n-1) on workers goroutines, stopping at the first
// error or when ctx ends.
func parallel(ctx context.Context, n, workers int, f func(i int) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// splitAnswerSentence finds the sentence of context that holds the answer
// (by its character offset) and returns it, with the context without it.
func splitAnswerSentence(context string, a AnswerSpan) (sent, without string, ok bool) {
	// Character offset → byte offset.
	at := -1
	for i, n := 0, 0; i <= len(context); n++ {
		if n == a.Start {
			at = i
			break
		}
		if i == len(context) {
			break
		}
		_, size := utf8.DecodeRuneInString(context[i:])
		i += size
	}
	if at < 0 || !strings.HasPrefix(context[at:], a.Text) {
		// Offsets that do not match: the first occurrence.
		if at = strings.Index(context, a.Text); at < 0 {
			return "", "", false
		}
	}
	lineStart := strings.LastIndexByte(context[:at], '\n') + 1
	lineEnd := len(context)
	if j := strings.IndexByte(context[at:], '\n'); j >= 0 {
		lineEnd = at + j
	}
	line := context[lineStart:lineEnd]
	from := 0
	for _, end := range append(analysis.SentenceEnds(line), len(line)) {
		if lineStart+end > at {
			s := strings.TrimSpace(line[from:end])
			return s, context[:lineStart+from] + context[lineStart+end:], s != ""
		}
		from = end
	}
	return "", "", false
}

// labelGroup makes one question's candidates a group for the sentence
// model: the label is the candidate of its own passage (own) that holds
// the answer and lies in the answer's sentence or line (ansSent), else the
// first of that passage holding the answer. It also reports whether the
// rules' best relevance picks the label. A reading without the answer, or
// with a single candidate, gives no group.
func labelGroup(rd *answer.Reading, own int, ans, ansSent string) (*Group, bool) {
	g := &Group{Pos: -1}
	bestRel, bestK := -1.0, -1
	for k, c := range rd.Candidates {
		g.X = append(g.X, c.Features)
		if g.Pos < 0 && c.Passage == own && strings.Contains(c.Text, ans) && strings.Contains(ansSent, c.Text) {
			g.Pos = k
		}
		if c.Relevance > bestRel {
			bestRel, bestK = c.Relevance, k
		}
	}
	if g.Pos < 0 {
		for k, c := range rd.Candidates {
			if c.Passage == own && strings.Contains(c.Text, ans) {
				g.Pos = k
				break
			}
		}
	}
	if g.Pos < 0 || len(g.X) < 2 {
		return nil, false
	}
	return g, bestK == g.Pos
}
