package document

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tables on PDF pages. pdftotext -raw prints a table row by row with its
// cells separated by spaces, so a value loses the column it sits in: in
// 「塩化セチルピリジニウム 5.0 1.0 0.010」 nothing says which of three column
// headers (each wrapped over four lines above) 0.010 belongs to, and a cell
// wrapped over two lines splits its row in two. pdftotext -bbox-layout
// gives every word its box; from the boxes a table is rebuilt and printed as
// rows that carry their column headers:
//
//	| 塩化セチルピリジニウム | 粘膜に…洗い流すもの: 5.0 | … | 粘膜に使用されることがある化粧品: 0.010 |
//
// so each row is a statement that answers a question about one cell. The
// rebuilt rows replace the raw lines only when those lines hold exactly the
// same characters as the table (spaces aside): no word is added, dropped or
// moved to another page, and a table the boxes do not explain stays as
// pdftotext -raw printed it.

// pdfWord is one word of a page with its box, in points from the top left.
type pdfWord struct {
	x0, y0, x1, y1 float64
	text           string
}

func (w pdfWord) height() float64 { return w.y1 - w.y0 }

// runPDFBoxes runs pdftotext -bbox-layout on path and returns the words of
// every page.
func runPDFBoxes(ctx context.Context, tool, path string, maxText int64) ([][]pdfWord, error) {
	limit := maxText
	if limit > 0 {
		limit *= 8 // the boxes take several times the text's bytes
	}
	run, err := runTool(ctx, limit, tool, "-bbox-layout", "-enc", "UTF-8", path, "-")
	if err != nil || run.over {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("pdftotext -bbox-layout: %w", ctx.Err())
		}
		if run.over {
			return nil, textTooLarge(maxText)
		}
		return nil, pdfToolError(err, run.stderr.String())
	}
	return parseBBoxLayout(&run.stdout)
}

// parseBBoxLayout reads the XHTML of pdftotext -bbox-layout: the words of
// each <page>, with the box of each <word>. Words outside a page and boxes
// that do not parse are skipped.
// lenientXML is a decoder for the XHTML that poppler's tools write (the
// outline of pdftohtml, the word boxes of pdftotext -bbox-layout): HTML
// entities, unclosed tags and stray markup are read rather than refused.
func lenientXML(r io.Reader) *xml.Decoder {
	d := xml.NewDecoder(r)
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	return d
}

func parseBBoxLayout(r io.Reader) ([][]pdfWord, error) {
	d := lenientXML(r)
	var pages [][]pdfWord
	inPage := false
	var word *pdfWord
	var text strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return pages, fmt.Errorf("read pdftotext boxes: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "page":
				pages = append(pages, nil)
				inPage = true
			case "word":
				if !inPage {
					continue
				}
				w := pdfWord{}
				ok := true
				for _, a := range t.Attr {
					v, err := strconv.ParseFloat(a.Value, 64)
					if err != nil {
						continue
					}
					switch a.Name.Local {
					case "xMin":
						w.x0 = v
					case "yMin":
						w.y0 = v
					case "xMax":
						w.x1 = v
					case "yMax":
						w.y1 = v
					}
				}
				if w.x1 < w.x0 || w.y1 <= w.y0 {
					ok = false
				}
				if ok {
					word = &w
					text.Reset()
				}
			}
		case xml.CharData:
			if word != nil {
				text.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "word":
				if word != nil {
					word.text = strings.TrimSpace(text.String())
					if word.text != "" {
						pages[len(pages)-1] = append(pages[len(pages)-1], *word)
					}
					word = nil
				}
			case "page":
				inPage = false
				tightenBoxes(pages[len(pages)-1])
			}
		}
	}
	return pages, nil
}

// maxBoxEms is the tallest a word box may be, in ems (the width of one
// full-width character), before a page's boxes are taken as inflated.
// Word boxes are the font's ascent to descent: about 1–1.8 em in the PDFs
// of government offices and Office exports, but 2.6 em in those Chromium
// prints with Noto CJK, taller than the line pitch, so that each line's
// boxes overlap the lines above and below it and a table's rows run
// together into one band (a two-line header cell merged with the first
// row, and 「E-310 証明書の期限切/れ」 split from its row).
const maxBoxEms = 2.2

// tightenBoxes shrinks the word boxes of a page whose boxes are inflated —
// the median height of its full-width words over their em is above
// maxBoxEms — to 1.2 em about their vertical centre, which keeps the words
// of one line together and apart from the next line. Pages with ordinary
// boxes, and pages with too few full-width words to tell (fewer than 5),
// are left as they are.
func tightenBoxes(words []pdfWord) {
	var ratios []float64
	for _, w := range words {
		n, wideOnly := 0, true
		for _, r := range w.text {
			n++
			wideOnly = wideOnly && wide(r)
		}
		if n >= 2 && wideOnly && w.x1 > w.x0 {
			ratios = append(ratios, w.height()/((w.x1-w.x0)/float64(n)))
		}
	}
	if len(ratios) < 5 {
		return
	}
	slices.Sort(ratios)
	r := ratios[len(ratios)/2]
	if r <= maxBoxEms {
		return
	}
	for i := range words {
		w := &words[i]
		mid, half := (w.y0+w.y1)/2, w.height()*1.2/r/2
		w.y0, w.y1 = mid-half, mid+half
	}
}

// segment is a run of words of one visual row that sit together
// horizontally: a cell's share of that row (one or more lines).
type segment struct {
	x0, x1 float64
	words  []pdfWord
}

// visualRow is a band of the page whose words overlap vertically; a cell
// wrapped over several lines and a value centred beside it share one band.
type visualRow struct {
	y0, y1 float64
	segs   []segment
}

// table is a table found on a page.
type pdfTable struct {
	words     []pdfWord  // every word of the table, then of its captions
	bodyWords int        // how many of words are the table's own
	captions  []string   // lines above the table that belong to it
	header    []string   // one per column; nil when the first row is data
	rows      [][]string // cells per column
}

// Thresholds of the table finder, in multiples of the line height.
const (
	// cellGap is the horizontal gap that separates two cells of a row.
	cellGap = 0.5
	// wrapLeading is the most distance between the tops of two lines of
	// one wrapped cell.
	wrapLeading = 1.8
	// fullLine is how close to its column's right edge a line must end to
	// be wrapped (the cell continues on the next line).
	fullLine = 1.2
	// captionGap is the most gap between a table and a caption line above.
	captionGap = 1.5
)

// minWrapWidth is the narrowest column, in line heights, whose body cells
// are taken to wrap onto a second line (header cells wrap in any column).
const minWrapWidth = 6

// maxHeaderRunes is the longest header cell.
const maxHeaderRunes = 40

// maxSingleBands is the most consecutive one-cell bands (lines of a
// wrapped cell) between two bands with several cells.
const maxSingleBands = 8

// minTableRows is the fewest rows (header included) a table needs.
const minTableRows = 3

// visualRows groups a page's words into bands of vertically overlapping
// words, top to bottom, each split into segments.
func visualRows(words []pdfWord) []visualRow {
	ws := slices.Clone(words)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].y0 < ws[j].y0 })
	var rows []visualRow
	var cur []pdfWord
	y0, y1 := 0.0, 0.0
	flush := func() {
		if len(cur) > 0 {
			rows = append(rows, visualRow{y0: y0, y1: y1, segs: segments(cur)})
		}
		cur = nil
	}
	for _, w := range ws {
		if len(cur) > 0 && w.y0 < y1-0.1*w.height() {
			cur = append(cur, w)
			y1 = max(y1, w.y1)
			continue
		}
		flush()
		cur = []pdfWord{w}
		y0, y1 = w.y0, w.y1
	}
	flush()
	return rows
}

// segments splits the words of one band into horizontal runs: words whose
// spans overlap or lie closer than cellGap line heights.
func segments(ws []pdfWord) []segment {
	ws = slices.Clone(ws)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].x0 < ws[j].x0 })
	var out []segment
	for _, w := range ws {
		if n := len(out); n > 0 && w.x0 < out[n-1].x1+cellGap*w.height() {
			out[n-1].words = append(out[n-1].words, w)
			out[n-1].x1 = max(out[n-1].x1, w.x1)
			continue
		}
		out = append(out, segment{x0: w.x0, x1: w.x1, words: []pdfWord{w}})
	}
	return out
}

// column is the horizontal span of a table column.
type column struct{ x0, x1 float64 }

// columnOf returns the index of the one column s overlaps, or -1 when it
// overlaps none or more than one.
func columnOf(cols []column, x0, x1 float64) int {
	found := -1
	for i, c := range cols {
		if x0 < c.x1 && x1 > c.x0 {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// findTables finds the tables of a page: runs of at least minTableRows
// bands with two or more cells, whose cells fall into columns that the body
// rows share. The first band is the header when none of its cells is a
// number. Single-cell bands between them are wrapped cells or rows with one
// cell filled; a band with a line across two columns ends the table.
func findTables(words []pdfWord) []pdfTable {
	rows := visualRows(words)
	var out []pdfTable
	for i := 0; i < len(rows); {
		if len(rows[i].segs) < 2 {
			i++
			continue
		}
		// The run of bands from i: multi-cell bands, with at most
		// maxSingleBands one-cell bands in a row between them.
		j, last, multi := i, i, 0
		for j < len(rows) {
			if len(rows[j].segs) >= 2 {
				last, multi = j, multi+1
			} else if j-last > maxSingleBands {
				break
			}
			j++
		}
		if multi < minTableRows {
			i = last + 1
			continue
		}
		if t, end, ok := buildTable(rows, i, last); ok {
			out = append(out, t)
			i = end + 1
			continue
		}
		i = last + 1
	}
	return out
}

// buildTable builds the table of bands first..last (both multi-cell);
// end is the last band it used.
func buildTable(rows []visualRow, first, last int) (pdfTable, int, bool) {
	// Columns from the body's multi-cell bands (the first band may be a
	// header whose cells are letter-spaced or wrapped differently).
	var cols []column
	for r := first + 1; r <= last; r++ {
		if len(rows[r].segs) < 2 {
			continue
		}
		for _, s := range rows[r].segs {
			cols = append(cols, column{s.x0, s.x1})
		}
	}
	cols = mergeColumns(cols)
	if len(cols) < 2 {
		return pdfTable{}, 0, false
	}
	// Every segment must sit in one column: bands at the top with a line
	// across columns (a title) are left out, and the table ends before
	// the next such band.
	fits := func(r int) bool {
		for _, s := range rows[r].segs {
			if columnOf(cols, s.x0, s.x1) < 0 {
				return false
			}
		}
		return true
	}
	spread := func(r int) bool { // cells in two columns or more
		c0 := columnOf(cols, rows[r].segs[0].x0, rows[r].segs[0].x1)
		for _, s := range rows[r].segs[1:] {
			if columnOf(cols, s.x0, s.x1) != c0 {
				return true
			}
		}
		return false
	}
	for first <= last && !(fits(first) && spread(first)) {
		first++
	}
	end := first - 1
	for r := first; r <= last && fits(r); r++ {
		end = r
	}
	for end > first && len(rows[end].segs) < 2 {
		end--
	}
	if end-first+1 < minTableRows {
		return pdfTable{}, 0, false
	}
	// The right edge each column's lines reach when they wrap.
	right := make([]float64, len(cols))
	for r := first; r <= end; r++ {
		for _, s := range rows[r].segs {
			c := columnOf(cols, s.x0, s.x1)
			right[c] = max(right[c], s.x1)
		}
	}

	if proseColumns(rows, first, end, cols, right) {
		return pdfTable{}, 0, false
	}

	var t pdfTable
	var logical [][]segmentSet
	headerEnd := first // the last band of the first row
	for r := first; r <= end; r++ {
		cells := make([]segmentSet, len(cols))
		for _, s := range rows[r].segs {
			c := columnOf(cols, s.x0, s.x1)
			cells[c] = append(cells[c], s)
		}
		for _, s := range rows[r].segs {
			t.words = append(t.words, s.words...)
		}
		// A band carries on the row above when it continues wrapped
		// cells, or — in the header — when it only fills cells the
		// header has left empty (「成分名」 beside four-line headers).
		inHeader := len(logical) == 1 && r == headerEnd+1
		if len(logical) > 0 && (inHeader && fillsHeader(logical[0], rows[r-1], rows[r], cols, right) || continues(rows[r-1], rows[r], cols, right)) {
			if inHeader {
				headerEnd = r
			}
			prev := logical[len(logical)-1]
			for c := range cells {
				prev[c] = append(prev[c], cells[c]...)
			}
			continue
		}
		logical = append(logical, cells)
	}
	texts := make([][]string, len(logical))
	for i, cells := range logical {
		texts[i] = make([]string, len(cells))
		for c, set := range cells {
			texts[i][c] = cellText(set)
		}
	}
	if isHeader(texts[0]) {
		t.header, texts = texts[0], texts[1:]
	}
	h := rows[first].segs[0].words[0].height()
	if t.header == nil && len(cols) == 2 && cols[0].x1-cols[0].x0 < minWrapWidth*h {
		return pdfTable{}, 0, false // a list: item marks (「i.」「•」「①」) and their text
	}
	t.rows = texts
	filled := 0
	for _, row := range texts {
		n := 0
		for _, c := range row {
			if c != "" {
				n++
			}
		}
		if n >= 2 {
			filled++
		}
	}
	if filled < minTableRows-1 || 2*filled < len(texts) {
		return pdfTable{}, 0, false // mostly one-cell lines: not a grid
	}
	t.bodyWords = len(t.words)
	// Caption lines directly above: single bands within the table's span.
	x0, x1 := cols[0].x0, cols[len(cols)-1].x1
	top := rows[first].y0
	for r := first - 1; r >= 0 && r >= first-3; r-- {
		b := rows[r]
		h := rows[r].segs[0].words[0].height()
		if top-b.y1 > captionGap*h || b.segs[0].x0 < x0-h || b.segs[len(b.segs)-1].x1 > x1+h {
			break
		}
		var line []string
		for _, s := range b.segs {
			line = append(line, cellText(segmentSet{s}))
			t.words = append(t.words, s.words...)
		}
		t.captions = append([]string{strings.Join(line, " ")}, t.captions...)
		top = b.y0
	}
	return t, end, true
}

// Two-column prose. A page set in two columns of running text gives
// bands of two segments, one line of each column, that fall into two
// columns shared by every band: the shape of a table. Rebuilt as one, its
// first line became a header repeated in every cell (「謝辞: …」) and each
// row paired half a sentence of the left column with half a sentence of
// the right. What sets prose apart is that its lines fill their column: a
// justified line runs to the column's right edge, and only the last line
// of a paragraph stops short, while a table's cells end where their text
// ends.
const (
	// minProseColumn is the narrowest column, in line heights, that is
	// taken for a column of running text.
	minProseColumn = 12
	// proseFullShare is the least share of bands whose every segment
	// reaches its column's right edge (within one line height) for the
	// columns to be prose.
	proseFullShare = 0.6
)

// proseColumns reports whether bands first..end are lines of running text
// set in columns rather than the rows of a table: every column at least
// minProseColumn line heights wide, and in at least proseFullShare of the
// multi-segment bands every segment runs to its column's right edge.
func proseColumns(rows []visualRow, first, end int, cols []column, right []float64) bool {
	h := rows[first].segs[0].words[0].height()
	for _, c := range cols {
		if c.x1-c.x0 < minProseColumn*h {
			return false
		}
	}
	bands, full := 0, 0
	for r := first; r <= end; r++ {
		if len(rows[r].segs) < 2 {
			continue
		}
		bands++
		all := true
		for _, s := range rows[r].segs {
			c := columnOf(cols, s.x0, s.x1)
			if c < 0 || s.x1 < right[c]-h {
				all = false
				break
			}
		}
		if all {
			full++
		}
	}
	return bands > 0 && float64(full) >= proseFullShare*float64(bands)
}

// fillsHeader reports whether band next, right below prev, belongs to the
// header: each of its segments fills a cell the header has left empty or
// continues a wrapped header cell.
func fillsHeader(header []segmentSet, prev, next visualRow, cols []column, right []float64) bool {
	h := next.segs[0].words[0].height()
	if next.y0-prev.y1 > (wrapLeading-1)*h {
		return false // a gap: the body begins
	}
	for _, s := range next.segs {
		c := columnOf(cols, s.x0, s.x1)
		if len(header[c]) > 0 && !continuesIn(prev, s, cols, right) {
			return false
		}
	}
	return true
}

// segmentSet is the segments of one cell, top to bottom.
type segmentSet []segment

// continues reports whether band next carries on the cells of band prev
// (a wrapped cell): each of its segments continues a line of prev.
func continues(prev, next visualRow, cols []column, right []float64) bool {
	for _, s := range next.segs {
		c := columnOf(cols, s.x0, s.x1)
		if cols[c].x1-cols[c].x0 < minWrapWidth*s.words[0].height() {
			return false // a narrow column (numbers, marks, names) holds no wrapped text
		}
		if !continuesIn(prev, s, cols, right) {
			return false
		}
	}
	return true
}

// continuesIn reports whether segment s carries on a wrapped cell of band
// prev: prev has a line in s's column that reaches the column's right edge,
// close above.
func continuesIn(prev visualRow, s segment, cols []column, right []float64) bool {
	c := columnOf(cols, s.x0, s.x1)
	h := s.words[0].height()
	for _, p := range prev.segs {
		if columnOf(cols, p.x0, p.x1) != c {
			continue
		}
		// The segment's last line must be full.
		lastLine := p.words[0]
		for _, w := range p.words {
			if w.y0 > lastLine.y0+0.5*w.height() || (w.y0 >= lastLine.y0-0.5*w.height() && w.x1 > lastLine.x1) {
				lastLine = w
			}
		}
		if right[c]-lastLine.x1 <= fullLine*h && s.words[0].y0-lastLine.y0 <= wrapLeading*h {
			return true
		}
	}
	return false
}

// mergeColumns merges overlapping spans into columns, left to right.
func mergeColumns(spans []column) []column {
	sort.Slice(spans, func(i, j int) bool { return spans[i].x0 < spans[j].x0 })
	var out []column
	for _, s := range spans {
		if n := len(out); n > 0 && s.x0 < out[n-1].x1 {
			out[n-1].x1 = max(out[n-1].x1, s.x1)
			continue
		}
		out = append(out, s)
	}
	return out
}

// cellText is the text of a cell: its words line by line (words on one line
// joined by a space, as pdftotext prints them), the lines joined without a
// space between Japanese letters.
func cellText(set segmentSet) string {
	var ws []pdfWord
	for _, s := range set {
		ws = append(ws, s.words...)
	}
	if len(ws) == 0 {
		return ""
	}
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].y0 < ws[j].y0 })
	var lines [][]pdfWord
	for _, w := range ws {
		if n := len(lines); n > 0 && w.y0 < lines[n-1][0].y1-0.5*w.height() {
			lines[n-1] = append(lines[n-1], w)
			continue
		}
		lines = append(lines, []pdfWord{w})
	}
	var b strings.Builder
	for _, l := range lines {
		sort.SliceStable(l, func(i, j int) bool { return l[i].x0 < l[j].x0 })
		for k, w := range l {
			if b.Len() > 0 {
				prev, _ := utf8.DecodeLastRuneInString(b.String())
				next, _ := utf8.DecodeRuneInString(w.text)
				if k > 0 || !(wide(prev) || wide(next)) {
					// Letter-spaced kana/kanji on one line join, as
					// the raw layout step joins them.
					if !(k > 0 && isKanaKanji(prev) && isKanaKanji(next) && utf8.RuneCountInString(l[k-1].text) == 1 && utf8.RuneCountInString(w.text) == 1) {
						b.WriteString(" ")
					}
				}
			}
			b.WriteString(w.text)
		}
	}
	return b.String()
}

// wide reports whether r is a full-width (CJK) character, after which a
// wrapped line continues without a space.
func wide(r rune) bool { return r >= 0x3000 }

// isHeader reports whether a table's first row reads as its header: at
// least two cells, none of them a number or a mark.
func isHeader(cells []string) bool {
	n := 0
	for _, c := range cells {
		if c == "" {
			continue
		}
		n++
		if !strings.ContainsFunc(c, func(r rune) bool { return unicode.IsLetter(r) && r != '○' }) || strings.ContainsFunc(c, unicode.IsDigit) ||
			utf8.RuneCountInString(c) > maxHeaderRunes || strings.HasSuffix(c, "。") {
			return false
		}
	}
	return n >= 2
}

// rowLines prints a table as lines: its captions, its header row, then
// each row as
// 「| cell | header: cell | … |」 — the first column is the row's key and
// keeps no header; empty cells are left out.
func (t pdfTable) rowLines() []string {
	out := slices.Clone(t.captions)
	rows := t.rows
	if t.header != nil {
		rows = append([][]string{t.header}, rows...)
	}
	for i, row := range rows {
		var cells []string
		for c, v := range row {
			if v == "" && t.header != nil {
				continue // the header says which column each value is in
			}
			if i > 0 && c > 0 && t.header != nil && t.header[c] != "" {
				v = t.header[c] + ": " + v
			}
			cells = append(cells, v)
		}
		if len(cells) == 0 {
			continue
		}
		out = append(out, "| "+strings.Join(cells, " | ")+" |")
	}
	return out
}

// applyTables replaces, in the raw text of a page, the lines that print
// each table with its rows (rowLines). A table is replaced only when a run
// of raw lines holds exactly its characters, spaces aside; otherwise the
// raw lines stay.
func applyTables(raw string, words []pdfWord) string {
	tables := findTables(words)
	if len(tables) == 0 {
		return raw
	}
	lines := strings.Split(raw, "\n")
	for _, t := range tables {
		s, e, ok := findRun(lines, runeCounts(nil, t.words))
		if !ok && len(t.captions) > 0 {
			// The captions may be printed apart from the table.
			t.words, t.captions = t.words[:t.bodyWords], nil
			s, e, ok = findRun(lines, runeCounts(nil, t.words))
		}
		if !ok {
			continue
		}
		lines = slices.Replace(lines, s, e, t.rowLines()...)
	}
	return strings.Join(lines, "\n")
}

// runeCounts counts the non-space runes of words.
func runeCounts(m map[rune]int, words []pdfWord) map[rune]int {
	if m == nil {
		m = map[rune]int{}
	}
	for _, w := range words {
		for _, r := range w.text {
			if !unicode.IsSpace(r) {
				m[r]++
			}
		}
	}
	return m
}

// findRun finds lines[s:e] whose non-space runes are exactly want.
func findRun(lines []string, want map[rune]int) (int, int, bool) {
	total := 0
	for _, n := range want {
		total += n
	}
	if total == 0 {
		return 0, 0, false
	}
	for s := range lines {
		got := map[rune]int{}
		n := 0
		for e := s; e < len(lines); e++ {
			bad := false
			for _, r := range lines[e] {
				if unicode.IsSpace(r) {
					continue
				}
				got[r]++
				n++
				if got[r] > want[r] {
					bad = true
					break
				}
			}
			if bad || n > total {
				break
			}
			if n == total {
				return s, e + 1, true
			}
		}
	}
	return 0, 0, false
}

// Titles before their body. Some PDFs draw a cover or slide title after the
// text below it, so pdftotext -raw prints the title last. titleFirst moves a
// run of large-type lines (at least titleScale times the page's usual word
// height) above the first line the page prints higher up than it is drawn:
// the lines stay as they are, only their order changes.

// titleScale is how much taller than the page's median word a title's
// words are.
const titleScale = 1.3

// titleFirst reorders the raw lines of a page so that a title drawn above
// body text comes before it. Lines are matched to the word boxes by their
// characters (spaces aside); a page whose lines do not match stays as it
// is.
func titleFirst(raw string, words []pdfWord) string {
	if len(words) == 0 {
		return raw
	}
	hs := make([]float64, len(words))
	for i, w := range words {
		hs[i] = w.height()
	}
	slices.Sort(hs)
	body := hs[len(hs)/2]
	type band struct {
		y0    float64
		large bool
		used  bool
	}
	bands := map[string][]*band{}
	for _, r := range visualRows(words) {
		var key strings.Builder
		tall := 0.0
		for _, s := range r.segs {
			for _, w := range s.words {
				key.WriteString(w.text)
				tall = max(tall, w.height())
			}
		}
		k := noSpace(key.String())
		bands[k] = append(bands[k], &band{y0: r.y0, large: tall >= titleScale*body})
	}
	lines := strings.Split(raw, "\n")
	at := make([]*band, len(lines))
	for i, l := range lines {
		for _, b := range bands[noSpace(l)] {
			if !b.used {
				b.used, at[i] = true, b
				break
			}
		}
	}
	// The first run of large lines printed after a line drawn below it.
	for j := range lines {
		if at[j] == nil || !at[j].large {
			continue
		}
		k := j
		for k < len(lines) && at[k] != nil && at[k].large {
			k++
		}
		to := -1
		for i := 0; i < j; i++ {
			if at[i] != nil && !at[i].large && at[i].y0 > at[j].y0 {
				to = i
				break
			}
		}
		if to < 0 {
			return raw
		}
		run := slices.Clone(lines[j:k])
		rest := slices.Delete(slices.Clone(lines), j, k)
		return strings.Join(slices.Insert(rest, to, run...), "\n")
	}
	return raw
}

// noSpace removes the white space of s.
func noSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
