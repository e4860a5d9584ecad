package document

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Heading detection for documents without an outline.
//
// Only top-level headings count. A numbered heading ("１ はじめに",
// "2.利用条件", "Ⅲ 対策") is accepted only when its number continues the
// sequence (the first must be 0 or 1, then each one more than the last),
// which filters out numbered lists and table rows. Lines with leader dots
// (tables of contents), sentence endings or more than maxHeadingRunes
// characters are never headings.
var (
	chapterHeading  = regexp.MustCompile(`^第\s*[0-9一二三四五六七八九十百]+\s*[章部編]`)
	appendixHeading = regexp.MustCompile(`^(?:別表|別紙|別添|別記|付録|附則|参考資料|(?i:appendix|annex)\b)`)
	numberHeading   = regexp.MustCompile(`^([0-9]{1,2})(?:\.\s*|\s+)(\D.*)$`)
	romanHeading    = regexp.MustCompile(`^(X|IX|VI{0,3}|IV|I{1,3})(?:\.\s*(.+)|\s+([^\x00-\x7f].*))$`) // after NFKC, Ⅲ is "III"
	markdownHeading = regexp.MustCompile(`^#{1,2}\s+(.+?)\s*#*$`)
	bulletHeading   = regexp.MustCompile(`^[○●◆■□◇]\s*(.+)$`)
	englishHeading  = regexp.MustCompile(`^(?i:chapter|part)\s+([0-9]+|[IVX]+)\b`)
	leaderDots      = regexp.MustCompile(`\.{3,}|…|‥|_{3,}|・{3,}|-{4,}|－{3,}`)
	pageCounter     = regexp.MustCompile(`^[0-9]+\s*[/／]\s*[0-9]+$`)
	trailingCount   = regexp.MustCompile(`\s[0-9][0-9,.%]*$`) // "… (Google) 41": a table row, not a title
)

const (
	maxHeadingRunes = 40 // longer lines are body text
	topLines        = 3  // a heading within this many lines starts the page's section
)

// romanValue maps the Roman numerals romanHeading accepts to numbers.
func romanValue(s string) int {
	return map[string]int{"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8, "IX": 9, "X": 10}[s]
}

// headingState follows the numbered sequences across a document.
type headingState struct {
	lastNumber int // last accepted arabic top-level number; -1 before the first
	lastRoman  int
}

// heading reports whether line is a top-level heading and returns its
// section title.
func (st *headingState) heading(raw string) (string, bool) {
	if r, _ := utf8.DecodeRuneInString(strings.TrimSpace(raw)); r >= 0x2460 && r <= 0x24ff || r >= 0x3251 && r <= 0x32bf {
		return "", false // ①, ⑴, ㉑: list items, and NFKC would make them look like numbered headings
	}
	line := strings.TrimSpace(norm.NFKC.String(raw))
	if line == "" || leaderDots.MatchString(line) || pageCounter.MatchString(line) || pageNumber.MatchString(line) {
		return "", false
	}
	if m := markdownHeading.FindStringSubmatch(strings.TrimSpace(raw)); m != nil && headingLevel(strings.Trim(m[1], "*_ ")) > 0 {
		// The PDF layout step marks numbered section lines of every level;
		// as for an unmarked line, the number decides if one is top-level.
		line = strings.TrimSpace(norm.NFKC.String(m[1]))
	} else if m := markdownHeading.FindStringSubmatch(line); m != nil {
		return plausibleTitle(strings.Trim(m[1], "*_ "))
	}
	if utf8.RuneCountInString(line) > maxHeadingRunes || endsSentence(line) {
		return "", false
	}
	switch {
	case chapterHeading.MatchString(line), appendixHeading.MatchString(line), englishHeading.MatchString(line):
		return plausibleTitle(line)
	}
	if m := numberHeading.FindStringSubmatch(line); m != nil {
		n, _ := strconv.Atoi(m[1])
		if !(st.lastNumber < 0 && n <= 1 || n == st.lastNumber+1) || trailingCount.MatchString(m[2]) {
			return "", false
		}
		t, ok := plausibleTitle(m[2])
		if ok {
			st.lastNumber = n
		}
		return t, ok
	}
	if m := romanHeading.FindStringSubmatch(line); m != nil {
		n := romanValue(m[1])
		if n != st.lastRoman+1 {
			return "", false
		}
		t, ok := plausibleTitle(m[2] + m[3])
		if ok {
			st.lastRoman = n
		}
		return t, ok
	}
	if m := bulletHeading.FindStringSubmatch(line); m != nil && utf8.RuneCountInString(m[1]) >= 6 {
		return plausibleTitle(m[1])
	}
	return "", false
}

// plausibleTitle accepts t as a section title if it is short, has letters
// and does not read like a sentence or a table row of numbers.
func plausibleTitle(t string) (string, bool) {
	t = strings.TrimSpace(t)
	n := utf8.RuneCountInString(t)
	if n < 2 || n > maxHeadingRunes || endsSentence(t) || strings.HasSuffix(t, "：") || strings.HasSuffix(t, ":") {
		return "", false
	}
	letters := 0
	for _, r := range t {
		if isJapaneseRune(r) || r < 0x80 && (r|0x20) >= 'a' && (r|0x20) <= 'z' {
			letters++
		}
	}
	if letters < 2 {
		return "", false
	}
	return t, true
}

// endsSentence reports whether s ends like a sentence rather than a title.
func endsSentence(s string) bool {
	s = strings.TrimRight(s, " 」』)）")
	for _, suf := range []string{"。", "．", "る", "た", "す", "い"} {
		if strings.HasSuffix(s, suf) && (suf == "。" || suf == "．" || utf8.RuneCountInString(s) > 20) {
			return true
		}
	}
	return strings.HasSuffix(s, ".") && utf8.RuneCountInString(s) > 30
}

// headingCategories assigns each page the section whose heading appears
// near its top, or else the section in force when the page starts. It
// returns nil when no heading is found.
func headingCategories(doc Document, front string) []string {
	st := &headingState{lastNumber: -1}
	cats := make([]string, len(doc.Pages))
	inForce := front // the section in force at the start of the next page
	found := false
	for i, p := range doc.Pages {
		pageCat := ""
		seen := 0 // non-empty lines before this one, page counters excluded
		inFence := false
		for _, line := range strings.Split(p.Text, "\n") {
			trimmed := strings.TrimSpace(line)
			if strings.HasPrefix(trimmed, "```") {
				inFence = !inFence
				continue
			}
			if inFence || trimmed == "" {
				continue
			}
			if t, ok := st.heading(trimmed); ok {
				found = true
				inForce = SanitizeFolder(sectionTitle(t))
				if pageCat == "" && seen < topLines {
					pageCat = inForce
				}
			}
			if !pageCounter.MatchString(trimmed) && !pageNumber.MatchString(trimmed) {
				seen++
			}
		}
		if pageCat == "" {
			pageCat = cats[i] // set at the end of the previous page
			if pageCat == "" {
				pageCat = front
			}
		}
		cats[i] = pageCat
		// A page whose top carries no heading continues the section in
		// force, which may have changed mid-way through the previous page.
		if i+1 < len(cats) {
			cats[i+1] = inForce
		}
	}
	if !found {
		return nil
	}
	return cats
}
