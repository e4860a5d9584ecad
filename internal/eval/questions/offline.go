package questions

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode/utf8"
)

// pageCands are the scored candidate sentences of one page.
type pageCands struct {
	index int // into doc.doc.Pages
	page  int // page number
	cands []sentence
}

// rngFor returns the random source for one document: a function of the
// seed and the document's path only, so a document's questions do not
// change when other documents are added.
func rngFor(seed int64, source string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(source))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

// analyse splits every page of d into scored candidate sentences. Pages
// with too little text, or no usable sentence, are left out.
//
// It also returns each phrase's document frequency: on how many of the
// analysed pages it occurs.
func analyse(d *doc, minRunes int) ([]pageCands, map[string]int) {
	type pageSents struct {
		index, page int
		sents       []sentence
	}
	var pages []pageSents
	df := map[string]int{}
	for i, p := range d.doc.Pages {
		if utf8.RuneCountInString(strings.TrimSpace(p.Text)) < minRunes {
			continue
		}
		sents := splitSentences(p.Text)
		seen := map[string]bool{}
		for _, s := range sents {
			for _, ph := range keyPhrases(s.Text) {
				seen[phraseKey(ph)] = true
			}
		}
		for k := range seen {
			df[k]++
		}
		pages = append(pages, pageSents{i, pageNumber(p, i), sents})
	}
	var out []pageCands
	for _, p := range pages {
		if c := candidates(p.sents, df, len(pages)); len(c) > 0 {
			out = append(out, pageCands{p.index, p.page, c})
		}
	}
	return out, df
}

// offlineRows makes the page and multi-page questions of one document
// without an LLM.
func (g *generator) offlineRows(d *doc) []Row {
	pages, df := analyse(d, g.opt.MinPageRunes)
	if len(pages) == 0 {
		g.skip(fmt.Sprintf("%s: skipped: no page has a sentence to ask about (too little text?)", d.file.Rel))
		return nil
	}
	rng := rngFor(g.opt.Seed, d.file.Rel)
	per := g.opt.PerPage
	if per <= 0 {
		per = 1
		if len(pages) == 1 {
			per = 3
		}
	}
	var rows []Row
	for _, p := range pages {
		for _, s := range p.cands[:min(per, len(p.cands))] {
			q, items, blank := pageQuestion(d, s, rng)
			gt := s.Text
			if blank != "" {
				// A cloze question's answer is the phrase in the blank,
				// not the sentence the question already quotes.
				gt = blank
			}
			row := Row{
				Question:    q,
				GroundTruth: gt,
				References:  []string{d.ids[p.index]},
				Pages:       []int{p.page},
				Checklist:   items,
				Generator:   GeneratorOffline,
				Kind:        KindPage,
				Source:      d.file.Rel,
			}
			g.res.Checked++
			if c := CheckRow(row, d.doc.Pages[p.index].Text); !c.OK {
				g.res.Rejected = append(g.res.Rejected, Rejection{Row: row, Why: c.Why})
				continue
			}
			rows = append(rows, row)
		}
	}
	for _, grp := range multiGroups(pages, df, g.opt.MinMulti, g.opt.MaxMulti) {
		rows = append(rows, multiRow(d, grp))
	}
	return rows
}

// heading is s's section heading, or the document title.
func (d *doc) heading(s sentence) string {
	h := strings.TrimRight(strings.TrimSpace(s.Heading), "：:。．. ")
	if h == "" {
		return d.title
	}
	return h
}

// about is how a question names where it asks: 「title」の「heading」, or
// just 「title」 when they are the same.
func (d *doc) about(h string) string {
	if d.japanese {
		if h == d.title || h == "" {
			return fmt.Sprintf("「%s」", d.title)
		}
		return fmt.Sprintf("「%s」の「%s」", d.title, h)
	}
	if h == d.title || h == "" {
		return d.title
	}
	return fmt.Sprintf("%s (%s)", d.title, h)
}

// pageQuestion turns one sentence into a question and its checklist;
// blank is the phrase a cloze question blanks out ("" for the others).
func pageQuestion(d *doc, s sentence, rng *rand.Rand) (q string, items []string, blank string) {
	where := d.about(d.heading(s))
	target := bestPhrase(s.Phrases, nil)
	num := ""
	for _, p := range s.Phrases {
		if hasDigit.MatchString(p) {
			num = p
			break
		}
	}
	topic := d.topic(s.Phrases, nil)
	choices := []string{"cloze", "term"}
	if num != "" && topic != "" && topic != num {
		choices = append(choices, "number")
	}
	if topic == "" {
		choices = []string{"cloze"}
	}
	switch choices[rng.IntN(len(choices))] {
	case "term":
		items := checklist(s.Phrases, []string{topic}, 3)
		if d.japanese {
			return fmt.Sprintf("%sでは、%sについてどのように定められていますか？", where, topic), items, ""
		}
		return fmt.Sprintf("In %s, what does the document say about %s?", where, topic), items, ""
	case "number":
		items := append([]string{num}, checklist(s.Phrases, []string{topic, num}, 2)...)
		if d.japanese {
			return fmt.Sprintf("%sでは、%sについて%s", where, topic, numberAsk(num)), items, ""
		}
		return fmt.Sprintf("In %s, what figure is given for %s?", where, topic), items, ""
	}
	clozed := strings.Replace(s.Text, target, "【　】", 1)
	// The blank is the answer: the checklist is that phrase alone.
	items = []string{target}
	if d.japanese {
		return fmt.Sprintf("%sによると、次の文の【　】に入る語句は何ですか？「%s」", where, clozed), items, target
	}
	clozed = strings.Replace(s.Text, target, "____", 1)
	return fmt.Sprintf("According to %s, what fills the blank in: \"%s\"?", where, clozed), items, target
}

// numberAsk is the end of a Japanese question asking for the figure num,
// chosen by its unit.
func numberAsk(num string) string {
	r := []rune(num)
	last := string(r[len(r)-1:])
	switch {
	case strings.HasSuffix(num, "円"):
		return "金額はいくらですか？"
	case strings.ContainsAny(last, "分秒日月年間") || strings.HasSuffix(num, "時間") || strings.HasSuffix(num, "週間"):
		return "期間や時間はどれだけと定められていますか？"
	case strings.ContainsAny(last, "回件名人個台本点"):
		return "回数や数はいくつと定められていますか？"
	case strings.HasSuffix(num, "%") || strings.HasSuffix(num, "％"):
		return "割合は何％ですか？"
	}
	return "どのような値や番号が示されていますか？"
}

// topic picks the phrase a question is about: the best phrase without
// digits, preferring phrases in the document's own script (so a Japanese
// question is about 「アカウントロックアウト」 rather than "Directory").
func (d *doc) topic(ps []string, exclude []string) string {
	var own []string
	for _, p := range nonNumeric(ps) {
		if isASCIIWord(p) != d.japanese {
			own = append(own, p)
		}
	}
	if t := bestPhrase(own, exclude); t != "" {
		return t
	}
	return bestPhrase(nonNumeric(ps), exclude)
}

// nonNumeric drops the phrases containing digits.
func nonNumeric(ps []string) []string {
	var out []string
	for _, p := range ps {
		if !hasDigit.MatchString(p) {
			out = append(out, p)
		}
	}
	return out
}

// bestPhrase is the phrase of ps with the highest phraseWeight, the first
// on ties, skipping those in exclude; "" if none is left.
func bestPhrase(ps []string, exclude []string) string {
	best, bw := "", math.Inf(-1)
	for _, p := range ps {
		if slices.Contains(exclude, p) {
			continue
		}
		if w := phraseWeight(p); w > bw {
			best, bw = p, w
		}
	}
	return best
}

// checklist picks up to n key phrases of ps, the most informative first
// but listed in reading order, skipping exclude. It never returns an empty
// list while ps has a phrase.
func checklist(ps []string, exclude []string, n int) []string {
	var rest []string
	for _, p := range ps {
		if !slices.Contains(exclude, p) {
			rest = append(rest, p)
		}
	}
	if len(rest) == 0 {
		rest = slices.Clone(ps)
	}
	ranked := slices.Clone(rest)
	slices.SortStableFunc(ranked, func(a, b string) int { return cmp.Compare(phraseWeight(b), phraseWeight(a)) })
	keep := ranked[:min(n, len(ranked))]
	var out []string
	for _, p := range rest {
		if slices.Contains(keep, p) {
			out = append(out, p)
		}
	}
	return out
}

// group is the material of one multi-page question.
type group struct {
	shared string      // key phrase all sentences mention; "" for a page pair
	pages  []pageCands // in page order
	sents  []sentence  // one per page
}

// multiGroups chooses up to maxN (at least minN when the document allows)
// groups of 2–3 pages for multi-page questions. Groups of pages whose
// salient sentences share a rare key phrase come first, most informative
// phrase first; page pairs fill up the rest. The choice is deterministic.
//
// df (phrase key → pages holding it) keeps out phrases that are the whole
// document's subject: a shared phrase may occur on at most half the pages.
func multiGroups(pages []pageCands, df map[string]int, minN, maxN int) []group {
	if len(pages) < 2 {
		return nil
	}
	target := min(max(len(pages)/3, minN), maxN)
	const topN = 5
	type hit struct {
		pc   pageCands
		sent sentence
	}
	byKey := map[string][]hit{}
	label := map[string]string{}
	for _, p := range pages {
		seen := map[string]bool{}
		for _, s := range p.cands[:min(topN, len(p.cands))] {
			for _, ph := range s.Phrases {
				k := phraseKey(ph)
				if seen[k] {
					continue
				}
				seen[k] = true
				byKey[k] = append(byKey[k], hit{p, s})
				if _, ok := label[k]; !ok {
					label[k] = ph
				}
			}
		}
	}
	limit := max(2, len(pages)/2)
	var keys []string
	for k, hs := range byKey {
		if len(hs) >= 2 && df[k] <= limit && utf8.RuneCountInString(k) >= 3 && !hasDigit.MatchString(k) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		wa := phraseWeight(label[a]) / float64(len(byKey[a]))
		wb := phraseWeight(label[b]) / float64(len(byKey[b]))
		if c := cmp.Compare(wb, wa); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var out []group
	used := map[string]bool{}
	uses := map[int]int{}
	add := func(gr group) bool {
		sig := ""
		for i, p := range gr.pages {
			sig += fmt.Sprintf("%d:%s|", p.page, gr.sents[i].Text)
		}
		if used[sig] {
			return false
		}
		used[sig] = true
		for _, p := range gr.pages {
			uses[p.page]++
		}
		out = append(out, gr)
		return true
	}
	for _, k := range keys {
		if len(out) >= target {
			break
		}
		hs := slices.Clone(byKey[k])
		if len(hs) > 3 { // keep the three most salient pages
			slices.SortStableFunc(hs, func(a, b hit) int { return cmp.Compare(b.sent.Score, a.sent.Score) })
			hs = hs[:3]
		}
		slices.SortFunc(hs, func(a, b hit) int { return a.pc.page - b.pc.page })
		busy := false
		for _, h := range hs {
			busy = busy || uses[h.pc.page] >= 2
		}
		if busy {
			continue
		}
		gr := group{shared: label[k]}
		for _, h := range hs {
			gr.pages = append(gr.pages, h.pc)
			gr.sents = append(gr.sents, h.sent)
		}
		add(gr)
	}
	// Page pairs: neighbours first, then wider gaps, then less salient
	// sentences, until the target is met or nothing is left.
	for rank := 0; rank < 3 && len(out) < target; rank++ {
		for gap := 1; gap < len(pages) && len(out) < target; gap++ {
			for i := 0; i+gap < len(pages) && len(out) < target; i++ {
				a, b := pages[i], pages[i+gap]
				if rank >= len(a.cands) || rank >= len(b.cands) {
					continue
				}
				add(group{pages: []pageCands{a, b}, sents: []sentence{a.cands[rank], b.cands[rank]}})
			}
		}
	}
	return out
}

// multiRow turns a group into a multi-page question.
func multiRow(d *doc, gr group) Row {
	r := Row{Generator: GeneratorOffline, Kind: KindMulti, Source: d.file.Rel}
	var texts, heads []string
	var exclude []string
	if gr.shared != "" {
		exclude = append(exclude, gr.shared)
	}
	var topics []string
	for i, p := range gr.pages {
		s := gr.sents[i]
		r.References = append(r.References, d.ids[p.index])
		r.Pages = append(r.Pages, p.page)
		texts = append(texts, s.Text)
		if h := d.heading(s); !slices.Contains(heads, h) {
			heads = append(heads, h)
		}
		if gr.shared == "" {
			t := d.topic(s.Phrases, topics)
			if t == "" {
				t = bestPhrase(s.Phrases, topics)
			}
			topics = append(topics, t)
		}
	}
	exclude = append(exclude, topics...)
	for _, s := range gr.sents {
		for _, it := range checklist(s.Phrases, exclude, 2) {
			if !slices.Contains(r.Checklist, it) {
				r.Checklist = append(r.Checklist, it)
			}
		}
	}
	r.GroundTruth = strings.Join(texts, "\n")
	distinct := len(heads) == len(gr.pages) && !slices.Contains(heads, d.title)
	switch {
	case gr.shared != "" && distinct && d.japanese:
		r.Question = fmt.Sprintf("「%s」の%sでは、%sについてそれぞれどのように説明されていますか？", d.title, quoteJoin(heads, "と"), gr.shared)
	case gr.shared != "" && d.japanese:
		r.Question = fmt.Sprintf("「%s」では、%sについてどのような記載がありますか？関連する箇所をすべて挙げて説明してください。", d.title, gr.shared)
	case gr.shared != "" && distinct:
		r.Question = fmt.Sprintf("In %s, what do the sections %s each say about %s?", d.title, strings.Join(heads, " and "), gr.shared)
	case gr.shared != "":
		r.Question = fmt.Sprintf("What does %s say about %s? Cover every place it is mentioned.", d.title, gr.shared)
	case distinct && d.japanese:
		r.Question = fmt.Sprintf("「%s」の%sについて、%sはそれぞれどのように定められていますか？", d.title, quoteJoin(heads, "と"), strings.Join(topics, "と"))
	case d.japanese:
		r.Question = fmt.Sprintf("「%s」では、%sはそれぞれどのように定められていますか？", d.title, strings.Join(topics, "と"))
	case distinct:
		r.Question = fmt.Sprintf("In %s, what do %s say about %s respectively?", d.title, strings.Join(heads, " and "), strings.Join(topics, " and "))
	default:
		r.Question = fmt.Sprintf("In %s, what is said about %s respectively?", d.title, strings.Join(topics, " and "))
	}
	if len(r.Checklist) == 0 {
		r.Checklist = append(r.Checklist, topics...)
	}
	return r
}

// quoteJoin is 「a」と「b」.
func quoteJoin(xs []string, sep string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "「" + x + "」"
	}
	return strings.Join(q, sep)
}
