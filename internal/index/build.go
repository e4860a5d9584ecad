package index

import (
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/bm25"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/embed"
	"github.com/shirube/shirube/internal/vector"
)

// BuildOptions configure Build.
type BuildOptions struct {
	DataDir     string // sources
	DatabaseDir string // per-page Markdown database to write
	Dir         string // index directory
	Rebuild     bool   // ignore the previous generation: re-extract and re-embed everything

	Chunk       chunk.Options
	Analyzer    analysis.Options
	MaxFileSize int64
	// MaxTextBytes caps the extracted text per file (document.Options);
	// 0 means document.DefaultMaxTextBytes, negative no limit.
	MaxTextBytes int64
	HTMLMode     string // "markdown" (default) or "text"

	// Embedder is "local" (default) or "openai". For openai, Remote must be
	// set; it should cache by content hash so unchanged chunks are free.
	Embedder       string
	EmbeddingModel string
	Remote         TextEmbedder

	// Categorize, when set, groups each PDF's pages into section folders
	// (database/<folder>/<stem>/<category>/page_NNN.md, seed 000) by the
	// LLM, the PDF outline or page headings.
	Categorize *document.CategorizeOptions

	// PageWriter writes the page files; nil means the disk
	// (document.DiskWriter). Tests inject a full disk through it.
	PageWriter document.FileWriter

	Workers  int                                 // extraction/analysis workers; 0 = GOMAXPROCS
	Progress func(phase string, done, total int) // optional
	Warn     func(string)                        // optional one-line warnings
}

// Summary reports what a build did.
type Summary struct {
	Generation int
	Documents  int
	Pages      int
	Chunks     int
	Extracted  int // documents read from source this time
	Reused     int // unchanged documents taken from the previous generation
	Removed    int // documents whose source disappeared
	Skipped    []document.Skip
	Notes      []string // per-document warnings ("x.pdf: page 2: no text layer — scanned?")
	Seconds    float64
	Unchanged  bool // nothing changed: the previous generation was kept
}

// Build ingests the data folder and writes a new generation of the index.
// Unchanged sources (same size, mtime and content hash) are reused from the
// previous generation. Files that cannot be read are skipped with a reason;
// the build continues.
//
// A page database that cannot be written because of the storage (a full
// disk, a quota, a read-only or failing disk) is different: the build
// fails and the previous generation stays live, instead of committing an
// index that silently lacks every document written after the disk filled. Pages of
// sources that disappeared are deleted only after the new generation is
// live, so a crash never leaves the live index citing deleted pages. A
// previous generation whose files are damaged is never kept as "nothing
// changed": it is rebuilt.
func Build(ctx context.Context, opt BuildOptions) (Summary, error) {
	start := time.Now()
	var sum Summary
	if opt.Embedder == "" {
		opt.Embedder = "local"
	}
	if opt.HTMLMode == "" {
		opt.HTMLMode = "markdown"
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	warn := opt.Warn
	if warn == nil {
		warn = func(string) {}
	}
	progress := opt.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	if opt.Embedder == "openai" && opt.Remote == nil {
		return sum, errors.New("the openai embedder needs OPENAI_API_KEY — set it, or use --embedder local")
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return sum, fmt.Errorf("create index directory: %w", err)
	}
	unlock, err := lockDir(opt.Dir)
	if err != nil {
		return sum, err
	}
	defer unlock()

	files, skips, err := document.Walk(ctx, opt.DataDir, document.WalkOptions{
		MaxFileSize: opt.MaxFileSize,
		Exclude:     []string{opt.DatabaseDir, opt.Dir},
	})
	if err != nil {
		return sum, err
	}
	sum.Skipped = append(sum.Skipped, skips...)

	prev, prevMeta, prevGen := loadPrevious(opt, warn)
	prevDamaged := false
	if prevGen != "" && !opt.Rebuild {
		if err := verifyGeneration(prevGen, prevMeta); err != nil {
			warn(fmt.Sprintf("the live index generation is damaged (%v); rebuilding it", err))
			prevDamaged = true
		}
	}
	analyzer, err := analysis.New(opt.Analyzer)
	if err != nil {
		return sum, fmt.Errorf("analyser: %w", err)
	}
	copt := opt.Chunk

	// Extract, chunk and analyse changed files in parallel; reuse the rest.
	docs := make([]*storedDoc, len(files))
	type job struct{ i int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var writeErr error // the first page database write failure
	ex := document.NewExtractor(document.Options{HTMLMode: document.HTMLMode(opt.HTMLMode), Warn: warn, MaxTextBytes: opt.MaxTextBytes})
	for w := 0; w < opt.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				f := files[j.i]
				sd, reused, skip, werr := prepare(wctx, ex, analyzer, copt, opt, f, prev[f.Rel])
				mu.Lock()
				if werr != nil {
					if writeErr == nil {
						writeErr = werr
					}
					stop() // no point extracting more
				} else if skip != nil {
					sum.Skipped = append(sum.Skipped, *skip)
				} else {
					docs[j.i] = sd
					if reused {
						sum.Reused++
					} else {
						sum.Extracted++
					}
				}
				done++
				progress("extract", done, len(files))
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range files {
		select {
		case jobs <- job{i}:
		case <-wctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if writeErr != nil {
		return sum, fmt.Errorf("%w — nothing was indexed; the previous index stays in use. Free disk space (or fix the database folder's permissions) and run `shirube index` again", writeErr)
	}
	if err := ctx.Err(); err != nil {
		return sum, err
	}

	// Sources that disappeared are counted now; their page files are
	// deleted once the new generation is live (removeStale).
	current := map[string]bool{}
	for _, f := range files {
		current[f.Rel] = true
	}
	for rel, sd := range prev {
		if !sd.Extra && !current[rel] {
			sum.Removed++
		}
	}

	var kept []*storedDoc
	for _, sd := range docs {
		if sd != nil {
			kept = append(kept, sd)
		}
	}
	extras, changed, err := extraPages(ctx, opt, analyzer, kept, prev)
	if err != nil {
		warn(fmt.Sprintf("database-only pages not indexed: %v", err))
	}
	kept = append(kept, extras...)
	if changed {
		sum.Extracted++ // forces a new generation
	}
	for _, sd := range kept {
		sum.Documents++
		sum.Pages += len(sd.Doc.Pages)
		sum.Chunks += len(sd.Chunks)
		for _, n := range sd.Doc.Notes {
			sum.Notes = append(sum.Notes, document.QuotePath(sd.Doc.Source)+": "+n)
		}
	}
	if prevGen != "" && !opt.Rebuild && !prevDamaged && sum.Extracted == 0 && sum.Removed == 0 &&
		prevMeta.Documents == sum.Documents && sameSettings(prevMeta, opt) {
		sum.Unchanged = true
		sum.Generation = prevMeta.Generation
		sum.Seconds = time.Since(start).Seconds()
		return sum, nil
	}

	// Gather chunks in a deterministic order.
	var chunks []chunk.Chunk
	var terms [][]string
	var hashes []string
	for _, sd := range kept {
		chunks = append(chunks, sd.Chunks...)
		terms = append(terms, sd.Terms...)
		hashes = append(hashes, sd.Hashes...)
	}

	progress("bm25", 0, 1)
	lex := buildLexical(terms)
	progress("bm25", 1, 1)

	progress("embed", 0, len(chunks))
	vecs, local, info, err := embedChunks(ctx, opt.Embedder, opt.EmbeddingModel, opt.Remote, terms, chunks)
	if err != nil {
		return sum, err
	}
	progress("embed", len(chunks), len(chunks))
	flat, err := buildFlat(info.Dim, chunks, vecs)
	if err != nil {
		return sum, err
	}

	// Write the new generation.
	gen := prevMeta.Generation + 1
	if prevGen == "" {
		gen = nextGeneration(opt.Dir)
	}
	meta := Meta{
		FormatVersion: FormatVersion,
		Generation:    gen,
		BuiltAt:       time.Now(),
		DataDir:       opt.DataDir,
		DatabaseDir:   opt.DatabaseDir,
		Documents:     sum.Documents,
		Pages:         sum.Pages,
		Chunks:        len(chunks),
		ChunkSize:     copt.Size,
		ChunkOverlap:  copt.Overlap,
		Analyzer:      opt.Analyzer,
		Embedder:      info,
		HTMLMode:      opt.HTMLMode,
		Categorized:   opt.Categorize != nil,
	}
	if err := writeGeneration(ctx, opt.Dir, &meta, chunks, lex, flat, local, kept); err != nil {
		return sum, err
	}
	removeStale(opt.DatabaseDir, prev, kept)
	sum.Generation = gen
	sum.Seconds = time.Since(start).Seconds()
	return sum, nil
}

func encodeGob(w io.Writer, v any) error {
	return gob.NewEncoder(w).Encode(v)
}

// sameSettings reports whether a previous generation was built with the
// settings of this build, so that it can be kept as is.
func sameSettings(m Meta, opt BuildOptions) bool {
	return m.ChunkSize == opt.Chunk.Size && m.ChunkOverlap == opt.Chunk.Overlap &&
		m.Analyzer == opt.Analyzer && m.Embedder.Kind == opt.Embedder && m.HTMLMode == opt.HTMLMode &&
		m.DatabaseDir == opt.DatabaseDir && m.Categorized == (opt.Categorize != nil) &&
		(opt.Embedder != "openai" || m.Embedder.Model == opt.EmbeddingModel)
}

// loadPrevious returns the previous generation's documents by source path,
// when they can be reused by this build.
func loadPrevious(opt BuildOptions, warn func(string)) (map[string]*storedDoc, Meta, string) {
	out := map[string]*storedDoc{}
	if opt.Rebuild {
		return out, Meta{}, ""
	}
	gen, _, err := readCurrent(opt.Dir)
	if err != nil {
		return out, Meta{}, ""
	}
	meta, err := readMeta(gen)
	if err != nil {
		warn(fmt.Sprintf("previous index not reused: %v", err))
		return out, Meta{}, ""
	}
	if meta.ChunkSize != opt.Chunk.Size || meta.ChunkOverlap != opt.Chunk.Overlap || meta.Analyzer != opt.Analyzer || meta.HTMLMode != opt.HTMLMode || meta.DatabaseDir != opt.DatabaseDir || meta.Categorized != (opt.Categorize != nil) {
		return out, meta, gen // settings changed: re-extract everything, keep the generation counter
	}
	b, err := readChecked(gen, &meta, docsFile)
	if err != nil {
		warn(fmt.Sprintf("previous index not reused: %v", err))
		return out, meta, gen
	}
	var docs []*storedDoc
	if err := decodeGob(b, &docs); err != nil {
		warn(fmt.Sprintf("previous index not reused: %v", err))
		return out, meta, gen
	}
	for _, d := range docs {
		out[d.Doc.Source] = d
	}
	return out, meta, gen
}

// prepare returns the stored form of one source: reused from the previous
// generation when unchanged, else extracted, written to the page database,
// chunked and analysed. A file that cannot be used is a Skip; a page
// database that cannot be written is an error that stops the build.
func prepare(ctx context.Context, ex *document.Extractor, a *analysis.Analyzer, copt chunk.Options, opt BuildOptions, f document.File, prev *storedDoc) (*storedDoc, bool, *document.Skip, error) {
	if prev != nil && prev.Doc.Size == f.Size && prev.Doc.ModTime.Equal(f.ModTime) && prev.File.Stem == f.Stem && pagesExist(opt.DatabaseDir, prev.Pages) {
		prev.File = f
		return prev, true, nil, nil
	}
	doc, err := ex.Extract(ctx, f)
	if err != nil {
		return nil, false, &document.Skip{Path: f.Rel, Reason: strings.TrimPrefix(err.Error(), f.Rel+": ")}, nil
	}
	if prev != nil && prev.Doc.Hash == doc.Hash && prev.File.Stem == f.Stem && pagesExist(opt.DatabaseDir, prev.Pages) && opt.Categorize == nil {
		// Touched but not changed: keep the analysed chunks, refresh the time.
		prev.Doc.ModTime, prev.File = doc.ModTime, f
		return prev, true, nil, nil
	}
	var ids []string
	if opt.Categorize != nil && doc.Kind == document.PDF {
		cats, cerr := document.Categorize(ctx, doc, f.Path, *opt.Categorize)
		if cerr != nil {
			if opt.Warn != nil {
				opt.Warn(fmt.Sprintf("%s: pages not categorised: %v", f.Rel, cerr))
			}
			cats = make([]string, len(doc.Pages))
		}
		ids, err = document.WriteCategorized(ctx, opt.DatabaseDir, f, doc, cats, opt.PageWriter)
	} else {
		ids, err = document.WriteDatabase(ctx, opt.DatabaseDir, f, doc, opt.PageWriter)
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, false, nil, ctx.Err()
	case storageFailure(err):
		return nil, false, nil, fmt.Errorf("write page database %s: %w", opt.DatabaseDir, err)
	default: // this document's folder only, e.g. a file in the way
		return nil, false, &document.Skip{Path: f.Rel, Reason: "write page database: " + err.Error()}, nil
	}
	sd := &storedDoc{Doc: doc, File: f, Pages: ids}
	updated := doc.ModTime.Format("2006-01-02T15:04:05")
	for i, p := range doc.Pages {
		if i >= len(ids) {
			break
		}
		cs, err := chunk.Page(ids[i], doc.Source, p.Number, updated, p.Text, copt)
		if err != nil {
			return nil, false, &document.Skip{Path: f.Rel, Reason: "chunk: " + err.Error()}, nil
		}
		for _, c := range cs {
			sd.Chunks = append(sd.Chunks, c)
			sd.Terms = append(sd.Terms, a.Terms(c.Text))
			h := sha256.Sum256([]byte(c.Text))
			sd.Hashes = append(sd.Hashes, hex.EncodeToString(h[:]))
		}
	}
	return sd, false, nil, nil
}

// storageFailure reports an error of the storage itself — no space left, a
// quota, a read-only or failing disk — which would hit every document
// after this one too, so it stops the build instead of skipping a file.
func storageFailure(err error) bool {
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EIO} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// extraPages indexes page files that exist only in the page database — the
// copies that folder-structure optimisation (seed 000) places in better-named
// folders. Each becomes a one-page document whose identity is its own path,
// so a question can retrieve the copy. changed reports whether the set or a
// content differs from the previous generation.
func extraPages(ctx context.Context, opt BuildOptions, a *analysis.Analyzer, kept []*storedDoc, prev map[string]*storedDoc) ([]*storedDoc, bool, error) {
	known := map[string]bool{}
	for _, sd := range kept {
		for _, id := range sd.Pages {
			known[id] = true
		}
	}
	// Pages of the previous generation's sources are never database-only
	// copies, even when their source is gone or was skipped this time:
	// they are deleted after the switch (removeStale), not resurrected under
	// another path.
	for _, sd := range prev {
		if !sd.Extra {
			for _, id := range sd.Pages {
				known[id] = true
			}
		}
	}
	prevExtra := map[string]*storedDoc{}
	for _, sd := range prev {
		if sd.Extra {
			prevExtra[sd.Doc.Source] = sd
		}
	}
	base := filepath.Base(filepath.Clean(opt.DatabaseDir))
	var out []*storedDoc
	changed := false
	err := filepath.WalkDir(opt.DatabaseDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if p == opt.DatabaseDir {
				return filepath.SkipAll
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() || d.Type()&os.ModeSymlink != 0 || !isPageFile(d.Name()) {
			return nil
		}
		rel, err := filepath.Rel(opt.DatabaseDir, p)
		if err != nil {
			return nil
		}
		id := base + "/" + filepath.ToSlash(rel)
		if known[id] {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		sumHash := sha256.Sum256(b)
		hash := hex.EncodeToString(sumHash[:])
		if old := prevExtra["@"+id]; old != nil && old.Doc.Hash == hash {
			out = append(out, old)
			delete(prevExtra, "@"+id)
			return nil
		}
		changed = true
		info, _ := d.Info()
		page, _ := document.PageNumber(id)
		doc := document.Document{Source: "@" + id, Kind: document.Markdown, Pages: []document.Page{{Number: page, Text: string(b)}}, Hash: hash}
		if info != nil {
			doc.ModTime, doc.Size = info.ModTime(), info.Size()
		}
		sd := &storedDoc{Doc: doc, Pages: []string{id}, Extra: true}
		cs, err := chunk.Page(id, id, page, doc.ModTime.Format("2006-01-02T15:04:05"), doc.Pages[0].Text, opt.Chunk)
		if err != nil {
			return nil
		}
		// The folder path is what optimisation chose to make the page
		// findable, so it heads every chunk of the copy, above the page's
		// own headings: a Markdown or HTML page's "# H1" must not push it
		// out (a level-1 heading would replace a "# folder" line).
		if dir := filepath.ToSlash(filepath.Dir(rel)); dir != "." {
			folder := strings.ReplaceAll(strings.ReplaceAll(dir, "/", " / "), "_", " ")
			for i := range cs {
				cs[i].Text = "# " + folder + "\n" + cs[i].Text
				if cs[i].Heading == "" {
					cs[i].Heading = folder
				} else {
					cs[i].Heading = folder + " > " + cs[i].Heading
				}
			}
		}
		for _, c := range cs {
			sd.Chunks = append(sd.Chunks, c)
			sd.Terms = append(sd.Terms, a.Terms(c.Text))
			h := sha256.Sum256([]byte(c.Text))
			sd.Hashes = append(sd.Hashes, hex.EncodeToString(h[:]))
		}
		out = append(out, sd)
		return nil
	})
	if len(prevExtra) > 0 {
		changed = true // a copy was removed (rollback or undo)
	}
	return out, changed, err
}

func isPageFile(name string) bool {
	return strings.HasPrefix(name, "page_") && strings.HasSuffix(name, ".md")
}

// removeStale deletes the page files of the previous generation's sources
// that the new, now live, generation no longer cites: sources that
// disappeared (with their page folders) and sources skipped this time.
func removeStale(dbDir string, prev map[string]*storedDoc, kept []*storedDoc) {
	cited := map[string]bool{}
	for _, sd := range kept {
		for _, id := range sd.Pages {
			cited[id] = true
		}
	}
	for _, sd := range prev {
		if sd.Extra {
			continue // database-only pages belong to the optimiser
		}
		var stale []string
		for _, id := range sd.Pages {
			if !cited[id] {
				stale = append(stale, id)
			}
		}
		if len(stale) > 0 {
			removePageFiles(dbDir, stale)
		}
	}
}

// removePageFiles deletes page files by identity and the folders they leave
// empty (document and category folders), up to but not including dbDir.
func removePageFiles(dbDir string, ids []string) {
	root := filepath.Clean(dbDir)
	parent := filepath.Dir(root)
	for _, id := range ids {
		p := filepath.Join(parent, filepath.FromSlash(id))
		os.Remove(p)
		for d := filepath.Dir(p); d != root && strings.HasPrefix(d, root+string(filepath.Separator)); d = filepath.Dir(d) {
			if os.Remove(d) != nil {
				break // not empty, or already gone
			}
		}
	}
}

func pagesExist(dbDir string, ids []string) bool {
	parent := filepath.Dir(filepath.Clean(dbDir))
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(parent, filepath.FromSlash(id))); err != nil {
			return false
		}
	}
	return true
}

// fitSample caps the chunks the local embedder is fitted on (evenly spaced;
// every chunk is still embedded), and the fit uses one power iteration.
// Both were chosen by measurement (docs/BENCHMARKS.md): Markdown indexing
// went from 1,026 to 1,644 chunks/s on 2 cores, and vector-only nDCG@10 did
// not drop (JSQuAD 0.885 → 0.890, SciFact 0.529 → 0.555).
const fitSample = 4096

// embedChunks embeds every chunk: the local model is fitted on this corpus
// (deterministically), the remote one is called through its cache.
func embedChunks(ctx context.Context, kind, model string, remote TextEmbedder, terms [][]string, chunks []chunk.Chunk) ([][]float32, *embed.Local, EmbedderInfo, error) {
	if kind == "openai" {
		texts := make([]string, len(chunks))
		for i, c := range chunks {
			texts[i] = c.Text
		}
		vecs, err := remote.EmbedTexts(ctx, texts)
		if err != nil {
			return nil, nil, EmbedderInfo{}, fmt.Errorf("embed chunks: %w", err)
		}
		dim := 0
		if len(vecs) > 0 {
			dim = len(vecs[0])
		}
		return vecs, nil, EmbedderInfo{Kind: "openai", Model: model, Dim: dim}, nil
	}
	feats := make([][]string, len(chunks))
	parallelFor(len(chunks), func(i int) { feats[i] = featuresOf(terms[i], chunks[i].Text) })
	local, err := embed.FitLocal(ctx, feats, embed.LocalOptions{PowerIters: 1, MaxSample: fitSample})
	if err != nil {
		return nil, nil, EmbedderInfo{}, fmt.Errorf("fit local embedder: %w", err)
	}
	vecs := make([][]float32, len(chunks))
	parallelFor(len(chunks), func(i int) { vecs[i] = local.Embed(feats[i]) })
	return vecs, local, EmbedderInfo{Kind: "local", Model: "tfidf-svd", Dim: local.Dim()}, nil
}

// ChunkTerms analyses every chunk's text with a, on all cores: the terms
// BM25 indexes and the local embedder reuses. Every store builds from it.
func ChunkTerms(a *analysis.Analyzer, chunks []chunk.Chunk) [][]string {
	terms := make([][]string, len(chunks))
	parallelFor(len(chunks), func(i int) { terms[i] = a.Terms(chunks[i].Text) })
	return terms
}

// parallelFor runs f(0..n-1) on GOMAXPROCS goroutines.
func parallelFor(n int, f func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += workers {
				f(i)
			}
		}(w)
	}
	wg.Wait()
}

func nextGeneration(dir string) int {
	entries, _ := os.ReadDir(dir)
	max := 0
	for _, e := range entries {
		var n int
		if _, err := fmt.Sscanf(e.Name(), "gen-%d", &n); err == nil && n > max {
			max = n
		}
	}
	return max + 1
}

func buildLexical(terms [][]string) *bm25.Index {
	bb := bm25.NewBuilder(bm25.DefaultParams())
	for _, t := range terms {
		bb.Add(t)
	}
	return bb.Build()
}

func buildFlat(dim int, chunks []chunk.Chunk, vecs [][]float32) (*vector.Flat, error) {
	flat, err := vector.NewFlat(dim)
	if err != nil {
		return nil, fmt.Errorf("vector store: %w", err)
	}
	for i, v := range vecs {
		if _, err := flat.Add(v); err != nil {
			return nil, fmt.Errorf("vector of %s: %w", chunks[i].ID, err)
		}
	}
	return flat, nil
}

// MemoryOptions configure FromChunks.
type MemoryOptions struct {
	Analyzer       analysis.Options
	Embedder       string // local (default) or openai
	EmbeddingModel string
	Remote         TextEmbedder
}

// FromChunks builds an index in memory from ready-made chunks, without a
// data folder or a directory: benchmarks use it to index a BEIR corpus with
// one chunk per document. The result behaves exactly like a loaded index.
func FromChunks(ctx context.Context, chunks []chunk.Chunk, opt MemoryOptions) (*Index, error) {
	if opt.Embedder == "" {
		opt.Embedder = "local"
	}
	a, err := analysis.New(opt.Analyzer)
	if err != nil {
		return nil, fmt.Errorf("analyser: %w", err)
	}
	terms := ChunkTerms(a, chunks)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lex := buildLexical(terms)
	vecs, local, info, err := embedChunks(ctx, opt.Embedder, opt.EmbeddingModel, opt.Remote, terms, chunks)
	if err != nil {
		return nil, err
	}
	flat, err := buildFlat(info.Dim, chunks, vecs)
	if err != nil {
		return nil, err
	}
	return &Index{
		meta:     Meta{FormatVersion: FormatVersion, Chunks: len(chunks), Analyzer: opt.Analyzer, Embedder: info, BuiltAt: time.Now()},
		chunks:   chunks,
		lex:      lex,
		vec:      flat,
		local:    local,
		analyzer: a,
		remote:   opt.Remote,
	}, nil
}

// writeGeneration writes a complete generation, installs it as the live one
// and removes older ones. meta.Files is filled in.
func writeGeneration(ctx context.Context, dir string, meta *Meta, chunks []chunk.Chunk, lex *bm25.Index, flat *vector.Flat, local *embed.Local, kept []*storedDoc) error {
	gen := meta.Generation
	tmp := filepath.Join(dir, ".tmp-"+genName(gen))
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("create generation: %w", err)
	}
	gw := &genWriter{dir: tmp, sums: map[string]checksum{}}
	type step struct {
		name string
		fill func(io.Writer) error
	}
	steps := []step{
		{chunksBinFile, func(w io.Writer) error { return writeChunkFile(w, chunks) }},
		{bm25File, func(w io.Writer) error { _, err := lex.WriteTo(w); return err }},
		{vectorsFile, func(w io.Writer) error { _, err := flat.WriteTo(w); return err }},
		{docsFile, func(w io.Writer) error { return encodeGob(w, kept) }},
	}
	if local != nil {
		steps = append(steps, step{embedderFile, func(w io.Writer) error {
			b, err := local.MarshalBinary()
			if err != nil {
				return err
			}
			_, err = w.Write(b)
			return err
		}})
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			os.RemoveAll(tmp)
			return err
		}
		if err := gw.write(s.name, s.fill); err != nil {
			os.RemoveAll(tmp)
			return err
		}
	}
	meta.Files = gw.sums
	mb, _ := json.MarshalIndent(meta, "", "  ")
	if err := writeFileAtomic(filepath.Join(tmp, metaFile), mb); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("write metadata: %w", err)
	}
	final := filepath.Join(dir, genName(gen))
	os.RemoveAll(final)
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("install generation: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, currentFile), []byte(genName(gen)+"\n")); err != nil {
		return fmt.Errorf("switch to the new generation: %w", err)
	}
	removeOldGenerations(dir, genName(gen))
	return nil
}

// Save writes an in-memory index (from FromChunks) to dir as a new
// generation, so that Open can load it.
func (ix *Index) Save(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create index directory: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer unlock()
	meta := ix.meta
	meta.Generation = nextGeneration(dir)
	if meta.BuiltAt.IsZero() {
		meta.BuiltAt = time.Now()
	}
	if err := writeGeneration(ctx, dir, &meta, ix.chunks, ix.lex, ix.vec, ix.local, nil); err != nil {
		return err
	}
	ix.meta, ix.dir = meta, dir
	return nil
}
