package document

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/llm"
)

// summaryRunes is how much of each page the LLM sees when categorising.
const summaryRunes = 240

// categorizeSystem is the system prompt of an LLM categorisation request.
const categorizeSystem = `You organise the pages of one document into semantic sections, like the chapters of a product manual (for example 「安全上の注意」「設置」「操作と機能」「お手入れ」「故障かな？と思ったら」).

You get a short summary of each page: "[page N] text…".
Return JSON of exactly this shape:
{"pages": [{"page": 1, "category": "section name"}, …]}
Rules:
- one entry for every page you were given, in page order;
- consecutive pages on the same topic share a category; use 3 to 12 categories for the whole document;
- a category is a short noun phrase (at most 20 characters) describing the topic, without numbering; write it in the language of the document (Japanese for a Japanese document);
- the cover, table of contents and revision history form one category (「表紙・目次」 in Japanese);
- reuse a category given under "Categories so far" when the topic continues.`

// llmPageCategory is one entry of the model's answer.
type llmPageCategory struct {
	Page     int    `json:"page"`
	Category string `json:"category"`
}

// categorizeLLM asks opt.LLM to name a section for every page of doc, in
// batches of opt.PagesPerRequest pages. Any failure or unusable answer is
// an error; the caller falls back to the offline methods.
func categorizeLLM(ctx context.Context, doc Document, opt CategorizeOptions) ([]string, error) {
	per := opt.PagesPerRequest
	if per <= 0 {
		per = 40
	}
	n := len(doc.Pages)
	cats := make([]string, n)
	var sofar []string
	for start := 0; start < n; start += per {
		end := min(start+per, n)
		var b strings.Builder
		fmt.Fprintf(&b, "Document: %s (%d pages)\n", doc.Source, n)
		if len(sofar) > 0 {
			fmt.Fprintf(&b, "Categories so far: %s\n", strings.Join(sofar, " / "))
		}
		b.WriteString("\nPages:\n")
		for i := start; i < end; i++ {
			fmt.Fprintf(&b, "[page %d] %s\n", pageNo(doc.Pages[i], i), pageSummary(doc.Pages[i].Text))
		}
		temp := 0.0
		resp, err := opt.LLM.Complete(ctx, llm.Request{
			Model:       opt.Model,
			System:      categorizeSystem,
			Messages:    []llm.Message{{Role: llm.RoleUser, Content: b.String()}},
			Temperature: &temp,
			JSON:        true,
			MaxTokens:   64 + 40*(end-start),
		})
		if err != nil {
			return nil, fmt.Errorf("pages %d–%d: %w", start+1, end, err)
		}
		got, err := parseLLMCategories(resp.Text)
		if err != nil {
			return nil, fmt.Errorf("pages %d–%d: %w", start+1, end, err)
		}
		byPage := map[int]string{}
		for _, g := range got {
			if name := strings.TrimSpace(g.Category); name != "" {
				byPage[g.Page] = SanitizeFolder(sectionTitle(name))
			}
		}
		covered := 0
		for i := start; i < end; i++ {
			if _, ok := byPage[pageNo(doc.Pages[i], i)]; ok {
				covered++
			}
		}
		if covered*2 < end-start {
			return nil, fmt.Errorf("pages %d–%d: the model categorised only %d of %d pages", start+1, end, covered, end-start)
		}
		for i := start; i < end; i++ {
			c, ok := byPage[pageNo(doc.Pages[i], i)]
			switch {
			case ok:
			case i > 0:
				c = cats[i-1] // a page the model skipped continues the previous one
			default:
				c = firstCategory(got)
			}
			cats[i] = c
			if !slices.Contains(sofar, c) {
				sofar = append(sofar, c)
			}
		}
	}
	return cats, nil
}

// parseLLMCategories decodes the model's {"pages": [...]} answer.
func parseLLMCategories(text string) ([]llmPageCategory, error) {
	var out struct {
		Pages []llmPageCategory `json:"pages"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &out); err != nil {
		return nil, fmt.Errorf("malformed JSON from the model: %v", err)
	}
	if len(out.Pages) == 0 {
		return nil, fmt.Errorf(`the model's JSON has no "pages" entries`)
	}
	return out.Pages, nil
}

// firstCategory is the first usable category in got, or Uncategorized.
func firstCategory(got []llmPageCategory) string {
	for _, g := range got {
		if strings.TrimSpace(g.Category) != "" {
			return SanitizeFolder(sectionTitle(g.Category))
		}
	}
	return Uncategorized
}

// pageNo is p's number, or its position when the number is unset.
func pageNo(p Page, i int) int {
	if p.Number > 0 {
		return p.Number
	}
	return i + 1
}

// pageSummary is the start of a page's text on one line, at most
// summaryRunes characters.
func pageSummary(text string) string {
	s := oneLineText(text)
	if s == "" {
		return "(blank page)"
	}
	if utf8.RuneCountInString(s) <= summaryRunes {
		return s
	}
	r := []rune(s)
	return string(r[:summaryRunes]) + "…"
}
