package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"golang.org/x/text/unicode/norm"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/proc"
	"github.com/shirube/shirube/internal/retrieve"
)

// SourceResponse is the reply of GET /api/source/{chunk_id}.
type SourceResponse struct {
	ChunkID string `json:"chunk_id"`
	Title   string `json:"title"`
	Page    int    `json:"page"`
	Label   string `json:"label"`
	Path    string `json:"path"` // source file relative to the data folder
	Heading string `json:"heading"`
	HTML    string `json:"html"`
	FileURL string `json:"file_url"`
	// ImageURL is the PDF page as an image ("" for other files).
	ImageURL string `json:"image_url"`
}

// escapePath URL-escapes each segment of a slash-separated path.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// label is how a source is named to people: its title and page.
func label(title string, page int) string {
	if page > 0 {
		return fmt.Sprintf("%s p.%d", title, page)
	}
	return title
}

// fileURL is the link to a source file at a page ("" when the file is not
// served).
func (s *Server) fileURL(cat *catalog, source string, page int) string {
	if source == "" {
		return ""
	}
	if _, ok := cat.sources[source]; !ok {
		return ""
	}
	u := "/files/" + escapePath(source)
	if strings.EqualFold(path.Ext(source), ".pdf") && page > 0 {
		u += fmt.Sprintf("#page=%d", page)
	}
	return u
}

// baseCitations are the citations of a reply as the evidence names them:
// page file and number, excerpt cut to answer.MaxExcerptRunes, the page
// folder's name as title. Refusals cite nothing.
func baseCitations(rep assistant.Reply) []Citation {
	if rep.Refused() {
		return []Citation{}
	}
	out := make([]Citation, 0, len(rep.Evidence))
	for _, e := range rep.Evidence {
		c := Citation{N: e.N, File: e.File, Page: e.Page, Heading: e.Heading, Score: e.Score, Excerpt: cut(e.Excerpt, answer.MaxExcerptRunes)}
		c.Title = path.Base(path.Dir(e.File))
		c.Label = label(c.Title, c.Page)
		out = append(out, c)
	}
	return out
}

// citations turns the evidence of a reply into citations that name the
// chunk, the document's title and its page. The chunk is the search
// result the evidence came from (same page and heading, holding its
// excerpt); without an index the citation keeps the page folder's name.
func (s *Server) citations(ctx context.Context, rep assistant.Reply) []Citation {
	out := baseCitations(rep)
	cat, err := s.catalog(ctx)
	if err != nil {
		return out
	}
	for i, e := range rep.Evidence {
		c := &out[i]
		if ch, ok := evidenceChunk(ctx, cat, rep.SearchResults, e); ok {
			c.ChunkID = ch.ID
			c.SourceURL = "/source/" + escapePath(ch.ID) + "#hit"
			c.FileURL = s.fileURL(cat, ch.Source, ch.Page)
		}
		if d := cat.doc(e.File); d != nil {
			c.Title = d.titleOf(s.opt.DataDir, s.opt.DatabaseDir)
			c.Label = label(c.Title, c.Page)
		}
	}
	return out
}

// evidenceChunk finds the chunk a piece of evidence was taken from: among
// the search results (else the page's chunks) with its page and heading,
// the one holding its excerpt, else the first.
func evidenceChunk(ctx context.Context, cat *catalog, results []retrieve.Result, e answer.Evidence) (chunk.Chunk, bool) {
	ex := normText(strings.TrimSuffix(strings.TrimSpace(e.Excerpt), "..."))
	if len([]rune(ex)) > 40 {
		ex = string([]rune(ex)[:40])
	}
	var first string
	for _, r := range results {
		if r.File != e.File || r.Heading != e.Heading {
			continue
		}
		if first == "" {
			first = r.ChunkID
		}
		if ex != "" && strings.Contains(normText(r.Text), ex) {
			return cat.chunk(ctx, r.ChunkID)
		}
	}
	var firstCh *chunk.Chunk
	for _, ch := range cat.chunksOf(ctx, e.File) {
		if ch.Heading != e.Heading {
			continue
		}
		if ex != "" && strings.Contains(normText(ch.Text), ex) {
			return ch, true
		}
		if firstCh == nil {
			c := ch
			firstCh = &c
		}
	}
	if first != "" {
		return cat.chunk(ctx, first)
	}
	if firstCh != nil {
		return *firstCh, true
	}
	return chunk.Chunk{}, false
}

// normText is text reduced for matching passages: NFKC, without white
// space and Markdown punctuation.
func normText(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	for _, r := range s {
		if unicode.IsSpace(r) || strings.ContainsRune("#*_`|>-~[]()!\\", r) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// chunkBody is a chunk's text without the heading lines prefixed to it.
func chunkBody(text string) string {
	lines := strings.Split(text, "\n")
	i := 0
	for i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "#") {
		i++
	}
	if i == len(lines) {
		return text
	}
	return strings.Join(lines[i:], "\n")
}

// errSourceNotFound answers a chunk id the served index does not hold.
var errSourceNotFound = &requestError{status: http.StatusNotFound, code: "source_not_found",
	msg: "引用元が見つかりません — インデックスが再構築された可能性があります。質問をもう一度送ってください"}

// source resolves a chunk id to its page, rendered with the passage marked.
func (s *Server) source(ctx context.Context, id string) (SourceResponse, error) {
	cat, err := s.catalog(ctx)
	if err != nil {
		return SourceResponse{}, err
	}
	ch, ok := cat.chunk(ctx, id)
	if !ok {
		return SourceResponse{}, errSourceNotFound
	}
	title := path.Base(path.Dir(ch.File))
	if d := cat.doc(ch.File); d != nil {
		title = d.titleOf(s.opt.DataDir, s.opt.DatabaseDir)
	}
	page, err := os.ReadFile(pageOnDisk(s.opt.DatabaseDir, ch.File))
	if err != nil {
		// The page database is not where the server looks: show the
		// chunk itself.
		page = []byte(ch.Text)
	}
	return SourceResponse{
		ChunkID: ch.ID, Title: title, Page: ch.Page, Label: label(title, ch.Page), Path: ch.Source,
		Heading: ch.Heading, HTML: string(s.page.md.renderMarked(string(page), ch.Text)),
		FileURL: s.fileURL(cat, ch.Source, ch.Page), ImageURL: s.pageImageURL(cat, ch.Source, ch.Page),
	}, nil
}

// renderMarked renders a page's Markdown, sanitised, with the top-level
// blocks that hold passage wrapped in one <mark id="hit">. A block holds
// the passage when the passage's body contains it, or it contains the
// passage's first or last words (a chunk window may start or end inside a
// block).
func (m *markdown) renderMarked(page, passage string) template.HTML {
	src := []byte(page)
	doc := m.md.Parser().Parse(text.NewReader(src))
	body := normText(chunkBody(passage))
	head, tail := edge(body, true), edge(body, false)
	var blocks []ast.Node
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		blocks = append(blocks, n)
	}
	first, last := -1, -1
	for i, n := range blocks {
		t := normText(blockText(n, src))
		if t == "" || body == "" {
			continue
		}
		if strings.Contains(body, t) || (head != "" && strings.Contains(t, head)) || (tail != "" && strings.Contains(t, tail)) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	var out bytes.Buffer
	for i, n := range blocks {
		if i == first {
			out.WriteString(`<mark id="hit" class="hit">`)
		}
		var buf bytes.Buffer
		if err := m.md.Renderer().Render(&buf, src, n); err != nil {
			buf.Reset()
			buf.WriteString("<p>" + template.HTMLEscapeString(blockText(n, src)) + "</p>")
		}
		out.Write(m.policy.SanitizeBytes(buf.Bytes()))
		if i == last {
			out.WriteString(`</mark>`)
		}
	}
	return template.HTML(out.String()) // #nosec: each block sanitised, the mark is ours
}

// edge is the first (or last) 16 characters of a normalised passage, or ""
// when it is shorter.
func edge(s string, first bool) string {
	r := []rune(s)
	const n = 16
	if len(r) < n {
		return ""
	}
	if first {
		return string(r[:n])
	}
	return string(r[len(r)-n:])
}

// blockText is the Markdown source of a block node.
func blockText(n ast.Node, src []byte) string {
	start, stop := -1, -1
	var walk func(ast.Node)
	walk = func(x ast.Node) {
		if x.Type() == ast.TypeBlock {
			lines := x.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				if start < 0 || seg.Start < start {
					start = seg.Start
				}
				if seg.Stop > stop {
					stop = seg.Stop
				}
			}
		}
		for c := x.FirstChild(); c != nil; c = c.NextSibling() {
			walk(c)
		}
	}
	walk(n)
	if start < 0 || stop > len(src) || start > stop {
		return ""
	}
	return string(src[start:stop])
}

// handleAPISource answers GET /api/source/{chunk_id...}.
func (s *Server) handleAPISource(w http.ResponseWriter, r *http.Request) {
	res, err := s.source(r.Context(), r.PathValue("id"))
	if err != nil {
		writeRequestError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// sourcePage is the full HTML page of GET /source/{chunk_id...}: the
// server's style sheet, no script.
var sourcePage = template.Must(template.New("source").Parse(`<!doctype html>
<html lang="ja"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Label}} — shirube</title><link rel="icon" href="/favicon.ico"><link rel="stylesheet" href="/static/style.css"></head>
<body class="source-page"><main class="source-view">
<header class="source-head"><h1 class="source-title">{{.Title}}</h1>
<p class="source-meta">{{if .Page}}p.{{.Page}}{{end}}{{if .Heading}} — {{.Heading}}{{end}}{{if .FileURL}} · <a href="{{.FileURL}}" target="_blank" rel="noopener">元のファイルを開く</a>{{end}}</p></header>
<div class="source-columns"><article class="source-body">{{.Body}}</article>
{{- if .ImageURL}}<figure class="source-image"><img src="{{.ImageURL}}" alt="{{.Label}} の元のページ" loading="lazy"></figure>{{end}}</div>
</main></body></html>
`))

// handleSourcePage answers GET /source/{chunk_id...} with a page of its own.
func (s *Server) handleSourcePage(w http.ResponseWriter, r *http.Request) {
	res, err := s.source(r.Context(), r.PathValue("id"))
	if err != nil {
		var re *requestError
		status, msg := http.StatusInternalServerError, "引用元を表示できません"
		if errors.As(err, &re) {
			status, msg = re.status, re.msg
		}
		s.errorPage(w, status, msg)
		return
	}
	var buf bytes.Buffer
	err = sourcePage.Execute(&buf, struct {
		SourceResponse
		Body template.HTML
	}{res, template.HTML(res.HTML)}) // #nosec: sanitised by renderMarked
	if err != nil {
		s.errorPage(w, http.StatusInternalServerError, "引用元を表示できません")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = buf.WriteTo(w)
}

// errNotIndexed is a source path the served index does not hold.
var errNotIndexed = errors.New("not a source of the served index")

// indexedSource checks that rel (slash-separated, relative to the data
// folder) is a source of the served index and returns the catalogue and
// its document folder.
func (s *Server) indexedSource(r *http.Request, rel string) (*catalog, string, error) {
	if rel == "" || !fs.ValidPath(rel) || strings.Contains(rel, "\\") {
		return nil, "", errNotIndexed
	}
	cat, err := s.catalog(r.Context())
	if err != nil {
		return nil, "", err
	}
	dir, ok := cat.sources[rel]
	if !ok {
		return nil, "", errNotIndexed
	}
	return cat, dir, nil
}

// handleFile answers GET /files/{path...}: the original file of a document
// of the served index, read through an os.Root of the data folder so that
// neither ".." nor a symbolic link reaches outside it. PDFs are shown
// inline (#page=N works); other files are downloads, so an HTML document
// never runs in the server's origin.
func (s *Server) handleFile(w http.ResponseWriter, r *http.Request) {
	notFound := func() {
		writeError(w, http.StatusNotFound, "file_not_found", "ファイルが見つかりません — 引用元のリンクから開いてください")
	}
	rel := r.PathValue("path")
	if _, _, err := s.indexedSource(r, rel); err != nil {
		if errors.Is(err, errNoIndex) {
			writeRequestError(w, err)
		} else {
			notFound()
		}
		return
	}
	root, err := os.OpenRoot(s.opt.DataDir)
	if err != nil {
		notFound()
		return
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		notFound()
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		notFound()
		return
	}
	name := path.Base(rel)
	disp := "attachment"
	if strings.EqualFold(path.Ext(rel), ".pdf") {
		disp = "inline"
		w.Header().Set("Content-Type", "application/pdf")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	w.Header().Set("Content-Disposition", disp+"; filename*=UTF-8''"+url.PathEscape(name))
	w.Header().Set("Cache-Control", "private, no-cache")
	http.ServeContent(w, r, name, st.ModTime(), f)
}

// pageImageDPI is the resolution of the PDF page images of the viewer.
const pageImageDPI = 110

// pageImageURL is the link to the image of a PDF page ("" for other files).
func (s *Server) pageImageURL(cat *catalog, source string, page int) string {
	if page < 1 || !strings.EqualFold(path.Ext(source), ".pdf") {
		return ""
	}
	if _, ok := cat.sources[source]; !ok {
		return ""
	}
	return fmt.Sprintf("/page-image/%s?page=%d", escapePath(source), page)
}

// handlePageImage answers GET /page-image/{path...}?page=N: page N of an
// indexed PDF as a PNG, rendered by pdftoppm on first request and cached
// under the state folder.
func (s *Server) handlePageImage(w http.ResponseWriter, r *http.Request) {
	notFound := func() {
		writeError(w, http.StatusNotFound, "page_image_not_found", "ページの画像がありません — 元のファイルを開いてください")
	}
	rel := r.PathValue("path")
	page, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || page < 1 || !strings.EqualFold(path.Ext(rel), ".pdf") {
		notFound()
		return
	}
	cat, dir, err := s.indexedSource(r, rel)
	if errors.Is(err, errNoIndex) {
		writeRequestError(w, err)
		return
	}
	if err != nil || !cat.docs[dir].pages[page] {
		notFound()
		return
	}
	src, err := s.sourceFile(rel)
	if err != nil {
		notFound()
		return
	}
	st, err := os.Stat(src)
	if err != nil {
		notFound()
		return
	}
	key := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d\x00%d", rel, st.Size(), st.ModTime().UnixNano(), page))
	cached := filepath.Join(s.opt.StateDir, "page-images", hex.EncodeToString(key[:16])+".png")
	if _, err := os.Stat(cached); err != nil {
		if err := renderPDFPage(r.Context(), src, page, cached); err != nil {
			s.opt.Logger.LogAttrs(r.Context(), slog.LevelWarn, "page image not rendered", slog.String("error", err.Error()))
			notFound()
			return
		}
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "private, max-age=3600")
	http.ServeFile(w, r, cached)
}

// sourceFile is the path of an indexed source inside the data folder,
// resolved through os.Root so that it cannot leave it.
func (s *Server) sourceFile(rel string) (string, error) {
	root, err := os.OpenRoot(s.opt.DataDir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return "", err
	}
	f.Close()
	return filepath.Join(s.opt.DataDir, filepath.FromSlash(rel)), nil
}

// renderPDFPage writes page of the PDF src as a PNG to out (pdftoppm).
func renderPDFPage(ctx context.Context, src string, page int, out string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tmp := out + ".tmp"
	p := strconv.Itoa(page)
	cmd := proc.Command(ctx, "pdftoppm", "-png", "-r", strconv.Itoa(pageImageDPI), "-f", p, "-l", p, "-singlefile", src, tmp)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pdftoppm: %w: %s", err, strings.TrimSpace(string(b)))
	}
	return os.Rename(tmp+".png", out)
}
