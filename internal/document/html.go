package document

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// droppedElements are removed with their content before conversion: code,
// navigation chrome and interactive widgets carry no document text.
var droppedElements = map[atom.Atom]bool{
	atom.Script:   true,
	atom.Style:    true,
	atom.Noscript: true,
	atom.Nav:      true,
	atom.Iframe:   true,
	atom.Form:     true,
	atom.Template: true,
	atom.Object:   true,
	atom.Embed:    true,
	atom.Svg:      true,
	atom.Canvas:   true,
}

// ConvertHTML decodes an HTML document (see DetectCharset), drops script,
// style, noscript, nav, iframe and form elements, and renders the rest as
// Markdown (HTMLMarkdown: headings, lists, links, tables as Markdown tables)
// or as plain text (HTMLText: one block per line, table cells separated by
// tabs). When the body has no <h1>, the <title> becomes the first line —
// a "# " heading in Markdown mode.
func ConvertHTML(ctx context.Context, src []byte, mode HTMLMode) (string, error) {
	text, _, err := DecodeHTML(src)
	if err != nil {
		return "", err
	}
	doc, err := html.Parse(strings.NewReader(text))
	if err != nil {
		return "", fmt.Errorf("parsing HTML: %w", err)
	}
	title := strings.Join(strings.Fields(textOf(findFirst(doc, atom.Title))), " ")
	body := findFirst(doc, atom.Body)
	if body == nil {
		body = doc
	}
	removeElements(body)
	hasH1 := findFirst(body, atom.H1) != nil

	var out string
	switch mode {
	case HTMLText:
		out = plainText(body)
		if title != "" && !hasH1 {
			out = title + "\n" + out
		}
	case HTMLMarkdown, "":
		codeBlocks(body)
		out, err = markdownOf(ctx, body)
		if err != nil {
			return "", err
		}
		if title != "" && !hasH1 {
			out = "# " + escapeHeading(title) + "\n\n" + out
		}
	default:
		return "", fmt.Errorf("unknown HTML mode %q — use %q or %q", mode, HTMLMarkdown, HTMLText)
	}
	return tidy(out), nil
}

// markdownOf renders n with html-to-markdown and its table plugin.
//
// The converter writes the < and > of the text as &lt; and &gt; so that a
// Markdown renderer does not read them as tags; the page text is read by
// people and by the analyser, not rendered as HTML, so they are put back
// (a help page's /user=&lt;username&gt; reads /user=<username>). A text
// that itself spells the entity (&amp;lt; in the source) reads < as well.
func markdownOf(ctx context.Context, n *html.Node) (string, error) {
	return convertMarkdown(ctx, n, true)
}

// convertMarkdown is markdownOf with the converter's escaping of Markdown
// characters (\*, \_, \[) on (HTML pages) or off (HTML embedded in a
// Markdown file, whose text its author never escaped).
func convertMarkdown(ctx context.Context, n *html.Node, escape bool) (string, error) {
	mode := converter.EscapeModeSmart
	if !escape {
		mode = converter.EscapeModeDisabled
	}
	conv := converter.NewConverter(
		converter.WithEscapeMode(mode),
		converter.WithPlugins(
			base.NewBasePlugin(),
			commonmark.NewCommonmarkPlugin(),
			table.NewTablePlugin(
				table.WithNewlineBehavior(table.NewlineBehaviorPreserve),
				table.WithSpanCellBehavior(table.SpanBehaviorMirror),
				table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
			),
		))
	conv.Register.TextTransformer(func(_ converter.Context, content string) string {
		return entityRestorer.Replace(content)
	}, converter.PriorityStandard+10)
	out, err := conv.ConvertNode(n, converter.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("converting HTML to Markdown: %w", err)
	}
	return string(out), nil
}

// entityRestorer undoes the converter's escaping of < and > in text.
var entityRestorer = strings.NewReplacer("&lt;", "<", "&gt;", ">")

// codeBlocks turns inline <code> elements that hold line breaks into <pre>
// blocks. Manuals such as Apache's write a configuration example as
//
//	<div class="example"><p><code>apachectl -k graceful<br />
//	httpd -k graceful</code></p></div>
//
// which the converter, reading <code> as inline, renders as one line of
// code with the commands run together. Each <br> becomes a line end; the
// white space of each line is collapsed as a browser would; the text is
// kept whole. A paragraph that holds nothing but such code is replaced by
// the block. <code> inside <pre> is already a block and is left alone.
func codeBlocks(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || c.DataAtom == atom.Pre {
			continue
		}
		code := c
		if c.DataAtom == atom.P {
			code = soleElement(c)
		}
		if code == nil || code.DataAtom != atom.Code || findFirst(code, atom.Br) == nil {
			codeBlocks(c)
			continue
		}
		pre := &html.Node{Type: html.ElementNode, DataAtom: atom.Pre, Data: "pre"}
		pre.AppendChild(&html.Node{Type: html.TextNode, Data: codeText(code)})
		n.InsertBefore(pre, c)
		n.RemoveChild(c)
		c = pre
	}
}

// soleElement returns p's only child element when p holds nothing else but
// white space, else nil.
func soleElement(p *html.Node) *html.Node {
	var only *html.Node
	for o := p.FirstChild; o != nil; o = o.NextSibling {
		switch {
		case o.Type == html.TextNode && strings.TrimSpace(o.Data) == "":
		case o.Type == html.ElementNode && only == nil:
			only = o
		default:
			return nil
		}
	}
	return only
}

// codeText is the text of an inline code element with its <br>s as line
// ends, each line's HTML white space collapsed and trimmed, blank lines at
// either end dropped.
func codeText(code *html.Node) string {
	var lines []string
	var cur strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			cur.WriteString(n.Data)
		case n.Type == html.ElementNode && n.DataAtom == atom.Br:
			lines = append(lines, strings.TrimSpace(collapseSpace(cur.String())))
			cur.Reset()
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(code)
	lines = append(lines, strings.TrimSpace(collapseSpace(cur.String())))
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// removeElements deletes every dropped element and comment below n, and
// unwraps links that lead nowhere useful outside the page (see keepLink),
// replacing them with their content.
func removeElements(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch {
		case c.Type == html.CommentNode,
			c.Type == html.ElementNode && droppedElements[c.DataAtom]:
			n.RemoveChild(c)
		case c.Type == html.ElementNode && c.DataAtom == atom.Table:
			removeElements(c)
			limitTableSpans(c)
		case c.Type == html.ElementNode && c.DataAtom == atom.A && !keepLink(attr(c, "href")):
			removeElements(c)
			for gc := c.FirstChild; gc != nil; {
				gnext := gc.NextSibling
				c.RemoveChild(gc)
				n.InsertBefore(gc, c)
				gc = gnext
			}
			n.RemoveChild(c)
		default:
			removeElements(c)
		}
		c = next
	}
}

// maxTableCells bounds the grid a table may expand to once its colspan and
// rowspan are applied. The table plugin materialises every spanned cell, so
// a hostile colspan="100000000" would otherwise exhaust memory.
const maxTableCells = 100_000

// limitTableSpans makes the spans of one table safe to render: rowspan
// stops at the last row (as the HTML standard says), colspan at 1000, and if
// the expanded grid would still exceed maxTableCells all spans are dropped.
func limitTableSpans(table *html.Node) {
	var rows [][]*html.Node
	var collect func(n *html.Node)
	collect = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.DataAtom {
			case atom.Table: // nested tables are limited on their own
			case atom.Tr:
				var cells []*html.Node
				for td := c.FirstChild; td != nil; td = td.NextSibling {
					if td.Type == html.ElementNode && (td.DataAtom == atom.Td || td.DataAtom == atom.Th) {
						cells = append(cells, td)
					}
				}
				rows = append(rows, cells)
			default:
				collect(c)
			}
		}
	}
	collect(table)

	// width[i] is the number of grid columns row i occupies, counting
	// cells spanning down into it from rows above.
	width := make([]int, len(rows)+1)
	for i, cells := range rows {
		for _, td := range cells {
			cs := setSpan(td, "colspan", 1000)
			rs := setSpan(td, "rowspan", len(rows)-i)
			width[i] += cs
			width[i+rs] -= cs
		}
	}
	maxWidth, w := 0, 0
	for i := range rows {
		w += width[i]
		maxWidth = max(maxWidth, w)
	}
	if len(rows)*maxWidth <= maxTableCells {
		return
	}
	for _, cells := range rows {
		for _, td := range cells {
			td.Attr = slices.DeleteFunc(td.Attr, func(a html.Attribute) bool {
				k := strings.ToLower(a.Key)
				return k == "colspan" || k == "rowspan"
			})
		}
	}
}

// setSpan clamps the span attribute key of a cell to [1, limit] and returns
// the resulting span (1 when absent or invalid).
func setSpan(n *html.Node, key string, limit int) int {
	for i, a := range n.Attr {
		if !strings.EqualFold(a.Key, key) {
			continue
		}
		v, err := strconv.Atoi(strings.TrimSpace(a.Val))
		if err != nil && len(strings.TrimSpace(a.Val)) > 0 {
			v = limit // overflowing numbers such as 99999999999999999999
		}
		v = min(max(v, 1), max(limit, 1))
		n.Attr[i].Val = strconv.Itoa(v)
		return v
	}
	return 1
}

// keepLink reports whether a link survives as a Markdown link: only
// absolute http, https and mailto links do. Anchors, in-page fragments,
// javascript: and relative links would only add noise to the page text,
// since the page database has no base URL to resolve them against.
func keepLink(href string) bool {
	h := strings.ToLower(strings.TrimSpace(href))
	return strings.HasPrefix(h, "http://") || strings.HasPrefix(h, "https://") || strings.HasPrefix(h, "mailto:")
}

// findFirst returns the first element with the given atom in document
// order, or nil.
func findFirst(n *html.Node, a atom.Atom) *html.Node {
	if n == nil {
		return nil
	}
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findFirst(c, a); f != nil {
			return f
		}
	}
	return nil
}

// textOf concatenates the text below n.
func textOf(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// blockElements start and end a line in plain-text mode.
var blockElements = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true,
	atom.Br: true, atom.Caption: true, atom.Dd: true, atom.Details: true, atom.Div: true,
	atom.Dl: true, atom.Dt: true, atom.Fieldset: true, atom.Figcaption: true, atom.Figure: true,
	atom.Footer: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true,
	atom.H6: true, atom.Header: true, atom.Hr: true, atom.Li: true, atom.Main: true, atom.Ol: true,
	atom.P: true, atom.Pre: true, atom.Section: true, atom.Summary: true, atom.Table: true,
	atom.Tbody: true, atom.Thead: true, atom.Tfoot: true, atom.Tr: true, atom.Ul: true,
}

// plainText renders n as text: HTML white space collapsed, one block per
// line, table cells separated by a tab, <pre> kept verbatim.
func plainText(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node, pre bool)
	walk = func(n *html.Node, pre bool) {
		switch n.Type {
		case html.TextNode:
			data := strings.ReplaceAll(n.Data, "\x00", "")
			if pre {
				// Protect the line breaks of <pre> from the line
				// trimming below; restored at the end.
				b.WriteString(strings.ReplaceAll(normalizeNewlines(data), "\n", "\x00"))
			} else {
				b.WriteString(collapseSpace(data))
			}
			return
		case html.ElementNode:
			if n.DataAtom == atom.Td || n.DataAtom == atom.Th {
				if hasPrevCell(n) {
					b.WriteString("\t")
				}
			}
			if n.DataAtom == atom.Pre {
				pre = true
			}
			if n.DataAtom == atom.Img {
				if alt := attr(n, "alt"); alt != "" {
					b.WriteString(alt)
				}
			}
		}
		block := n.Type == html.ElementNode && blockElements[n.DataAtom]
		if block {
			b.WriteString("\n")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, pre)
		}
		if block {
			b.WriteString("\n")
		}
	}
	walk(n, false)

	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		// Trim HTML white space only; U+3000 (ideographic space) is content.
		l = strings.Trim(l, " \t\r\f")
		if l != "" {
			lines = append(lines, l)
		}
	}
	return strings.ReplaceAll(strings.Join(lines, "\n"), "\x00", "\n")
}

// collapseSpace replaces each run of HTML white space with one space.
func collapseSpace(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// hasPrevCell reports whether a table cell has a cell before it in its row.
func hasPrevCell(n *html.Node) bool {
	for p := n.PrevSibling; p != nil; p = p.PrevSibling {
		if p.Type == html.ElementNode && (p.DataAtom == atom.Td || p.DataAtom == atom.Th) {
			return true
		}
	}
	return false
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// escapeHeading keeps a title from being read as other Markdown syntax.
func escapeHeading(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `_`, `\_`, "`", "\\`", `[`, `\[`, `<`, `\<`).Replace(s)
}

var manyBlankLines = regexp.MustCompile(`\n{3,}`)

// tidy normalises line ends, trims trailing white space on lines and
// collapses runs of blank lines.
func tidy(s string) string {
	s = normalizeNewlines(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	s = manyBlankLines.ReplaceAllString(strings.Join(lines, "\n"), "\n\n")
	s = strings.Trim(s, "\n")
	if s != "" {
		s += "\n"
	}
	return s
}
