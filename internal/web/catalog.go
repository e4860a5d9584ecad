package web

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/proc"
	"github.com/shirube/shirube/internal/retrieve"
)

// catalog is what the served index holds, read once per index generation:
// where each chunk is, which documents and source files exist, their
// titles, and the headings the first screen's example questions come from.
// It answers "is this chunk / file part of the served index?" — the only
// files /files serves and the only pages /source renders.
type catalog struct {
	store   retrieve.Store
	byID    map[string]int      // chunk id → store position
	byFile  map[string][]int    // page identity → store positions, in order
	docs    map[string]*docInfo // document folder identity → document
	order   []string            // document folders in index order
	sources map[string]string   // source path (relative to the data folder) → document folder
	pages   int
	updated time.Time // newest source modification time; zero when unknown
}

// docInfo is one document of the index.
type docInfo struct {
	dir      string // database/<folder>/<stem>
	source   string // source path relative to the data folder
	pages    map[int]bool
	first    string   // first page identity
	headings []string // distinct heading paths, in order

	titleOnce sync.Once
	title     string
}

// catalogs keeps the catalogue of the generation being served.
type catalogs struct {
	mu  sync.Mutex
	key *retrieve.Searcher
	cat *catalog
}

// get returns the catalogue of s, building it on first use.
func (c *catalogs) get(ctx context.Context, s *retrieve.Searcher) (*catalog, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.key == s && c.cat != nil {
		return c.cat, nil
	}
	cat, err := buildCatalog(ctx, s.Index())
	if err != nil {
		return nil, err
	}
	c.key, c.cat = s, cat
	return cat, nil
}

// catalog returns the served index's catalogue, or errNoIndex.
func (s *Server) catalog(ctx context.Context) (*catalog, error) {
	searcher := s.asst.Searcher()
	if searcher == nil {
		return nil, errNoIndex
	}
	cat, err := s.catalogs.get(ctx, searcher)
	if err != nil {
		return nil, fmt.Errorf("read the index's contents: %w", err)
	}
	return cat, nil
}

// buildCatalog reads every chunk of st once (in batches).
func buildCatalog(ctx context.Context, st retrieve.Store) (*catalog, error) {
	c := &catalog{
		store: st, byID: map[string]int{}, byFile: map[string][]int{},
		docs: map[string]*docInfo{}, sources: map[string]string{},
	}
	const batch = 512
	n := st.Len()
	ids := make([]int, 0, batch)
	for start := 0; start < n; start += batch {
		ids = ids[:0]
		for i := start; i < min(n, start+batch); i++ {
			ids = append(ids, i)
		}
		chunks, err := st.Chunks(ctx, ids)
		if err != nil {
			return nil, err
		}
		for i, ch := range chunks {
			c.add(ids[i], ch)
		}
	}
	return c, nil
}

// add records chunk ch at position pos.
func (c *catalog) add(pos int, ch chunk.Chunk) {
	c.byID[ch.ID] = pos
	if _, seen := c.byFile[ch.File]; !seen {
		c.pages++
	}
	c.byFile[ch.File] = append(c.byFile[ch.File], pos)
	dir := path.Dir(ch.File)
	d := c.docs[dir]
	if d == nil {
		d = &docInfo{dir: dir, source: ch.Source, pages: map[int]bool{}, first: ch.File}
		c.docs[dir] = d
		c.order = append(c.order, dir)
		if ch.Source != "" {
			if _, taken := c.sources[ch.Source]; !taken {
				c.sources[ch.Source] = dir
			}
		}
	}
	d.pages[ch.Page] = true
	if ch.Heading != "" && (len(d.headings) == 0 || d.headings[len(d.headings)-1] != ch.Heading) && len(d.headings) < 64 {
		d.headings = append(d.headings, ch.Heading)
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04:05", ch.UpdatedAt, time.Local); err == nil && t.After(c.updated) {
		c.updated = t
	}
}

// chunk returns the chunk with id.
func (c *catalog) chunk(ctx context.Context, id string) (chunk.Chunk, bool) {
	pos, ok := c.byID[id]
	if !ok {
		return chunk.Chunk{}, false
	}
	chs, err := c.store.Chunks(ctx, []int{pos})
	if err != nil || len(chs) != 1 {
		return chunk.Chunk{}, false
	}
	return chs[0], true
}

// chunksOf returns the chunks of one page, in order.
func (c *catalog) chunksOf(ctx context.Context, file string) []chunk.Chunk {
	pos := c.byFile[file]
	if len(pos) == 0 {
		return nil
	}
	chs, err := c.store.Chunks(ctx, pos)
	if err != nil {
		return nil
	}
	return chs
}

// doc returns the document a page identity belongs to.
func (c *catalog) doc(file string) *docInfo { return c.docs[path.Dir(file)] }

// documents is the number of documents in the index.
func (c *catalog) documents() int { return len(c.docs) }

// title returns the document's title, found once: an HTML source's
// <title>, a PDF's Title metadata (pdfinfo), else the first heading of its
// first page, else its file name.
func (d *docInfo) titleOf(dataDir, dbDir string) string {
	d.titleOnce.Do(func() { d.title = findTitle(d, dataDir, dbDir) })
	return d.title
}

func findTitle(d *docInfo, dataDir, dbDir string) string {
	src := filepath.Join(dataDir, filepath.FromSlash(d.source))
	switch strings.ToLower(path.Ext(d.source)) {
	case ".html", ".htm":
		if t := htmlTitle(src); t != "" {
			return t
		}
	case ".pdf":
		if t := pdfTitle(src); t != "" {
			return t
		}
	}
	if t := firstHeading(pageOnDisk(dbDir, d.first)); t != "" {
		return t
	}
	if len(d.headings) > 0 {
		if first, _, _ := strings.Cut(d.headings[0], " > "); first != "" {
			return first
		}
	}
	base := path.Base(d.source)
	if d.source == "" {
		base = path.Base(d.dir)
	}
	return strings.TrimSuffix(base, path.Ext(base))
}

var titleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

// htmlTitle reads the <title> of an HTML file (its first 64 KiB).
func htmlTitle(name string) string {
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := f.Read(buf)
	m := titleRE.FindSubmatch(buf[:n])
	if m == nil || !utf8.Valid(m[1]) {
		return ""
	}
	return cleanTitle(html.UnescapeString(string(m[1])))
}

// pdfTitle reads a PDF's Title metadata with pdfinfo (absent: "").
func pdfTitle(name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := proc.Command(ctx, "pdfinfo", "-enc", "UTF-8", name).Output()
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Title:"); ok {
			t := cleanTitle(v)
			low := strings.ToLower(t)
			// Word's and printers' placeholders are no title.
			if strings.HasPrefix(low, "microsoft word") || strings.HasSuffix(low, ".doc") || strings.HasSuffix(low, ".docx") || low == "untitled" {
				return ""
			}
			return t
		}
	}
	return ""
}

// firstHeading is the text of the first ATX heading of a Markdown file.
func firstHeading(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") {
			if h := cleanTitle(strings.TrimLeft(t, "# ")); h != "" {
				return h
			}
		}
	}
	return ""
}

// cleanTitle folds white space and cuts a title to 80 characters.
func cleanTitle(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 80 {
		s = string([]rune(s)[:79]) + "…"
	}
	return s
}

// pageOnDisk is the file of a page identity: the identity's first element
// is the database folder's base name, which dbDir replaces.
func pageOnDisk(dbDir, id string) string {
	_, rest, ok := strings.Cut(id, "/")
	if !ok {
		return ""
	}
	return filepath.Join(dbDir, filepath.FromSlash(rest))
}

// Example questions of the first screen.
const (
	minExamples = 4
	maxExamples = 6
)

// genericHeadings are sections every document has; no one asks about them.
var genericHeadings = []string{"概要", "はじめに", "目的", "適用範囲", "改訂履歴", "変更履歴", "付録", "参考", "参考資料",
	"関連文書", "関連規程", "用語", "用語の定義", "定義", "附則", "お問い合わせ", "問い合わせ先", "目次", "本書について"}

// headingNumber is a section number in front of a heading: 1. / 3.2 / (1) / 第3章 / ① …
var headingNumber = regexp.MustCompile(`^(?:第[0-9０-９一二三四五六七八九十百]+[章節条項款編]|[(（]?[0-9０-９]+(?:[.．][0-9０-９]+)*[.．)）、]?|[①-⑳])\s*`)

// examples returns 4–6 questions made from the corpus's headings: one per
// document first (in index order), then further ones, the same for the
// same index.
func (c *catalog) examples(title func(*docInfo) string) []string {
	var out []string
	seen := map[string]bool{}
	for round := 0; round < 3 && len(out) < maxExamples; round++ {
		for _, dir := range c.order {
			if len(out) >= maxExamples {
				break
			}
			d := c.docs[dir]
			cands := exampleHeadings(d.headings)
			if round < len(cands) {
				h := cands[round]
				if utf8.RuneCountInString(h) < 8 {
					// 利用条件 alone says little: whose?
					if t := strings.TrimSpace(strings.Split(title(d), "|")[0]); t != "" && !strings.Contains(h, t) && utf8.RuneCountInString(t) <= 20 {
						h = t + "の" + h
					}
				}
				q := h + "について教えてください"
				if strings.HasSuffix(h, "手順") || strings.HasSuffix(h, "方法") {
					q = h + "を教えてください"
				}
				if !seen[q] {
					seen[q] = true
					out = append(out, q)
				}
			}
		}
		if len(out) >= minExamples && round == 0 && len(c.order) >= minExamples {
			break
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// exampleHeadings picks a document's headings worth asking about: the
// deepest part of each heading path, numbering removed, 4–30 characters,
// not a generic section; sections before whole-document titles.
func exampleHeadings(paths []string) []string {
	var deep, top []string
	seen := map[string]bool{}
	for _, p := range paths {
		parts := strings.Split(p, " > ")
		out := &deep
		if len(parts) == 1 {
			out = &top // a document's title: asked about last
		}
		h := strings.TrimSpace(headingNumber.ReplaceAllString(strings.TrimSpace(parts[len(parts)-1]), ""))
		h = strings.Trim(h, " 　:：")
		n := utf8.RuneCountInString(h)
		if n < 4 || n > 30 || seen[h] || generic(h) || !hasJapanese(h) {
			continue
		}
		seen[h] = true
		*out = append(*out, h)
	}
	return append(deep, top...)
}

func generic(h string) bool {
	for _, g := range genericHeadings {
		if h == g {
			return true
		}
	}
	// 目的と適用範囲, 目的と前提, 改訂履歴（2024年）…
	for _, p := range []string{"目的", "適用範囲", "改訂", "変更履歴", "概要", "はじめに"} {
		if strings.HasPrefix(h, p) {
			return true
		}
	}
	return false
}

func hasJapanese(s string) bool {
	for _, r := range s {
		if (r >= 0x3040 && r <= 0x30ff) || (r >= 0x4e00 && r <= 0x9fff) {
			return true
		}
	}
	return false
}
