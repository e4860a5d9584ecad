package reader

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/retrieve"
)

// Shape is a way a document presents what a Wikipedia paragraph says in
// prose: runbooks, manuals, FAQ pages and government papers answer from a
// list item, a table row, a labelled line or an FAQ's answer, which
// JaQuAD's paragraphs never show the reader. Training renders paragraphs in
// these shapes (their questions and answers stay the human-labelled ones)
// so that the sentence model learns how each structure answers.
type Shape int

const (
	ShapeProse    Shape = iota // the paragraph as written
	ShapeBullets               // 「- 」 items under a caption line
	ShapeNumbered              // 「1. 」 steps under a caption line
	ShapeTable                 // a 「| 項目 | 内容 |」 table, one row a sentence (Markdown's, or as shirube prints a PDF's)
	ShapeLabels                // 「**見出し：** 本文」 label lines
	ShapeFAQ                   // 「Q. 」「A. 」 pairs
	shapeCount
)

// String names the shape (in the training log).
func (s Shape) String() string {
	return [...]string{"prose", "bullets", "numbered", "table", "labels", "faq"}[s]
}

// ShapeInput is what a paragraph's shaped rendering is made of.
type ShapeInput struct {
	Title     string   // the article's title: the passage's heading
	Sentences []string // the paragraph's sentences, in order
	// Gold is the index in Sentences of the sentence that answers the
	// question (-1: none; a near miss without it is rendered with the
	// same shape).
	Gold int
	// Distractors are sentences of other paragraphs of the same article,
	// none holding the answer: some are mixed in among the items, as a
	// document's neighbouring rows and steps are.
	Distractors []string
	// Questions are, per sentence, another human-written question whose
	// answer that sentence holds ("" for none): the FAQ shape's 「Q.」
	// lines. Never the question being trained on.
	Questions []string
}

// Shaped is a rendered passage: its text, and the line that holds the gold
// sentence ("" when there is none).
type Shaped struct {
	Text     string
	GoldLine string
}

// shapeRand returns the deterministic random source of one question's
// passage (the same training data always gives the same shapes).
func shapeRand(key string, passage int) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", key, passage)
	s := h.Sum64()
	return rand.New(rand.NewPCG(s, s>>7|1))
}

// PickShape chooses a passage's shape: prose with probability 1−share, else
// one of the structured shapes, uniformly. The FAQ shape needs a question
// for the gold sentence (or, without gold, for most sentences); bullets
// stand in when there is none.
func PickShape(r *rand.Rand, share float64, in ShapeInput) Shape {
	if share <= 0 || r.Float64() >= share {
		return ShapeProse
	}
	s := Shape(1 + r.IntN(int(shapeCount)-1))
	if s == ShapeFAQ && !canFAQ(in) {
		s = ShapeBullets
	}
	return s
}

// canFAQ reports whether the paragraph has questions to make FAQ pairs of:
// one for the gold sentence, or, without gold, for at least two sentences.
func canFAQ(in ShapeInput) bool {
	if in.Gold >= 0 {
		return in.Gold < len(in.Questions) && in.Questions[in.Gold] != ""
	}
	n := 0
	for _, q := range in.Questions {
		if q != "" {
			n++
		}
	}
	return n >= 2
}

// captions are the lines documents put above a list or a table: they name
// the topic and state nothing (a caption quoted as the answer is one of the
// failures these shapes teach the reader to avoid).
var captions = []string{
	"%sの概要は次のとおりです。",
	"%sについて、主な事項を以下に示す。",
	"%sに関する事項",
	"■ %s",
	"%sのポイント：",
}

// Render writes the paragraph in shape s, with the article's title as its
// heading; r places the distractors and picks the caption.
func Render(s Shape, in ShapeInput, r *rand.Rand) Shaped {
	type line struct {
		text string
		q    string // the FAQ question of the sentence
		gold bool
	}
	var lines []line
	for i, t := range in.Sentences {
		q := ""
		if i < len(in.Questions) {
			q = in.Questions[i]
		}
		lines = append(lines, line{text: t, q: q, gold: i == in.Gold})
	}
	if s == ShapeProse {
		var b strings.Builder
		gold := ""
		b.WriteString("# " + in.Title + "\n")
		for _, l := range lines {
			b.WriteString(l.text)
			if l.gold {
				gold = l.text
			}
		}
		return Shaped{Text: b.String(), GoldLine: gold}
	}
	if s != ShapeFAQ {
		// Up to three of the article's other sentences join the items at
		// random places.
		for _, d := range in.Distractors[:min(len(in.Distractors), r.IntN(4))] {
			at := r.IntN(len(lines) + 1)
			lines = append(lines[:at], append([]line{{text: d}}, lines[at:]...)...)
		}
	}
	var b strings.Builder
	b.WriteString("# " + in.Title + "\n")
	if s != ShapeFAQ {
		b.WriteString(fmt.Sprintf(captions[r.IntN(len(captions))], in.Title) + "\n\n")
	}
	var out Shaped
	// A table is Markdown's (its header row above a |---| rule, which the
	// reader skips) or as shirube prints a PDF's (document.pdfTable's
	// rowLines): the header row is a line of its own, and every value after
	// the key column carries its column's name (「| 蔵書数 | 内容: …|」).
	pdfTable := false
	if s == ShapeTable {
		if pdfTable = r.IntN(2) == 1; pdfTable {
			b.WriteString("| 項目 | 内容 |\n")
		} else {
			b.WriteString("| 項目 | 内容 |\n|---|---|\n")
		}
	}
	n := 0
	for _, l := range lines {
		var text string
		switch s {
		case ShapeBullets:
			text = "- " + l.text
		case ShapeNumbered:
			text = fmt.Sprintf("%d. %s", n+1, l.text)
		case ShapeTable:
			label, rest := labelOf(l.text)
			if label == "" {
				label = fmt.Sprintf("（%d）", n+1)
			}
			if pdfTable {
				rest = "内容: " + rest
			}
			text = "| " + cell(label) + " | " + cell(rest) + " |"
		case ShapeLabels:
			label, rest := labelOf(l.text)
			if label == "" {
				text = l.text
			} else {
				text = "**" + label + "：** " + rest
			}
		case ShapeFAQ:
			if l.q == "" {
				continue
			}
			text = "A. " + l.text
			b.WriteString("Q. " + l.q + "\n")
		}
		n++
		b.WriteString(text + "\n")
		if s == ShapeFAQ {
			b.WriteString("\n")
		}
		if l.gold {
			out.GoldLine = text
		}
	}
	out.Text = strings.TrimRight(b.String(), "\n")
	return out
}

// cell keeps a table cell on its row: a pipe inside it would open another
// column.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", "｜")
}

// labelOf splits a sentence into the topic a table row or a label line
// names it by and the rest: 「蔵書数はおよそ32万冊である。」 → 「蔵書数」,
// 「およそ32万冊である。」. The topic is what comes before the first は, が or
// 、 when that is 2–16 characters without punctuation; otherwise there is
// no label and the whole sentence is the rest.
func labelOf(s string) (label, rest string) {
	at := -1
	for i, r := range s {
		if r == 'は' || r == 'が' || r == '、' {
			at = i
			break
		}
		if strings.ContainsRune("。，,「」（）()：:", r) {
			break
		}
	}
	if at <= 0 {
		return "", s
	}
	label = s[:at]
	_, size := utf8.DecodeRuneInString(s[at:])
	rest = strings.TrimSpace(s[at+size:])
	if n := utf8.RuneCountInString(label); n < 2 || n > 16 || utf8.RuneCountInString(rest) < 2 {
		return "", s
	}
	return label, rest
}

// paragraphSentences splits a paragraph into its sentences, line by line.
func paragraphSentences(context string) []string {
	var out []string
	for _, line := range strings.Split(context, "\n") {
		for _, s := range analysis.Sentences(strings.TrimSpace(line)) {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// shaper renders the training corpus's paragraphs, as the search returns
// them, in document shapes.
type shaper struct {
	ds     *SQuAD
	share  float64
	paraOf map[string][2]int // chunk ID → article, paragraph
	main   int               // articles from this one on have their own shape (laws) and stay as written
}

func newShaper(ds *SQuAD, tc *trainCorpus, share float64) *shaper {
	sp := &shaper{ds: ds, share: share, paraOf: map[string][2]int{}, main: tc.main}
	for ci, c := range tc.chunks {
		sp.paraOf[c.ID] = [2]int{tc.artOf[ci], tc.paraOf[ci]}
	}
	return sp
}

// evidence returns a copy of res with every passage rendered in a shape
// picked for (q, its place): all of them, not only the one that answers,
// so that structure itself never tells the answer. own (≥ 0) is the
// place of q's paragraph, whose sentence ansSent answers; with drop it is
// left out (the near miss), else the line that renders it is returned
// (ansSent when that passage stays prose). without is the prose of the
// own paragraph without its answer sentence, for a near miss left prose.
func (sp *shaper) evidence(q trainRef, res []retrieve.Result, own int, ansSent, without string, drop bool) ([]retrieve.Result, string) {
	out := slices.Clone(res)
	goldLine := ansSent
	for k, r := range res {
		ap, ok := sp.paraOf[r.ChunkID]
		if !ok || ap[0] >= sp.main {
			continue
		}
		art := sp.ds.Data[ap[0]]
		para := art.Paragraphs[ap[1]]
		in := ShapeInput{Title: art.Title, Sentences: paragraphSentences(para.Context), Gold: -1}
		in.Questions = make([]string, len(in.Sentences))
		for _, qa := range para.QAs {
			if qa.ID == q.qa.ID || len(qa.Answers) == 0 {
				continue
			}
			if s, _, ok := splitAnswerSentence(para.Context, qa.Answers[0]); ok {
				if i := slices.Index(in.Sentences, s); i >= 0 && in.Questions[i] == "" {
					in.Questions[i] = qa.Question
				}
			}
		}
		answer := q.qa.Answers[0].Text
		if k == own {
			in.Gold = slices.Index(in.Sentences, ansSent)
			if in.Gold < 0 {
				continue // the sentence split differs: the passage stays prose
			}
			for _, p := range []int{ap[1] + 1, ap[1] - 1} {
				if p < 0 || p >= len(art.Paragraphs) {
					continue
				}
				for _, s := range paragraphSentences(art.Paragraphs[p].Context) {
					if !strings.Contains(s, answer) && len(in.Distractors) < 3 {
						in.Distractors = append(in.Distractors, s)
					}
				}
			}
		}
		rnd := shapeRand(q.qa.ID, k)
		if k == own && drop {
			in.Sentences = slices.Delete(in.Sentences, in.Gold, in.Gold+1)
			in.Questions = slices.Delete(in.Questions, in.Gold, in.Gold+1)
			in.Gold = -1
		}
		s := PickShape(rnd, sp.share, in)
		if s == ShapeProse {
			if k == own && drop {
				out[k].Text = "# " + art.Title + "\n" + without
			}
			continue
		}
		sh := Render(s, in, rnd)
		if k == own && !drop {
			if !strings.Contains(sh.GoldLine, answer) {
				continue // the label split the answer: prose it stays
			}
			goldLine = sh.GoldLine
		}
		out[k].Text = sh.Text
	}
	return out, goldLine
}
