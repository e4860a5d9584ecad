package web

import (
	"bytes"
	"fmt"
	"html/template"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
	xhtml "golang.org/x/net/html"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/guard"
)

// markdown renders answer text. Raw HTML in the text is not Markdown to
// this renderer: the parser has no HTML-block and no inline-HTML rule, so a
// document line such as "<div>隔離する。</div>" is an ordinary paragraph
// whose angle brackets are escaped and shown as text. (With goldmark's
// default parser such a line opens an HTML block that runs to the next
// blank line and is dropped whole, emptying the answer.) The output is
// sanitised again by bluemonday, so a document quoting <script> shows as
// text at most, never as markup. Single newlines become line breaks:
// extractive answers put one sentence per line.
type markdown struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

func newMarkdown() *markdown {
	return &markdown{
		md: goldmark.New(
			goldmark.WithParser(textOnlyHTMLParser()),
			goldmark.WithExtensions(extension.GFM),
			goldmark.WithRendererOptions(gmhtml.WithHardWraps()),
		),
		policy: bluemonday.UGCPolicy(),
	}
}

// textOnlyHTMLParser is goldmark's default parser without the rules that
// recognise raw HTML (HTML blocks and inline HTML) and angle-bracket
// autolinks, so such text stays text.
func textOnlyHTMLParser() parser.Parser {
	var blocks, inlines []util.PrioritizedValue
	for _, v := range parser.DefaultBlockParsers() {
		if v.Value != parser.NewHTMLBlockParser() {
			blocks = append(blocks, v)
		}
	}
	for _, v := range parser.DefaultInlineParsers() {
		// Nor angle-bracket autolinks: <attacker@example.com> in a document
		// stays that text (a mailto link would drop the brackets, and a
		// copied command would differ from the document).
		if v.Value != parser.NewRawHTMLParser() && v.Value != parser.NewAutoLinkParser() {
			inlines = append(inlines, v)
		}
	}
	return parser.NewParser(
		parser.WithBlockParsers(blocks...),
		parser.WithInlineParsers(inlines...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
}

// render converts Markdown to sanitised HTML.
func (m *markdown) render(src string) template.HTML {
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(src), &buf); err != nil {
		// goldmark only fails on writer errors; fall back to escaped text.
		return template.HTML("<p>" + template.HTMLEscapeString(src) + "</p>")
	}
	return template.HTML(m.policy.SanitizeBytes(buf.Bytes())) // #nosec: sanitised above
}

// Citation is one source shown under an answer (seed 002 §4.5).
type Citation struct {
	N int `json:"n"`
	// ChunkID names the cited chunk (GET /api/source/{chunk_id}); "" when
	// it could not be found in the served index.
	ChunkID string `json:"chunk_id"`
	// Title is the document's title; Label "<title> p.N", as people name
	// a source.
	Title   string  `json:"title"`
	Label   string  `json:"label"`
	File    string  `json:"file"` // page identity in the page database
	Page    int     `json:"page"`
	Heading string  `json:"heading"`
	Score   float64 `json:"score"`
	Excerpt string  `json:"excerpt"` // at most 200 characters, "..." when cut
	// SourceURL opens the page with the passage marked; FileURL the
	// original file at the page ("" when it is not served).
	SourceURL string `json:"source_url"`
	FileURL   string `json:"file_url"`
}

// Summary is the line shown in <summary>: 引用元: title p.N > heading
// (スコア: 0.85); a page without headings (most PDF pages) is named by its
// label alone.
func (c Citation) Summary() string {
	name := c.Label
	if name == "" {
		name = c.File
	}
	h := strings.TrimSpace(c.Heading)
	if rest, ok := strings.CutPrefix(h, c.Title+" > "); ok && c.Title != "" {
		h = rest // the title heads the page: not twice
	}
	if h != "" && h != c.Title {
		return fmt.Sprintf("引用元: %s > %s (スコア: %.2f)", name, h, c.Score)
	}
	return fmt.Sprintf("引用元: %s (スコア: %.2f)", name, c.Score)
}

// cut shortens s to at most max runes, ending in "..." when cut.
func cut(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-3]) + "..."
}

// answerView is what the answer template shows.
type answerView struct {
	Danger    bool
	Kind      string // "answer", "insufficient" or "ambiguous"
	Body      template.HTML
	Unknowns  []string
	Citations []Citation
	Generator string
	// Verified summarises the claim check: 「根拠確認: 3 件中 3 件の記述を
	// 引用元で確認」; empty for refusals and answers without claims.
	Verified string
	// VerifiedLevel colours that line: "all" (green) when every claim is
	// supported, "partial" or "none" (a warning colour) otherwise.
	VerifiedLevel string
}

// splitBanner removes the danger banner the assistant put in front of the
// answer; the page shows it as a red bar instead.
func splitBanner(text string) (string, bool) {
	t := strings.TrimLeft(text, " \n")
	if rest, ok := strings.CutPrefix(t, guard.Banner); ok {
		return strings.TrimLeft(rest, " \n"), true
	}
	return text, false
}

// view prepares a reply and its citations for the answer template.
func (m *markdown) view(rep assistant.Reply, cs []Citation) answerView {
	body, banner := splitBanner(rep.Answer)
	v := answerView{
		Danger:    rep.Flags.DangerousOperation || banner,
		Kind:      "answer",
		Body:      m.render(body),
		Generator: rep.Generator,
	}
	switch {
	case rep.Flags.InsufficientEvidence:
		v.Kind = "insufficient"
	case rep.Flags.AmbiguousQuery:
		v.Kind = "ambiguous"
	default:
		v.Unknowns = rep.Unknowns
		v.Citations = cs
		v.Verified, v.VerifiedLevel = verifiedLine(rep.Verification, rep.Incomplete)
		v.Body = citeChips(v.Body, cs)
	}
	return v
}

// citeMarker is an [n] or [n, m] citation marker in answer text.
var (
	citeMarker = regexp.MustCompile(`\[\d+(?:\s*[,，、]\s*\d+)*\]`)
	citeSep    = regexp.MustCompile(`\s*[,，、]\s*`)
)

// citeChips turns the [n] markers in the text of a rendered answer body
// into the page's citation chips — buttons that carry the cited chunk's id
// (data-chunk) and name the source — so an answer the server renders (a
// finished answer, a conversation shown after a reload) opens the source
// viewer without the script having to look anything up. Markers inside
// code and links stay text, as do numbers no citation has. The chips are
// built from the citations' own fields, escaped, after sanitising.
func citeChips(body template.HTML, cs []Citation) template.HTML {
	if len(cs) == 0 || !strings.Contains(string(body), "[") {
		return body
	}
	byN := make(map[int]Citation, len(cs))
	for _, c := range cs {
		byN[c.N] = c
	}
	chip := func(marker string) string {
		var b strings.Builder
		for _, num := range citeSep.Split(marker[1:len(marker)-1], -1) {
			n, err := strconv.Atoi(num)
			c, ok := byN[n]
			if err != nil || !ok {
				b.WriteString("[" + num + "]")
				continue
			}
			name := c.Label
			if name == "" {
				name = c.File
			}
			fmt.Fprintf(&b, `<button type="button" class="cite" data-n="%d" data-chunk="%s" aria-label="%s" aria-describedby="cite_card">%d</button>`,
				n, template.HTMLEscapeString(c.ChunkID), template.HTMLEscapeString(fmt.Sprintf("引用元 %d: %s", n, name)), n)
		}
		return b.String()
	}
	z := xhtml.NewTokenizer(strings.NewReader(string(body)))
	var b strings.Builder
	inert := 0 // depth inside pre, code and a
	for {
		switch tt := z.Next(); tt {
		case xhtml.ErrorToken:
			return template.HTML(b.String()) // #nosec: sanitised HTML with our own escaped buttons
		case xhtml.StartTagToken, xhtml.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "pre", "code", "a":
				if tt == xhtml.StartTagToken {
					inert++
				} else if inert > 0 {
					inert--
				}
			}
			b.Write(z.Raw())
		case xhtml.TextToken:
			if inert > 0 {
				b.Write(z.Raw())
				continue
			}
			b.WriteString(citeMarker.ReplaceAllStringFunc(string(z.Raw()), chip))
		default:
			b.Write(z.Raw())
		}
	}
}

// verifiedLine is the one-line summary of a claim check shown under an
// answer, and its level: all, partial or none of the claims supported.
//
// An incomplete answer (its model stream was cut off) is never green: what
// was cut off was never checked.
func verifiedLine(ver *answer.Verification, incomplete bool) (line, level string) {
	if ver == nil || len(ver.Claims) == 0 {
		return "", ""
	}
	ok := len(ver.Claims) - len(ver.Unsupported())
	line = fmt.Sprintf("根拠確認: %d 件中 %d 件の記述を引用元で確認", len(ver.Claims), ok)
	if ver.Method == "lexical+llm" {
		line += "（一部はモデルで再確認）"
	}
	switch ok {
	case len(ver.Claims):
		level = "all"
	case 0:
		level = "none"
	default:
		level = "partial"
	}
	if ver.Answers != nil && !*ver.Answers {
		// The quotes exist, but the reader does not find the question
		// answered by them: never green.
		line += "（ただし引用箇所が質問に答えているかは確認できません）"
		if level == "all" {
			level = "partial"
		}
	}
	if incomplete {
		line += "（回答が途中で途切れたため、残りは確認できません）"
		if level == "all" {
			level = "partial"
		}
	}
	return line, level
}

// citationsText is the plain-text citation list appended to answers of the
// OpenAI-compatible endpoint.
func citationsText(cs []Citation) string {
	if len(cs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n---\n引用元:\n")
	for _, c := range cs {
		name := c.Label
		if name == "" {
			name = c.File
		}
		fmt.Fprintf(&b, "[%d] %s", c.N, name)
		if h := strings.TrimSpace(c.Heading); h != "" {
			b.WriteString(" " + h)
		}
		fmt.Fprintf(&b, " (スコア: %.2f)\n", c.Score)
	}
	return strings.TrimRight(b.String(), "\n")
}
