package document

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// OutlineItem is one entry of a PDF outline (bookmark).
type OutlineItem struct {
	Title string
	Page  int // 1-based page the entry points to
	Depth int // 0 for top-level entries
}

// readOutline returns the outline of the PDF at pdfPath, read with
// `pdftohtml -xml -i -q -stdout -f 1 -l 1`, which prints the whole outline
// as nested <outline><item page="N">title</item>…</outline> elements after
// the first page. A missing tool gives no items and no error.
func readOutline(ctx context.Context, tool, pdfPath string) ([]OutlineItem, error) {
	if tool == "" {
		tool = "pdftohtml"
	}
	bin, err := exec.LookPath(tool)
	if err != nil {
		return nil, nil
	}
	run, err := runTool(ctx, 0, bin, "-xml", "-i", "-q", "-nodrm", "-stdout", "-f", "1", "-l", "1", pdfPath)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if d := firstLine(run.stderr.String()); d != "" {
			return nil, fmt.Errorf("pdftohtml: %s", d)
		}
		return nil, fmt.Errorf("pdftohtml: %w", err)
	}
	return parseOutlineXML(run.stdout.Bytes())
}

// parseOutlineXML extracts the outline items from pdftohtml -xml output.
// Items whose page attribute is missing or not a positive number are
// skipped. Text outside <outline> is ignored, so the page content may be
// malformed without harm as long as the outline itself is well formed.
func parseOutlineXML(data []byte) ([]OutlineItem, error) {
	i := bytes.Index(data, []byte("<outline"))
	if i < 0 {
		return nil, nil
	}
	dec := lenientXML(bytes.NewReader(data[i:]))
	var items []OutlineItem
	depth := -1
	var cur *OutlineItem
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if len(items) > 0 {
				break // keep what was read before the damage
			}
			return nil, fmt.Errorf("reading outline: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "outline":
				depth++
			case "item":
				cur = &OutlineItem{Depth: max(depth, 0)}
				for _, a := range t.Attr {
					if a.Name.Local == "page" {
						cur.Page, _ = strconv.Atoi(strings.TrimSpace(a.Value))
					}
				}
				text.Reset()
			}
		case xml.CharData:
			if cur != nil {
				text.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "outline":
				depth--
				if depth < 0 {
					return items, nil
				}
			case "item":
				if cur != nil && cur.Page > 0 {
					cur.Title = strings.TrimSpace(oneLineText(text.String()))
					if cur.Title != "" {
						items = append(items, *cur)
					}
				}
				cur = nil
			}
		}
	}
	return items, nil
}

// outlineCategories assigns each of n pages the cleaned title of the last
// outline entry of the chosen depth that starts on or before it. The depth
// is the shallowest one with at least two distinct titles; pages before the
// first entry get front. It returns nil when the outline is of no use.
func outlineCategories(items []OutlineItem, n int, front string) []string {
	var chosen []OutlineItem
	for depth := 0; depth <= 3 && chosen == nil; depth++ {
		var level []OutlineItem
		titles := map[string]bool{}
		for _, it := range items {
			if it.Depth == depth && it.Page <= n {
				level = append(level, it)
				titles[sectionTitle(it.Title)] = true
			}
		}
		if len(titles) >= 2 {
			chosen = level
		}
	}
	if chosen == nil {
		return nil
	}
	cats := make([]string, n)
	for p := 1; p <= n; p++ {
		cat := front
		for _, it := range chosen { // in document order; the last one wins
			if it.Page <= p {
				cat = SanitizeFolder(sectionTitle(it.Title))
			}
		}
		cats[p-1] = cat
	}
	return cats
}

// sectionNumber matches the numbering in front of a section title:
// "1.", "1-1.", "２．３", "Ⅲ．１", "(1)", "1)", "Chapter 3:", "第2章" is
// kept (it names the section) and handled by headingPatterns.
var sectionNumber = regexp.MustCompile(`^(?:(?:[0-9０-９]+|[ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩⅪⅫ]+|[IVX]+)(?:\s*[.．\-－・]\s*[0-9０-９]+)*(?:\s*[.．:：、)）]\s*|\s+)|[(（][0-9０-９]+[)）]\s*|(?i:chapter|section|part)\s+[0-9IVX]+\s*[.:：]?\s*)`)

// sectionTitle strips the numbering and decoration from an outline or
// heading title: "Ⅱ．１　本ガイドラインの前提事項" → "本ガイドラインの前提事項",
// "1-1. 脆弱性対策情報の登録状況" → "脆弱性対策情報の登録状況". A title
// that is only a number is kept as it is.
func sectionTitle(title string) string {
	t := strings.TrimSpace(oneLineText(strings.ReplaceAll(title, "\u3000", " ")))
	t = strings.TrimLeft(t, "○●◆◇■□▼▽▶►・")
	t = strings.TrimSpace(t)
	if rest := strings.TrimSpace(sectionNumber.ReplaceAllString(t, "")); rest != "" && rest != t {
		if r, _ := utf8.DecodeRuneInString(rest); r != '.' && r != ',' {
			t = rest
		}
	}
	return t
}
