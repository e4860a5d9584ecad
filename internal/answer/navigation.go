package answer

import (
	"regexp"
	"strings"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/retrieve"
)

// navigation returns the candidates that only name a section of their own
// document: the entries of a table of contents (「6. FOSSologyの実行とシステム
// 起動時に自動的に実行するための設定」 under 「目次」, which repeats the heading
// of section 6). Such a line points to where the answer is; it is not the
// answer, yet it holds the question's words as densely as the heading it
// repeats. A candidate is navigation when its text, without an item number,
// equals a heading of the same file — one of the retrieved passages'
// heading paths or heading lines — other than the headings of its own
// passage, or when its passage's own section is a table of contents.
func navigation(cands []*candidate, results []retrieve.Result, texts []string) map[*candidate]bool {
	headings := map[string]map[string]bool{} // file → normalised headings
	add := func(file, h string) {
		if h = navKey(h); h == "" {
			return
		}
		if headings[file] == nil {
			headings[file] = map[string]bool{}
		}
		headings[file][h] = true
	}
	own := make([]map[string]bool, len(results))
	toc := make([]bool, len(results))
	for i, r := range results {
		own[i] = map[string]bool{}
		parts := strings.Split(r.Heading, " > ")
		for _, h := range parts {
			add(r.File, h)
			own[i][navKey(h)] = true
		}
		toc[i] = tocHeading.MatchString(strings.TrimSpace(parts[len(parts)-1]))
		text := r.Text
		if i < len(texts) {
			text = texts[i]
		}
		for _, line := range headingLines(text) {
			add(r.File, line)
		}
	}
	var out map[*candidate]bool
	for _, c := range cands {
		if c.chunk >= len(results) {
			continue
		}
		k := navKey(c.text)
		if toc[c.chunk] || k != "" && headings[results[c.chunk].File][k] && !own[c.chunk][k] {
			if out == nil {
				out = map[*candidate]bool{}
			}
			out[c] = true
		}
	}
	return out
}

// navigationFactor scales the relevance of a navigation line.
const navigationFactor = 0.3

// tocHeading matches the heading of a table of contents.
var tocHeading = regexp.MustCompile(`(?i)^(?:目\s*次|もくじ|contents|table of contents|index)$`)

// sectionNumber matches the number that opens a heading or a contents
// entry: 「6.」「6.3」「第2章」「(1)」.
var sectionNumber = regexp.MustCompile(`^(?:第[0-9一二三四五六七八九十]+[章節部編]|[0-9]+(?:[.．][0-9]+)*[.．)]?|[（(][0-9]+[)）])\s*`)

// navKey is the form in which a heading and a contents entry are compared:
// normalised, without its number, bullet or spaces.
func navKey(s string) string {
	s = analysis.Normalize(strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(s), "#")))
	s = bulletPrefix.ReplaceAllString(s, "")
	s = sectionNumber.ReplaceAllString(s, "")
	s = strings.Join(strings.Fields(s), "")
	if len([]rune(s)) < 4 {
		return "" // 「概要」「はじめに」 name too little to tell an entry from text
	}
	return s
}
