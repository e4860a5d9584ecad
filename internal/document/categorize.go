package document

import (
	"context"
	"fmt"
	"path"

	"github.com/shirube/shirube/internal/llm"
)

// Uncategorized is the category of pages no section could be found for.
const Uncategorized = "Uncategorized"

// Front-matter categories: the pages of a categorised document that come
// before its first section (cover, table of contents, revision history).
const (
	FrontMatterJA = "表紙・目次"
	FrontMatterEN = "Front matter"
)

// Completer is the part of an LLM client Categorize uses; *llm.OpenAI and
// *llm.Anthropic satisfy it.
type Completer interface {
	Complete(ctx context.Context, req llm.Request) (llm.Response, error)
}

// CategorizeOptions configure Categorize. The zero value categorises
// offline: from the PDF outline, else from headings.
type CategorizeOptions struct {
	// LLM, when set, names the sections from page summaries. If it fails
	// or answers with something unusable, Categorize falls back to the
	// offline methods and tells Warn.
	LLM Completer
	// Model is the model to ask; "" means the client's default.
	Model string
	// PDFToHTML is the pdftohtml command used to read the PDF outline.
	// Empty means "pdftohtml" looked up on PATH; when it cannot be found
	// the outline is skipped and headings are used.
	PDFToHTML string
	// PagesPerRequest bounds how many page summaries one LLM request
	// holds; 0 means 40. Longer documents take several requests, each
	// told the categories chosen so far.
	PagesPerRequest int
	// Warn receives one-line notes about fallbacks. Nil discards them.
	Warn func(string)
}

// Method names, as reported by CategorizeWithMethod.
const (
	MethodLLM      = "llm"
	MethodOutline  = "outline"
	MethodHeadings = "headings"
	MethodNone     = "none"
)

// Categorize groups the pages of doc into semantic sections and returns
// one folder-safe category name per page, in page order
// (len(result) == len(doc.Pages)). pdfPath is the PDF on disk, used to read
// its outline; pass "" for other kinds.
//
// The category comes from, in order of preference:
//
//  1. the LLM, when opt.LLM is set: it reads a short summary of every page
//     and names a handful of sections (e.g. 「操作と機能」);
//  2. the PDF outline (bookmarks), read with pdftohtml -xml: each page
//     belongs to the last top-level entry that starts on or before it;
//  3. heading-like lines (「１ はじめに」「第2章 運用」「別表第 1」「## 概要」):
//     a page belongs to the heading near its top, else to the section in
//     force when the page starts.
//
// Pages before the first section get FrontMatterJA (or FrontMatterEN for an
// English document). If no method finds any section, every page is
// Uncategorized. Categorize only fails when ctx is done.
func Categorize(ctx context.Context, doc Document, pdfPath string, opt CategorizeOptions) ([]string, error) {
	cats, _, err := CategorizeWithMethod(ctx, doc, pdfPath, opt)
	return cats, err
}

// CategorizeWithMethod is Categorize that also reports which method
// produced the categories: MethodLLM, MethodOutline, MethodHeadings or
// MethodNone.
func CategorizeWithMethod(ctx context.Context, doc Document, pdfPath string, opt CategorizeOptions) ([]string, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", fmt.Errorf("categorising %s: %w", doc.Source, err)
	}
	n := len(doc.Pages)
	if n == 0 {
		return nil, MethodNone, nil
	}
	warn := opt.Warn
	if warn == nil {
		warn = func(string) {}
	}
	if opt.LLM != nil {
		cats, err := categorizeLLM(ctx, doc, opt)
		if err == nil {
			return cats, MethodLLM, nil
		}
		if ctx.Err() != nil {
			return nil, "", fmt.Errorf("categorising %s: %w", doc.Source, ctx.Err())
		}
		warn(fmt.Sprintf("%s: LLM categorisation failed (%v); using the outline or headings instead", doc.Source, oneLineText(err.Error())))
	}
	front := FrontMatterEN
	if isMostlyJapanese(doc) {
		front = FrontMatterJA
	}
	if pdfPath != "" && doc.Kind == PDF {
		items, err := readOutline(ctx, opt.PDFToHTML, pdfPath)
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", fmt.Errorf("categorising %s: %w", doc.Source, ctx.Err())
			}
			warn(fmt.Sprintf("%s: cannot read the PDF outline (%v); using headings", doc.Source, oneLineText(err.Error())))
		}
		if cats := outlineCategories(items, n, front); cats != nil {
			return cats, MethodOutline, nil
		}
	}
	if cats := headingCategories(doc, front); cats != nil {
		return cats, MethodHeadings, nil
	}
	cats := make([]string, n)
	for i := range cats {
		cats[i] = Uncategorized
	}
	return cats, MethodNone, nil
}

// CategorizedPageFile is PageFile with a category folder between the
// document folder and the page file:
//
//	CategorizedPageFile("./database", File{Rel: "冷蔵庫/r_h54xg_b.pdf", Stem: "r_h54xg_b"}, "操作と機能", 8)
//	== "database/冷蔵庫/r_h54xg_b/操作と機能/page_008.md"
//
// category is passed through SanitizeFolder; an empty category gives the
// plain PageFile identity.
func CategorizedPageFile(dbDir string, f File, category string, page int) string {
	if category == "" {
		return PageFile(dbDir, f, page)
	}
	return path.Join(DocumentDir(dbDir, f), SanitizeFolder(category), pageName(page))
}

// isMostlyJapanese reports whether most letters of doc are Japanese script.
func isMostlyJapanese(doc Document) bool {
	ja, other := 0, 0
	for _, p := range doc.Pages {
		for _, r := range p.Text {
			switch {
			case isJapaneseRune(r):
				ja++
			case r < 0x80 && (r|0x20) >= 'a' && (r|0x20) <= 'z':
				other++
			}
		}
		if ja+other > 20000 {
			break
		}
	}
	return ja > 0 && ja*2 >= other
}

// isJapaneseRune reports whether r is Han, Hiragana, Katakana or the
// prolonged sound mark.
func isJapaneseRune(r rune) bool {
	switch {
	case r >= 0x3040 && r <= 0x30ff, // hiragana, katakana
		r >= 0x3400 && r <= 0x4dbf, // CJK extension A
		r >= 0x4e00 && r <= 0x9fff, // CJK unified
		r >= 0xf900 && r <= 0xfaff, // CJK compatibility
		r >= 0xff66 && r <= 0xff9f, // half-width katakana
		r >= 0x2e80 && r <= 0x2fdf: // radicals (PDF extraction produces these)
		return true
	}
	return false
}

// oneLineText collapses white space so s fits on one line.
func oneLineText(s string) string {
	out := make([]rune, 0, len(s))
	space := false
	for _, r := range s {
		if r == '\n' || r == '\r' || r == '\t' || r == ' ' {
			space = true
			continue
		}
		if space && len(out) > 0 {
			out = append(out, ' ')
		}
		space = false
		out = append(out, r)
	}
	return string(out)
}
