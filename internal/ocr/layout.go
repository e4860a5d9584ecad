package ocr

import (
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Word is one word Tesseract read, with its box in pixels of the page
// image (from the top left) and its place in Tesseract's own layout.
type Word struct {
	Text  string  `json:"t"`
	X0    int     `json:"x0"`
	Y0    int     `json:"y0"`
	X1    int     `json:"x1"`
	Y1    int     `json:"y1"`
	Conf  float64 `json:"c"`
	Block int     `json:"b"`
	Par   int     `json:"p"`
	Line  int     `json:"l"`
}

// Reading order. Tesseract's page segmentation (--psm 3) cuts a page into
// blocks and reads block after block; on a table it often makes each
// column a block, so a table comes out column by column, and a caption or
// a page header beside the body may come out first or last. A PDF's text
// layer (pdftotext -raw, the reference and what the rest of the pipeline
// is built for) has the order the page was written in: top to bottom, a
// table row by row, each cell's lines together. ReadingOrder rebuilds that
// order from the word boxes, as the text layer's table finder reads boxes
// (document.visualRows): Tesseract's lines are grouped into bands of lines
// that sit side by side, top to bottom; within a band, lines that stack
// (one cell's wrapped lines) form a segment; segments are read left to
// right, each top to bottom. (Two columns of running text whose lines sit
// side by side would be read across the columns; none of the benchmark's
// pages is set that way, and the reading-order figures in
// docs/BENCHMARKS.md are what this order gives.)

// joinGap is the most gap between two words of a line, in line heights,
// that Phrases closes: Tesseract cuts Japanese text into words with no
// gap between them (「セキ」「ュリ」「ティ」), while table cells stand at
// least half a line apart.
const joinGap = 0.2

// Phrases returns the words of each line (each stretched to the height of
// its line: a word's own box is its ink, 「一」 a few pixels tall) with the
// words that touch (a gap under joinGap line heights)
// joined into one, a space between them only where ReadingOrder puts one.
// The table finder joins the words of a cell with spaces, as a text
// layer's words are; from phrases it gets 「セキュリティ」, not
// 「セキ ュリ ティ」.
func Phrases(words []Word) []Word {
	var out []Word
	for _, l := range lines(words) {
		for i, w := range l.words {
			w.Y0, w.Y1 = l.y0, l.y1
			if i > 0 {
				p := &out[len(out)-1]
				if float64(w.X0-p.X1) < joinGap*float64(l.height()) {
					if spaced(p.Text, w.Text) {
						p.Text += " "
					}
					p.Text += w.Text
					p.X1 = max(p.X1, w.X1)
					continue
				}
			}
			out = append(out, w)
		}
	}
	return out
}

// textLine is one line Tesseract read: its words left to right and their
// box.
type textLine struct {
	x0, y0, x1, y1 int
	words          []Word
}

func (l textLine) height() int { return l.y1 - l.y0 }

// lines groups words into Tesseract's lines, each left to right.
func lines(words []Word) []textLine {
	type key struct{ b, p, l int }
	idx := map[key]int{}
	var out []textLine
	for _, w := range words {
		if rules.Replace(w.Text) == "" {
			continue
		}
		k := key{w.Block, w.Par, w.Line}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, textLine{x0: w.X0, y0: w.Y0, x1: w.X1, y1: w.Y1})
		}
		l := &out[i]
		l.words = append(l.words, w)
		l.x0, l.y0 = min(l.x0, w.X0), min(l.y0, w.Y0)
		l.x1, l.y1 = max(l.x1, w.X1), max(l.y1, w.Y1)
	}
	for i := range out {
		sort.SliceStable(out[i].words, func(a, b int) bool { return out[i].words[a].X0 < out[i].words[b].X0 })
	}
	return out
}

// text joins a line's words: a space only between Latin letters or
// digits, as Japanese is written without spaces.
func (l textLine) text() string {
	var b strings.Builder
	for i, w := range l.words {
		if i > 0 && spaced(l.words[i-1].Text, w.Text) {
			b.WriteByte(' ')
		}
		b.WriteString(w.Text)
	}
	return cleanLine(b.String())
}

// Two things Tesseract reads that are no text: a table's vertical rules
// come out as 「|」, and a hyphen between Latin letters or digits
// (「E-205」「1-1」), or between a digit and katakana (a chemical name's
// 「2-エチルヘキシル」), as the kanji 「一」 or the long-vowel mark 「ー」,
// which never stand there in Japanese text.
var (
	rules         = strings.NewReplacer("|", "", "｜", "", "¦", "")
	hyphenBetween = regexp.MustCompile(`([0-9A-Za-z])[一ー―—‐－]([0-9A-Za-z])|([0-9])[一ー―—‐－]([ァ-ヺ])`)
)

// cleanLine removes rules read as 「|」 from a line of OCR text and turns
// a dash between Latin letters or digits back into a hyphen.
func cleanLine(s string) string {
	s = rules.Replace(s)
	// twice: 「1ー2ー3」 overlaps
	s = hyphenBetween.ReplaceAllString(s, "$1$3-$2$4")
	return strings.TrimSpace(hyphenBetween.ReplaceAllString(s, "$1$3-$2$4"))
}

// band is a run of lines that sit side by side: each overlaps the band
// vertically by at least a third of its height (a value centred beside a
// cell wrapped over two lines joins both).
type band struct {
	y0, y1 int
	lines  []textLine
}

// bands groups lines, top to bottom, into bands.
func bands(ls []textLine) []band {
	ls = slices.Clone(ls)
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].y0 < ls[j].y0 })
	var out []band
	for _, l := range ls {
		if n := len(out); n > 0 && l.y0 < out[n-1].y1-l.height()/3 {
			b := &out[n-1]
			b.lines = append(b.lines, l)
			b.y1 = max(b.y1, l.y1)
			continue
		}
		out = append(out, band{y0: l.y0, y1: l.y1, lines: []textLine{l}})
	}
	return out
}

// segmentsOf splits a band's lines into segments: lines whose horizontal
// spans overlap, each segment top to bottom, segments left to right.
func segmentsOf(b band) [][]textLine {
	ls := slices.Clone(b.lines)
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].x0 < ls[j].x0 })
	var segs [][]textLine
	var right []int
	for _, l := range ls {
		if n := len(segs); n > 0 && l.x0 < right[n-1] {
			segs[n-1] = append(segs[n-1], l)
			right[n-1] = max(right[n-1], l.x1)
			continue
		}
		segs = append(segs, []textLine{l})
		right = append(right, l.x1)
	}
	for _, s := range segs {
		sort.SliceStable(s, func(i, j int) bool { return s[i].y0 < s[j].y0 })
	}
	return segs
}

// ReadingOrder is the text of words (a horizontal page) in reading order
// (see above): one line per Tesseract line, a blank line where the gap to
// the band above is taller than the page's usual line.
func ReadingOrder(words []Word) string {
	ls := lines(words)
	if len(ls) == 0 {
		return ""
	}
	hs := make([]int, len(ls))
	for i, l := range ls {
		hs[i] = l.height()
	}
	slices.Sort(hs)
	lineH := max(hs[len(hs)/2], 1)
	var b strings.Builder
	prev := -1
	for _, bd := range bands(ls) {
		if b.Len() > 0 {
			b.WriteByte('\n')
			if prev >= 0 && bd.y0-prev > lineH {
				b.WriteByte('\n')
			}
		}
		first := true
		for _, seg := range segmentsOf(bd) {
			for _, l := range seg {
				if !first {
					b.WriteByte('\n')
				}
				first = false
				b.WriteString(l.text())
			}
		}
		prev = bd.y1
	}
	return b.String()
}
