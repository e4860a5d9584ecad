package answer

import (
	"context"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/retrieve"
)

// Reader scores the evidence with learned weights (internal/reader's
// Model, trained on JaQuAD by `shirube train`). The extractive generator
// computes the features; the Reader only weighs them.
type Reader interface {
	// SentenceScore is the logit that a candidate with features x (see
	// SentenceFeatureNames) is the sentence that answers.
	SentenceScore(x []float64) float64
	// Answerability is the probability that evidence with features x
	// (see AnswerFeatureNames) answers the question.
	Answerability(x []float64) float64
	// AnswerThreshold is the answerability below which the evidence does
	// not answer.
	AnswerThreshold() float64
}

// SentenceFeatureNames names the columns of a candidate's features, in
// order. A model trained on other columns is refused at load.
func SentenceFeatureNames() []string {
	return []string{
		"cov",          // IDF-weighted share of the question's content terms in the text (heading and table header count half)
		"cov_text",     // the same, the text alone
		"cov_context",  // terms only the heading or the table's header row holds
		"frac",         // unweighted share of the content terms in the text
		"bigram",       // share of the question's character bigrams in the text
		"typed",        // holds an expression of the asked kind (number with counter, date, agent …)
		"kind_missing", // the question asks for a kind of fact and the text holds none
		"strict_missing",
		"defines",   // defines the term a definition question asks about
		"acts",      // names an agent doing the act a who question asks about
		"excluded",  // describes what the question sets aside
		"question",  // is itself a question (an FAQ's)
		"item",      // a list item or a step
		"row",       // a table row
		"log_runes", // length
		"fragment",  // short and unfinished: a caption, a label, a cell
		"first",     // first sentence of its passage
		"novelty",   // share of its content words the question does not use
		"neighbour", // best text coverage of the sentence before or after
		"digit",     // holds a digit
		"window",    // several adjacent sentences read together
		"cross_line",
		"rule_rel", // the hand-written relevance (coverage × asked kind, definition, agent, FAQ bonuses)
		PriorFeature,
	}
}

// PriorFeature is the sentence feature the model adds with weight 1: the
// logarithm of the hand-written relevance. The learned weights correct the
// rules where many examples disagree with them, and leave them alone where
// the training data says nothing (a definition 「…をいう」 or a table row
// is rare in Wikipedia).
const PriorFeature = "log_rule_rel"

// AnswerFeatureNames names the columns of the answerability features.
func AnswerFeatureNames() []string {
	return []string{
		"top_score",     // best candidate's sentence logit
		"second_score",  // the runner-up's
		"best_cov",      // best coverage (heading half)
		"best_cov_text", // best coverage of a text alone
		"best_bigram",   // best bigram overlap
		"missing",       // IDF-weighted share of the content terms no passage holds
		"kind_absent",   // a strict kind asked and no candidate holds it
		"top_typed",     // the best candidate holds the asked kind
		"log_content",   // how many content terms the question has
		"top_frac",
		"top_retrieval",
		"evidence", // the retrieval's absolute evidence score of the best passage
		"top_rule_rel",
		"missing_ident", // the question's identifiers (versions, codes, Latin names, numbers) no passage holds
		"missing_max",   // weight of the weightiest content term no passage holds, over the total
	}
}

// featureContext holds what every candidate's features are measured
// against: the question's character bigrams and its term set, and each
// passage's table header terms.
type featureContext struct {
	qgrams  map[string]bool
	qterms  map[string]bool
	headers []map[string]bool // per passage: terms of its tables' header rows
}

func newFeatureContext(p *prepared, headers []map[string]bool) *featureContext {
	return &featureContext{qgrams: charBigrams(analysis.Normalize(p.query)), qterms: termSet(p.qterms), headers: headers}
}

// tableHeaders returns, per text, the terms of its tables' header rows (the
// row above a |---| rule); nil for a text without a table.
func tableHeaders(texts []string, tok Tokenizer) []map[string]bool {
	out := make([]map[string]bool, len(texts))
	for i, text := range texts {
		var hdr []string
		lines := strings.Split(text, "\n")
		for j := 0; j+1 < len(lines); j++ {
			if l := strings.TrimSpace(lines[j]); strings.HasPrefix(l, "|") && tableRule.MatchString(strings.TrimSpace(lines[j+1])) {
				hdr = append(hdr, l)
			}
		}
		if len(hdr) > 0 {
			out[i] = termSet(tok.Terms(strings.Join(hdr, "\n")))
		}
	}
	return out
}

// charBigrams returns the set of s's character bigrams
// (analysis.CharBigrams).
func charBigrams(s string) map[string]bool {
	out := map[string]bool{}
	for _, g := range analysis.CharBigrams(s) {
		out[g] = true
	}
	return out
}

// features returns the sentence features (SentenceFeatureNames) of the
// adjacent candidates cs read as one; prior, when ≥ 0, is their rule-based
// relevance (else the best of theirs).
func (e *Extractive) features(p *prepared, cs []*candidate, prior float64) []float64 {
	fc := p.fc
	first, last := cs[0], cs[len(cs)-1]
	var text strings.Builder
	union := map[string]bool{}
	runes, typed, defines, acts, item, excl := 0, false, false, false, false, false
	minChunk := first.chunk
	ruleRel := 0.0
	for i, c := range cs {
		ruleRel = max(ruleRel, c.ruleRel)
		if i > 0 {
			text.WriteString(" ")
		}
		text.WriteString(c.text)
		for t := range c.terms {
			union[t] = true
		}
		runes += c.runes
		typed = typed || c.typed
		defines = defines || c.defines
		acts = acts || c.acts
		item = item || c.item
		excl = excl || len(p.excluded) > 0 && describesExcluded(c, p.excluded)
		minChunk = min(minChunk, c.chunk)
	}
	if prior >= 0 {
		ruleRel = prior
	}
	row := strings.HasPrefix(first.text, "|")
	var cov, covText, covCtx, n float64
	for _, t := range p.content {
		w := p.weights[t]
		switch {
		case union[t]:
			cov += w
			covText += w
			n++
		case p.headings[first.chunk][t] || row && fc.headers[first.chunk][t]:
			cov += headingShare * w
			covCtx += w
		}
	}
	if p.total > 0 {
		cov, covText, covCtx = cov/p.total, covText/p.total, covCtx/p.total
	}
	frac := 0.0
	if len(p.content) > 0 {
		frac = n / float64(len(p.content))
	}
	norm := analysis.Normalize(text.String())
	bigram := 0.0
	if len(fc.qgrams) > 0 {
		hit := 0
		for _, g := range analysis.CharBigrams(norm) {
			if fc.qgrams[g] {
				hit++
			}
		}
		bigram = float64(hit) / float64(len(fc.qgrams))
	}
	words, fresh := 0, 0
	for t := range union {
		if strings.HasPrefix(t, analysis.NGramPrefix) || !isContentTerm(t) {
			continue
		}
		words++
		if !fc.qterms[t] {
			fresh++
		}
	}
	novelty := 0.0
	if words > 0 {
		novelty = float64(fresh) / float64(words)
	}
	neighbour := 0.0
	for _, c := range []*candidate{first.prev, last.next} {
		if c != nil {
			neighbour = max(neighbour, textCoverage(p, c))
		}
	}
	kind := p.qtype.Kind != analysis.KindNone && p.qtype.Kind != analysis.KindProcedure
	return []float64{
		cov, covText, covCtx, frac, bigram,
		b2f(typed), b2f(kind && !typed), b2f(p.qtype.Strict() && !typed),
		b2f(defines), b2f(acts), b2f(excl), b2f(isQuestion(last.text)),
		b2f(item), b2f(row), math.Log1p(float64(runes)),
		b2f(len(cs) == 1 && first.runes < 12 && !endsSentence(first.text)),
		b2f(first.pos == 0), novelty, neighbour,
		b2f(strings.ContainsFunc(norm, unicode.IsDigit)),
		b2f(len(cs) > 1), b2f(len(cs) == 2 && !first.nextOnLine),
		ruleRel, math.Log(ruleRel + 1e-3),
	}
}

// textCoverage is the IDF-weighted share of the question's content terms
// in c's text.
func textCoverage(p *prepared, c *candidate) float64 {
	if p.total <= 0 {
		return 0
	}
	cov := 0.0
	for _, t := range p.content {
		if c.terms[t] {
			cov += p.weights[t]
		}
	}
	return cov / p.total
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// readerRelevance replaces the rule-based relevance of every candidate
// and window by the reader's. The sentence model's logit is the logarithm
// of the rule-based relevance plus a learned correction, so its
// exponential is that relevance scaled by what the learned weights make of
// the candidate: on the same scale as before, and the same value where
// they see nothing to correct. Candidates that share no content term with
// the question answer nothing, as before. A window's prior is the rule
// window relevance.
func (e *Extractive) readerRelevance(p *prepared) {
	r := e.opt.Reader
	for _, c := range p.cands {
		c.feat = e.features(p, []*candidate{c}, -1)
		c.logit = r.SentenceScore(c.feat)
		if c.cov > 0 {
			c.rel = math.Exp(c.logit)
		}
	}
	for _, c := range p.cands {
		if c.winRel <= 0 || c.winLen < 2 {
			continue
		}
		win := []*candidate{c}
		for n := c.next; n != nil && len(win) < c.winLen; n = n.next {
			win = append(win, n)
		}
		c.winRel = math.Exp(r.SentenceScore(e.features(p, win, c.winRel)))
	}
}

// answerFeatures returns the answerability features (AnswerFeatureNames)
// of a reading whose candidates the reader scored.
func (e *Extractive) answerFeatures(p *prepared) []float64 {
	top, second := -20.0, -20.0
	var best *candidate
	bestCov, bestText, bestBigram := 0.0, 0.0, 0.0
	anyTyped := false
	for _, c := range p.cands {
		if c.feat == nil {
			c.feat = e.features(p, []*candidate{c}, -1)
			if e.opt.Reader != nil {
				c.logit = e.opt.Reader.SentenceScore(c.feat)
			}
		}
		switch {
		case best == nil || c.logit > top:
			second = top
			top, best = c.logit, c
		case c.logit > second:
			second = c.logit
		}
		bestCov = max(bestCov, c.feat[0])
		bestText = max(bestText, c.feat[1])
		bestBigram = max(bestBigram, c.feat[4])
		anyTyped = anyTyped || c.typed
	}
	missing, missingMax := 0.0, 0.0
	if p.total > 0 {
		for _, t := range p.content {
			found := false
			for i := range p.results {
				if p.headings[i][t] {
					found = true
					break
				}
			}
			for _, c := range p.cands {
				if found {
					break
				}
				found = c.terms[t]
			}
			if !found {
				missing += p.weights[t]
				missingMax = max(missingMax, p.weights[t])
			}
		}
		missing /= p.total
		missingMax /= p.total
	}
	var ev strings.Builder
	for i, r := range p.results {
		ev.WriteString(strings.ToLower(analysis.Normalize(r.Heading + "\n" + p.texts[i])))
		ev.WriteString("\n")
	}
	idents := identifiers(p.query)
	absent := 0
	for _, id := range idents {
		if !strings.Contains(ev.String(), id) {
			absent++
		}
	}
	topTyped, topFrac, topRet, topRule := 0.0, 0.0, 0.0, 0.0
	if best != nil {
		topTyped, topFrac, topRet, topRule = b2f(best.typed), best.feat[3], p.results[best.chunk].Score, best.ruleRel
	}
	evidence := 0.0
	for _, r := range p.results {
		evidence = max(evidence, r.EvidenceScore)
	}
	return []float64{
		top, second, bestCov, bestText, bestBigram, missing,
		b2f(p.qtype.Strict() && !anyTyped), topTyped,
		math.Log1p(float64(len(p.content))), topFrac, topRet, evidence, topRule,
		float64(absent), missingMax,
	}
}

// Reading is what the extractive reader makes of one question's
// evidence, for the decision stage and for training: every candidate
// sentence with its features and score, and the answerability features.
type Reading struct {
	Candidates []ReadCandidate
	// AnswerFeatures are the answerability features (AnswerFeatureNames).
	AnswerFeatures []float64
	// Answerability is the reader's probability that the evidence
	// answers; -1 without a reader.
	Answerability float64
	// Threshold is the reader's answerability threshold (0 without one).
	Threshold float64
	p         *prepared
}

// ReadCandidate is one candidate sentence of a Reading.
type ReadCandidate struct {
	Passage  int    // index into the results
	Text     string // as the answer would quote it
	Features []float64
	Score    float64 // the sentence model's logit; 0 without a reader
	// Relevance is what the answer ranks candidates by: the sigmoid of
	// Score with a reader, the rule-based relevance without.
	Relevance float64
}

// Read reads results for query without composing an answer. Candidates
// come in passage and document order.
func (e *Extractive) Read(query string, results []retrieve.Result) *Reading {
	p := e.prepare(query, results)
	rd := &Reading{p: p, Answerability: -1}
	for _, c := range p.cands {
		if c.feat == nil {
			c.feat = e.features(p, []*candidate{c}, -1)
		}
		rd.Candidates = append(rd.Candidates, ReadCandidate{Passage: c.chunk, Text: c.text, Features: c.feat, Score: c.logit, Relevance: c.rel})
	}
	rd.AnswerFeatures = e.answerFeatures(p)
	if e.opt.Reader != nil && len(p.cands) > 0 {
		rd.Answerability = e.opt.Reader.Answerability(rd.AnswerFeatures)
	}
	if e.opt.Reader != nil {
		rd.Threshold = e.opt.Reader.AnswerThreshold()
	}
	return rd
}

// Compose writes the answer of a Reading (what Generate does after
// reading).
func (e *Extractive) Compose(ctx context.Context, rd *Reading) (Answer, error) {
	return e.compose(ctx, rd.p)
}

// identifierRe matches a run of Latin letters, digits and the marks that
// join them in versions and codes (3.21, SOCKS5, kube-proxy, 4K).
var identifierRe = regexp.MustCompile(`[a-z0-9][a-z0-9._\-+/]*[a-z0-9]|[0-9]`)

// identifiers returns the question's identifiers, lower case and
// normalised: Latin words of two or more letters and anything holding a
// digit. A question that names one the evidence never mentions asks about
// something else (a version, a product, a year the documents do not have).
func identifiers(q string) []string {
	var out []string
	for _, m := range identifierRe.FindAllString(strings.ToLower(analysis.Normalize(q)), -1) {
		if len(m) >= 2 || strings.ContainsAny(m, "0123456789") {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}
