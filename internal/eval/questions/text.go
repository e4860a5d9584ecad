package questions

import (
	"github.com/shirube/shirube/internal/analysis"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// sentence is one candidate answer sentence of a page.
type sentence struct {
	Text    string   // as in the page, white space collapsed
	Heading string   // the section heading in force, "" if none
	Phrases []string // key phrases in order of first appearance, distinct
	Pos     int      // index on the page, for stable ordering
	Score   float64  // salience, higher is better
}

// Sentence length bounds, in runes.
const (
	minSentenceRunes = 15
	maxSentenceRunes = 180
)

var (
	// phraseRun is a key phrase: a run of kanji, katakana, Latin letters
	// and digits (Japanese content words sit between hiragana particles).
	phraseRun = regexp.MustCompile(`[\p{Han}\p{Katakana}ー々〆ヶA-Za-z0-9Ａ-Ｚａ-ｚ０-９][\p{Han}\p{Katakana}ー々〆ヶ・A-Za-z0-9Ａ-Ｚａ-ｚ０-９.\-_/+]*[\p{Han}\p{Katakana}ー々〆ヶA-Za-z0-9Ａ-Ｚａ-ｚ０-９]|[\p{Han}\p{Katakana}]{2}`)
	hasDigit  = regexp.MustCompile(`[0-9０-９]`)
	// headingLine is a numbered or marked section heading inside a page.
	headingLine = regexp.MustCompile(`^(?:#{1,6}\s+|第\s*[0-9０-９一二三四五六七八九十]+\s*[章節条部編]\s*|[0-9０-９]{1,2}(?:[.．][0-9０-９]{1,2})*(?:[.．]\s*|\s+)|[ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩ]+(?:[.．]\s*|\s+)|[○●◆■□◇▼]\s*|(?i:chapter|section)\s+\d+[.:]?\s*)(\S.*)$`)
	listMarker  = regexp.MustCompile(`^(?:[-*+・•]\s+|[0-9０-９]{1,2}[.)）．]\s*|[(（][0-9０-９]{1,2}[)）]\s*|[①-⑳]\s*)`)
	leaders     = regexp.MustCompile(`\.{3,}|…|‥|_{3,}|・{3,}`)
	mdEmphasis  = strings.NewReplacer("**", "", "__", "", "`", "")
	// englishStop are words that are never key phrases of English text.
	englishStop = map[string]bool{"the": true, "and": true, "for": true, "with": true, "that": true, "this": true, "from": true, "are": true, "was": true, "were": true, "has": true, "have": true, "will": true, "must": true, "shall": true, "should": true, "can": true, "not": true, "when": true, "which": true, "their": true, "there": true, "into": true, "than": true, "then": true, "also": true, "such": true, "each": true, "only": true, "been": true, "being": true, "they": true, "them": true, "its": true, "may": true, "any": true, "all": true, "use": true, "used": true, "using": true, "within": true, "after": true, "before": true, "other": true}
)

// isJapanese reports whether r is Han, Hiragana, Katakana or ー.
func isJapanese(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r == 'ー'
}

// isMostlyJapanese reports whether Japanese script makes up at least a
// third of the letters of s.
func isMostlyJapanese(s string) bool {
	ja, latin := 0, 0
	for _, r := range s {
		switch {
		case isJapanese(r):
			ja++
		case r < 0x80 && unicode.IsLetter(r):
			latin++
		}
	}
	return ja > 0 && ja*2 >= latin
}

// splitSentences cuts one page of text into candidate sentences, each with
// the section heading in force. Lines that were wrapped by the PDF
// extractor are joined back; headings, list items and table rows end a
// sentence; code blocks and tables are skipped.
func splitSentences(text string) []sentence {
	lines := strings.Split(text, "\n")
	maxLen := 0
	for _, l := range lines {
		if l = strings.TrimSpace(l); !strings.HasPrefix(l, "|") { // a table row is no measure of the text's width
			maxLen = max(maxLen, utf8.RuneCountInString(l))
		}
	}
	var out []sentence
	var buf strings.Builder
	heading := ""
	flush := func() {
		for _, s := range analysis.Sentences(strings.Join(strings.Fields(buf.String()), " ")) {
			out = append(out, sentence{Text: s, Heading: heading, Pos: len(out)})
		}
		buf.Reset()
	}
	inFence := false
	for _, raw := range lines {
		line := strings.TrimSpace(raw)
		switch {
		case strings.HasPrefix(line, "```"), strings.HasPrefix(line, "~~~"):
			flush()
			inFence = !inFence
			continue
		case inFence:
			continue
		case line == "", strings.HasPrefix(line, "|"), leaders.MatchString(line):
			flush()
			continue
		}
		line = strings.TrimSpace(mdEmphasis.Replace(line))
		if h, ok := asHeading(line); ok {
			flush()
			heading = h
			continue
		}
		if m := listMarker.FindString(line); m != "" {
			flush()
			line = strings.TrimSpace(line[len(m):])
		} else if strings.HasPrefix(line, ">") {
			line = strings.TrimSpace(strings.TrimLeft(line, ">"))
		}
		appendJoined(&buf, line)
		n := utf8.RuneCountInString(line)
		// pdftotext breaks a long paragraph into lines of nearly the
		// page's full width; shorter lines end a list item or paragraph.
		wrapped := maxLen >= 25 && n*10 >= maxLen*9 && !endsWithTerminator(line)
		if !wrapped {
			flush()
		}
	}
	flush()
	return out
}

// asHeading reports whether line is a section heading and returns its
// title without numbering.
func asHeading(line string) (string, bool) {
	m := headingLine.FindStringSubmatch(line)
	if m == nil || endsWithTerminator(line) {
		return "", false
	}
	t := strings.TrimSpace(strings.Trim(m[1], "#* "))
	n := utf8.RuneCountInString(t)
	if strings.HasPrefix(line, "#") {
		return t, n > 0
	}
	if n < 2 || n > 30 || hasDigit.MatchString(string([]rune(t)[:1])) {
		return "", false
	}
	return t, true
}

// appendJoined appends line to buf, with a space only between two
// non-Japanese characters.
func appendJoined(buf *strings.Builder, line string) {
	if buf.Len() > 0 {
		last, _ := utf8.DecodeLastRuneInString(buf.String())
		first, _ := utf8.DecodeRuneInString(line)
		if !(isJapanese(last) || isJapanese(first) || unicode.Is(unicode.P, last) && last > 0x3000) {
			buf.WriteByte(' ')
		}
	}
	buf.WriteString(line)
}

// endsWithTerminator reports whether s ends with sentence punctuation.
func endsWithTerminator(s string) bool {
	s = strings.TrimRight(s, " 」』)）\"'")
	r, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune("。．.！？!?", r)
}

// keyPhrases returns the distinct key phrases of s in order of appearance:
// runs of kanji, katakana, Latin letters and digits of at least two
// characters, without English stop words.
func keyPhrases(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range phraseRun.FindAllString(s, -1) {
		p = strings.Trim(p, ".-_/+・")
		if utf8.RuneCountInString(p) < 2 || englishStop[strings.ToLower(p)] {
			continue
		}
		if isASCIIWord(p) && len(p) < 3 && strings.ToUpper(p) != p {
			continue // "is", "of": too short to mean anything
		}
		p = trimNumberPhrase(p)
		k := phraseKey(p)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, p)
	}
	return out
}

// numberUnit matches a number with its unit at the start of a phrase.
var numberUnit = regexp.MustCompile(`^[0-9０-９][0-9０-９,.]*(?:時間|分|秒|営業日|日間|日|週間|か月|ヶ月|カ月|年間|年|回|件|名|人|円|万円|桁|文字|倍|台|個|GB|MB|TB|KB)(?:以内|以上|以下|未満|まで|前|後)?`)

// trimNumberPhrase cuts a phrase that starts with a number and unit and
// runs on into a following word ("30分続" → "30分"); phrases with more
// numbers later ("2024年8月20日") are left alone.
func trimNumberPhrase(p string) string {
	m := numberUnit.FindString(p)
	if m == "" || m == p || hasDigit.MatchString(p[len(m):]) {
		return p
	}
	return m
}

// phraseKey is the comparison form of a phrase: NFKC, lower case.
func phraseKey(p string) string { return strings.ToLower(norm.NFKC.String(p)) }

func isASCIIWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// phraseWeight rates how informative a phrase is as an answer: numbers
// and identifiers are best, then long compounds.
func phraseWeight(p string) float64 {
	n := utf8.RuneCountInString(p)
	w := math.Min(float64(n), 8) / 4
	if hasDigit.MatchString(p) {
		w += 1.5
	}
	if isASCIIWord(p) && strings.ToUpper(p) == p && n >= 2 {
		w += 0.5 // acronyms and codes: VPN, E-101
	}
	return w
}

// candidates returns the usable sentences of a page, scored: phrases are
// weighted by phraseWeight and by how rare they are among the document's
// pages (df maps phraseKey to the number of pages holding it, of nPages).
func candidates(sents []sentence, df map[string]int, nPages int) []sentence {
	var out []sentence
	for _, s := range sents {
		n := utf8.RuneCountInString(s.Text)
		if n < minSentenceRunes || n > maxSentenceRunes || letterShare(s.Text) < 0.5 {
			continue
		}
		last, _ := utf8.DecodeLastRuneInString(s.Text)
		if last == ':' || last == '：' || last == '、' || last == ',' {
			continue
		}
		if strings.Count(s.Text, ":")+strings.Count(s.Text, "：") >= 2 {
			continue // "文書番号: X / 版数: Y": metadata, not a statement
		}
		s.Phrases = keyPhrases(s.Text)
		if len(s.Phrases) < 2 {
			continue
		}
		score := 0.0
		for _, p := range s.Phrases {
			idf := math.Log(1 + float64(nPages)/float64(max(df[phraseKey(p)], 1)))
			score += phraseWeight(p) * idf
		}
		if !endsWithTerminator(s.Text) {
			score *= 0.5 // a list item or a fragment cut by the page break
		}
		s.Score = score
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b sentence) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return a.Pos - b.Pos
	})
	return out
}

// letterShare is the share of runes of s that are letters (any script).
func letterShare(s string) float64 {
	total, letters := 0, 0
	for _, r := range s {
		if unicode.IsSpace(r) {
			continue
		}
		total++
		if unicode.IsLetter(r) {
			letters++
		}
	}
	if total == 0 {
		return 0
	}
	return float64(letters) / float64(total)
}

// bigramCoverage is the share of the character bigrams of want (NFKC,
// lower case, white space removed) that occur in have. It checks that a
// ground truth was taken from the page text.
func bigramCoverage(want, have string) float64 {
	w := []rune(compact(want))
	if len(w) < 2 {
		if strings.Contains(compact(have), string(w)) {
			return 1
		}
		return 0
	}
	h := compact(have)
	set := map[string]bool{}
	hr := []rune(h)
	for i := 0; i+1 < len(hr); i++ {
		set[string(hr[i:i+2])] = true
	}
	hit := 0
	for i := 0; i+1 < len(w); i++ {
		if set[string(w[i:i+2])] {
			hit++
		}
	}
	return float64(hit) / float64(len(w)-1)
}

// compact is s in NFKC lower case without white space.
func compact(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(norm.NFKC.String(s))), "")
}
