package reader

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Law questions: JaQuAD's Wikipedia paragraphs hold no legal definitions
// (「この法律において「X」とは、…をいう。」, 「一　X　…をいう。」), the most
// common answer in laws and in the rules and guidelines written like them.
// LawQuestions makes reading-comprehension questions from the laws of
// law-corpus-ja (e-Gov texts, not protected by copyright): each definition
// gives one question about its term, answered by the definition's body,
// in an article read among the law's other articles (whose definitions of
// other terms are the near misses). The questions are written from
// templates, never from an evaluation set's.

// LawProvenance is what a model trained with law questions adds to its
// provenance.
const LawProvenance = "Plus questions made by `shirube train --laws` from the definitions of law-corpus-ja's e-Gov laws (not protected by copyright, Copyright Act article 13), the development sets' laws left out."

// LawOptions configure LawQuestions.
type LawOptions struct {
	Dir string // law-corpus-ja's folder: index.tsv and text/<hash>.txt
	// Exclude leaves out a law by its name (the development sets' laws).
	Exclude func(name string) bool
	// Laws caps the laws read (those with a definition, in index order,
	// every k-th to spread over ministries); 0 = 600.
	Laws int
	// PerLaw caps the questions of one law; 0 = 6.
	PerLaw int
	// Articles caps the articles of one law put in the corpus (the
	// definitions' and the first others); 0 = 12.
	Articles int
}

// DevLaws are the laws the development set qa-ja-docs asks about (its
// README): training never reads them, nor their orders and rules, whose
// names hold theirs.
var DevLaws = []string{"労働安全衛生法", "消防法", "個人情報の保護に関する法律", "行政手続法", "日本国憲法", "製造物責任法"}

// ExcludeDevLaws reports whether a law's name holds one of DevLaws.
func ExcludeDevLaws(name string) bool {
	for _, l := range DevLaws {
		if strings.Contains(name, l) {
			return true
		}
	}
	return false
}

// lawArticle is one article of a law: its caption (（定義）), its number
// (第二条) and its paragraphs and items, one a line (「一　X　…」, 「２　…」).
type lawArticle struct {
	caption, number string
	lines           []string
}

func (a lawArticle) text() string {
	head := a.number
	if a.caption != "" {
		head = a.caption + "\n" + a.number
	}
	return head + "\n" + strings.Join(a.lines, "\n")
}

var (
	articleNumber = regexp.MustCompile(`^第[一二三四五六七八九十百千]+条(の[一二三四五六七八九十]+)*$`)
	captionLine   = regexp.MustCompile(`^（[^（）]{1,30}）$`)
	itemNumberRe  = regexp.MustCompile(`^([一二三四五六七八九十]+|[０-９]+|[イロハニホヘトチリヌ])$`)
	chapterLine   = regexp.MustCompile(`^　*第[一二三四五六七八九十]+[章節款]`)
	// 「「X」とは、…をいう。」 and the item 「X　…をいう。」.
	quotedDefinition = regexp.MustCompile(`「([^」]{1,30})」とは、([^。]{4,200}?)をいう。`)
	itemDefinition   = regexp.MustCompile(`^[一二三四五六七八九十]+　([^　、。「」]{1,30})　([^。]{4,200}?)をいう。`)
)

// parseLaw splits an e-Gov law text into its articles (the main
// provisions; supplementary provisions 附則 end them).
func parseLaw(text string) []lawArticle {
	var out []lawArticle
	var cur *lawArticle
	caption, pendingNumber := "", ""
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimRight(raw, " \t\r")
		t := strings.TrimSpace(strings.Trim(line, "　"))
		switch {
		case t == "":
			continue
		case (t == "附則" || strings.HasPrefix(t, "附　則") || strings.HasPrefix(t, "附則　")) && len(out) > 0:
			return out // (before any article, 附則 is the table of contents')
		case captionLine.MatchString(t):
			caption = t
			continue
		case articleNumber.MatchString(t):
			out = append(out, lawArticle{caption: caption, number: t})
			cur, caption, pendingNumber = &out[len(out)-1], "", ""
			continue
		case chapterLine.MatchString(line):
			cur, caption = nil, ""
			continue
		}
		if cur == nil {
			continue
		}
		switch {
		case itemNumberRe.MatchString(t):
			pendingNumber = t // the number of the paragraph or item below
		case strings.HasPrefix(line, "　") || len(cur.lines) == 0:
			if pendingNumber != "" {
				t = pendingNumber + "　" + t
				pendingNumber = ""
			}
			cur.lines = append(cur.lines, t)
		default:
			// A law's name and number cited inside a sentence are printed
			// on lines of their own: they continue it.
			cur.lines[len(cur.lines)-1] += t
		}
	}
	return out
}

// lawDefinition is one definition found in an article: the defined term,
// the body that answers, and the line that holds them.
type lawDefinition struct {
	term, body, line string
}

func definitions(a lawArticle) []lawDefinition {
	var out []lawDefinition
	seen := map[string]bool{}
	for _, l := range a.lines {
		for _, m := range quotedDefinition.FindAllStringSubmatch(l, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				out = append(out, lawDefinition{term: m[1], body: m[2], line: l})
			}
		}
		if m := itemDefinition.FindStringSubmatch(l); m != nil && !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, lawDefinition{term: m[1], body: m[2], line: l})
		}
	}
	return out
}

// lawQuestionTemplates ask for a term's meaning the ways people do; %[1]s
// is the law's name, %[2]s the term.
var lawQuestionTemplates = []string{
	"%[1]sでいう「%[2]s」とは何ですか？",
	"%[1]sにおける%[2]sの定義を教えてください。",
	"「%[2]s」とはどういう意味ですか？",
	"%[2]sとは何を指しますか？",
	"%[1]sの%[2]sとは、どういうものですか？",
}

// shortLawName drops the promulgation date and number 「（平成…号）」 and
// 「　抄」 from an index.tsv name.
func shortLawName(name string) string {
	if i := strings.Index(name, "（"); i > 0 {
		name = name[:i]
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(name), "　抄"))
}

// LawQuestions reads law-corpus-ja and returns its definitions' questions
// in the SQuAD layout: one article a law, one paragraph a law article
// (the questions on the definitions' articles).
func LawQuestions(opt LawOptions) (*SQuAD, error) {
	if opt.Laws <= 0 {
		opt.Laws = 600
	}
	if opt.PerLaw <= 0 {
		opt.PerLaw = 6
	}
	if opt.Articles <= 0 {
		opt.Articles = 12
	}
	f, err := os.Open(filepath.Join(opt.Dir, "index.tsv"))
	if err != nil {
		return nil, fmt.Errorf("law questions: %w (unpack law-corpus-ja.tar.xz and give its law-corpus-ja folder)", err)
	}
	defer f.Close()
	type entry struct{ hash, name string }
	var laws []entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 2 || opt.Exclude != nil && opt.Exclude(cols[1]) {
			continue
		}
		laws = append(laws, entry{cols[0], cols[1]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("law questions: %s: %w", f.Name(), err)
	}
	out := &SQuAD{Version: "law-corpus-ja definitions"}
	for _, l := range laws {
		if len(out.Data) >= opt.Laws {
			break
		}
		b, err := os.ReadFile(filepath.Join(opt.Dir, "text", l.hash+".txt"))
		if err != nil {
			continue // a law listed without its text: the others still count
		}
		if art, ok := lawSQuADArticle(shortLawName(l.name), string(b), opt); ok {
			out.Data = append(out.Data, art)
		}
	}
	if len(out.Data) == 0 {
		return nil, fmt.Errorf("law questions: no definitions found in %s", opt.Dir)
	}
	return out, nil
}

// lawSQuADArticle turns one law into a SQuAD article: its definition
// articles with their questions, and its first other articles beside them.
func lawSQuADArticle(name, text string, opt LawOptions) (Article, bool) {
	arts := parseLaw(text)
	art := Article{Title: name}
	questions := 0
	var others []Paragraph
	for ai, a := range arts {
		defs := definitions(a)
		ctx := a.text()
		p := Paragraph{Context: ctx}
		for di, d := range defs {
			if questions >= opt.PerLaw {
				break
			}
			at := strings.Index(ctx, d.line)
			rel := strings.Index(d.line, d.body)
			if at < 0 || rel < 0 {
				continue
			}
			h := fnv.New32a()
			fmt.Fprintf(h, "%s\x00%s", name, d.term)
			tmpl := lawQuestionTemplates[h.Sum32()%uint32(len(lawQuestionTemplates))]
			p.QAs = append(p.QAs, QA{
				ID:       fmt.Sprintf("law-%s-%d-%d", name, ai, di),
				Question: fmt.Sprintf(tmpl, name, d.term),
				Answers: []AnswerSpan{{
					Text: d.body, Start: utf8.RuneCountInString(ctx[:at+rel]), AnswerType: "Object",
				}},
				QuestionType: "Definition",
			})
			questions++
		}
		switch {
		case len(p.QAs) > 0:
			art.Paragraphs = append(art.Paragraphs, p)
		case len(others) < opt.Articles && len(a.lines) > 0:
			others = append(others, p)
		}
	}
	if questions == 0 {
		return Article{}, false
	}
	art.Paragraphs = append(art.Paragraphs, others[:min(len(others), max(opt.Articles-len(art.Paragraphs), 0))]...)
	return art, true
}
