package document

import (
	"context"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Raw HTML inside Markdown. Markdown lets an author write HTML where
// Markdown falls short — a table whose cells hold lists, a figure with its
// caption, a <span> that draws an icon, <u> for emphasis, <br> inside a
// table cell — and a Markdown renderer shows only the text. The page text
// is read as text, so the tags would reach answers as they are
// (「<td class="sev-1">SEV-1</td>」). MarkdownHTML turns them into
// Markdown:
//
//   - an HTML block (a line that starts with a block tag such as <div>,
//     <table> or <figure>, up to the next blank line, as CommonMark reads
//     it) is converted like an HTML page: a <table> becomes a Markdown
//     table, lists become lists, other tags go and their text stays, an
//     image leaves its alt text;
//   - a known HTML tag inside an ordinary line is removed and its text kept
//     (<br> becomes a line end, or a space inside a table row or heading);
//   - comments (<!-- omit in toc -->) are removed.
//
// Fenced code and code spans are left as written, and so is anything in
// angle brackets that is not an HTML tag: <username>, <none>,
// <https://example.com>. No text is dropped: only tags, their attributes
// and comments.

// htmlBlockTags start an HTML block at the beginning of a line (the tag
// names of CommonMark's HTML block kind 6, and <pre>).
var htmlBlockTags = tagSet(blockTagNames)

// htmlInlineTags are removed from ordinary lines, their text kept: the
// block tags and the inline elements of HTML.
var htmlInlineTags = tagSet(blockTagNames + ` a abbr acronym b bdi bdo big br cite code data del dfn em font i img
	ins kbd mark nobr q rp rt ruby s samp small span strike strong sub sup time tt u var wbr`)

const blockTagNames = `address article aside blockquote body caption center col colgroup dd details dialog dir div dl dt
	fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr html legend li main menu nav ol p pre
	section summary table tbody td tfoot th thead tr ul`

// tagSet is the set of the space-separated names.
func tagSet(names string) map[string]bool {
	set := map[string]bool{}
	for _, n := range strings.Fields(names) {
		set[n] = true
	}
	return set
}

var (
	// htmlBlockStart: a line that opens or closes a block tag.
	htmlBlockStart = regexp.MustCompile(`^ {0,3}</?([A-Za-z][A-Za-z0-9]*)(?:[\s/>]|$)`)
	// htmlTag: one start or end tag, or a comment, on a line.
	htmlTag = regexp.MustCompile(`<!--.*?-->|<(/?)([A-Za-z][A-Za-z0-9]*)((?:\s+[^<>]*?)?)\s*/?>`)
	// htmlAlt: the alt attribute of an <img> tag.
	htmlAlt = regexp.MustCompile(`(?i)\balt\s*=\s*(?:"([^"]*)"|'([^']*)')`)
)

// MarkdownHTML returns Markdown text with its raw HTML turned into
// Markdown (see the comment above). Text without HTML comes back as it
// is.
func MarkdownHTML(ctx context.Context, text string) string {
	if !strings.Contains(text, "<") {
		return text
	}
	lines := strings.Split(text, "\n")
	var out []string
	var fence fenceState
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fence.inCode(line) {
			out = append(out, line)
			continue
		}
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case strings.HasPrefix(trimmed, "<!--") && !strings.Contains(trimmed, "-->"):
			// A comment over several lines: up to the line that closes it.
			j := i
			for j < len(lines) && !strings.Contains(lines[j], "-->") {
				j++
			}
			if j == len(lines) {
				out = append(out, lines[i:]...) // never closed: not a comment
				return strings.Join(out, "\n")
			}
			_, after, _ := strings.Cut(lines[j], "-->")
			if strings.TrimSpace(after) != "" {
				out = append(out, stripInlineHTML(after))
			}
			i = j
		case isHTMLBlockStart(line):
			j := htmlBlockEnd(lines, i)
			block := strings.Join(lines[i:j], "\n")
			if md, ok := htmlBlockMarkdown(ctx, block); ok {
				if len(out) > 0 && out[len(out)-1] != "" {
					out = append(out, "")
				}
				if md != "" {
					out = append(out, md) // the blank line that ended the block follows
				}
			} else {
				for _, l := range lines[i:j] {
					out = append(out, stripInlineHTML(l))
				}
			}
			i = j - 1
		default:
			out = append(out, stripInlineHTML(line))
		}
	}
	return strings.Join(out, "\n")
}

// htmlBlockEnd returns the index just past the HTML block that starts at
// line i: the next blank line, or for <pre> — whose text may hold blank
// lines — the line after the one that closes it (CommonMark's kinds 6 and
// 1).
func htmlBlockEnd(lines []string, i int) int {
	if m := htmlBlockStart.FindStringSubmatch(lines[i]); m != nil && strings.EqualFold(m[1], "pre") {
		for j := i; j < len(lines); j++ {
			if strings.Contains(strings.ToLower(lines[j]), "</pre>") {
				return j + 1
			}
		}
	}
	j := i
	for j < len(lines) && strings.TrimSpace(lines[j]) != "" {
		j++
	}
	return j
}

// isHTMLBlockStart reports whether line starts an HTML block.
func isHTMLBlockStart(line string) bool {
	m := htmlBlockStart.FindStringSubmatch(line)
	return m != nil && htmlBlockTags[strings.ToLower(m[1])]
}

// htmlBlockMarkdown converts one HTML block to Markdown; false when it
// cannot be parsed or converted, or when the conversion would lose text.
func htmlBlockMarkdown(ctx context.Context, block string) (string, bool) {
	body := &html.Node{Type: html.ElementNode, DataAtom: atom.Body, Data: "body"}
	nodes, err := html.ParseFragment(strings.NewReader(block), body)
	if err != nil {
		return "", false
	}
	for _, n := range nodes {
		body.AppendChild(n)
	}
	removeElements(body)
	imagesToAlt(body)
	flattenCells(body)
	codeBlocks(body)
	want := squashText(textOf(body))
	md, err := convertMarkdown(ctx, body, false)
	if err != nil {
		return "", false
	}
	md = strings.Trim(tidy(md), "\n")
	if !containsInOrder(squashText(md), want) {
		return "", false
	}
	return md, true
}

// imagesToAlt replaces every <img> below n by its alt text.
func imagesToAlt(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && c.DataAtom == atom.Img {
			if alt := strings.TrimSpace(attr(c, "alt")); alt != "" {
				n.InsertBefore(&html.Node{Type: html.TextNode, Data: alt}, c)
			}
			n.RemoveChild(c)
		} else {
			imagesToAlt(c)
		}
		c = next
	}
}

// flattenCells makes each table cell below n that holds blocks (<p>,
// lists, <br>) one line of text, its blocks separated by a space, so that
// the table stays a Markdown table — the converter gives up the table
// layout for such cells and the rows lose their columns.
func flattenCells(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c.DataAtom != atom.Td && c.DataAtom != atom.Th {
			flattenCells(c)
			continue
		}
		text := strings.Join(strings.Split(plainText(c), "\n"), " ")
		for c.FirstChild != nil {
			c.RemoveChild(c.FirstChild)
		}
		c.AppendChild(&html.Node{Type: html.TextNode, Data: text})
	}
}

// stripInlineHTML removes known HTML tags and comments from one Markdown
// line outside its code spans, keeping their text. <br> becomes a line end,
// or a space in a table row or heading, which one line must hold; <img>
// leaves its alt text.
func stripInlineHTML(line string) string {
	if !strings.Contains(line, "<") {
		return line
	}
	t := strings.TrimLeft(line, " ")
	oneLine := strings.HasPrefix(t, "|") || strings.HasPrefix(t, "#")
	var b strings.Builder
	for len(line) > 0 {
		// Code spans (`…`, ``…``) are copied as they are.
		tick := strings.IndexByte(line, '`')
		part := line
		if tick >= 0 {
			part = line[:tick]
		}
		b.WriteString(stripTags(part, oneLine))
		if tick < 0 {
			break
		}
		n := tick
		for n < len(line) && line[n] == '`' {
			n++
		}
		run := line[tick:n]
		end := strings.Index(line[n:], run)
		if end < 0 {
			b.WriteString(run)
			line = line[n:]
			continue
		}
		b.WriteString(line[tick : n+end+len(run)])
		line = line[n+end+len(run):]
	}
	// A comment or tag at the end of a line leaves no trailing space
	// (「## 目次 <!-- omit in toc -->」 → 「## 目次」).
	return strings.TrimRight(b.String(), " \t")
}

// stripTags is stripInlineHTML for text without code spans.
func stripTags(s string, oneLine bool) string {
	if !strings.Contains(s, "<") {
		return s
	}
	return htmlTag.ReplaceAllStringFunc(s, func(tag string) string {
		if strings.HasPrefix(tag, "<!--") {
			return ""
		}
		m := htmlTag.FindStringSubmatch(tag)
		name := strings.ToLower(m[2])
		if !htmlInlineTags[name] {
			return tag // <username>, <none>: text, not a tag
		}
		switch {
		case name == "br" && oneLine:
			return " "
		case name == "br":
			return "\n"
		case name == "img":
			if a := htmlAlt.FindStringSubmatch(m[3]); a != nil {
				return html.UnescapeString(a[1] + a[2])
			}
		}
		return ""
	})
}

// squashText keeps only the letters and digits of s, for checking that a
// conversion kept the text.
func squashText(s string) string {
	var b strings.Builder
	for _, r := range html.UnescapeString(s) {
		if r > 0x7f || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' {
			if r != '\u3000' {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// containsInOrder reports whether every rune of want appears in got in
// the same order.
func containsInOrder(got, want string) bool {
	for _, r := range want {
		i := strings.IndexRune(got, r)
		if i < 0 {
			return false
		}
		got = got[i+len(string(r)):]
	}
	return true
}
