package document

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/analysis"
)

// Legal structure: Japanese laws, ordinances and in-house regulations share
// one shape, whatever file they come in —
//
//	製造物責任法                      title
//	第一章　総則                      division: 編・章・節・款・目
//	（定義）                          caption of the next article
//	第二条　この法律において…          article (条), text on the line or below
//	２　この法律において「欠陥」とは…  paragraph (項) number
//	一　当該製造物を業として…          item (号) number
//	附　則　抄                        supplementary provisions (numbering restarts)
//	別表第一　（第三十七条関係）        appended table
//
// StructureLegal turns that shape into Markdown headings so that the chunker
// cuts at article boundaries and every chunk's heading path names its
// article: "製造物責任法 > 第二条（定義）". Only the line structure changes:
// captions move into their article's heading, a 項/号 number standing on
// its own line is joined to the text below it, bold around a leading number
// is dropped, and white space inside heading titles becomes one space. No
// word is added or removed.
//
// The shape is detected, never assumed: a text is legal only when at least
// two lines start an article (第N条 alone, or followed by white space, a
// caption or the end of the line) with article numbers that increase (a
// 附則 restarts them). A sentence that merely mentions 第三条 is not a line
// that starts with it, and a table cell or a reference that happens to
// start a line (第三条第一項, 第三条の規定) does not continue the
// numbering, so ordinary documents pass through unchanged.

// kanjiDigits are the numerals of article and division numbers.
const kanjiDigits = `一二三四五六七八九十百千〇零`

const num = `[` + kanjiDigits + `0-9０-９]+`

var (
	// legalDivision: 第三章　罰則, 第三章の二　危険物保安技術協会, 第一節.
	legalDivision = regexp.MustCompile(`^第(` + num + `)(編|章|節|款|目)((?:の` + num + `)*)(?:[\s　]+(.*))?$`)
	// legalArticle: 第十一条, 第五十三条の三　text, 第一条（目的）.
	legalArticle = regexp.MustCompile(`^第(` + num + `)条((?:の` + num + `)*)(（[^（）]{1,40}）)?(?:[\s　]+(.*))?$`)
	// legalSupplement: 附則, 附　則　抄, 附　則　（平成一五年…法律第六一号）　抄.
	legalSupplement = regexp.MustCompile(`^[附付][\s　]*則(?:[\s　]*(（[^（）]*）))?(?:[\s　]*(抄))?$`)
	// legalAppendix: 別表, 別表第一　（第三十七条関係）.
	legalAppendix = regexp.MustCompile(`^別表(?:第` + num + `(?:の` + num + `)*)?(?:[\s　]*(（[^（）]*）))?$`)
	// legalCaption: （定義）, a whole line in parentheses.
	legalCaption = regexp.MustCompile(`^（[^（）。]{1,40}）$`)
	// legalTOCRange: the article range a table-of-contents entry ends with.
	legalTOCRange = regexp.MustCompile(`（第` + num + `条(?:の` + num + `)*(?:[―－‐\-～〜]第` + num + `条(?:の` + num + `)*)?）$`)
	// legalLabel: a 項 or 号 number standing alone: ２, ○２, 一, 一の二,
	// 三から五まで, イ, （１）.
	legalLabel = regexp.MustCompile(`^○?(?:[0-9０-９]+|[` + kanjiDigits + `]+(?:の[` + kanjiDigits + `]+)*(?:から[` + kanjiDigits + `]+(?:の[` + kanjiDigits + `]+)*まで)?|[イロハニホヘトチリヌルヲワカヨタレソツネナラムウヰノオクヤマケフコエテアサキユメミシヱヒモセス]|（[0-9０-９` + kanjiDigits + `]{1,4}）)$`)
	// leadingBold: "**第一条** 　text", the form HTML-to-Markdown gives.
	leadingBold = regexp.MustCompile(`^\*\*([^*\s　]{1,16})\*\*[\s　]*(.*)$`)
	// atxPrefix: an ATX heading mark.
	atxPrefix = regexp.MustCompile(`^(#{1,6})(?:[ \t]+|$)`)
)

// division ranks, outermost first.
var divisionRanks = []string{"編", "章", "節", "款", "目"}

// legalKind classifies one line.
type legalKind int

const (
	legalText legalKind = iota
	legalBlank
	legalDivisionLine
	legalArticleLine
	legalSupplementLine
	legalAppendixLine
	legalCaptionLine
	legalLabelLine
)

// legalLine is one source line and what it was read as.
type legalLine struct {
	raw     string    // as written
	plain   string    // trimmed, ATX mark and surrounding bold removed
	atx     int       // ATX heading level the line had, 0 if none
	kind    legalKind // after acceptance: rejected candidates are legalText
	rank    int       // division: index in divisionRanks
	number  []int     // article or division number: 第五十三条の三 → [53 3]
	label   string    // article or division label as written: 第五十三条の三
	title   string    // division title, article caption, supplement/appendix rest
	rest    string    // article: text after the label on the same line
	caption string    // article: the caption line above it, if any
	below   string    // article: the short caption line below it, if any (Markdown rules: ### 第7条 / 試用期間)
}

// StructureLegal returns text with legal structure as Markdown headings
// (see the comment above) and true, or text unchanged and false when text
// is not legal-shaped.
func StructureLegal(text string) (string, bool) {
	lines := classifyLegal(text)
	if !acceptArticles(lines) {
		return text, false
	}
	acceptDivisions(lines)
	attachCaptions(lines)
	attachCaptionsBelow(lines)
	return renderLegal(lines), true
}

// classifyLegal reads every line as a candidate; fenced code is text.
func classifyLegal(text string) []legalLine {
	text = normalizeNewlines(strings.ToValidUTF8(text, "\uFFFD"))
	var out []legalLine
	var fence fenceState
	for raw := range strings.Lines(text) {
		raw = strings.TrimRight(raw, "\n")
		l := legalLine{raw: raw}
		if fence.inCode(raw) {
			out = append(out, l)
			continue
		}
		p := strings.TrimRight(raw, " \t　")
		if m := atxPrefix.FindStringSubmatch(p); m != nil {
			l.atx = len(m[1])
			p = strings.TrimRight(strings.TrimRight(p[len(m[0]):], "#"), " \t")
		}
		p = strings.Trim(p, " \t　")
		if strings.HasPrefix(p, "**") && strings.HasSuffix(p, "**") && len(p) > 4 && !strings.Contains(p[2:len(p)-2], "**") {
			p = strings.Trim(p[2:len(p)-2], " \t　")
		}
		l.plain = p
		classifyLegalLine(&l)
		out = append(out, l)
	}
	return out
}

// classifyLegalLine sets the kind and fields of l from l.plain.
func classifyLegalLine(l *legalLine) {
	p := l.plain
	if p == "" {
		l.kind = legalBlank
		return
	}
	if m := leadingBold.FindStringSubmatch(p); m != nil {
		// "**２** 　text": a bold label and its text, as one line.
		if a := legalArticle.FindStringSubmatch(m[1]); a != nil {
			setArticle(l, a, m[2])
			return
		}
		if legalLabel.MatchString(m[1]) {
			l.kind, l.label, l.rest = legalLabelLine, m[1], m[2]
			return
		}
	}
	if utf8.RuneCountInString(p) > 80 {
		if a := legalArticle.FindStringSubmatch(p); a != nil {
			setArticle(l, a, a[4])
		}
		return
	}
	switch {
	case legalArticle.MatchString(p):
		a := legalArticle.FindStringSubmatch(p)
		setArticle(l, a, a[4])
	case legalDivision.MatchString(p):
		m := legalDivision.FindStringSubmatch(p)
		if strings.HasSuffix(m[4], "。") {
			return
		}
		l.kind = legalDivisionLine
		l.rank = slices.Index(divisionRanks, m[2])
		l.number = numberPath(m[1], m[3])
		l.label = "第" + m[1] + m[2] + m[3]
		l.title = m[4]
	case legalSupplement.MatchString(p):
		m := legalSupplement.FindStringSubmatch(p)
		l.kind = legalSupplementLine
		l.title = strings.TrimSpace(m[1] + " " + m[2])
	case legalAppendix.MatchString(p):
		l.kind = legalAppendixLine
	case legalCaption.MatchString(p):
		l.kind = legalCaptionLine
	case legalLabel.MatchString(p):
		l.kind, l.label = legalLabelLine, p
	}
}

// setArticle fills an article candidate; rest is the text after the label.
// A line whose text starts with a particle (第三条 の規定により…) is a
// reference broken across lines, not an article; one whose text opens a
// code fence is not prose.
func setArticle(l *legalLine, m []string, rest string) {
	if mark, _ := codeFence(rest); startsWithParticle(rest) || mark != "" {
		return
	}
	l.kind = legalArticleLine
	l.number = numberPath(m[1], m[2])
	l.label = "第" + m[1] + "条" + m[2]
	l.title = m[3]
	l.rest = rest
}

// startsWithParticle reports whether s continues a sentence rather than
// starting one.
func startsWithParticle(s string) bool {
	for _, p := range []string{"の", "に", "を", "は", "が", "で", "と", "も", "へ", "や", "から", "まで", "及び", "又は", "並びに", "若しくは"} {
		if strings.HasPrefix(s, p) && !strings.HasPrefix(s, "この") {
			return true
		}
	}
	return false
}

// acceptArticles keeps the article candidates whose numbers increase (a
// supplement restarts the numbering) and reports whether the text is
// legal-shaped: at least two articles. A bare 第N条 line followed by a
// line that continues a sentence is a broken reference and is dropped.
func acceptArticles(lines []legalLine) bool {
	var last []int
	n := 0
	for i := range lines {
		l := &lines[i]
		switch l.kind {
		case legalSupplementLine:
			last = nil
		case legalArticleLine:
			if last != nil && slices.Compare(l.number, last) <= 0 ||
				l.rest == "" && l.title == "" && continuesSentence(lines, i) {
				l.kind = legalText
				continue
			}
			last = l.number
			n++
		}
	}
	return n >= 2
}

// continuesSentence reports whether the next non-blank line after i reads
// as the rest of a sentence.
func continuesSentence(lines []legalLine, i int) bool {
	j := nextNonBlank(lines, i)
	return j >= 0 && lines[j].kind == legalText && startsWithParticle(lines[j].plain)
}

// nextNonBlank returns the index of the first non-blank line after i, or -1.
func nextNonBlank(lines []legalLine, i int) int {
	for j := i + 1; j < len(lines); j++ {
		if lines[j].kind != legalBlank {
			return j
		}
	}
	return -1
}

// acceptDivisions decides which division, supplement and appendix lines
// are headings. A table of contents lists the divisions before the first
// article; the body repeats them. Before the first article only the
// divisions that lead straight down to it count (each of a finer rank than
// the one above it); every line before those is the table of contents.
// After the first article, a division must continue the numbering of its
// rank. TOC entries that end with an article range （第一条―第三条） are
// never headings.
func acceptDivisions(lines []legalLine) {
	first := slices.IndexFunc(lines, func(l legalLine) bool { return l.kind == legalArticleLine })
	// The chain above the first article, walking up.
	chainStart := first
	rank := len(divisionRanks)
	for j := first - 1; j >= 0; j-- {
		l := lines[j]
		if l.kind == legalBlank || l.kind == legalCaptionLine {
			continue
		}
		if l.kind != legalDivisionLine || l.rank >= rank || legalTOCRange.MatchString(l.title) {
			break
		}
		rank = l.rank
		chainStart = j
	}
	for j := 0; j < chainStart; j++ {
		switch lines[j].kind {
		case legalDivisionLine, legalSupplementLine, legalAppendixLine:
			lines[j].kind = legalText
		}
	}
	// articleAhead[j]: an article comes at or after line j before the
	// next supplement. Appended tables (別表) follow the provisions, so a
	// 別表 line with articles after it is a reference (a table cell), not a
	// heading.
	articleAhead := make([]bool, len(lines)+1)
	for j := len(lines) - 1; j >= 0; j-- {
		switch lines[j].kind {
		case legalArticleLine:
			articleAhead[j] = true
		case legalSupplementLine:
		default:
			articleAhead[j] = articleAhead[j+1]
		}
	}
	last := make([][]int, len(divisionRanks))
	for j := chainStart; j < len(lines); j++ {
		l := &lines[j]
		switch l.kind {
		case legalAppendixLine:
			if articleAhead[j+1] {
				l.kind = legalText // a table cell naming 別表第五 inside an article
				continue
			}
			clear(last)
		case legalSupplementLine:
			clear(last)
		case legalDivisionLine:
			if legalTOCRange.MatchString(l.title) || last[l.rank] != nil && slices.Compare(l.number, last[l.rank]) <= 0 {
				l.kind = legalText
				continue
			}
			last[l.rank] = l.number
			clear(last[l.rank+1:])
		}
	}
}

// attachCaptions gives each article the caption line just above it. A
// caption broken over two lines, as a link inside it leaves it in a text
// copy of a page (（民法 / の適用）), is joined.
func attachCaptions(lines []legalLine) {
	articleBelow := func(i int) int {
		if j := nextNonBlank(lines, i); j >= 0 && lines[j].kind == legalArticleLine && lines[j].title == "" {
			return j
		}
		return -1
	}
	for i := 0; i < len(lines); i++ {
		l := &lines[i]
		switch {
		case l.kind == legalCaptionLine:
			if j := articleBelow(i); j >= 0 {
				lines[j].caption = l.plain
			} else {
				l.kind = legalText
			}
		case l.kind == legalText && i+1 < len(lines) && lines[i+1].kind == legalText &&
			legalCaption.MatchString(l.plain+lines[i+1].plain) && !strings.Contains(l.plain, "）"):
			if j := articleBelow(i + 1); j >= 0 {
				lines[j].caption = l.plain + lines[i+1].plain
				l.kind, lines[i+1].kind = legalCaptionLine, legalCaptionLine
				i++
			}
		}
	}
}

// attachCaptionsBelow gives an article that has no caption yet the short
// caption line just below it. Company rules written in Markdown put the
// caption under the heading, often without brackets:
//
//	### 第7条
//	試用期間
//
// Left as body text, the bare caption is the first "sentence" of the
// article and gets quoted as an answer; joined, the heading reads
// 第7条 試用期間 (or 第7条（試用期間） when the caption is bracketed). Only
// a line that reads as a caption moves (see isCaptionBelow); no character
// is added or dropped, and a following blank line may sit between them.
func attachCaptionsBelow(lines []legalLine) {
	for i := range lines {
		l := &lines[i]
		if l.kind != legalArticleLine || l.title != "" || l.caption != "" || l.rest != "" {
			continue
		}
		j := nextNonBlank(lines, i)
		if j < 0 || j > i+2 {
			continue
		}
		c := &lines[j]
		switch {
		case c.kind == legalCaptionLine || c.kind == legalText && legalCaption.MatchString(c.plain):
			// （試用期間）, not taken by an article below it.
			l.title = c.plain
		case c.kind == legalText && c.atx == 0 && isCaptionBelow(c.plain):
			l.below = c.plain
		default:
			continue
		}
		c.kind = legalCaptionLine
	}
}

// isCaptionBelow reports whether a line under an article heading is its
// caption: short (at most 20 characters), no sentence punctuation, no
// Markdown block syntax (list, table, quote, code, HTML), and no predicate
// ending (…る, …う, ない, ます, です, た, だ) — a caption names a topic
// (試用期間, 年次有給休暇, 賃金の支払い), it does not state a rule.
func isCaptionBelow(plain string) bool {
	n := utf8.RuneCountInString(plain)
	if n == 0 || n > 20 || strings.ContainsAny(plain, "。、．，,:：;；!?！？「」『』") {
		return false
	}
	if strings.ContainsAny(plain[:1], "-*+>|#!<`[~") || listMarker.MatchString(plain) {
		return false
	}
	for _, end := range []string{"る", "う", "ない", "ます", "です", "た", "だ"} {
		if strings.HasSuffix(plain, end) {
			return false
		}
	}
	return true
}

// listMarker: an ordered list item, 1. or 1).
var listMarker = regexp.MustCompile(`^[0-9]+[.)]`)

// renderLegal writes the accepted structure as Markdown.
func renderLegal(lines []legalLine) string {
	// Heading levels: below the title (if any), one level per division
	// rank present (編 > 章 > 節 > 款 > 目), then articles; supplements and
	// appended tables sit at the outermost division level. Nothing goes
	// deeper than ######: a sixth level is the article's.
	present := make([]bool, len(divisionRanks))
	for _, l := range lines {
		if l.kind == legalDivisionLine {
			present[l.rank] = true
		}
	}
	title, titleLevel := legalTitle(lines)
	afterTitle := -1
	if title >= 0 {
		afterTitle = nextNonBlank(lines, title)
	}
	base := min(titleLevel, 3)
	rankLevel := make([]int, len(divisionRanks))
	level := base
	for r, ok := range present {
		if ok {
			level++
			rankLevel[r] = min(level, 5)
		}
	}
	articleLevel := min(level+1, 6)
	topLevel := base + 1

	var b strings.Builder
	heading := func(level int, text string) {
		b.WriteString("\n" + strings.Repeat("#", level) + " " + escapeHeadingText(text) + "\n\n")
	}
	label := "" // a 項/号 number waiting for its text
	flushLabel := func() {
		if label != "" {
			b.WriteString(label + "\n\n")
			label = ""
		}
	}
	inBody := false // after the first heading the parser made
	for i, l := range lines {
		if l.kind != legalLabelLine && l.kind != legalText && l.kind != legalBlank {
			flushLabel()
		}
		switch l.kind {
		case legalBlank:
			if label == "" {
				b.WriteString("\n")
			}
			continue
		case legalDivisionLine:
			heading(rankLevel[l.rank], joinTitle(l.label, l.title))
		case legalSupplementLine:
			heading(topLevel, joinTitle("附則", l.title))
		case legalAppendixLine:
			heading(topLevel, oneSpace(l.plain))
		case legalCaptionLine:
			// moved into the article heading
		case legalArticleLine:
			switch {
			case l.atx > 0 && l.rest != "":
				// ### 第7条 試用期間: the source made the whole line a
				// heading, so the words after the label stay in it.
				heading(articleLevel, joinTitle(l.label+l.title+l.caption, l.rest))
			case l.below != "":
				heading(articleLevel, joinTitle(l.label+l.title+l.caption, l.below))
			default:
				heading(articleLevel, l.label+l.title+l.caption)
				if l.rest != "" {
					b.WriteString(l.rest + "\n")
				}
			}
		case legalLabelLine:
			flushLabel()
			switch {
			case !inBody:
				b.WriteString(l.raw + "\n")
			case l.rest != "":
				b.WriteString("\n" + l.label + "　" + l.rest + "\n\n")
			default:
				label = l.label
			}
		default:
			switch {
			case i == title:
				b.WriteString(strings.Repeat("#", titleLevel) + " " + l.plain + "\n\n")
			case i == afterTitle && l.plain == lines[title].plain:
				// The title repeated under itself (an HTML page's <title>
				// made the heading, its body starts with the same name):
				// once is enough.
			case label != "":
				b.WriteString("\n" + label + "　" + strings.TrimLeft(l.raw, " \t　") + "\n")
				label = ""
			default:
				b.WriteString(l.raw + "\n")
			}
		}
		if l.kind != legalText && l.kind != legalLabelLine {
			inBody = true
		}
	}
	flushLabel()
	return tidy(b.String())
}

// legalTitle returns the index of the line that titles the document and
// its heading level: the first non-blank line, when it is an ATX heading
// (any level) that is not itself structure, or, when the text has no ATX
// heading at all, short plain text (level 1). -1 if none.
func legalTitle(lines []legalLine) (int, int) {
	first := nextNonBlank(lines, -1)
	if first < 0 {
		return -1, 0
	}
	l := lines[first]
	if l.atx > 0 && l.kind == legalText {
		return first, l.atx
	}
	if l.atx != 0 || l.kind != legalText || utf8.RuneCountInString(l.plain) > 60 || strings.HasSuffix(l.plain, "。") {
		return -1, 0
	}
	for _, o := range lines {
		if o.atx > 0 {
			return -1, 0
		}
	}
	return first, 1
}

// joinTitle writes a label and its title with one space between.
func joinTitle(label, title string) string {
	return oneSpace(strings.TrimSpace(label + " " + title))
}

// oneSpace turns every run of white space (U+3000 included) into one
// space, and closes up 附　則 to 附則.
func oneSpace(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '　'
	}), " ")
	if strings.HasPrefix(s, "附 則") {
		s = "附則" + s[len("附 則"):]
	}
	return s
}

// escapeHeadingText keeps a heading title from ending in what Markdown
// would read as a closing sequence of #s.
func escapeHeadingText(s string) string {
	if strings.HasSuffix(s, "#") {
		return s[:len(s)-1] + `\#`
	}
	return s
}

// numberPath parses 五十三 and の三 into [53 3].
func numberPath(main, branches string) []int {
	out := []int{parseJapaneseNumber(main)}
	for _, b := range strings.Split(branches, "の") {
		if b != "" {
			out = append(out, parseJapaneseNumber(b))
		}
	}
	return out
}

// parseJapaneseNumber reads an article or division number (num: kanji,
// ASCII or full-width digits).
func parseJapaneseNumber(s string) int {
	n, _ := analysis.ParseNumber(s)
	return n
}

// fenceState follows fenced code blocks line by line: the mark of the
// fence open, "" outside code.
type fenceState string

// inCode reports whether line is part of fenced code — a fence that opens
// or closes a block, or a line inside one — and moves past it.
func (f *fenceState) inCode(line string) bool {
	mark, info := codeFence(line)
	if mark == "" && *f == "" {
		return false
	}
	switch {
	case *f == "":
		*f = fenceState(mark)
	case strings.HasPrefix(mark, string(*f)) && info == "":
		*f = ""
	}
	return true
}

// codeFence returns the fence mark (``` or ~~~, possibly longer) a line
// starts with, and the text after it; "" when the line is no fence. Lines
// inside fenced code are never legal structure.
func codeFence(line string) (mark, info string) {
	l := strings.TrimLeft(line, " ")
	if len(line)-len(l) > 3 || len(l) < 3 || (l[0] != '`' && l[0] != '~') {
		return "", ""
	}
	n := 0
	for n < len(l) && l[n] == l[0] {
		n++
	}
	if n < 3 {
		return "", ""
	}
	return l[:n], strings.TrimSpace(l[n:])
}
