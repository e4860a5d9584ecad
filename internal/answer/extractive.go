package answer

import (
	"context"
	"fmt"
	"github.com/shirube/shirube/internal/analysis"
	"math"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/guard"
	"github.com/shirube/shirube/internal/retrieve"
)

// ExtractiveOptions tune the extractive generator. Zero values take the
// defaults shown.
type ExtractiveOptions struct {
	MaxSentences int     // most sentences in an answer; default 3
	MaxRunes     int     // length budget of the answer text; default 250
	RankBonus    float64 // relevance bonus of the top-ranked chunk, decaying as 1/rank; default 0.05
	Diversity    float64 // MMR weight of novelty against relevance, 0–1; default 0.3
	MinRelative  float64 // a further sentence needs this share of the best one's score; default 0.5
	// Reader, when set, scores the candidate sentences with learned
	// weights instead of the rule-based relevance, and judges whether
	// the evidence answers at all (Reading.Answerability).
	Reader Reader
}

func (o ExtractiveOptions) withDefaults() ExtractiveOptions {
	if o.MaxSentences <= 0 {
		o.MaxSentences = 3
	}
	if o.MaxRunes <= 0 {
		o.MaxRunes = 250
	}
	if o.RankBonus == 0 {
		o.RankBonus = 0.05
	}
	if o.Diversity == 0 {
		o.Diversity = 0.3
	}
	if o.MinRelative == 0 {
		o.MinRelative = 0.5
	}
	return o
}

// Extractive answers by quoting the retrieved chunks. It needs no model and
// works offline; it is the default generator.
//
// Each chunk is split into sentences; each sentence is scored by how much of
// the query it covers (query terms weighted by their inverse document
// frequency over the retrieved sentences) plus a small bonus for its chunk's
// rank. The best sentence is always taken, together with one neighbour in
// its chunk: the one before or after, whichever adds more query coverage
// (after on a tie), because a factoid question is usually built from one
// sentence and the fact it asks for often sits next to it. Further sentences
// are picked MMR-style (relevance against overlap with what is already
// picked) while they add query coverage, stay within MinRelative of the best
// and fit the length budget. A question about a procedure (手順, 方法,
// どうすれば, "how to") first takes the list that follows the best sentence in
// its chunk — the steps, in order — while they fit the budget. A sentence
// that opens a numbered list item keeps its number (「1. 」). The picked sentences are printed in
// document order, each run of sentences from one chunk followed by that
// chunk's citation marker [n].
//
// A query term found only in the heading of a sentence's chunk counts half.
// Query content terms that neither a picked sentence nor the heading of its
// chunk contains are reported as Unknowns. The text never contains a word
// that is not in the evidence.
type Extractive struct {
	tok Tokenizer
	opt ExtractiveOptions
}

// NewExtractive returns an extractive generator that compares terms made by
// tok.
func NewExtractive(tok Tokenizer, opt ExtractiveOptions) *Extractive {
	return &Extractive{tok: tok, opt: opt.withDefaults()}
}

// GeneratorExtractive is Answer.Generator for extractive answers.
const GeneratorExtractive = "extractive"

// candidate is one sentence of a retrieved chunk.
type candidate struct {
	chunk int    // index into the results
	pos   int    // position within the chunk
	line  int    // source line within the chunk
	text  string // sentence as displayed
	runes int
	terms map[string]bool
	rel   float64 // coverage of the query plus rank bonus
	cov   float64 // weighted share of the query it covers
	item  bool    // its line is a list item (a step, a bullet)
	typed bool    // it holds an expression of the kind of fact the question asks for
	// defines is set when it defines the term a definition question asks
	// about (analysis.Defines).
	defines bool
	// acts is set, for a who question, when it names an agent together
	// with the act the question asks about (analysis.AskedVerb).
	acts bool
	// note is the key of the note it belongs to ("*1", "注2"), refs the
	// keys of the note markers it carries (see notes.go).
	note string
	refs []noteRef
	// faqQ is set for every sentence of a line an FAQ marks as its
	// question (「Q. 変更した設定が保持されない。Tera Term を終了して…元に
	// 戻っている。」): the second sentence asks too, with no question mark.
	faqQ bool
	// number is the item number of its line ("1.") when it is the line's
	// first sentence; answers keep it so that steps read as steps.
	number string
	// code marks a line of a fenced code block (quoted in a fence).
	code bool
	// titled marks the first sentence of a section whose heading names
	// the term a definition question asks about: it defines the term
	// without naming it (「## 2.8 供給ソフトウェア」「組織が…配布…するソフトウェア。」).
	titled bool
	// weakDate marks, for a when question, a sentence whose only date is
	// a deadline in words (see weakDateFactor).
	weakDate bool
	// nav marks a line that only names a section of its document, as a
	// table of contents does (see navigation).
	nav bool
	// prev and next are the sentences before and after it in the
	// document: in its chunk, or across the join of a stitched chunk.
	prev, next *candidate
	// nextOnLine is set when next goes on on the same source line (a
	// paragraph of law, a line of prose), not on the next one.
	nextOnLine bool
	// winRel is the relevance of the best window of winLen sentences that
	// starts with this one (see windowRelevance); 0 when none counts.
	winRel float64
	winLen int
	// feat are its features (SentenceFeatureNames) and logit the
	// reader's score of them; nil and 0 until the reader read it.
	feat  []float64
	logit float64
	// ruleRel is the hand-written relevance (rel before the reader
	// replaced it), one of the reader's features.
	ruleRel float64
}

// linkNeighbours sets each candidate's prev and next: the sentences around
// it in its chunk, and across the join of two stitched chunks (succ).
//
// A chunk whose first line goes on from its predecessor's last line
// (midLine) has that line's sentences belong to the same note.
func linkNeighbours(cands []*candidate, succ map[int]int, midLine map[int]bool) {
	first := map[int]*candidate{}
	last := map[int]*candidate{}
	for i, c := range cands {
		if first[c.chunk] == nil {
			first[c.chunk] = c
		}
		last[c.chunk] = c
		if i > 0 && cands[i-1].chunk == c.chunk {
			c.prev, cands[i-1].next = cands[i-1], c
			cands[i-1].nextOnLine = cands[i-1].line == c.line
		}
	}
	for i, j := range succ {
		a, b := last[i], first[j]
		if a == nil || b == nil {
			continue
		}
		a.next, b.prev = b, a
		a.nextOnLine = midLine[j]
		if midLine[j] && a.note != "" {
			for _, c := range cands {
				if c.chunk == j && c.line == b.line && c.note == "" {
					c.note = a.note
				}
			}
		}
	}
}

// Generate answers query from results, which are in rank order. When no
// sentence (nor the heading of its chunk) shares a content term with the
// query, the answer has empty Text and no Evidence, and Unknowns names the
// query's content.
func (e *Extractive) Generate(ctx context.Context, query string, results []retrieve.Result) (Answer, error) {
	if err := ctx.Err(); err != nil {
		return Answer{}, fmt.Errorf("extractive answer: %w", err)
	}
	p := e.prepare(query, results)
	return e.compose(ctx, p)
}

// prepared is the reading of one question's evidence: the candidate
// sentences with their relevance, and what the answer is composed from.
type prepared struct {
	query    string
	results  []retrieve.Result
	qterms   []string
	content  []string
	excluded []string
	weights  map[string]float64
	total    float64
	qtype    analysis.AnswerType
	headings []map[string]bool
	texts    []string
	cands    []*candidate
	fc       *featureContext
}

// prepare splits the evidence into candidate sentences and scores each
// (and each window of adjacent ones) for how well it answers query: by the
// reader's sentence model when one is set, else by the rule-based
// relevance.
func (e *Extractive) prepare(query string, results []retrieve.Result) *prepared {
	qterms := e.tok.Terms(query)
	content, excluded := withoutExcluded(uniqueContent(qterms), query, e.tok)
	qtype := analysis.QuestionType(query)
	term, verb := "", ""
	if qtype.Kind == analysis.KindDefinition || strings.Contains(analysis.Normalize(query), "とは") {
		// 「「関係者」とは、具体的に誰のことですか」 asks who by asking
		// what a term means: the sentence that defines it answers.
		term = analysis.DefinedTerm(query)
	}
	if qtype.Kind == analysis.KindWho {
		verb = analysis.AskedVerb(query)
	}

	var cands []*candidate
	headings := make([]map[string]bool, len(results))
	texts, succ, midLine := stitchChunks(results, readTexts(results))
	for ci, r := range results {
		headings[ci] = termSet(e.tok.Terms(r.Heading + "\n" + strings.Join(headingLines(r.Text), "\n")))
		// A section titled by the asked term (a glossary's 「2.8 供給
		// ソフトウェア」, an FAQ's 「重大インシデントとは何か？」) defines it in
		// its first sentence, which does not name it again.
		titled := term != "" && analysis.HeadingTerm(r.Section()) == term
		pos := 0
		text := texts[ci]
		pdf := strings.EqualFold(path.Ext(r.Source), ".pdf")
		info := candidateLineInfo(text)
		notes, labelOnly := lineNotes(text)
		firstOfChunk := len(cands)
		for li, line := range lineSentences(text) {
			if labelOnly[li] {
				continue // a note's label alone states nothing
			}
			faqLine := len(line) > 0 && faqQuestionRe.MatchString(strings.TrimSpace(line[0]))
			for si, s := range line {
				ns := analysis.Normalize(s)
				typed := qtype.Kind != analysis.KindNone && qtype.Kind != analysis.KindProcedure && qtype.Satisfied(ns)
				if qtype.Kind == analysis.KindWho {
					// An agent the question names itself answers nothing.
					typed = analysis.NamesAgent(s, query)
				}
				if pdf && utf8.RuneCountInString(s) < 12 && !endsSentence(s) && !typed && !(li < len(info) && info[li].item) {
					continue // a PDF title, page header or table cell, not a statement
				}
				if tocEntry.MatchString(s) {
					continue // a table-of-contents entry points at the answer, it holds none
				}
				if bracketLabel.MatchString(s) {
					continue // 「（答）」「【参考】」 label what follows, they state nothing
				}
				first := titled && len(cands) == firstOfChunk
				cands = append(cands, &candidate{
					chunk: ci, pos: pos, line: li, text: s,
					runes: utf8.RuneCountInString(s),
					terms: termSet(e.tok.Terms(s)),
					item:  li < len(info) && info[li].item,
					code:  li < len(info) && info[li].code,
					typed: typed,
					// A definition question is answered by the sentence
					// that defines its term, not one that uses it.
					defines: analysis.Defines(paragraphMark.ReplaceAllString(ns, ""), term) || analysis.DefinesByApposition(ns, term) || first,
					titled:  first,
					// A when question is answered less surely by a
					// deadline in words (経過, 速やかに) than by a date.
					weakDate: typed && qtype.Kind == analysis.KindDate && !analysis.ExplicitDate(ns),
					// A who question is answered where the agent and
					// the asked act meet (「…消防署長に届け出なければならない」
					// for 「どこへ届け出る」).
					acts: typed && verb != "" && strings.Contains(ns, verb),
					note: notes[li],
					refs: noteRefs(s),
					faqQ: faqLine,
				})
				if si == 0 && li < len(info) {
					cands[len(cands)-1].number = info[li].number
				}
				pos++
			}
		}
	}
	linkNeighbours(cands, succ, midLine)
	weights := idfWeights(content, cands)
	var total float64
	for _, t := range content {
		total += weights[t]
	}
	headers := tableHeaders(texts, e.tok)
	notes := noteTerms(cands, results)
	markNavigation(cands, results, texts)
	for _, c := range cands {
		row := strings.HasPrefix(c.text, "|")
		var noted map[string]bool
		for _, ref := range c.refs {
			if m := notes[results[c.chunk].File+"\x00"+ref.key]; m != nil {
				noted = m
				break
			}
		}
		for _, t := range content {
			switch {
			case c.terms[t]:
				c.cov += weights[t]
			case c.titled && headings[c.chunk][t]:
				// The heading is the subject of the sentence that
				// defines it.
				c.cov += weights[t]
			case headings[c.chunk][t] || row && headers[c.chunk][t] || noted[t]:
				// A note's words are read with the sentence or cell
				// that carries its marker, as a heading's are.
				// A table row is read with its column headers, as a
				// sentence is read with its section's heading.
				c.cov += headingShare * weights[t]
			}
		}
		if total > 0 {
			c.cov /= total
		}
		if c.cov > 0 {
			c.rel = c.cov*typeFactor(qtype, c.typed) + e.opt.RankBonus/float64(c.chunk+1)
			if c.defines {
				c.rel *= definitionBonus
			}
			if c.acts {
				c.rel *= actBonus
			}
			if len(excluded) > 0 && describesExcluded(c, excluded) {
				c.rel *= excludedFactor
			}
			if c.question() {
				// A question in the evidence (an FAQ's 「問３．…ですか。」)
				// repeats the user's words but answers nothing.
				c.rel *= questionFactor
			}
			if headless(c.text) {
				c.rel *= headlessFactor
			}
			if c.nav {
				c.rel *= navigationFactor
			}
			if exampleRe.MatchString(c.text) {
				c.rel *= exampleFactor
			}
			if c.weakDate {
				c.rel *= weakDateFactor
			}
		}
	}

	e.answersInherit(cands, content, weights, total, headings, qtype)
	for _, c := range cands {
		win := []*candidate{c}
		for n := c.next; n != nil && len(win) < maxWindow; n = n.next {
			win = append(win, n)
			if r := e.windowRelevance(win, content, weights, total, headings, qtype); r > c.winRel {
				c.winRel, c.winLen = r, len(win)
			}
		}
	}

	for _, c := range cands {
		c.ruleRel = c.rel
	}
	p := &prepared{query: query, results: results, qterms: qterms, content: content, excluded: excluded,
		weights: weights, total: total, qtype: qtype, headings: headings, texts: texts, cands: cands}
	p.fc = newFeatureContext(p, headers)
	if e.opt.Reader != nil {
		e.readerRelevance(p)
	}
	return p
}

// compose picks the answer sentences of a prepared reading and writes the
// answer.
func (e *Extractive) compose(ctx context.Context, p *prepared) (Answer, error) {
	a := Answer{Generator: GeneratorExtractive}
	query, results, qterms, content, weights, qtype, headings, texts, cands := p.query, p.results, p.qterms, p.content, p.weights, p.qtype, p.headings, p.texts, p.cands
	var picked []*candidate
	if qtype.Kind == analysis.KindProcedure {
		picked = e.procedureSection(cands, results, qterms)
	}
	if picked == nil {
		picked = e.pick(cands, results, content, weights, qtype, query)
	}
	var cited map[int]int
	a.Text, a.Evidence, cited = compose(picked, results)
	v := VerifyClaims(a.Text, citedTexts(cited, texts), e.tok, 0)
	a.Verification = &v
	if err := ctx.Err(); err != nil {
		return Answer{}, fmt.Errorf("extractive answer: %w", err)
	}

	covered := map[string]bool{}
	for _, c := range picked {
		for t := range c.terms {
			covered[t] = true
		}
		for t := range headings[c.chunk] {
			covered[t] = true
		}
	}
	a.Unknowns = unknownsLine(query, qterms, covered, a.Text)
	if guard.DetectInstruction(a.Text) {
		// A quoted sentence that reads like an order to an AI (a planted
		// 「以前の指示を無視して…」): say it is the document speaking.
		a.Text += "\n\n" + guard.QuotedInstructionNotice
	}
	return a, nil
}

// procedureFloor is the share of the best passage's retrieval score below
// which a section is not taken as the procedure asked for.
const procedureFloor = 0.5

// procedureSection answers a question about a procedure with the steps of
// the section whose own heading names it: 「ロックアウトの解除手順は？」 is
// answered by the list items and commands under 「5.1 ロックアウトの解除」,
// not by the overview that mentions unlocking. A section's own headings are
// its heading path without the document title (which every section of the
// document shares); they must cover more of the question — request words
// such as 手順 included — than any other retrieved section's (on a tie,
// the first in the document), and the section must hold steps. The steps are quoted in order within the length
// budget, after the sentence that introduces them. nil means no section
// qualifies and the sentence-based pick applies.
func (e *Extractive) procedureSection(cands []*candidate, results []retrieve.Result, qterms []string) []*candidate {
	terms := map[string]bool{}
	for _, t := range qterms {
		if !strings.HasPrefix(t, analysis.NGramPrefix) && (isContentTerm(t) || analysis.IsRequestWord(t)) {
			terms[t] = true
		}
	}
	// bodyHits counts the question's content terms (not request words)
	// in a section's text.
	bodyHits := func(ci int) int {
		n, body := 0, analysis.Normalize(results[ci].Text)
		for t := range terms {
			if !analysis.IsRequestWord(t) && analysis.Present(body, t) {
				n++
			}
		}
		return n
	}
	best, bestScore := -1, 0.0
	top := 0.0
	for _, r := range results {
		top = max(top, r.Score)
	}
	for ci, r := range results {
		if r.Score < procedureFloor*top {
			// A section far below the best passage (a facet search's
			// find) names the procedure by chance, not the one asked.
			continue
		}
		own := r.Heading
		if i := strings.Index(own, " > "); i >= 0 {
			own = own[i+3:]
		} else if !strings.EqualFold(path.Ext(r.Source), ".pdf") {
			continue // no section below the title
		} // a PDF's headings are its numbered sections, never its title
		hn := analysis.Normalize(own)
		score := 0.0
		if analysis.IsProcedure(hn) {
			score += 0.5 // the heading names a procedure (手順, 方法 …)
		}
		for t := range terms {
			if analysis.Present(hn, t) {
				w := 1.0
				if analysis.IsRequestWord(t) {
					w = 0.5
				}
				score += w
			}
		}
		switch {
		case score > bestScore:
			best, bestScore = ci, score
		case score == bestScore && best >= 0 && bodyHits(ci) != bodyHits(best):
			// Headings that name the question equally (「3.1 EDR による
			// 隔離」 and 「3.2 EDR が使えない場合」 under 「3. 隔離の
			// 手順」): the section whose text holds more of what is
			// asked (スイッチ, ポート, shutdown) is the one meant.
			if bodyHits(ci) > bodyHits(best) {
				best = ci
			}
		case score == bestScore && best >= 0 && r.File == results[best].File && chunkIndex(r.ChunkID) < chunkIndex(results[best].ChunkID):
			// Sibling sections that name the procedure equally: its
			// steps begin in the first one.
			best = ci
		}
	}
	if best < 0 || bestScore < 1 {
		return nil
	}
	var picked []*candidate
	used, steps := 0, 0
	for _, c := range cands {
		if c.chunk != best {
			continue
		}
		if !c.item && steps > 0 {
			continue // prose after the steps began
		}
		if used+c.runes > e.opt.MaxRunes && len(picked) > 0 {
			break
		}
		picked = append(picked, c)
		used += c.runes
		if c.item {
			steps++
		}
	}
	if steps == 0 {
		return nil
	}
	return picked
}

// referringPenalty returns the candidate that states a penalty and refers
// to an article named in the heading of best's chunk (or in best itself),
// from the same source document; nil when there is none.
func referringPenalty(cands []*candidate, best *candidate, results []retrieve.Result) *candidate {
	src := results[best.chunk]
	arts := analysis.Articles(src.Heading)
	if len(arts) == 0 {
		arts = analysis.Articles(best.text)
	}
	if len(arts) == 0 {
		return nil
	}
	a := arts[len(arts)-1] // the innermost: the article itself
	for _, c := range cands {
		if c.typed && c != best && results[c.chunk].File == src.File && analysis.Refers(c.text, a) {
			return c
		}
	}
	return nil
}

// windowRelevance scores adjacent sentences read as one passage: the query
// coverage of them together, the type factor of whichever holds the asked
// kind of fact, and the rank bonus of the better-ranked chunk. A fact often
// spans two sentences — the one that names the subject and the one that
// states the fact (「…掲示することによって行うことができる。この場合において
// は、…二週間を経過したときに…到達したものとみなす。」) — and neither alone
// outscores a sentence elsewhere that repeats more of the question's words;
// a title block spans short lines (the title, its date, the body that
// decided it). Three or four sentences form a window only when each is a
// short line (shortLine runes). A window that ends with a question, or
// that mixes table rows with prose, does not count; 0 means no window.
func (e *Extractive) windowRelevance(win []*candidate, content []string, weights map[string]float64, total float64, headings []map[string]bool, qtype analysis.AnswerType) float64 {
	if len(win) < 2 || total <= 0 || win[len(win)-1].question() {
		return 0
	}
	runes, typed, defines, acts, any := 0, false, false, false, false
	row := strings.HasPrefix(win[0].text, "|")
	for _, c := range win {
		if strings.HasPrefix(c.text, "|") != row || len(win) > 2 && c.runes > shortLine {
			return 0
		}
		runes += c.runes
		typed = typed || c.typed
		defines = defines || c.defines
		acts = acts || c.acts
		any = any || c.cov > 0
	}
	if !any || runes > e.opt.MaxRunes {
		return 0
	}
	cov := unionCoverage(win, content, weights, total, headings)
	first := win[0].chunk
	for _, c := range win {
		first = min(first, c.chunk)
	}
	rel := cov*typeFactor(qtype, typed) + e.opt.RankBonus/float64(first+1)
	if defines {
		rel *= definitionBonus
	}
	if acts {
		rel *= actBonus
	}
	if headless(win[0].text) {
		rel *= headlessFactor
	}
	if slices.ContainsFunc(win, func(c *candidate) bool { return c.nav }) {
		rel *= navigationFactor
	}
	if len(win) == 2 && !win[0].nextOnLine {
		// Two sentences of one paragraph read as one more surely than the
		// end of one paragraph and the start of the next.
		rel *= crossLineFactor
	}
	return rel
}

// crossLineFactor scales a pair of sentences on two source lines.
const crossLineFactor = 0.9

// shortLine is the longest sentence that may join a window of more than
// two: a title, a date line, a table cell.
const shortLine = 40

// maxWindow is the most sentences a window holds.
const maxWindow = 4

// unionCoverage is the weighted share of the query that the candidates
// cover together (a term only in the heading of a chunk of theirs counts
// headingShare).
func unionCoverage(cs []*candidate, content []string, weights map[string]float64, total float64, headings []map[string]bool) float64 {
	cov := 0.0
	for _, t := range content {
		inText, inHeading := false, false
		for _, c := range cs {
			inText = inText || c.terms[t]
			inHeading = inHeading || headings[c.chunk][t]
		}
		switch {
		case inText:
			cov += weights[t]
		case inHeading:
			cov += headingShare * weights[t]
		}
	}
	return cov / total
}

// faqAnswerSpan is how many sentences after a question in the evidence
// count as its answer.
const faqAnswerSpan = 4

// answersInherit lets the sentences that answer a question written in the
// evidence — an FAQ's 「問 21．…登録申請を行うことはできますか。」 followed
// by 「（答）…具体的には、…として記載すれば…」 — be scored with that
// question's words as well as their own: the FAQ's question repeats what
// the user asks, its answer holds what the user wants, in other words.
// The answer is the few sentences after the question, up to the next one;
// a sentence keeps the better of its own relevance and the inherited one.
func (e *Extractive) answersInherit(cands []*candidate, content []string, weights map[string]float64, total float64, headings []map[string]bool, qtype analysis.AnswerType) {
	if total <= 0 {
		return
	}
	for _, q := range cands {
		if q.cov <= 0 || !q.question() {
			continue
		}
		a := q.next
		for n := 0; a != nil && n < faqAnswerSpan && !a.question(); n, a = n+1, a.next {
			if a.cov <= 0 && !(n == 0 && faqAnswerRe.MatchString(strings.TrimSpace(a.text))) {
				// A sentence that shares nothing with the user's question
				// inherits only when the FAQ marks it as the answer (「A. …」).
				continue
			}
			cov := unionCoverage([]*candidate{q, a}, content, weights, total, headings)
			rel := cov*typeFactor(qtype, a.typed) + e.opt.RankBonus/float64(a.chunk+1)
			if a.defines {
				rel *= definitionBonus
			}
			if a.acts {
				rel *= actBonus
			}
			a.rel = max(a.rel, rel)
		}
	}
}

// pairMargin is how much more than the best single sentence a window of
// adjacent sentences must score to be the answer's core.
const pairMargin = 0.4

// noteTerms returns the words of each note, keyed by the note's file and
// marker key: what a marker in a sentence of that file refers to.
func noteTerms(cands []*candidate, results []retrieve.Result) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, c := range cands {
		if c.note == "" {
			continue
		}
		k := results[c.chunk].File + "\x00" + c.note
		if out[k] == nil {
			out[k] = map[string]bool{}
		}
		for t := range c.terms {
			out[k][t] = true
		}
	}
	return out
}

// noteSentence returns the sentence of a note that a picked sentence
// refers to by its marker, from the same page: of the note's sentences the
// one that adds the most query coverage (gain), the one holding the asked
// kind of fact on a tie; a note of a word the question uses (normalised
// query) counts double. nil when no picked sentence carries a marker or
// no note sentence adds anything.
func noteSentence(picked, cands []*candidate, results []retrieve.Result, gain func(*candidate) float64, query string) *candidate {
	var best *candidate
	bestScore := 0.0
	for _, p := range picked {
		file := results[p.chunk].File
		for _, ref := range p.refs {
			for _, c := range cands {
				if c.note != ref.key || c == p || results[c.chunk].File != file {
					continue
				}
				score := gain(c)
				if c.typed {
					score += 1e-6 + 0.5*score
				}
				if ref.word != "" && strings.Contains(query, ref.word) {
					// The note of the word the question asks about.
					score *= 2
				}
				if score > bestScore {
					best, bestScore = c, score
				}
			}
		}
	}
	return best
}

// withoutExcluded drops from content the terms that only the question's
// excluded phrases hold (「（特に大規模なものを除く）」, analysis.ExcludedPhrases):
// they describe the case the question sets aside, and a sentence that
// repeats them answers that case.
//
// The dropped terms come back as excluded.
func withoutExcluded(content []string, query string, tok Tokenizer) (_, excluded []string) {
	phrases := analysis.ExcludedPhrases(query)
	if len(phrases) == 0 {
		return content, nil
	}
	rest := analysis.Normalize(query)
	inPhrase := map[string]bool{}
	for _, p := range phrases {
		rest = strings.Replace(rest, p, "、", 1)
		for _, t := range tok.Terms(p) {
			inPhrase[t] = true
		}
	}
	kept := termSet(tok.Terms(rest))
	out := slices.DeleteFunc(slices.Clone(content), func(t string) bool {
		if inPhrase[t] && !kept[t] {
			excluded = append(excluded, t)
			return true
		}
		return false
	})
	return out, excluded
}

// describesExcluded reports whether a sentence holds most of the terms of
// what the question excludes (at least half, and at least one that is not
// a request or predicate word): it describes the case set aside.
func describesExcluded(c *candidate, excluded []string) bool {
	n, strong := 0, false
	for _, t := range excluded {
		if c.terms[t] {
			n++
			strong = strong || !analysis.IsPredicate(t) && isContentTerm(t)
		}
	}
	return strong && 2*n >= len(excluded)
}

// excludedFactor scales the relevance of a sentence that describes what
// the question excludes.
const excludedFactor = 0.7

// tocEntry matches a table-of-contents entry: a title and its page number
// joined by a run of leader characters (「問 21．… ______ 14」「２.１ 原則 ..... 4」).
var tocEntry = regexp.MustCompile(`[_＿]{5,}|[.．・…‥]{5,}|(?:\. ){4,}`)

// paragraphMark matches the mark that opens a paragraph of some legal
// texts (「○４　関係者とは、…」).
var paragraphMark = regexp.MustCompile(`^[○◯]`)

// listAnnouncement matches the words with which a sentence announces the
// list below it.
var listAnnouncement = regexp.MustCompile(`(?:以下|次|下記)の(?:ような|とおり|通り|[\p{Han}\p{Katakana}]+(?:が|を|に|は))|(?:以下|次|下記)のとおり|次に掲げる`)

// announcesList reports whether a sentence announces the list that follows
// it and ends there (with 。 or a colon).
func announcesList(s string) bool {
	s = strings.TrimSpace(s)
	return listAnnouncement.MatchString(s) && (strings.HasSuffix(s, "。") || strings.HasSuffix(s, "：") || strings.HasSuffix(s, ":"))
}

// bracketLabel matches a line that is only a short bracketed label:
// 「（答）」「【参考】」「(注)」.
var bracketLabel = regexp.MustCompile(`^[（(【\[〔][^）)】\]〕]{1,6}[）)】\]〕]$`)

// questionFactor scales the relevance of a sentence that is itself a
// question.
const questionFactor = 0.5

// isQuestion reports whether a sentence asks rather than states: it ends
// with a question mark, or with 「か。」 or 「ください。」 after a request
// (「…できますか。」「…を教えてください。」).
// question reports whether a candidate asks rather than states: a
// sentence that reads as a question, or any sentence of an FAQ's question
// line.
func (c *candidate) question() bool { return c.faqQ || isQuestion(c.text) }

func isQuestion(s string) bool {
	s = strings.TrimRight(strings.TrimSpace(s), " 　")
	if faqQuestionRe.MatchString(s) {
		return true
	}
	for _, end := range []string{"？", "?", "か。", "か.", "ますか", "ですか", "教えてください。", "教えて下さい。"} {
		if strings.HasSuffix(s, end) {
			return true
		}
	}
	return false
}

// faqQuestionRe finds the marker of an FAQ's question: 「Q. …」「Q：…」
// 「Ｑ１ …」「質問 …」.
var faqQuestionRe = regexp.MustCompile(`^(?:\*\*)?(?:[QqＱｑ]|質問)\s*[0-9０-９]*\s*(?:[.．:：、)）]|\s)`)

// faqAnswerRe finds the marker of an FAQ's answer: 「A. …」「Ａ：…」「回答 …」.
var faqAnswerRe = regexp.MustCompile(`^(?:\*\*)?(?:[AaＡａ]|回答|答)\s*[0-9０-９]*\s*(?:[.．:：、)）]|\s)`)

// actBonus multiplies the relevance of a sentence that names an agent
// doing what a who question asks about.
const actBonus = 1.3

// definitionBonus multiplies the relevance of a sentence that defines the
// term a definition question asks about. A definition shares few of the
// question's other words (「ガイドでいう」, 「どういう状態」), so a sentence
// that only uses the term in a list of the document's words outscored it
// at 1.5; at 2.5 the defining sentence leads (qa-ja-docs-2 +1 on every
// profile, qa-ja-docs and JSQuAD `bench answers` unchanged; BENCHMARKS,
// "Ninth session").
const definitionBonus = 2.5

// typeFactor scales a sentence's query coverage by whether it holds the kind
// of fact the question asks for (a number with the asked counter, a date, a
// penalty, a definition …): a sentence that only repeats the question's
// words loses to the one that carries the answer. Strict kinds (see
// analysis.AnswerType.Strict) weigh more than the rest.
func typeFactor(qt analysis.AnswerType, typed bool) float64 {
	switch {
	case typed || qt.Kind == analysis.KindNone || qt.Kind == analysis.KindProcedure:
		return 1
	case qt.Strict():
		return 0.6
	}
	return 0.85
}

// exampleRe matches a sentence that opens an example (「例えば、ピーク時に
// 1,000 台の端末が…」): it illustrates the statement before it with made-up
// figures, which are not the figures the document states.
var exampleRe = regexp.MustCompile(`^(?:例えば|たとえば|例として)`)

// exampleFactor scales the relevance of an example sentence. At 0.8 a
// bandwidth guide's statement of 80kbps / 600kbps～3Mbps is quoted
// instead of its worked example (qa-ja-docs-2 +1 on the default profile,
// qa-ja-docs unchanged); 0.9 changed nothing; JSQuAD `bench answers`
// containment 0.9109 → 0.9106 (three of 4,442 answers sit in an example).
const exampleFactor = 0.8

// weakDateFactor scales, for a when question, a sentence whose only
// date is a deadline in words (経過, 速やかに): it answers less surely than
// one that writes the date.
const weakDateFactor = 0.7

// headingShare is how much a query term counts for a sentence when only the
// heading of its chunk contains it: the section is about the term, the
// sentence need not repeat it.
const headingShare = 0.5

// idfWeights weights each query term by a smoothed inverse document
// frequency over the candidate sentences, so a term found in every sentence
// counts little and a rare one much. Terms found nowhere get the highest
// weight: missing them is what Unknowns reports.
func idfWeights(terms []string, cands []*candidate) map[string]float64 {
	n := float64(len(cands))
	w := make(map[string]float64, len(terms))
	for _, t := range terms {
		df := 0.0
		for _, c := range cands {
			if c.terms[t] {
				df++
			}
		}
		w[t] = math.Log(1 + (n+1)/(df+0.5))
		if analysis.IsPredicate(t) {
			w[t] *= analysis.PredicateWeight
		}
	}
	return w
}

// pick chooses the answer sentences.
func (e *Extractive) pick(cands []*candidate, results []retrieve.Result, content []string, weights map[string]float64, qtype analysis.AnswerType, query string) []*candidate {
	procedure := qtype.Kind == analysis.KindProcedure
	var best *candidate
	for _, c := range cands {
		if c.rel > 0 && (best == nil || c.rel > best.rel) {
			best = c
		}
	}
	if best == nil {
		return nil
	}
	// Adjacent sentences that together cover clearly more of the question
	// (or hold the asked fact) than the best single one are taken
	// together; the best of them leads.
	var forced []*candidate
	if e.opt.MaxSentences >= 2 && !procedure {
		var bw *candidate
		for _, c := range cands {
			if c.winRel > 0 && (bw == nil || c.winRel > bw.winRel) {
				bw = c
			}
		}
		if bw != nil && bw.winRel > best.rel*(1+pairMargin) {
			var win []*candidate
			for c, n := bw, 0; n < bw.winLen; c, n = c.next, n+1 {
				win = append(win, c)
			}
			lead := slices.IndexFunc(win, func(c *candidate) bool {
				return !slices.ContainsFunc(win, func(o *candidate) bool { return o.rel > c.rel })
			})
			best = win[lead]
			forced = slices.Delete(win, lead, lead+1)
		}
	}
	picked := []*candidate{best}
	used := best.runes
	isPicked := map[*candidate]bool{best: true}
	covered := map[string]bool{}
	for t := range best.terms {
		covered[t] = true
	}

	take := func(c *candidate) {
		picked = append(picked, c)
		isPicked[c] = true
		used += c.runes
		for t := range c.terms {
			covered[t] = true
		}
	}
	prev, next := best.prev, best.next
	gainOf := func(c *candidate) float64 {
		g := 0.0
		for _, t := range content {
			if c.terms[t] && !covered[t] {
				g += weights[t]
			}
		}
		return g
	}
	fits := func(c *candidate) bool { return c != nil && used+c.runes <= e.opt.MaxRunes }
	if prev != nil && strings.HasPrefix(prev.text, "|") {
		prev = nil // a table row is no continuation of prose
	}
	if next != nil && strings.HasPrefix(next.text, "|") {
		next = nil
	}

	// A factoid question is usually built from one sentence, and its answer
	// often sits in the sentence before (which names the subject) or after
	// (which finishes the thought). Take the neighbour that adds more query
	// coverage; on a tie the one on the same line, then the following one.
	gp, gn := neighbourGain(prev, fits, gainOf), neighbourGain(next, fits, gainOf)
	if gp == gn && prev != nil && next != nil && prev.line == best.line && next.line != best.line {
		gp += 1e-9
	}
	// When the best sentence lacks the asked kind of fact and a neighbour
	// holds it, the fact spans the two: take that neighbour.
	if !best.typed && qtype.Kind != analysis.KindNone && !procedure {
		if fits(prev) && prev.typed && !(fits(next) && next.typed && gn > gp) {
			gp = math.Inf(1)
		} else if fits(next) && next.typed {
			gn = math.Inf(1)
		}
	}
	switch {
	case e.opt.MaxSentences < 2:
	case forced != nil:
		for _, c := range forced {
			take(c)
		}
	case gp > gn:
		take(prev)
	case gn >= 0:
		take(next)
	}

	// When nothing picked so far holds the asked kind of fact, the
	// sentence of the best one's page that holds it — and shares a word
	// with the question — is taken: an FAQ answers 「いつまで使えますか」
	// two lines below the heading that repeats the question's words
	// (「○…の免除」… 「適用期限のない恒久的な措置となります。」).
	if qtype.Kind != analysis.KindNone && !procedure && !slices.ContainsFunc(picked, func(c *candidate) bool { return c.typed }) {
		var sup *candidate
		for _, c := range cands {
			if c.typed && c.rel > 0 && !isPicked[c] && results[c.chunk].File == results[best.chunk].File && fits(c) && (sup == nil || c.rel > sup.rel) {
				sup = c
			}
		}
		if sup != nil {
			take(sup)
		}
	}

	// A quoted sentence that carries a note marker (「JVN（*1）」, a cell
	// 「○（注 2）」) is followed by the sentence of that note — on the same
	// page — that adds the most to the answer: the note often holds what
	// the marked word leaves out (who runs the site, the condition of the
	// ○). It takes the place of the neighbour when both do not fit.
	if c := noteSentence(picked, cands, results, gainOf, analysis.Normalize(query)); c != nil && !isPicked[c] {
		if !fits(c) && len(picked) > 1 && !slices.Contains(forced, picked[len(picked)-1]) {
			drop := picked[len(picked)-1]
			picked, used = picked[:len(picked)-1], used-drop.runes
			delete(isPicked, drop)
		}
		if fits(c) {
			take(c)
		}
	}

	// A penalty question whose best sentence is the provision it asks
	// about (a prohibition) is answered by the penalty provision that
	// refers to that article (「第五十五条の規定に違反した者は、…罰金に処す
	// る」), wherever it was retrieved.
	if qtype.Kind == analysis.KindPenalty && !best.typed {
		if c := referringPenalty(cands, best, results); c != nil && !isPicked[c] {
			if !fits(c) && len(picked) > 1 {
				drop := picked[len(picked)-1]
				picked, used = picked[:len(picked)-1], used-drop.runes
				delete(isPicked, drop)
			}
			if fits(c) {
				take(c)
			}
		}
	}

	// A question about a procedure (「…の手順は？」「…する方法は？」) is
	// answered by the steps: the list that follows the best sentence in its
	// chunk (an intro 「次の手順を必ず踏む。」 or a step itself) is taken in
	// order while it fits the budget.
	if procedure {
		line := best.line
		for _, c := range cands { // in chunk and sentence order
			if c.chunk != best.chunk || c.line <= best.line {
				continue
			}
			if c.line > line+1 || !c.item {
				break // the list ended
			}
			line = c.line
			if isPicked[c] {
				continue
			}
			if !fits(c) || len(picked) >= e.opt.MaxSentences+maxExtraSteps {
				break
			}
			take(c)
		}
	}

	// A sentence that announces a list (「…以下のような認証が存在する。」「次
	// のとおりである。」) is answered by the list: the lines that follow it
	// in its chunk are taken in order while they fit.
	if !procedure && announcesList(best.text) {
		for _, c := range cands {
			if c.chunk != best.chunk || c.line <= best.line || isPicked[c] {
				continue
			}
			if !fits(c) || len(picked) >= e.opt.MaxSentences+maxExtraSteps {
				break
			}
			take(c)
		}
	}

	lambda := 1 - e.opt.Diversity
	for len(picked) < e.opt.MaxSentences {
		var choice *candidate
		choiceScore := 0.0
		for _, c := range cands {
			if isPicked[c] || c.rel < e.opt.MinRelative*best.rel || used+c.runes > e.opt.MaxRunes {
				continue
			}
			if gainOf(c) == 0 {
				continue // adds nothing the answer does not already say
			}
			sim := 0.0
			for _, p := range picked {
				sim = math.Max(sim, jaccard(c.terms, p.terms))
			}
			score := lambda*c.rel - (1-lambda)*sim
			if choice == nil || score > choiceScore {
				choice, choiceScore = c, score
			}
		}
		if choice == nil {
			break
		}
		take(choice)
	}
	// The best sentence alone may exceed the budget; cut it rather than
	// drop the answer.
	if len(picked) == 1 && best.runes > e.opt.MaxRunes {
		cut := *best
		cut.text = e.clauseWindow(best.text, content, weights, qtype)
		picked[0] = &cut
	}
	return picked
}

// Ellipsis marks where an answer cut a sentence of the evidence short.
const Ellipsis = "…"

// clauseWindow shortens a sentence longer than the budget to the run of
// its clauses (cut after 、，,；) that fits and covers the most of the
// question — and, when the question asks for a kind of fact, holds it. The
// cut ends are marked with Ellipsis; the text between is verbatim.
func (e *Extractive) clauseWindow(text string, content []string, weights map[string]float64, qtype analysis.AnswerType) string {
	var clauses []string
	start := 0
	for i, r := range text {
		if r == '、' || r == '，' || r == ',' || r == '；' {
			end := i + utf8.RuneLen(r)
			clauses = append(clauses, text[start:end])
			start = end
		}
	}
	if start < len(text) {
		clauses = append(clauses, text[start:])
	}
	budget := e.opt.MaxRunes - 2*utf8.RuneCountInString(Ellipsis)
	bestScore, bi, bj := -1.0, 0, 0
	for i := range clauses {
		n := 0
		for j := i; j < len(clauses); j++ {
			n += utf8.RuneCountInString(clauses[j])
			if n > budget {
				break
			}
			w := strings.Join(clauses[i:j+1], "")
			terms := termSet(e.tok.Terms(w))
			score := 0.0
			for _, t := range content {
				if terms[t] {
					score += weights[t]
				}
			}
			if qtype.Kind != analysis.KindNone && qtype.Satisfied(analysis.Normalize(w)) {
				score *= 1.5
			}
			if score > bestScore {
				bestScore, bi, bj = score, i, j
			}
		}
	}
	if bestScore < 0 { // not even one clause fits
		return excerpt(text, e.opt.MaxRunes)
	}
	out := strings.Join(clauses[bi:bj+1], "")
	if bi > 0 {
		out = Ellipsis + out
	}
	if bj < len(clauses)-1 {
		out += Ellipsis
	}
	return out
}

// maxExtraSteps is how many sentences beyond MaxSentences the steps of a
// procedure may take.
const maxExtraSteps = 4

// neighbourGain is gain(c) for a neighbour that fits the budget, else -1.
func neighbourGain(c *candidate, fits func(*candidate) bool, gain func(*candidate) float64) float64 {
	if !fits(c) || c.question() {
		// A question (the next item of an FAQ) neither finishes the
		// thought nor names its subject.
		return -1
	}
	return gain(c)
}

func jaccard(a, b map[string]bool) float64 {
	inter := 0
	for t := range a {
		if b[t] {
			inter++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// compose prints picked sentences in document order and builds the evidence
// list of the chunks they come from, numbered in order of first use.
func compose(picked []*candidate, results []retrieve.Result) (string, []Evidence, map[int]int) {
	if len(picked) == 0 {
		return "", nil, nil
	}
	sorted := append([]*candidate(nil), picked...)
	fileRank := map[string]int{}
	for i, r := range results {
		if _, ok := fileRank[r.File]; !ok {
			fileRank[r.File] = i
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		ra, rb := results[a.chunk], results[b.chunk]
		if ra.File != rb.File {
			return fileRank[ra.File] < fileRank[rb.File]
		}
		if ra.Page != rb.Page {
			return ra.Page < rb.Page
		}
		if ia, ib := chunkIndex(ra.ChunkID), chunkIndex(rb.ChunkID); ia != ib {
			return ia < ib
		}
		if a.chunk != b.chunk {
			return a.chunk < b.chunk
		}
		return a.pos < b.pos
	})

	number := map[int]int{} // chunk → citation number
	support := map[int][]string{}
	var ev []Evidence
	var b strings.Builder
	inList := false // the last line written was a numbered step
	for i, c := range sorted {
		n, ok := number[c.chunk]
		if !ok {
			n = len(ev) + 1
			number[c.chunk] = n
			r := results[c.chunk]
			ev = append(ev, Evidence{N: n, File: r.File, Page: r.Page, Heading: r.Heading, Score: r.Score})
		}
		support[c.chunk] = append(support[c.chunk], c.text)
		if c.code {
			// Lines of a fenced code block are quoted in a fenced block,
			// as written (commands are copied from the answer), with the
			// citation after the block.
			prevCode := i > 0 && sorted[i-1].code && sorted[i-1].chunk == c.chunk && sorted[i-1].line+1 == c.line
			nextCode := i+1 < len(sorted) && sorted[i+1].code && sorted[i+1].chunk == c.chunk && sorted[i+1].line == c.line+1
			switch {
			case prevCode:
				b.WriteString("\n")
			case i > 0:
				b.WriteString("\n\n```\n")
			default:
				b.WriteString("```\n")
			}
			inList = false
			b.WriteString(c.text)
			if !nextCode {
				b.WriteString("\n```\n[" + strconv.Itoa(n) + "]")
			}
			continue
		}
		newLine := i == 0 || !continues(sorted[i-1], c)
		if i > 0 && sorted[i-1].code {
			b.WriteString("\n\n")
		} else if i > 0 {
			switch {
			case newLine && inList && c.number == "":
				b.WriteString("\n\n") // a blank line ends the numbered list
				inList = false
			case newLine:
				b.WriteString("\n")
			case lastRune(sorted[i-1].text) < utf8.RuneSelf:
				b.WriteString(" ")
			}
		}
		if newLine && c.number != "" {
			b.WriteString(c.number + " ")
			inList = true
		}
		b.WriteString(c.text)
		if i == len(sorted)-1 || !continues(c, sorted[i+1]) {
			b.WriteString(" [" + strconv.Itoa(n) + "]")
		}
	}
	cited := make(map[int]int, len(number))
	for chunk, n := range number {
		ev[n-1].Excerpt = excerpt(joinSentences(support[chunk]), MaxExcerptRunes)
		cited[n] = chunk
	}
	return b.String(), ev, cited
}

// readTexts returns the text of each result as answers quote it: PDF text
// with its wrapped lines joined.
func readTexts(results []retrieve.Result) []string {
	out := make([]string, len(results))
	for i, r := range results {
		out[i] = r.Text
		if strings.EqualFold(path.Ext(r.Source), ".pdf") {
			out[i] = unwrapPDF(r.Text)
		}
	}
	return out
}

// citedTexts maps citation numbers to the text each one cites (as the
// answer read it: stitched, PDF lines joined); cited maps a citation number
// to an index into texts.
func citedTexts(cited map[int]int, texts []string) map[int]string {
	out := make(map[int]string, len(cited))
	for n, i := range cited {
		out[n] = texts[i]
	}
	return out
}

// joinSentences joins sentences with a space after Latin text and with
// nothing after Japanese punctuation.
func joinSentences(ss []string) string {
	var b strings.Builder
	for i, s := range ss {
		if i > 0 && lastRune(ss[i-1]) < utf8.RuneSelf {
			b.WriteString(" ")
		}
		b.WriteString(s)
	}
	return b.String()
}

// continues reports whether b directly follows a on the same source line,
// so that they print as one run of text with one citation.
func continues(a, b *candidate) bool {
	return a.chunk == b.chunk && a.line == b.line && a.pos+1 == b.pos
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// chunkIndex reads the chunk index from a chunk id of the form File_Index;
// -1 when there is none.
func chunkIndex(id string) int {
	i := strings.LastIndexByte(id, '_')
	if i < 0 {
		return -1
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil {
		return -1
	}
	return n
}

// valueNouns are nouns that ask for a value (保管期間 asks for a
// duration, a length of time or a span of dates, so any number with its
// unit): the answer states them with a value of that kind (1年間),
// rarely with the noun itself.
var valueNouns = map[string]analysis.AnswerKind{
	"期間": analysis.KindQuantity, "期限": analysis.KindDate, "時期": analysis.KindDate, "日時": analysis.KindDate, "日程": analysis.KindDate,
	"金額": analysis.KindQuantity, "件数": analysis.KindQuantity, "人数": analysis.KindQuantity, "回数": analysis.KindQuantity,
	"頻度": analysis.KindQuantity, "日数": analysis.KindQuantity, "年数": analysis.KindQuantity, "時間": analysis.KindQuantity,
	"上限": analysis.KindQuantity, "割合": analysis.KindQuantity, "料金": analysis.KindQuantity, "費用": analysis.KindQuantity,
}

// answersValueNoun reports whether m, a missing piece of the question, is
// a value noun (or ends with one) that the normalised answer states a
// value of.
func answersValueNoun(m, answer string) bool {
	for noun, kind := range valueNouns {
		if strings.HasSuffix(m, noun) && (analysis.AnswerType{Kind: kind}).Satisfied(answer) {
			return true
		}
	}
	return false
}

// unknownsLine reports the query's content terms that covered lacks, as one
// line worded in the query's language; nil when everything is covered. A
// missing piece that answer contains word for word is not reported: it is
// an artefact of terms spanning a word boundary (the bigram "年保" of
// "何年保管" when the answer says "1年間保管").
func unknownsLine(query string, qterms []string, covered map[string]bool, answer string) []string {
	// Unknowns name whole words of the question: character n-grams (「先を」
	// 「を教」) and predicates (使える, 教える) would report fragments and
	// phrasing, not facts, so only nouns — the analyser's word terms — are
	// reported when it made any.
	words := slices.ContainsFunc(qterms, func(t string) bool { return !strings.HasPrefix(t, analysis.NGramPrefix) })
	missing := spans(query, qterms, func(t string) int {
		switch {
		case words && strings.HasPrefix(t, analysis.NGramPrefix):
			return spanIgnore
		case covered[t]:
			return spanBlock
		case isContentTerm(t) && !(words && analysis.IsPredicate(t)):
			return spanKeep
		}
		return spanIgnore
	})
	answer = analysis.Normalize(answer)
	missing = slices.DeleteFunc(missing, func(m string) bool {
		// One character (点 of 注意点) names nothing a reader could look for.
		return utf8.RuneCountInString(m) < 2 || strings.Contains(answer, strings.ToLower(m)) || analysis.IsRequestWord(analysis.Normalize(m)) ||
			answersValueNoun(m, answer)
	})
	if len(missing) == 0 {
		return nil
	}
	if analysis.HasJapanese(query) {
		return []string{"根拠文書に記載がない点: " + strings.Join(missing, ", ")}
	}
	return []string{"Not stated in the evidence: " + strings.Join(missing, ", ")}
}
