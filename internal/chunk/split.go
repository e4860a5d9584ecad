package chunk

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Options sets the window size and overlap, both counted in runes (the
// seed's 文字). A zero field means its default; a negative Overlap means no
// overlap.
type Options struct {
	Size    int // maximum body runes per chunk (default 500)
	Overlap int // runes repeated from the end of the previous window (default 50)
}

// resolved applies the defaults and validates.
func (o Options) resolved() (Options, error) {
	if o.Size == 0 {
		o.Size = DefaultSize
	}
	switch {
	case o.Overlap == 0:
		o.Overlap = DefaultOverlap
	case o.Overlap < 0:
		o.Overlap = 0
	}
	if o.Size < 0 {
		return o, fmt.Errorf("chunk: size %d is negative", o.Size)
	}
	if o.Overlap >= o.Size {
		return o, fmt.Errorf("chunk: overlap %d must be smaller than size %d", o.Overlap, o.Size)
	}
	return o, nil
}

// Validate reports whether o, after defaults, is usable.
func (o Options) Validate() error {
	_, err := o.resolved()
	return err
}

// Piece is one chunk of a page before metadata is attached.
type Piece struct {
	Heading string // heading path "A > B"; "" before the first heading
	Text    string // heading lines ("# A\n## B\n") followed by Body
	Body    string // the window of section text, at most Size runes
}

// Split cuts page Markdown into pieces as seed 002 §4.1 specifies.
//
//  1. Sections: an ATX heading of level 1–6 at the start of a line ("# "
//     to "###### ", or the bare marks) starts a section. Headings inside
//     fenced code blocks (``` or ~~~) do not count. Text before the first
//     heading is a section with an empty heading. Levels 4–6 matter for
//     legal text, where document.StructureLegal puts each article (条)
//     below its 編・章・節・款 headings, so every article is its own
//     section and no chunk straddles two articles.
//  2. Each section's body (whitespace-trimmed) is cut into windows of at most Size runes; each window after the first
//     starts Overlap runes before the previous one ended. A window ends at
//     the last sentence end (。！？!?． or "." before a space) or newline in
//     its final 20 % when there is one, else exactly at Size runes.
//  3. Every piece's text is its heading lines, the path of enclosing
//     headings, followed by the window.
//  4. Empty bodies give no pieces. A page whose sections are all empty but
//     that has headings (a document that is only a title) gives one piece
//     per innermost heading, its heading lines with an empty Body, so it
//     can still be found.
//
// A line that is one whole HTML comment ("<!-- … -->", such as the marker
// of an OCR'd page) belongs to no piece.
//
// Invalid UTF-8 is replaced by U+FFFD and line endings are normalized to
// "\n". Split returns an error only for invalid options.
func Split(markdown string, opt Options) ([]Piece, error) {
	o, err := opt.resolved()
	if err != nil {
		return nil, err
	}
	var pieces []Piece
	secs := sections(markdown)
	for _, s := range secs {
		body := []rune(s.body)
		for _, w := range windows(body, o.Size, o.Overlap) {
			b := string(body[w[0]:w[1]])
			pieces = append(pieces, Piece{Heading: s.heading, Text: s.prefix + b, Body: b})
		}
	}
	if len(pieces) == 0 {
		pieces = headingPieces(secs)
	}
	return pieces, nil
}

// headingPieces is the fallback for a page with headings and no text (a
// document that is only a title): one piece per heading without
// sub-headings, holding its heading lines, so the page can still be found.
func headingPieces(secs []section) []Piece {
	var out []Piece
	for i, s := range secs {
		if s.heading != "" && !hasSubsection(secs, i) {
			out = append(out, Piece{Heading: s.heading, Text: strings.TrimSuffix(s.prefix, "\n")})
		}
	}
	return out
}

// hasSubsection reports whether secs[i+1] is nested under secs[i] (a
// deeper heading), so that secs[i]'s heading reaches the index through it.
func hasSubsection(secs []section, i int) bool {
	if i+1 >= len(secs) {
		return false
	}
	lv, _, _ := atxHeading(secs[i].line)
	next, _, _ := atxHeading(secs[i+1].line)
	return next > lv
}

// Page splits one page and attaches the metadata of seed 002 §3.3. Chunk
// IDs are file + "_" + index, with the index counted within the page.
func Page(file, source string, page int, updatedAt, markdown string, opt Options) ([]Chunk, error) {
	pieces, err := Split(markdown, opt)
	if err != nil {
		return nil, err
	}
	chunks := make([]Chunk, len(pieces))
	for i, p := range pieces {
		chunks[i] = Chunk{
			ID:        file + "_" + strconv.Itoa(i),
			File:      file,
			Source:    source,
			Page:      page,
			Heading:   p.Heading,
			Text:      p.Text,
			UpdatedAt: updatedAt,
			Index:     i,
		}
	}
	return chunks, nil
}

// section is a heading's span of the page.
type section struct {
	heading string // "A > B"
	prefix  string // "# A\n## B\n"
	line    string // the heading line as written ("" for the leading section)
	body    string // trimmed text up to the next heading
}

// sections splits markdown at ATX headings outside fenced code.
func sections(markdown string) []section {
	md := strings.ToValidUTF8(markdown, "\uFFFD")
	md = strings.ReplaceAll(md, "\r\n", "\n")
	md = strings.ReplaceAll(md, "\r", "\n")

	var (
		out    []section
		titles [6]string // current heading at each level; "" when absent
		cur    = section{}
		body   strings.Builder
		fence  string // the opening fence while inside a code block
	)
	flush := func() {
		cur.body = strings.TrimSpace(body.String())
		out = append(out, cur)
		body.Reset()
	}
	for line := range strings.Lines(md) {
		text := strings.TrimSuffix(line, "\n")
		if fence != "" {
			if closesFence(text, fence) {
				fence = ""
			}
			body.WriteString(line)
			continue
		}
		if f := opensFence(text); f != "" {
			fence = f
			body.WriteString(line)
			continue
		}
		if isComment(text) {
			continue // a note about the page, such as how OCR read it
		}
		level, title, ok := atxHeading(text)
		if !ok {
			body.WriteString(line)
			continue
		}
		flush()
		titles[level-1] = title
		for i := level; i < len(titles); i++ {
			titles[i] = ""
		}
		cur = section{line: text}
		var path []string
		var prefix strings.Builder
		for i, t := range titles[:level] {
			if t == "" {
				continue
			}
			path = append(path, t)
			prefix.WriteString(strings.Repeat("#", i+1) + " " + t + "\n")
		}
		cur.heading = strings.Join(path, " > ")
		cur.prefix = prefix.String()
	}
	flush()
	return out
}

// isComment reports whether line is one whole HTML comment, "<!-- … -->":
// notes about the page (the OCR marker of a scanned page) that are kept in
// the page file but belong to no chunk.
func isComment(line string) bool {
	l := strings.TrimSpace(line)
	return strings.HasPrefix(l, "<!--") && strings.HasSuffix(l, "-->") && len(l) >= 7 &&
		!strings.Contains(l[4:len(l)-3], "-->")
}

// atxHeading recognizes "#" to "######" at the very start of a line,
// followed by a space, a tab or the end of the line, and returns the level
// and the title without an optional closing sequence of #s.
func atxHeading(line string) (level int, title string, ok bool) {
	for level < len(line) && line[level] == '#' {
		level++
	}
	if level == 0 || level > 6 {
		return 0, "", false
	}
	rest := line[level:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "", false
	}
	title = strings.TrimSpace(rest)
	// Closing sequence: trailing #s preceded by a space (or the whole title).
	if t := strings.TrimRight(title, "#"); t != title {
		if t == "" {
			title = ""
		} else if last, _ := utf8.DecodeLastRuneInString(t); last == ' ' || last == '\t' {
			title = strings.TrimSpace(t)
		}
	}
	return level, title, true
}

// opensFence returns the fence marker (``` or ~~~, possibly longer) that
// line opens, or "". Up to three spaces of indentation are allowed.
func opensFence(line string) string {
	l := strings.TrimLeft(line, " ")
	if len(line)-len(l) > 3 || len(l) < 3 || (l[0] != '`' && l[0] != '~') {
		return ""
	}
	n := 0
	for n < len(l) && l[n] == l[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	// A backtick fence's info string may not contain backticks.
	if l[0] == '`' && strings.Contains(l[n:], "`") {
		return ""
	}
	return l[:n]
}

// closesFence reports whether line closes a block opened by fence: the same
// character, at least as long, nothing but spaces after it.
func closesFence(line, fence string) bool {
	l := strings.TrimLeft(line, " ")
	if len(line)-len(l) > 3 {
		return false
	}
	n := 0
	for n < len(l) && l[n] == fence[0] {
		n++
	}
	return n >= len(fence) && strings.TrimSpace(l[n:]) == ""
}

// windows returns the [start, end) rune ranges of the windows over body.
func windows(body []rune, size, overlap int) [][2]int {
	n := len(body)
	var out [][2]int
	for start := 0; start < n; {
		if n-start <= size {
			out = append(out, [2]int{start, n})
			break
		}
		end := start + size
		// Look for a natural break in the last 20 % of the window, but not
		// so early that the next window would not advance.
		lo := max(start+size-size/5, start+overlap+1)
		for p := end; p >= lo; p-- {
			if isBreak(body, p) {
				end = p
				break
			}
		}
		out = append(out, [2]int{start, end})
		start = end - overlap
	}
	return out
}

// isBreak reports whether a window may end just before body[p].
func isBreak(body []rune, p int) bool {
	switch body[p-1] {
	case '\n', '。', '！', '？', '!', '?', '．':
		return true
	case '.':
		return p == len(body) || unicode.IsSpace(body[p])
	}
	return false
}
