// Package questions generates the anticipated-question test set of seed
// 000 (`shirube questions`): for every document of the data folder,
// questions whose answers sit on one page, questions whose answers need
// several pages of the same document, and about 10 % questions the
// documents cannot answer, each with
//
//	Question, Ground Truth, Reference Document, Page, Checklist, Generator
//
// Reference Document is the page identity (database/<folder>/<stem>/page_NNN.md;
// several identities are joined by newlines), Page the page numbers joined
// by commas, Checklist one key point per line as "- " bullets, and Generator
// "llm:<model>" or "offline". Unanswerable questions have an empty
// Reference Document and RefusalText as Ground Truth, so the evaluation can
// count true negatives.
//
// With an LLM (Options.LLM) each page, and each group of pages, is sent to
// the model, which answers with JSON; a malformed answer skips that page
// with a one-line reason. Without one, a deterministic generator picks
// salient sentences — those with many rare key phrases and numbers — and
// turns them into cloze or "what does <section> say about <term>" questions
// whose ground truth is the sentence itself. The same Seed gives the same
// output.
package questions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/csvx"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/eval"
)

// RefusalText is the Ground Truth of a question the documents cannot
// answer: the answer the agent gives when it finds no evidence.
const RefusalText = "該当する手順が見つかりませんでした。"

// GeneratorOffline is the Generator cell of rows made without an LLM.
const GeneratorOffline = "offline"

// Question kinds, in Row.Kind.
const (
	KindPage     = "page"     // answer on one page
	KindMulti    = "multi"    // answer needs several pages
	KindNegative = "negative" // not in the documents
)

// Columns returns the header of the question CSV.
func Columns() []string {
	return []string{"Question", "Ground Truth", "Reference Document", "Page", "Checklist", "Generator"}
}

// Row is one generated question.
type Row struct {
	Question    string
	GroundTruth string
	References  []string // page identities; empty for a negative question
	Pages       []int    // page numbers, parallel to References
	Checklist   []string // key points, without bullets
	Generator   string   // "llm:<model>" or GeneratorOffline
	Kind        string   // KindPage, KindMulti or KindNegative
	Source      string   // document the question is about ("" for negatives)
}

// Cells returns the row as CSV cells in Columns order.
func (r Row) Cells() []string {
	pages := make([]string, len(r.Pages))
	for i, p := range r.Pages {
		pages[i] = fmt.Sprint(p)
	}
	items := make([]string, len(r.Checklist))
	for i, c := range r.Checklist {
		items[i] = "- " + c
	}
	return []string{r.Question, r.GroundTruth, strings.Join(r.References, "\n"), strings.Join(pages, ","), strings.Join(items, "\n"), r.Generator}
}

// Options configure Generate. Only DataDir is needed; everything else has
// a default.
type Options struct {
	DataDir     string // source documents; "" means "./data"
	DatabaseDir string // page database, for page identities; "" means "./database"

	// Output is the CSV to write (-o). "" means
	// <ResultsDir>/<Name>_YYYYMMDD_HHMMSS.csv, never overwriting.
	Output     string
	ResultsDir string // "" means "results"
	Name       string // output name prefix; "" means "questions"
	NoWrite    bool   // generate only; Result.Path stays ""

	// LLM writes the page and multi-page questions; nil means the offline
	// generator. Model is the model to ask ("" = the client's default).
	LLM     eval.Completer
	Model   string
	Workers int // parallel LLM requests; 0 means 4

	Seed           int64   // template and page choices; same seed, same output
	PerPage        int     // questions per page; 0 means 1 (3 for one-page documents)
	MinMulti       int     // multi-page questions per document; 0 means 3
	MaxMulti       int     // 0 means 10
	NegativeRatio  float64 // share of "not in the documents" rows; 0 means 0.1, negative disables
	MinPageRunes   int     // pages with less text get no question; 0 means 40
	MaxPromptRunes int     // page text sent to the LLM per page; 0 means 3000
	Extract        document.Options
	Walk           document.WalkOptions

	// Categorize, when set, gives page identities with a category folder
	// (database/<folder>/<stem>/<category>/page_NNN.md) as made by
	// `shirube index --categorize` with the same options.
	Categorize *document.CategorizeOptions

	// PageID overrides how page identities are made (after Categorize);
	// nil means document.PageFile / document.CategorizedPageFile.
	PageID func(f document.File, category string, page int) string

	// Warn receives one-line notes: skipped files and pages, fallbacks.
	Warn func(string)
	// Now stamps the output file name; nil means time.Now.
	Now func() time.Time
}

// Result is what Generate produced.
type Result struct {
	Path      string   // CSV written; "" with NoWrite
	Rows      []Row    // in output order
	Documents int      // documents that gave at least one question
	Skipped   []string // one line per skipped file, page or group
	// Checked counts the offline single-page questions checked against
	// their page (CheckRow); Rejected are those that failed, left out of
	// Rows. Checked − len(Rejected) passed.
	Checked  int
	Rejected []Rejection
}

// Rejection is a generated question CheckRow refused, and why.
type Rejection struct {
	Row Row
	Why string
}

// Generate reads every document of opt.DataDir, makes the questions and
// writes the CSV. Unreadable files, textless pages and unusable LLM
// answers are skipped with a reason in Result.Skipped (and opt.Warn); the
// run only fails when the data folder cannot be used, nothing could be
// generated, the output cannot be written or ctx is done.
func Generate(ctx context.Context, opt Options) (Result, error) {
	opt = withDefaults(opt)
	g := &generator{opt: opt}
	docs, err := g.load(ctx)
	if err != nil {
		return Result{}, err
	}
	var rows []Row
	for _, d := range docs {
		var dr []Row
		if opt.LLM != nil {
			dr, err = g.llmRows(ctx, d)
		} else {
			dr = g.offlineRows(d)
		}
		if err != nil {
			return Result{}, err
		}
		if len(dr) > 0 {
			g.res.Documents++
		}
		rows = append(rows, dr...)
	}
	if len(rows) == 0 {
		return Result{}, fmt.Errorf("no questions could be generated from %s — %s", opt.DataDir, g.emptyHint())
	}
	rows = append(rows, negativeRows(docs, len(rows), opt)...)
	g.res.Rows = rows
	if opt.NoWrite {
		return g.res, nil
	}
	path, err := writeCSV(opt, rows)
	if err != nil {
		return Result{}, err
	}
	g.res.Path = path
	return g.res, nil
}

func withDefaults(opt Options) Options {
	opt.DataDir = cmp.Or(opt.DataDir, "./data")
	opt.DatabaseDir = cmp.Or(opt.DatabaseDir, "./database")
	opt.ResultsDir = cmp.Or(opt.ResultsDir, "results")
	opt.Name = cmp.Or(opt.Name, "questions")
	if opt.Workers <= 0 {
		opt.Workers = 4
	}
	if opt.MinMulti <= 0 {
		opt.MinMulti = 3
	}
	if opt.MaxMulti <= 0 {
		opt.MaxMulti = 10
	}
	opt.MaxMulti = max(opt.MaxMulti, opt.MinMulti)
	if opt.NegativeRatio == 0 {
		opt.NegativeRatio = 0.1
	}
	if opt.MinPageRunes <= 0 {
		opt.MinPageRunes = 40
	}
	if opt.MaxPromptRunes <= 0 {
		opt.MaxPromptRunes = 3000
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return opt
}

// generator holds one run's state.
type generator struct {
	opt Options
	res Result
}

// skip records a skipped item.
func (g *generator) skip(msg string) {
	g.res.Skipped = append(g.res.Skipped, msg)
	if g.opt.Warn != nil {
		g.opt.Warn(msg)
	}
}

func (g *generator) emptyHint() string {
	if len(g.res.Skipped) > 0 {
		return fmt.Sprintf("%d item(s) skipped, first: %s", len(g.res.Skipped), g.res.Skipped[0])
	}
	return "the documents have no usable text; add documents with text (scanned PDFs need OCR)"
}

// doc is one loaded document with the identity of each page.
type doc struct {
	file     document.File
	doc      document.Document
	ids      []string // page identity per page, parallel to doc.Pages
	japanese bool
	title    string // first heading, or the file stem
}

// load walks and extracts the data folder.
func (g *generator) load(ctx context.Context) ([]*doc, error) {
	walk := g.opt.Walk
	if abs, err := filepath.Abs(g.opt.DatabaseDir); err == nil {
		walk.Exclude = append(walk.Exclude, abs)
	}
	files, skips, err := document.Walk(ctx, g.opt.DataDir, walk)
	if err != nil {
		return nil, fmt.Errorf("generating questions: %w", err)
	}
	for _, s := range skips {
		g.skip(fmt.Sprintf("%s: skipped: %s", s.Path, s.Reason))
	}
	ex := document.NewExtractor(g.opt.Extract)
	var docs []*doc
	for _, f := range files {
		d, err := ex.Extract(ctx, f)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("generating questions: %w", ctx.Err())
			}
			g.skip(fmt.Sprintf("%s: skipped: %s", f.Rel, oneLine(err.Error())))
			continue
		}
		cats := make([]string, len(d.Pages))
		if g.opt.Categorize != nil {
			pdfPath := ""
			if f.Kind == document.PDF {
				pdfPath = f.Path
			}
			cats, err = document.Categorize(ctx, d, pdfPath, *g.opt.Categorize)
			if err != nil {
				return nil, fmt.Errorf("generating questions: %w", err)
			}
		}
		ld := &doc{file: f, doc: d}
		onDisk := g.pagesOnDisk(f)
		var all strings.Builder
		for i, p := range d.Pages {
			id := g.pageID(f, cats[i], pageNumber(p, i))
			if real, ok := onDisk[path.Base(id)]; ok && g.opt.PageID == nil {
				id = real
			}
			ld.ids = append(ld.ids, id)
			if all.Len() < 20000 {
				all.WriteString(p.Text)
			}
		}
		ld.japanese = isMostlyJapanese(all.String())
		ld.title = docTitle(d, f)
		docs = append(docs, ld)
	}
	return docs, nil
}

// pagesOnDisk maps the page files (page_NNN.md) of f's folder in the page
// database, as they exist on disk, to their identities: the folder's own
// pages and those one section folder down, which `shirube index
// --categorize` writes (database/<folder>/<stem>/<section>/page_NNN.md).
// References then name the pages as they are, whichever sections the index
// chose. A database that does not exist (yet) gives an empty map.
func (g *generator) pagesOnDisk(f document.File) map[string]string {
	out := map[string]string{}
	idDir := document.DocumentDir(g.opt.DatabaseDir, f)
	diskDir := filepath.Join(filepath.Dir(filepath.Clean(g.opt.DatabaseDir)), filepath.FromSlash(idDir))
	entries, err := os.ReadDir(diskDir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if !e.IsDir() {
			if pageFile.MatchString(e.Name()) {
				out[e.Name()] = path.Join(idDir, e.Name())
			}
			continue
		}
		sub, err := os.ReadDir(filepath.Join(diskDir, e.Name()))
		if err != nil {
			continue
		}
		for _, p := range sub {
			if _, plain := out[p.Name()]; !p.IsDir() && pageFile.MatchString(p.Name()) && !plain {
				out[p.Name()] = path.Join(idDir, e.Name(), p.Name())
			}
		}
	}
	return out
}

// pageFile matches a page file of the page database.
var pageFile = regexp.MustCompile(`^page_[0-9]{3,}\.md$`)

func (g *generator) pageID(f document.File, category string, page int) string {
	if g.opt.PageID != nil {
		return g.opt.PageID(f, category, page)
	}
	if category != "" {
		return document.CategorizedPageFile(g.opt.DatabaseDir, f, category, page)
	}
	return document.PageFile(g.opt.DatabaseDir, f, page)
}

// docTitle names a document in questions: the first Markdown heading, or
// for other kinds the first short line of the first page that is not a
// page number (a PDF's title line), else the file stem.
func docTitle(d document.Document, f document.File) string {
	stem := cmp.Or(f.Stem, strings.TrimSuffix(filepath.Base(f.Rel), filepath.Ext(f.Rel)))
	if len(d.Pages) == 0 {
		return stem
	}
	for i, l := range strings.Split(d.Pages[0].Text, "\n") {
		if i > 20 {
			break
		}
		l = strings.TrimSpace(mdEmphasis.Replace(l))
		if t, ok := strings.CutPrefix(l, "# "); ok && strings.TrimSpace(t) != "" {
			return strings.TrimSpace(t)
		}
		if d.Kind == document.Markdown {
			continue
		}
		n := utf8.RuneCountInString(l)
		if n >= 3 && n <= 40 && letterShare(l) >= 0.6 && !endsWithTerminator(l) && !leaders.MatchString(l) {
			return l
		}
	}
	return stem
}

func pageNumber(p document.Page, i int) int {
	if p.Number > 0 {
		return p.Number
	}
	return i + 1
}

// writeCSV writes rows to opt.Output (replacing it) or a new timestamped
// file.
func writeCSV(opt Options, rows []Row) (string, error) {
	var path string
	var err error
	if opt.Output != "" {
		path, err = opt.Output, csvx.WriteFile(opt.Output, Columns(), cells(rows))
	} else {
		path, err = csvx.WriteNew(opt.ResultsDir, opt.Name+"_", opt.Now(), nil, Columns(), cells(rows))
	}
	if err != nil {
		return "", fmt.Errorf("writing questions: %w — check that the folder is writable", err)
	}
	return path, nil
}

// write writes the header and rows as utf-8-sig CSV.
func write(w io.Writer, rows []Row) error {
	return csvx.Write(w, nil, Columns(), cells(rows))
}

// cells are the CSV rows of rows.
func cells(rows []Row) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = r.Cells()
	}
	return out
}

// oneLine collapses white space so s fits on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// errAllFailed marks a run in which every LLM request failed.
var errAllFailed = errors.New("every LLM request failed")
