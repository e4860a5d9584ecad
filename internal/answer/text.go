package answer

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/shirube/shirube/internal/analysis"
)

var (
	headingLine  = regexp.MustCompile(`^#{1,6}(\s|$)`)
	tableRule    = regexp.MustCompile(`^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?$`)
	bulletPrefix = regexp.MustCompile(`^(?:>\s*)*(?:[-*+・•]\s+|[・•]|\d{1,3}[.)]\s+|[（(]\d{1,3}[)）]\s*)?`)
)

// candidateLines returns the lines of chunk text that may hold answer
// sentences: heading lines, table header and separator rows are dropped, list
// bullets and quote markers are stripped, and the wording is kept.
func candidateLines(text string) []string {
	var out []string
	for _, l := range candidateLineInfo(text) {
		out = append(out, l.text)
	}
	return out
}

// candLine is one line of candidateLines and whether it was a list item
// (a bullet or a number opened it).
type candLine struct {
	text   string
	item   bool
	number string // the item number as written ("1.", "(2)"), for numbered items
	code   bool   // a line of a fenced code block: a command, quoted whole
}

// candidateLineInfo is candidateLines with each line's list-item flag.
func candidateLineInfo(text string) []candLine {
	var out []candLine
	lines := strings.Split(text, "\n")
	fenced := false
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			// A command is a step of its procedure; it is never split
			// into sentences.
			if line != "" {
				out = append(out, candLine{text: line, item: true, code: true})
			}
			continue
		}
		if line == "" || headingLine.MatchString(line) || tableRule.MatchString(line) {
			continue
		}
		if i+1 < len(lines) && strings.HasPrefix(line, "|") && tableRule.MatchString(strings.TrimSpace(lines[i+1])) {
			continue // a table's header row labels columns; it states nothing
		}
		// PDF text often loses the space after an item number
		// (「1.タスクトレイの…」): the number still opens a step.
		line = tightItem.ReplaceAllString(line, "$1 $2")
		item := listItem.MatchString(line)
		number := strings.TrimSpace(itemNumber.FindString(line))
		line = strings.TrimSpace(bulletPrefix.ReplaceAllString(line, ""))
		if line != "" {
			out = append(out, candLine{text: line, item: item, number: number})
		}
	}
	return out
}

// tightItem matches an item number followed directly by Japanese text.
var tightItem = regexp.MustCompile(`^(\d{1,3}[.)．])([\p{Han}\p{Hiragana}\p{Katakana}「『（])`)

// itemNumber matches the number that opens a numbered list item.
var itemNumber = regexp.MustCompile(`^(?:\d{1,3}[.)]\s+|[（(]\d{1,3}[)）]\s*)`)

// listItem matches a line opened by a bullet or an item number.
var listItem = regexp.MustCompile(`^(?:[-*+・•]\s+|[・•]|\d{1,3}[.)]\s+|[（(]\d{1,3}[)）]\s*)`)

// unwrapPDF joins the lines that PDF text extraction broke inside a
// sentence: a long line (a wrapped one, at least wrapWidth runes) or one
// that ends with a reading comma, that does not end a sentence (。！？!?. or a colon) runs on into the next one unless
// the next line is a heading, a bullet or a numbered item. Short lines —
// titles, table cells — are left alone. Japanese joins without a space, Latin text with one. Text
// from other formats keeps its lines, whose breaks are meaningful.
func unwrapPDF(text string) string {
	lines := strings.Split(text, "\n")
	var out []string
	for _, line := range lines {
		t := strings.TrimSpace(line)
		if n := len(out); n > 0 && t != "" && !headingLine.MatchString(t) && bulletPrefix.FindString(t) == "" && !strings.HasPrefix(t, "|") && !strings.HasPrefix(out[n-1], "|") && !isNoteLabel(t) {
			prev := out[n-1]
			// A line that ends with a note marker (「…JVN（*1）」) ends no
			// sentence: the marker's closing bracket is not a full stop.
			if (utf8.RuneCountInString(prev) >= wrapWidth || endsClause(prev)) && !headingLine.MatchString(prev) && (!endsSentence(prev) || noteTailRe.MatchString(prev)) && !numberedStart.MatchString(t) {
				sep := ""
				if r, _ := utf8.DecodeLastRuneInString(prev); r < 0x3000 {
					if f, _ := utf8.DecodeRuneInString(t); f < 0x3000 {
						sep = " "
					}
				}
				out[n-1] = prev + sep + t
				continue
			}
		}
		out = append(out, t)
	}
	return strings.Join(out, "\n")
}

// wrapWidth is the shortest line unwrapPDF takes for a wrapped one.
const wrapWidth = 24

var numberedStart = regexp.MustCompile(`^\d{1,3}[.．、)]`)

// endsClause reports whether s ends with a reading comma (、，): a clause
// that goes on in the next line whatever the line's length, as when a PDF
// draws each clause of a sentence as its own text run
// (「マスターディレクトリは、」「ゼロトラストネットワークを実現するための、」).
func endsClause(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r == '、' || r == '，'
}

// headless reports whether a sentence starts in the middle: with a case
// particle and a comma (「は、職員個人の…」「を、ひとつの業務として…」) or
// with punctuation. No Japanese sentence opens so; the text is the rest of
// a sentence whose head is on the page or in the chunk before, and what it
// says is about a subject it does not name.
func headless(s string) bool {
	rs := []rune(strings.TrimSpace(s))
	if len(rs) == 0 {
		return false
	}
	if strings.ContainsRune("、。，．", rs[0]) {
		return true
	}
	return len(rs) > 1 && strings.ContainsRune("はがをにでともへや", rs[0]) && (rs[1] == '、' || rs[1] == '，')
}

// headlessFactor scales the relevance of a headless sentence.
const headlessFactor = 0.5

func endsSentence(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune("。！？!?.:：」）)", r)
}

// headingLines returns the text of the Markdown heading lines of a chunk,
// without their markers.
func headingLines(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if headingLine.MatchString(line) {
			out = append(out, strings.TrimSpace(strings.TrimLeft(line, "#")))
		}
	}
	return out
}

// splitSentences returns the sentences of text, in order. See lineSentences.
func splitSentences(text string) []string {
	var out []string
	for _, line := range lineSentences(text) {
		out = append(out, line...)
	}
	return out
}

// lineSentences splits text into sentences, grouped by source line, with
// the project's one splitter (analysis.Sentences: a full stop inside a
// bracket pair does not end a sentence). Headings, table rules and bullets
// are handled as in candidateLines.
func lineSentences(text string) [][]string {
	var out [][]string
	for _, line := range candidateLineInfo(text) {
		if line.code {
			out = append(out, []string{line.text})
		} else if sents := analysis.Sentences(line.text); len(sents) > 0 {
			out = append(out, sents)
		}
	}
	return out
}

// englishStop holds English function words that never count as content
// terms of a question.
var englishStop = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "of": true, "to": true,
	"in": true, "on": true, "at": true, "for": true, "by": true, "with": true, "from": true,
	"is": true, "are": true, "was": true, "were": true, "be": true, "been": true, "do": true,
	"does": true, "did": true, "what": true, "which": true, "who": true, "whom": true,
	"when": true, "where": true, "why": true, "how": true, "it": true, "its": true,
	"this": true, "that": true, "these": true, "those": true, "i": true, "we": true,
	"you": true, "my": true, "our": true, "your": true, "can": true, "should": true,
	"shall": true, "will": true, "would": true, "could": true, "must": true, "may": true,
	"there": true, "about": true, "tell": true, "me": true, "please": true, "as": true,
	"if": true, "than": true, "then": true, "into": true, "not": true, "no": true, "any": true,
	"have": true, "has": true, "had": true, "they": true, "them": true,
	"long": true, "many": true, "much": true, "often": true, "kind": true,
}

// isContentTerm reports whether a query term carries content: terms made
// only of hiragana (particles, endings, question words such as どこ/いつ),
// interrogative kanji (何, 誰, 幾) and English function words do not.
func isContentTerm(t string) bool {
	if englishStop[t] {
		return false
	}
	content := false
	for _, r := range t {
		switch {
		case r == '何' || r == '誰' || r == '幾':
			return false
		case unicode.Is(unicode.Hiragana, r), r == 'ー':
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			content = true
		}
	}
	return content
}

// termSet makes a set of terms.
func termSet(terms []string) map[string]bool {
	set := make(map[string]bool, len(terms))
	for _, t := range terms {
		set[t] = true
	}
	return set
}

// uniqueContent returns the distinct content terms of terms, in order.
func uniqueContent(terms []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range terms {
		if !seen[t] && isContentTerm(t) {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// Classes of a term for spans.
const (
	spanIgnore = iota // neither reported nor blocking
	spanKeep          // report the text the term covers
	spanBlock         // the text the term covers is never reported
)

// spans turns terms back into readable pieces of the text they came from.
// Terms are located in the normalised text (in order, each search starting
// after the previous hit); the runes covered by a spanKeep term and by no
// spanBlock term form maximal runs that are returned in text order, stripped
// of surrounding punctuation and hiragana. Latin runs are widened to whole
// words. A spanKeep term that cannot be located is returned as is. So the
// character bigrams "保管", "管期", "期間" come back as "保管期間", and a bigram
// whose runes all lie inside blocked terms is not reported on its own.
func spans(text string, terms []string, class func(string) int) []string {
	runes := []rune(analysis.Normalize(text))
	// Report pieces in NFKC but in their original case when lower-casing
	// kept every rune in place.
	display := []rune(norm.NFKC.String(text))
	if len(display) != len(runes) {
		display = runes
	}
	mark := make([]int, len(runes))
	var orphans []string
	from := 0
	for _, t := range terms {
		c := class(t)
		if c == spanIgnore {
			continue
		}
		// Analysers may mark n-gram terms with an invisible format
		// character; locate the text itself.
		t = strings.TrimFunc(t, func(r rune) bool { return unicode.Is(unicode.Cf, r) })
		tr := []rune(t)
		at, n := locate(runes, tr, from)
		if at < 0 {
			if c == spanKeep && t != "" {
				orphans = append(orphans, t)
			}
			continue
		}
		tr = tr[:n]
		from = at + 1
		for i := at; i < at+len(tr); i++ {
			if c == spanBlock || mark[i] == spanIgnore {
				mark[i] = c
			}
		}
	}
	// Widen Latin runs to whole words.
	for i := range runes {
		if mark[i] != spanKeep || !isWordRune(runes[i]) {
			continue
		}
		for j := i - 1; j >= 0 && isWordRune(runes[j]) && mark[j] == spanIgnore; j-- {
			mark[j] = spanKeep
		}
		for j := i + 1; j < len(runes) && isWordRune(runes[j]) && mark[j] == spanIgnore; j++ {
			mark[j] = spanKeep
		}
	}
	var out []string
	seen := map[string]bool{}
	for i := 0; i < len(runes); {
		if mark[i] != spanKeep {
			i++
			continue
		}
		j := i
		for j < len(runes) && mark[j] == spanKeep {
			j++
		}
		s := strings.TrimFunc(string(display[i:j]), func(r rune) bool {
			return !(unicode.IsLetter(r) || unicode.IsDigit(r)) || unicode.Is(unicode.Hiragana, r)
		})
		if s != "" && isContentTerm(strings.ToLower(s)) && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
		i = j
	}
	for _, t := range orphans {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func isWordRune(r rune) bool {
	return r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// locate finds term in text: first after from, then anywhere, then, for a
// stemmed word ("polici" of "policy"), by a prefix of at least three runes
// at the start of a word. It returns where the match starts and how many
// runes it has, or -1 when the term is not there.
func locate(text, term []rune, from int) (at, n int) {
	if at := indexRunes(text, term, from); at >= 0 {
		return at, len(term)
	}
	if at := indexRunes(text, term, 0); at >= 0 {
		return at, len(term)
	}
	for n := len(term) - 1; n >= 3 && n >= len(term)-2; n-- {
		for at := indexRunes(text, term[:n], 0); at >= 0; at = indexRunes(text, term[:n], at+1) {
			if at == 0 || !isWordRune(text[at-1]) {
				return at, n
			}
		}
	}
	return -1, 0
}

// indexRunes returns the first index ≥ from where sub occurs in s, or -1.
func indexRunes(s, sub []rune, from int) int {
	if len(sub) == 0 {
		return -1
	}
	for i := from; i+len(sub) <= len(s); i++ {
		match := true
		for j, r := range sub {
			if s[i+j] != r {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}
