package retrieve

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/chunk"
)

// Cross-references of legal text.
//
// The provisions of a law point at each other by article number: the
// penalty chapter (罰則) lists the articles whose violation it punishes
// (「第六十六条第一項から第三項まで…の規定に違反した者は、五十万円以下の
// 罰金に処する」), and the obligation itself says nothing of its penalty. A
// question about the penalty of an act therefore ranks the obligation
// first — its words are the question's — while the answer sits in a
// provision that shares little more than a number with it.
// CrossReferences follows those numbers: from the articles the question
// names, or else the articles the top results are, to the penalty
// provisions of the same law that refer to them; and from a penalty
// article the question names to the provisions it refers to.

// MaxCrossReferences is how many provisions CrossReferences adds at most.
const MaxCrossReferences = 2

// crossRefCandidates is how many chunks the lexical search for a law's
// penalty provisions reads. The query holds the law's title, which every
// chunk of the law carries in its heading lines, and the penalty words, so
// the law's penalty chapter ranks first; a long one spans a few dozen
// chunks.
const crossRefCandidates = 200

// penaltyWords are the words penalty provisions are written in, searched
// for together with the law's title.
const penaltyWords = "罰則 罰金 懲役 禁錮 拘禁刑 科料 過料 処する 科する"

// artNum is an article number: 第六十六条の二 is {66, 2}.
type artNum []int

// compareArt orders article numbers as a law does: 第六十六条 <
// 第六十六条の二 < 第六十七条.
func compareArt(a, b artNum) int { return slices.Compare(a, b) }

// ArticleRef is one reference of legal text to its own articles: an
// article or a range of articles (「第二十条から第二十五条まで」), within one
// article optionally a paragraph or a range of paragraphs
// (「第六十六条第一項から第三項まで」). Para 0 means the whole article.
type ArticleRef struct {
	From, To         artNum
	ParaFrom, ParaTo int
}

// single reports whether r names one article.
func (r ArticleRef) single() bool { return compareArt(r.From, r.To) == 0 }

// Overlaps reports whether two references name a common provision: their
// article ranges meet and, when both name paragraphs of one article, their
// paragraph ranges meet. Numbers compare exactly: 第十条 is not 第百十条,
// 第六十六条 is not 第六十六条の二.
func (r ArticleRef) Overlaps(o ArticleRef) bool {
	if compareArt(r.From, o.To) > 0 || compareArt(o.From, r.To) > 0 {
		return false
	}
	if r.ParaFrom == 0 || o.ParaFrom == 0 || !r.single() || !o.single() {
		return true
	}
	return r.ParaFrom <= o.ParaTo && o.ParaFrom <= r.ParaTo
}

const numChars = `[〇一二三四五六七八九十百千0-9]+`

var (
	// refUnit is one reference: 第N条(のN)* or 同条, optionally followed
	// by 第N項; or 第N項 alone (a paragraph of the article last named).
	refUnit = `(?:(第` + numChars + `条(?:の` + numChars + `)*|同条)(第` + numChars + `項)?|(第` + numChars + `項))`
	// refRe is a reference or a range of them: 「第二十条から第二十五条まで」,
	// 「第一項から第三項まで」.
	refRe = regexp.MustCompile(refUnit + `(?:から` + refUnit + `まで)?`)
	// otherLawRe matches what stands before a reference to another law's
	// article (「刑法第百九十七条」「（昭和二十二年法律第五十七号）第三条」
	// 「同法第十条」) or to a supplementary provision (附則第三条).
	otherLawRe = regexp.MustCompile(`(?:法|令|規則|号[)）]|附則)$`)
	// relativeRe matches the relative references whose article the text
	// does not name (前条, 次条, 前項 …).
	relativeRe = regexp.MustCompile(`(?:前|次)条$`)
)

// kanjiDigits are the kanji digits in order of value; each is three bytes
// of UTF-8.
// parseNum reads a numeral of legal text: kanji (六十六, 百二十, 千二百)
// or digits; 0 when s is none.
func parseNum(s string) int {
	n, _ := analysis.ParseNumber(s)
	return n
}

// parseArticle reads 第N条(のN)* into an article number; nil when s is
// not one.
func parseArticle(s string) artNum {
	body, ok := strings.CutPrefix(s, "第")
	if !ok {
		return nil
	}
	main, subs, ok := strings.Cut(body, "条")
	if !ok {
		return nil
	}
	a := artNum{parseNum(main)}
	if subs != "" {
		for _, p := range strings.Split(strings.TrimPrefix(subs, "の"), "の") {
			a = append(a, parseNum(p))
		}
	}
	return a
}

// parsePara reads 第N項 into its number; 0 when s is empty.
func parsePara(s string) int {
	if s == "" {
		return 0
	}
	return parseNum(strings.TrimSuffix(strings.TrimPrefix(s, "第"), "項"))
}

// ArticleRefs returns the references text makes to articles of its own
// law, in order. A paragraph named alone (「第十五条第一項、第三項」's
// 第三項) and 同条 belong to the article named last; references to
// another law (「刑法第百九十七条」), to a supplementary provision
// (附則第三条) and relative ones (前条, 前項) are left out.
func ArticleRefs(text string) []ArticleRef { return articleRefs(text, true) }

// questionRefs returns the articles a question names. A law's name before
// the article (「労働安全衛生法第六十六条」) names the law the question is
// about, so it is kept.
func questionRefs(q string) []ArticleRef { return articleRefs(q, false) }

func articleRefs(text string, ownLaw bool) []ArticleRef {
	n := analysis.Normalize(text)
	var out []ArticleRef
	var last artNum
	for _, m := range refRe.FindAllStringSubmatchIndex(n, -1) {
		before := n[:m[0]]
		if ownLaw && otherLawRe.MatchString(before) {
			last = nil
			continue
		}
		sub := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return n[m[2*i]:m[2*i+1]]
		}
		var r ArticleRef
		switch art := sub(1); {
		case art == "同条":
			r.From = last
		case art != "":
			r.From = parseArticle(art)
		default: // a paragraph alone
			if relativeRe.MatchString(before) || strings.HasSuffix(before, "同") {
				continue
			}
			r.From = last
		}
		if r.From == nil {
			continue
		}
		r.To = r.From
		r.ParaFrom = parsePara(sub(2) + sub(3))
		r.ParaTo = r.ParaFrom
		switch art2, para2 := sub(4), sub(5)+sub(6); {
		case art2 != "" && art2 != "同条":
			if to := parseArticle(art2); to != nil && compareArt(to, r.From) > 0 {
				r.To, r.ParaFrom, r.ParaTo = to, 0, 0
			}
		case para2 != "":
			if r.ParaFrom == 0 {
				r.ParaFrom = 1
			}
			r.ParaTo = max(parsePara(para2), r.ParaFrom)
		}
		last = r.To
		out = append(out, r)
	}
	return out
}

// ownArticle returns the article a chunk is — the innermost heading, when
// it names an article — and whether it is one. Supplementary provisions
// (附則) restart the numbering and are no article of the law's body.
func ownArticle(heading string) (artNum, bool) {
	parts := strings.Split(heading, " > ")
	for _, p := range parts {
		if strings.HasPrefix(strings.TrimSpace(p), "附則") {
			return nil, false
		}
	}
	last := analysis.Normalize(strings.TrimSpace(parts[len(parts)-1]))
	m := articleHeadRe.FindString(last)
	if m == "" {
		return nil, false
	}
	return parseArticle(m), true
}

var articleHeadRe = regexp.MustCompile(`^第` + numChars + `条(?:の` + numChars + `)*`)

// penaltyStatementRe matches a sentence that imposes a penalty
// (「…五十万円以下の罰金に処する」「…各本条の罰金刑を科する」), not one that
// mentions a sentence passed (「禁錮以上の刑に処せられ」).
var penaltyStatementRe = regexp.MustCompile(`(?:懲役|禁錮|禁固|拘禁刑|罰金|科料|過料)[^。]*?(?:に処する|に処し|を科する|を科し)`)

// underPenaltyHeading reports whether a heading path lies under a
// division or an article captioned 罰則.
// The law's title (the path's first element) does not count.
func underPenaltyHeading(heading string) bool {
	_, below, _ := strings.Cut(heading, " > ")
	return strings.Contains(below, "罰則")
}

// provision is one article of a law as the chunks of its windows.
type provision struct {
	art     artNum
	heading string
	chunks  []chunk.Chunk // in document order
}

// penalty reports whether the provision is a penalty provision: under a
// 罰則 heading, or stating a penalty.
func (p provision) penalty() bool {
	if underPenaltyHeading(p.heading) {
		return true
	}
	for _, c := range p.chunks {
		if penaltyStatementRe.MatchString(analysis.Normalize(c.Text)) {
			return true
		}
	}
	return false
}

// referring returns the windows of the provision that refer to one of
// targets, and the window that states its penalty when that is another
// one: the chunks that answer "what is the penalty of violating it".
func (p provision) referring(targets []ArticleRef) []chunk.Chunk {
	var lead, refs []chunk.Chunk
	for _, c := range p.chunks {
		body := bodyOf(c.Text)
		if lead == nil && penaltyStatementRe.MatchString(analysis.Normalize(body)) {
			lead = []chunk.Chunk{c}
		}
		for _, r := range ArticleRefs(body) {
			if r.refersTo(p.art) {
				continue // the provision itself
			}
			if slices.ContainsFunc(targets, r.Overlaps) {
				refs = append(refs, c)
				break
			}
		}
	}
	if len(refs) == 0 {
		return nil
	}
	if len(lead) > 0 && lead[0].ID != refs[0].ID {
		return append(lead, refs[0])
	}
	return refs[:1]
}

// refersTo reports whether r names article a as a whole or in part.
func (r ArticleRef) refersTo(a artNum) bool {
	return compareArt(r.From, a) <= 0 && compareArt(a, r.To) <= 0
}

// bodyOf drops the heading lines a chunk's text starts with: the heading
// path names the law and the article itself, which are no references.
func bodyOf(text string) string {
	lines := strings.Split(text, "\n")
	i := 0
	for i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "#") {
		i++
	}
	return strings.Join(lines[i:], "\n")
}

// lawTitle is the first element of a heading path: the law's title.
func lawTitle(heading string) string {
	t, _, _ := strings.Cut(heading, " > ")
	return t
}

// provisions reads the provisions of one law (page file) that a lexical
// search for the law's title, words and the given extra text finds,
// grouped by article in document order. Chunks hidden by opt.Exclude stay
// hidden.
func (s *Searcher) provisions(ctx context.Context, file, title, words string, opt Options) ([]provision, error) {
	terms := s.ix.Terms(title + " " + words)
	hits, _, err := s.ix.LexicalHits(ctx, terms, min(crossRefCandidates, max(s.ix.Len(), 1)))
	if err != nil {
		return nil, err
	}
	hits = exclude(hits, opt.Exclude)
	chs, err := s.hitChunks(ctx, hits)
	if err != nil {
		return nil, err
	}
	var mine []chunk.Chunk
	for _, c := range chs {
		if c.File == file {
			mine = append(mine, c)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].Index < mine[j].Index })
	var out []provision
	for _, c := range mine {
		a, ok := ownArticle(c.Heading)
		if !ok {
			continue
		}
		if n := len(out); n > 0 && out[n-1].heading == c.Heading {
			out[n-1].chunks = append(out[n-1].chunks, c)
			continue
		}
		out = append(out, provision{art: a, heading: c.Heading, chunks: []chunk.Chunk{c}})
	}
	return out, nil
}

// CrossReferences adds to the results of a question about a penalty
// (analysis.KindPenalty) the provisions of the same law that answer it
// through a reference by article number:
//
//   - forward: the penalty provisions (under a 罰則 heading, or stating a
//     penalty: 懲役, 禁錮, 拘禁刑, 罰金, 科料, 過料 … に処する) that refer to
//     the articles the question names (「第六十六条第一項の…」), or else to
//     the articles the top results are (their innermost article heading)
//     when they rank above any penalty provision; of a long penalty
//     article, the window that refers and the one that states the penalty;
//   - reverse: when an article the question names is itself a penalty
//     provision, the provisions it refers to.
//
// Article numbers match exactly (第十条 is not 第百十条, 第六十六条 is not
// 第六十六条の二), paragraphs when both sides name one
// (「第六十六条第一項から第三項まで」 covers 第六十六条第一項, not
// 第六十六条第四項). At most MaxCrossReferences provisions are added. They
// are placed right after the top result, in the order found (a provision
// already among the results moves there), with their evidence scored
// against query as Search scores it — the insufficient-evidence gate
// judges them like any result. Other questions, and results without legal
// text, come back unchanged.
func (s *Searcher) CrossReferences(ctx context.Context, query string, results []Result, opt Options) []Result {
	if len(results) == 0 || analysis.QuestionType(query).Kind != analysis.KindPenalty {
		return results
	}
	k := opt.K
	if k <= 0 {
		k = 4
	}
	if !slices.ContainsFunc(results, func(r Result) bool { _, ok := ownArticle(r.Heading); return ok }) {
		return results // no legal text
	}
	// The top is the K results with the strongest evidence for the
	// question: an agent's results come in the order of its facet
	// searches, not of the question.
	top := slices.Clone(results)
	s.Rescore(ctx, query, top, opt)
	sort.SliceStable(top, func(i, j int) bool { return top[i].EvidenceScore > top[j].EvidenceScore })
	top = top[:min(k, len(top))]
	named := questionRefs(query)
	var files []string
	for _, r := range top {
		if _, ok := ownArticle(r.Heading); ok && !slices.Contains(files, r.File) && len(files) < 2 {
			files = append(files, r.File)
		}
	}
	var found [][]chunk.Chunk
	for _, file := range files {
		title := ""
		for _, r := range top {
			if r.File == file {
				title = lawTitle(r.Heading)
				break
			}
		}
		found = append(found, s.crossRefsIn(ctx, file, title, named, top, opt)...)
		if len(found) > 0 {
			break // the law the question is about
		}
	}
	if len(found) == 0 {
		return results
	}
	return s.placeAfterTop(ctx, query, results, found, opt)
}

// crossRefsIn finds the cross-references of one law (see CrossReferences),
// each provision as the chunks to add for it.
func (s *Searcher) crossRefsIn(ctx context.Context, file, title string, named []ArticleRef, top []Result, opt Options) [][]chunk.Chunk {
	var targets []ArticleRef
	if len(named) > 0 {
		targets = named
	} else {
		targets = topArticles(file, top)
	}
	if len(targets) == 0 {
		return nil
	}
	words := penaltyWords
	for _, t := range targets {
		words += " " + articleString(t.From)
	}
	provs, err := s.provisions(ctx, file, title, words, opt)
	if err != nil {
		return nil
	}
	// Reverse: a named article that is itself a penalty provision is
	// answered with what it refers to.
	var forward []ArticleRef
	var reverse []provision
	for _, t := range targets {
		isPenalty := false
		if len(named) > 0 && t.single() {
			for _, p := range provs {
				if compareArt(p.art, t.From) == 0 && p.penalty() {
					isPenalty = true
					reverse = append(reverse, p)
				}
			}
		}
		if !isPenalty {
			forward = append(forward, t)
		}
	}
	var out [][]chunk.Chunk
	seen := map[string]bool{}
	for _, t := range forward {
		for _, p := range provs {
			if !p.penalty() || (ArticleRef{From: p.art, To: p.art}).Overlaps(t) || seen[p.heading] {
				continue
			}
			if cs := p.referring([]ArticleRef{t}); cs != nil {
				seen[p.heading] = true
				out = append(out, cs)
			}
		}
	}
	for _, p := range reverse {
		out = append(out, s.referredBy(ctx, file, title, p, opt)...)
	}
	return out
}

// topArticles returns the articles of one law that the top results are
// (in evidence order), other than penalty provisions: two at most, and
// none unless the strongest evidence is such an article — when it is a
// penalty provision, the question found its answer; when it is another
// document's text, the question is not about this law's obligations.
func topArticles(file string, top []Result) []ArticleRef {
	var out []ArticleRef
	for i, r := range top {
		a, ok := ownArticle(r.Heading)
		if !ok || r.File != file || underPenaltyHeading(r.Heading) || penaltyStatementRe.MatchString(analysis.Normalize(r.Text)) {
			if i == 0 {
				return nil
			}
			continue
		}
		t := ArticleRef{From: a, To: a}
		if !slices.ContainsFunc(out, t.Overlaps) {
			out = append(out, t)
		}
		if len(out) == 2 {
			break
		}
	}
	return out
}

// referredBy returns the first window of each single article a penalty
// provision refers to, in the order it names them (MaxCrossReferences at
// most).
func (s *Searcher) referredBy(ctx context.Context, file, title string, p provision, opt Options) [][]chunk.Chunk {
	var arts []artNum
	for _, c := range p.chunks {
		for _, r := range ArticleRefs(bodyOf(c.Text)) {
			if r.single() && !r.refersTo(p.art) && !slices.ContainsFunc(arts, func(a artNum) bool { return compareArt(a, r.From) == 0 }) {
				arts = append(arts, r.From)
			}
		}
	}
	if len(arts) > MaxCrossReferences {
		arts = arts[:MaxCrossReferences]
	}
	if len(arts) == 0 {
		return nil
	}
	words := ""
	for _, a := range arts {
		words += " " + articleString(a)
	}
	provs, err := s.provisions(ctx, file, title, words, opt)
	if err != nil {
		return nil
	}
	var out [][]chunk.Chunk
	for _, a := range arts {
		for _, q := range provs {
			if compareArt(q.art, a) == 0 {
				out = append(out, q.chunks[:1])
				break
			}
		}
	}
	return out
}

// articleString writes an article number as e-Gov does: 第六十六条の二.
func articleString(a artNum) string {
	var b strings.Builder
	b.WriteString("第")
	b.WriteString(kanjiNum(a[0]))
	b.WriteString("条")
	for _, x := range a[1:] {
		b.WriteString("の")
		b.WriteString(kanjiNum(x))
	}
	return b.String()
}

// kanjiNum writes n in kanji as legal text does: 六十六, 百二十, 千二百三.
func kanjiNum(n int) string {
	if n <= 0 {
		return "〇"
	}
	digits := []string{"", "一", "二", "三", "四", "五", "六", "七", "八", "九"}
	var b strings.Builder
	for _, u := range []struct {
		v int
		s string
	}{{1000, "千"}, {100, "百"}, {10, "十"}} {
		d := n / u.v % 10
		if d > 1 {
			b.WriteString(digits[d])
		}
		if d > 0 {
			b.WriteString(u.s)
		}
	}
	b.WriteString(digits[n%10])
	return b.String()
}

// placeAfterTop scores the found provisions' chunks against query as
// Search scores results, keeps the MaxCrossReferences provisions whose
// best chunk has the strongest evidence (in the order found on a tie) and
// puts their chunks right after the top result; those already among the
// results move there.
func (s *Searcher) placeAfterTop(ctx context.Context, query string, results []Result, found [][]chunk.Chunk, opt Options) []Result {
	var flat []Result
	for _, g := range found {
		for _, c := range g {
			flat = append(flat, Result{
				ChunkID: c.ID, File: c.File, Source: c.Source, Page: c.Page,
				Heading: c.Heading, Text: c.Text, UpdatedAt: c.UpdatedAt,
				// Ranked with the top result, after it.
				Score: results[0].Score,
			})
		}
	}
	s.Rescore(ctx, query, flat, opt)
	type group struct {
		rs   []Result
		best float64
	}
	var groups []group
	i := 0
	for _, g := range found {
		gr := group{rs: flat[i : i+len(g)]}
		i += len(g)
		for _, r := range gr.rs {
			gr.best = max(gr.best, r.EvidenceScore)
		}
		groups = append(groups, gr)
	}
	sort.SliceStable(groups, func(a, b int) bool { return groups[a].best > groups[b].best })
	var add []Result
	for _, g := range groups[:min(len(groups), MaxCrossReferences)] {
		for _, r := range g.rs {
			if r.ChunkID != results[0].ChunkID && !slices.ContainsFunc(add, func(a Result) bool { return a.ChunkID == r.ChunkID }) {
				add = append(add, r)
			}
		}
	}
	if len(add) == 0 {
		return results
	}
	out := make([]Result, 0, len(results)+len(add))
	out = append(out, results[0])
	out = append(out, add...)
	for _, r := range results[1:] {
		if !slices.ContainsFunc(add, func(a Result) bool { return a.ChunkID == r.ChunkID }) {
			out = append(out, r)
		}
	}
	return out
}
