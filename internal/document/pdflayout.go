package document

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The PDF layout step turns the text pdftotext -raw gives for one page into
// Markdown the chunker can split by section. pdftotext -raw keeps the order
// of the content stream, which is the order the words are meant to be read
// in for most Japanese reports, but it carries no structure and keeps the
// artefacts of how the page was drawn. layoutPDFPage repairs those with
// mechanisms that hold for any Japanese PDF, never for one document's words:
//
//   - vertical labels (one character per line, as in a table's row
//     header 「日/本/語/版」) are joined into one line;
//   - letter-spaced words (「回 収 サ ン プ ル」, 「成 分 名」) lose the
//     spaces between their kana and kanji;
//   - a block of lines repeated right after itself (text drawn twice, for
//     a shadow or a bold effect) is kept once;
//   - lines that open with a section number of the first two levels
//     (「1.」「1.3」「１.２」「第2章」「第1節」「Ⅳ．３」「問３．」) and look
//     like titles (short, not a wrapped sentence, not a table-of-contents
//     entry) become Markdown headings # and ##, so chunks carry the section
//     in their heading path.
//
// The page stays faithful to the PDF: characters are never added except the
// Markdown heading marks, spaces are removed only inside letter-spaced runs,
// and lines are dropped only where the same lines were just repeated.

// layoutPDFPage returns the Markdown for one page of pdftotext -raw output.
// An empty or whitespace-only page stays as it is.
func layoutPDFPage(raw string) string {
	if strings.TrimSpace(raw) == "" {
		return raw
	}
	lines := strings.Split(raw, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\u3000")
	}
	lines = joinVerticalLabels(lines)
	lines = dropRepeatedBlocks(lines)
	for i, l := range lines {
		lines[i] = joinLetterSpacing(l)
	}
	markHeadings(lines)
	return strings.Join(lines, "\n")
}

// isKanaKanji reports whether r is a kana or kanji letter: the characters
// that are letter-spaced or stacked vertically in Japanese layouts. Symbols
// that share the scripts (〇 ・ ー 々) are not letters of their own.
func isKanaKanji(r rune) bool {
	switch r {
	case '〇', '・', 'ー', '々', '〆', 'ゝ', 'ゞ', 'ヽ', 'ヾ':
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// singleKanaKanji reports whether s is exactly one kana or kanji letter.
func singleKanaKanji(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return n == len(s) && n > 0 && isKanaKanji(r)
}

// joinVerticalLabels joins runs of two or more consecutive lines that each
// hold a single kana or kanji: a label set vertically, which pdftotext
// emits one character per line.
func joinVerticalLabels(lines []string) []string {
	out := lines[:0:0]
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && singleKanaKanji(strings.TrimSpace(lines[j])) {
			j++
		}
		if j-i >= 2 {
			var b strings.Builder
			for _, l := range lines[i:j] {
				b.WriteString(strings.TrimSpace(l))
			}
			out = append(out, b.String())
			i = j
			continue
		}
		out = append(out, lines[i])
		i++
	}
	return out
}

// maxRepeatedBlock is the longest block of lines dropRepeatedBlocks looks
// for; text drawn twice is a caption or a box, a few lines at most.
const maxRepeatedBlock = 8

// minRepeatedLetters is the least number of letters a repeated block must
// hold to be dropped, so equal table rows (「〇 〇 〇」「3.0 3.0」) stay.
const minRepeatedLetters = 6

// dropRepeatedBlocks removes a block of lines that repeats, line for line,
// the block right before it. Legitimate repetition on a page (the same
// step in two lists, a label in every box) has other lines in between and
// is kept.
func dropRepeatedBlocks(lines []string) []string {
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); {
		dropped := false
		for k := min(maxRepeatedBlock, len(out), len(lines)-i); k >= 1; k-- {
			if equalBlock(out[len(out)-k:], lines[i:i+k]) && letters(lines[i:i+k]) >= minRepeatedLetters {
				i += k
				dropped = true
				break
			}
		}
		if !dropped {
			out = append(out, lines[i])
			i++
		}
	}
	return out
}

// equalBlock reports whether a and b hold the same non-blank lines.
func equalBlock(a, b []string) bool {
	for i := range a {
		if strings.TrimSpace(a[i]) == "" || strings.TrimSpace(a[i]) != strings.TrimSpace(b[i]) {
			return false
		}
	}
	return true
}

// letters counts the letters (any script) in lines.
func letters(lines []string) int {
	n := 0
	for _, l := range lines {
		for _, r := range l {
			if unicode.IsLetter(r) {
				n++
			}
		}
	}
	return n
}

// joinLetterSpacing removes the spaces inside letter-spaced runs: three or
// more single kana/kanji separated by single spaces (「成 分 名」→「成分名」),
// or a line that is nothing but two of them (「目 次」). Other spaces, such
// as those between table cells or around numbers, stay.
func joinLetterSpacing(line string) string {
	if !strings.ContainsAny(line, " \u3000") {
		return line
	}
	// Tokens and the separators before them.
	var toks, seps []string
	rest := line
	for rest != "" {
		i := strings.IndexFunc(rest, func(r rune) bool { return r != ' ' && r != '\u3000' })
		if i < 0 {
			seps = append(seps, rest)
			toks = append(toks, "")
			break
		}
		sep := rest[:i]
		rest = rest[i:]
		j := strings.IndexAny(rest, " \u3000")
		if j < 0 {
			j = len(rest)
		}
		seps = append(seps, sep)
		toks = append(toks, rest[:j])
		rest = rest[j:]
	}
	whole := len(toks) == 2 && singleKanaKanji(toks[0]) && singleKanaKanji(toks[1]) && utf8.RuneCountInString(seps[1]) == 1
	var b strings.Builder
	for k := 0; k < len(toks); {
		j := k
		for j < len(toks) && singleKanaKanji(toks[j]) && (j == k || utf8.RuneCountInString(seps[j]) == 1) {
			j++
		}
		if j-k >= 3 || (whole && j-k == 2) {
			b.WriteString(seps[k])
			for m := k; m < j; m++ {
				b.WriteString(toks[m])
			}
			k = j
			continue
		}
		b.WriteString(seps[k])
		b.WriteString(toks[k])
		k++
	}
	return b.String()
}

// Section numbers that open a heading line, with the heading level they
// give. The title must follow the number, after a separator.
var (
	// 第2章 / 第十一節 / 第１編: 編 and 章 are level 1, 節 level 2, 款 level 3.
	headingChapter = regexp.MustCompile(`^第[0-9０-９一二三四五六七八九十百]+([編章節款部])[\s\p{Zs}]*\S`)
	// 1. / 1-1. / １.３ / 1.2.3 / Ⅳ．３．２ / Ⅱ.: the level is the number of
	// components. A single arabic number needs a dot, or must be full-width
	// and followed by a space (「１ はじめに」): a half-width number and a
	// space opens many wrapped sentence lines (「30 日まで」).
	headingDotted = regexp.MustCompile(`^([0-9０-９]{1,2}|[ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩ]{1,3})((?:[.．\-－][0-9０-９]{1,2}){0,3})([.．]?)[\s\p{Zs}]*(\S)`)
	// (1) / （１） / 1) / １）: level 3.
	headingParen = regexp.MustCompile(`^(?:[(（][0-9０-９]{1,2}[)）]|[0-9０-９]{1,2}[)）])[\s\p{Zs}]*\S`)
	// 問1． / Q3. / Ｑ２: a question of a Q&A, level 2.
	headingQuestion = regexp.MustCompile(`^(?:問|Q|Ｑ)[\s\p{Zs}]*[0-9０-９]{1,3}[.．:：、\s\p{Zs}]`)
)

// minSectionRunes is the least body text a heading's section holds on
// the page; shorter ones are the items of a list.
const minSectionRunes = 40

// counters are the Japanese counters and units that follow a number in a
// value (「1.5 倍」「3 件」「2 年」).
const counters = "倍件年月日時分秒円人個回割位歳社名点度台万億兆枚本冊箇ヶ"

// maxPDFHeadingLevel is the deepest numbering marked as a heading. Deeper
// numbers (「（1）」「1)」「1.2.3」) open list items in most Japanese
// reports and guidelines; cutting sections there left chunks of a line or
// two and lowered the key-fact rate on qa-ja-docs (docs/BENCHMARKS.md), so
// they stay body text, in their section.
const maxPDFHeadingLevel = 2

// maxPDFHeadingRunes is the longest line taken for a heading.
const maxPDFHeadingRunes = 60

// headingLevel returns the Markdown level (1–3) of a line that opens with a
// section number, or 0.
func headingLevel(line string) int {
	// Most lines cannot open with a number; skip the regexps for them.
	first, _ := utf8.DecodeRuneInString(line)
	if !unicode.IsDigit(first) && !strings.ContainsRune("第問QＱ(（ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩ", first) {
		return 0
	}
	switch {
	case headingQuestion.MatchString(line):
		return 2
	case headingParen.MatchString(line):
		return 3
	}
	if m := headingChapter.FindStringSubmatch(line); m != nil {
		switch m[1] {
		case "節":
			return 2
		case "款":
			return 3
		}
		return 1
	}
	m := headingDotted.FindStringSubmatch(line)
	if m == nil {
		return 0
	}
	comps := 1 + strings.Count(m[2], ".") + strings.Count(m[2], "．") + strings.Count(m[2], "-") + strings.Count(m[2], "－")
	if comps == 1 && m[3] == "" {
		first, _ := utf8.DecodeRuneInString(m[1])
		roman := first >= 'Ⅰ' && first <= 'Ⅹ'
		sep := line[len(m[1]):]
		spaced := sep != "" && (sep[0] == ' ' || strings.HasPrefix(sep, "\u3000"))
		if !roman && !(first >= '０' && first <= '９' && spaced) {
			return 0
		}
	}
	// The title must start with a letter, not a number or a unit: 「1.5 倍」
	// and 「2-3 件」 are values, 「7.0g」 an amount. A Latin letter or a digit
	// must be set apart from the number (「1. 2024 年の状況」「2. API の設定」).
	first, _ = utf8.DecodeRuneInString(m[4])
	spaced := len(m[0]) > len(m[1])+len(m[2])+len(m[3])+len(m[4])
	switch {
	case first < utf8.RuneSelf && (unicode.IsLetter(first) || unicode.IsDigit(first)):
		if !spaced || (unicode.IsDigit(first) && (comps > 1 || m[3] == "")) {
			return 0
		}
	case !unicode.IsLetter(first) && !strings.ContainsRune("「『【(（", first):
		return 0
	case strings.ContainsRune(counters, first):
		// 「1.5 倍に」「2.1 万件」: a counter after a number is a value,
		// unless it opens a word (「1.3 位置づけ」「3.1 日本の状況」).
		rest := []rune(line[len(m[0]):])
		if len(rest) == 0 || !unicode.Is(unicode.Han, rest[0]) && !unicode.Is(unicode.Katakana, rest[0]) {
			return 0
		}
	}
	return min(comps, 3)
}

// markHeadings prefixes the heading lines of a page with Markdown marks.
// A line is a heading when it opens with a section number, is short, does
// not end a sentence (except a Q&A question) or a clause, and is not cut
// off by the page width (a wrapped sentence that happens to start with a
// number). A table-of-contents page, full of such lines, gets none. A
// heading must have minSectionRunes of body text (lines that are not
// numbered items) before the next heading of the same or a higher level:
// the chunker drops a section without body, and one-line sections are the
// items of a list.
func markHeadings(lines []string) {
	var widths []int
	leaders := 0
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			widths = append(widths, displayWidth(l))
		}
		if leaderDots.MatchString(l) {
			leaders++
		}
	}
	if leaders >= 3 || len(widths) == 0 {
		return
	}
	slices.Sort(widths)
	w := pageWidths{widest: widths[len(widths)-1], full: widths[len(widths)*3/4]}
	level := make([]int, len(lines))
	item := make([]bool, len(lines)) // opens with a number, heading or not
	for i, l := range lines {
		l = strings.TrimSpace(l)
		level[i] = headingCandidate(l, w)
		item[i] = level[i] == 0 && headingLevel(l) > 0
	}
	for i := range lines {
		if level[i] == 0 {
			continue
		}
		body := 0
		for j := i + 1; j < len(lines) && body < minSectionRunes; j++ {
			if level[j] != 0 && level[j] <= level[i] {
				break
			}
			if level[j] == 0 && !item[j] {
				body += utf8.RuneCountInString(strings.TrimSpace(lines[j]))
			}
		}
		if body < minSectionRunes {
			level[i] = 0
		}
	}
	for i, l := range lines {
		if level[i] > 0 {
			lines[i] = strings.Repeat("#", level[i]) + " " + strings.TrimSpace(l)
		}
	}
}

// pageWidths are the display widths of a page's lines: the widest, and the
// 75th percentile, the width of a full line of body text on most pages.
type pageWidths struct{ widest, full int }

// headingCandidate returns the heading level line would have, or 0.
func headingCandidate(line string, pw pageWidths) int {
	n := utf8.RuneCountInString(line)
	if n < 2 || n > maxPDFHeadingRunes {
		return 0
	}
	lvl := headingLevel(line)
	if lvl == 0 || lvl > maxPDFHeadingLevel || leaderDots.MatchString(line) {
		return 0
	}
	// A line as wide as the widest on the page most likely wraps on.
	w := displayWidth(line)
	if pw.widest >= 40 && w*10 >= pw.widest*9 {
		return 0
	}
	question := headingQuestion.MatchString(line)
	title := []rune(strings.TrimLeft(line, "第問QＱ0123456789０１２３４５６７８９ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩ.．-－()（）一二三四五六七八九十百編章節款部 \t\u3000"))
	if letters([]string{string(title)}) < 3 || !balancedBrackets(string(title)) {
		return 0
	}
	last := title[len(title)-1]
	for i, r := range title {
		switch r {
		case '。', '．':
			// A sentence ends inside: body text, unless it is a Q&A
			// question that ends the line.
			if !question || i != len(title)-1 {
				return 0
			}
		case '、', '，':
			// A clause break in a line as wide as the body text: a
			// sentence that wraps on.
			if !question && w*10 >= pw.full*9 {
				return 0
			}
		}
	}
	if !question && (strings.ContainsRune("、，,:：", last) || strings.ContainsRune("をがのとやへで", last)) {
		return 0 // the title goes on in the next line
	}
	return lvl
}

// balancedBrackets reports whether every opening Japanese bracket or
// parenthesis in s is closed in s.
func balancedBrackets(s string) bool {
	depth := 0
	for _, r := range s {
		switch r {
		case '「', '『', '（', '(', '【', '［', '[':
			depth++
		case '」', '』', '）', ')', '】', '］', ']':
			depth--
		}
	}
	return depth <= 0
}

// displayWidth is the width of s in half-width cells: two for wide (CJK)
// characters, one for the rest, so lines of mixed scripts compare.
func displayWidth(s string) int {
	w := 0
	for _, r := range s {
		if r >= 0x1100 {
			w += 2
		} else {
			w++
		}
	}
	return w
}

// demoteListItems turns back into body text the level-1 headings of a
// PDF that are the items of a numbered list inside a section rather than
// chapters. A page alone cannot tell them apart: in
//
//	# ２ SaaS活用のためのネットワークの要件
//	## ２.３ SaaS 利用時に考慮すべきネットワーク設計上の注意点
//	…以下の 4 点に注意して要件を定める必要がある。
//	1. 十分な通信帯域の確保
//	…
//	3. 必要な通信プロトコルの利用許可   (on the next page)
//
// each 「N. title」 line looks like a chapter heading. Read across the
// document, the chapters are numbered in one style — full- or half-width
// digits, and the same separator after them (「２ 」, 「1.」, 「３．」) —
// and a list inside a section is usually numbered in another. So the
// style most level-1 headings of the document share (strictly more than
// any other) is the chapters' style, and an Arabic level-1 heading written
// in another style is a list item: its mark goes and it stays a line
// 「1. 十分な通信帯域の確保」, a Markdown list item. A document whose
// styles tie keeps every heading; Roman numerals and 第N章 are not
// touched. Only the heading marks go; the words stay.
func demoteListItems(pages []Page) {
	count := map[string]int{}
	for _, p := range pages {
		for l := range strings.Lines(p.Text) {
			if t, ok := strings.CutPrefix(strings.TrimRight(l, "\n"), "# "); ok {
				if _, st, ok := chapterNumber(t); ok {
					count[st]++
				}
			}
		}
	}
	top, best, second := "", 0, 0
	for st, n := range count {
		switch {
		case n > best:
			top, best, second = st, n, best
		case n > second:
			second = n
		}
	}
	if len(count) < 2 || best == second {
		return
	}
	for p := range pages {
		lines := strings.Split(pages[p].Text, "\n")
		changed := false
		for i, l := range lines {
			if t, ok := strings.CutPrefix(l, "# "); ok {
				if _, st, ok := chapterNumber(t); ok && st != top {
					lines[i], changed = t, true
				}
			}
		}
		if changed {
			pages[p].Text = strings.Join(lines, "\n")
		}
	}
}

// chapterNumber reads the number of a level-1 heading title: its value and
// its style (full- or half-width digits, and the separator after them);
// false when it is not an Arabic number (Ⅱ, 第3章).
func chapterNumber(title string) (int, string, bool) {
	m := headingDotted.FindStringSubmatch(title)
	if m == nil || m[2] != "" {
		return 0, "", false
	}
	n, ok := arabic(m[1])
	if !ok {
		return 0, "", false
	}
	width := "half"
	if r, _ := utf8.DecodeRuneInString(m[1]); r >= '０' && r <= '９' {
		width = "full"
	}
	return n, width + m[3], true
}

// arabic parses half- or full-width digits.
func arabic(s string) (int, bool) {
	n := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			n = n*10 + int(r-'0')
		case r >= '０' && r <= '９':
			n = n*10 + int(r-'０')
		default:
			return 0, false
		}
	}
	return n, s != ""
}
