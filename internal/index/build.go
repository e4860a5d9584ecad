package index

import (
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/bm25"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/embed"
	"github.com/shirube/shirube/internal/ocr"
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
	// FileTimeout bounds the reading of one file, outside programs
	// included (document.Options); 0 means document.DefaultFileTimeout.
	FileTimeout time.Duration
	HTMLMode    string // "markdown" (default) or "text"

	// Embedder is "local" (default) or "openai". For openai, Remote must be
	// set; it should cache by content hash so unchanged chunks are free.
	Embedder       string
	EmbeddingModel string
	Remote         TextEmbedder

	// Categorize, when set, groups each PDF's pages into section folders
	// (database/<folder>/<stem>/<category>/page_NNN.md, seed 000) by the
	// LLM, the PDF outline or page headings.
	Categorize *document.CategorizeOptions

	// OCR reads image files and PDF pages without a usable text layer;
	// nil means no OCR. OCRMode is document.OCRAuto (when empty),
	// OCRAlways or OCRNever; OCRTimeout bounds one page (zero: the
	// engine's default). Pages are read Workers at a time.
	OCR        *ocr.Engine
	OCRMode    document.OCRMode
	OCRTimeout time.Duration

	// PageWriter writes the page files; nil means the disk
	// (document.DiskWriter). Tests inject a full disk through it.
	PageWriter document.FileWriter

	// Tests only: refitAt, when non-zero, replaces the refit rule: refit
	// past this drift whatever the corpus size (negative: always refit);
	// model, when set, is used instead of fitting one.
	refitAt float64
	model   *embed.Local
	// Tests only: crash, when set, is called after each file system
	// operation of the switch (each file of the new generation, its
	// installation, CURRENT, the removal of old generations, each stale
	// page); an error stops the build right there, with no clean-up, as a
	// kill would.
	crash func(step string) error

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
	// Retimed counts the reused documents whose source was touched (a new
	// modification time, the same content): their chunks' updated_at is
	// refreshed in a new generation.
	Retimed   int
	Removed   int // documents whose source disappeared
	Skipped   []document.Skip
	Notes     []string // per-document warnings ("x.pdf: page 2: no text layer — scanned?")
	Seconds   float64
	Unchanged bool // nothing changed: the previous generation was kept
	// Refit says whether the local embedder was fitted again (always on a
	// first or full build, and on an incremental one of a corpus of at most
	// exactRefitChunks chunks; on a larger one only when Drift, the share of
	// the corpus's term mass changed since the last fit, passed
	// refitDrift). Unchanged chunks keep their vectors when it was not.
	Refit bool
	Drift float64
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
// live, so a crash never leaves the live index citing deleted pages; the
// new generation records them (buildRecord.Removed), so a crash before
// they are gone leaves the next build — also with Rebuild — knowing they
// are stale: it deletes them and never indexes them as database-only
// pages. A previous generation whose files are damaged is never kept as
// "nothing changed": it is rebuilt.
//
// Build reads as its stages, each a method of builder: walk the data
// folder → open the previous generation → extract (sync, chunk, analyse
// the changed files; mark the rest for reuse) → gather the documents →
// keep the previous generation when nothing changed → reuse its chunks
// beside the fresh ones → compose BM25 → embed → write and switch.
func Build(ctx context.Context, opt BuildOptions) (Summary, error) {
	b, err := newBuilder(opt)
	if err != nil {
		return Summary{}, err
	}
	unlock, err := b.lock()
	if err != nil {
		return b.sum, err
	}
	defer unlock()
	files, err := b.walk(ctx)
	if err != nil {
		return b.sum, err
	}
	if err := b.previousGeneration(ctx); err != nil {
		return b.sum, err
	}
	parts, err := b.extract(ctx, files)
	if err != nil {
		return b.sum, err
	}
	kept, docs, err := b.gather(ctx, files, parts)
	if err != nil {
		return b.sum, err
	}
	stale := stalePages(b.db, b.prev, docs)
	if kept, err := b.keepPrevious(docs, stale); kept || err != nil {
		return b.done(), err
	}
	chunks, from := b.reuse(kept)
	lex, added, delta, err := b.composeBM25(from)
	if err != nil {
		return b.sum, err
	}
	leg, err := b.embed(ctx, chunks, from, lex, added, delta)
	if err != nil {
		return b.sum, err
	}
	if err := b.write(ctx, chunks, lex, leg, docs, stale); err != nil {
		return b.sum, err
	}
	return b.done(), nil
}

// builder is one run of Build: its options, what it has done so far
// (sum) and what it reuses of the previous generation. Each stage of
// Build is one of its methods, in the order Build calls them.
type builder struct {
	opt      BuildOptions
	start    time.Time
	sum      Summary
	warn     func(string)
	progress func(phase string, done, total int)
	db       document.Database
	analyzer *analysis.Analyzer

	// The previous generation: what it recorded (prev, prevMeta), its
	// folder (prevGen, "" when there is none or nothing is reused),
	// whether its files are damaged, and itself, opened for reuse (nil
	// when nothing is reused).
	prev        previous
	prevMeta    Meta
	prevGen     string
	prevDamaged bool
	old         *Index

	// fresh collects the fresh parts' terms, in file order, until the
	// BM25 stage builds it; nfresh counts the chunks analysed (or, after a
	// refit, embedded) this time.
	fresh  *bm25.Builder
	nfresh int
}

// newBuilder fills in the defaults of opt.
func newBuilder(opt BuildOptions) (*builder, error) {
	if opt.Embedder == "" {
		opt.Embedder = "local"
	}
	if opt.HTMLMode == "" {
		opt.HTMLMode = "markdown"
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	b := &builder{opt: opt, start: time.Now(), warn: opt.Warn, progress: opt.Progress,
		db: document.Database{Dir: opt.DatabaseDir, Writer: opt.PageWriter, Categorize: opt.Categorize, Warn: opt.Warn}}
	if b.warn == nil {
		b.warn = func(string) {}
	}
	if b.progress == nil {
		b.progress = func(string, int, int) {}
	}
	if opt.Embedder == "openai" && opt.Remote == nil {
		return nil, errors.New("the openai embedder needs BuildOptions.Remote: an OpenAI-compatible embedder (OPENAI_API_KEY), or use the local embedder")
	}
	return b, nil
}

// lock creates the index directory and takes its lock: one build at a
// time.
func (b *builder) lock() (unlock func(), err error) {
	if err := os.MkdirAll(b.opt.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create index directory: %w", err)
	}
	return lockDir(b.opt.Dir)
}

// done is the summary, with the time the build took.
func (b *builder) done() Summary {
	b.sum.Seconds = time.Since(b.start).Seconds()
	return b.sum
}

// walk is stage 1: the source files of the data folder, those that cannot
// be used listed as skipped.
func (b *builder) walk(ctx context.Context) ([]document.File, error) {
	files, skips, err := document.Walk(ctx, b.opt.DataDir, document.WalkOptions{
		MaxFileSize: b.opt.MaxFileSize,
		Exclude:     []string{b.opt.DatabaseDir, b.opt.Dir},
	})
	if err != nil {
		return nil, err
	}
	b.sum.Skipped = append(b.sum.Skipped, skips...)
	return files, nil
}

// previousGeneration is stage 2: the previous generation, what it recorded and
// itself, opened so that reused documents take their chunks, postings
// and vectors from it as they are, without analysing any text. A damaged
// one is reported and rebuilt from the sources.
func (b *builder) previousGeneration(ctx context.Context) error {
	b.prev, b.prevMeta, b.prevGen = loadPrevious(b.opt, b.warn)
	if b.prevGen != "" && !b.opt.Rebuild {
		if err := verifyGeneration(b.prevGen, b.prevMeta); err != nil {
			b.warn(fmt.Sprintf("the live index generation is damaged (%v); rebuilding it", err))
			b.prevDamaged = true
		}
	}
	a, err := analysis.New(b.opt.Analyzer)
	if err != nil {
		return fmt.Errorf("analyser: %w", err)
	}
	b.analyzer = a
	if len(b.prev.sources)+len(b.prev.copies) > 0 && !b.prevDamaged {
		old, err := openPrevious(ctx, b.opt, a, b.prevMeta)
		if err != nil {
			b.warn(fmt.Sprintf("previous index not reused: %v", err))
		}
		b.old = old
	}
	return nil
}

// extract is stage 3: every file synced into the page database and, when
// it changed, chunked and analysed, Workers at a time; an unchanged one is
// marked for reuse. Parts are committed in file order as they complete: a
// fresh part's terms go into the BM25 builder and are dropped, so the
// terms of the whole corpus are never held at once. A page database that
// cannot be written stops the build.
func (b *builder) extract(ctx context.Context, files []document.File) ([]*part, error) {
	opt := b.opt
	reusable := func(sd *storedDoc) *storedDoc {
		if b.old == nil {
			return nil // extracted again; prev still says which pages were the sources'
		}
		return sd
	}
	parts := make([]*part, len(files))
	ready := make([]bool, len(files))
	b.fresh = bm25.NewBuilder(bm25.DefaultParams())
	next := 0
	commit := func() {
		for next < len(files) && ready[next] {
			if p := parts[next]; p != nil {
				p.addTerms(b.fresh)
			}
			next++
		}
	}
	type job struct{ i int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var writeErr error // the first page database write failure
	ocrPages := 0      // pages queued for OCR; while there are some, the bar counts them
	ex := document.NewExtractor(document.Options{HTMLMode: document.HTMLMode(opt.HTMLMode), Warn: b.warn, MaxTextBytes: opt.MaxTextBytes, FileTimeout: opt.FileTimeout,
		OCR: opt.OCR, OCRMode: opt.OCRMode, OCRWorkers: opt.Workers, OCRPageTimeout: opt.OCRTimeout,
		OCRProgress: func(d, t int) {
			mu.Lock()
			ocrPages = t
			b.progress("ocr pages", d, t)
			mu.Unlock()
		}})
	for w := 0; w < opt.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				f := files[j.i]
				p, skip, werr := prepare(wctx, b.db, ex, b.analyzer, opt.Chunk, f, reusable(b.prev.sources[f.Rel]))
				mu.Lock()
				if werr != nil {
					if writeErr == nil {
						writeErr = werr
					}
					stop() // no point extracting more
				} else if skip != nil {
					b.sum.Skipped = append(b.sum.Skipped, *skip)
				} else {
					parts[j.i] = p
					if p.reused {
						b.sum.Reused++
						if p.retimed {
							b.sum.Retimed++
						}
					} else {
						b.sum.Extracted++
					}
				}
				ready[j.i] = true
				commit()
				done++
				if ocrPages == 0 {
					b.progress("extract", done, len(files))
				}
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
		return nil, fmt.Errorf("%w — nothing was indexed; the previous index stays in use. Free disk space (or fix the database folder's permissions) and run `shirube index` again", writeErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return parts, nil
}

// gather is stage 4: the documents of the new generation — the parts
// extracted or reused, then the page database's own copies — counted in
// the summary, with the sources that disappeared (their page files are
// deleted once the new generation is live: removeStale). A corpus with no
// document at all is an error that says why.
func (b *builder) gather(ctx context.Context, files []document.File, parts []*part) ([]*part, []*storedDoc, error) {
	current := map[string]bool{}
	for _, f := range files {
		current[f.Rel] = true
	}
	for rel := range b.prev.sources {
		if !current[rel] {
			b.sum.Removed++
		}
	}
	var kept []*part
	for _, p := range parts {
		if p != nil {
			kept = append(kept, p)
		}
	}
	copies, changed, err := copyPages(ctx, b.db, b.opt.Chunk, b.analyzer, kept, b.prev, b.old != nil, b.fresh)
	if err != nil {
		b.warn(fmt.Sprintf("database-only pages not indexed: %v", err))
	}
	kept = append(kept, copies...)
	if changed {
		b.sum.Extracted++ // forces a new generation
	}
	docs := make([]*storedDoc, len(kept))
	for i, p := range kept {
		docs[i] = p.sd
		b.sum.Documents++
		b.sum.Pages += len(p.sd.Doc.Pages)
		b.sum.Chunks += p.sd.NChunks
		for _, n := range p.sd.Doc.Notes {
			b.sum.Notes = append(b.sum.Notes, document.QuotePath(p.sd.Doc.Source)+": "+n)
		}
	}
	if b.sum.Documents == 0 {
		// Nothing to index: say why, instead of failing later on an
		// empty corpus (the embedder cannot be fitted on nothing).
		b.done()
		if len(b.sum.Skipped) > 0 {
			return nil, nil, fmt.Errorf("%w: all %d files of %s were skipped, each for the reason listed with it — fix or remove them and index again; the previous index, if any, stays in use", ErrNothingIndexed, len(b.sum.Skipped), b.opt.DataDir)
		}
		return nil, nil, fmt.Errorf("%w: %s holds no .pdf, .md, .html or .txt file — put the documents there, or point to their folder", ErrNothingIndexed, b.opt.DataDir)
	}
	return kept, docs, nil
}

// keepPrevious is stage 5: when nothing changed — no document read again,
// touched or removed, the same settings, an undamaged generation — the
// previous generation stays live (Summary.Unchanged), after deleting the
// stale pages a crash after the last switch may have left. stale are the
// pages of sources this generation no longer has.
func (b *builder) keepPrevious(docs []*storedDoc, stale []string) (bool, error) {
	if b.prevGen == "" || b.opt.Rebuild || b.prevDamaged || b.sum.Extracted != 0 || b.sum.Removed != 0 || b.sum.Retimed != 0 ||
		b.prevMeta.Documents != len(docs) || !sameSettings(b.prevMeta, b.opt) {
		return false, nil
	}
	if err := removePages(b.db, stale, b.opt.crash); err != nil {
		return true, err
	}
	b.sum.Unchanged = true
	b.sum.Generation = b.prevMeta.Generation
	return true, nil
}

// reuse is stage 6: the chunks of the new generation in a deterministic
// order, and where each comes from (from: its index in the previous
// generation, or -1 for a fresh one). Reused chunks share the previous
// generation's mapped chunks.bin (b.old stays alive until the new
// generation is written); a touched source's take its new updated_at.
func (b *builder) reuse(kept []*part) ([]chunk.Chunk, []int) {
	oldChunk := func(i int) chunk.Chunk { return b.old.Chunk(i) }
	if b.old != nil && b.old.store != nil {
		oldChunk = b.old.store.chunkInPlace
	}
	chunks := make([]chunk.Chunk, 0, b.sum.Chunks)
	from := make([]int, 0, b.sum.Chunks)
	for _, p := range kept {
		if p.reused {
			for k := range p.sd.NChunks {
				c := oldChunk(p.sd.first + k)
				if p.retimed {
					c.UpdatedAt = updatedAt(p.sd.Doc.ModTime)
				}
				chunks = append(chunks, c)
				from = append(from, p.sd.first+k)
			}
			continue
		}
		chunks = append(chunks, p.chunks...)
		for range p.chunks {
			from = append(from, -1)
		}
		p.chunks = nil
	}
	for _, f := range from {
		if f < 0 {
			b.nfresh++
		}
	}
	return chunks, from
}

// freeMemory hands the garbage of the analysis back to the OS, so that the
// peak RSS stays near the live heap instead of twice it (one collection,
// well under a second at 100k chunks). A build that analysed few of its
// total chunks (an incremental one after a small change) has little
// garbage to hand back and skips it: each collection marks the whole live
// heap.
func (b *builder) freeMemory(total int) {
	if b.old == nil || b.nfresh > total/freshShare {
		debug.FreeOSMemory()
	}
}

// composeBM25 is stage 7: the BM25 index of the fresh chunks (added),
// composed with the previous generation's postings, read in place, into
// the new generation's (lex). delta is what the composition changed.
func (b *builder) composeBM25(from []int) (lex, added *bm25.Index, delta bm25.ComposeStats, err error) {
	b.progress("bm25", 0, 1)
	added = b.fresh.Build()
	b.fresh = nil
	b.freeMemory(len(from))
	lex = added
	if b.old != nil {
		if lex, delta, err = bm25.Compose(b.old.lex, added, from); err != nil {
			return nil, nil, delta, fmt.Errorf("update the BM25 index: %w", err)
		}
		runtime.KeepAlive(b.old) // its postings are read in place from its mapping
	}
	b.progress("bm25", 1, 1)
	return lex, added, delta, nil
}

// embed is stage 8: the vector leg (embedGeneration: the local model
// fitted again or kept, unchanged chunks keeping their vectors when it
// is kept).
func (b *builder) embed(ctx context.Context, chunks []chunk.Chunk, from []int, lex, added *bm25.Index, delta bm25.ComposeStats) (vectorLeg, error) {
	b.progress("embed", 0, len(chunks))
	leg, err := embedGeneration(ctx, b.opt, b.old, b.prevMeta, b.prev.fit, chunks, from, lex, added, delta)
	if err != nil {
		return leg, err
	}
	b.sum.Refit, b.sum.Drift = leg.refit, leg.drift
	b.progress("embed", len(chunks), len(chunks))
	if leg.refit {
		b.nfresh = len(chunks) // every chunk was embedded again
	}
	b.freeMemory(len(chunks))
	return leg, nil
}

// write is stage 9: the new generation written and switched to, then the
// stale pages deleted (they are recorded in it first, so wherever a crash
// hits, the next build still knows they are not copies).
func (b *builder) write(ctx context.Context, chunks []chunk.Chunk, lex *bm25.Index, leg vectorLeg, docs []*storedDoc, stale []string) error {
	opt := b.opt
	gen := b.prevMeta.Generation + 1
	if b.prevGen == "" {
		gen = nextGeneration(opt.Dir)
	}
	meta := Meta{
		FormatVersion: FormatVersion,
		Generation:    gen,
		BuiltAt:       time.Now(),
		DataDir:       opt.DataDir,
		DatabaseDir:   opt.DatabaseDir,
		Documents:     b.sum.Documents,
		Pages:         b.sum.Pages,
		Chunks:        len(chunks),
		ChunkSize:     opt.Chunk.Size,
		ChunkOverlap:  opt.Chunk.Overlap,
		Analyzer:      opt.Analyzer,
		Embedder:      leg.info,
		HTMLMode:      opt.HTMLMode,
		Categorized:   opt.Categorize != nil,
	}
	// A kept local model is the previous generation's embedder.bin as it
	// is: linked, not encoded and written again.
	var same map[string]sameFile
	if b.old != nil && leg.local != nil && leg.local == b.old.local {
		if sum, ok := b.prevMeta.Files[embedderFile]; ok {
			same = map[string]sameFile{embedderFile: {path: filepath.Join(b.prevGen, embedderFile), sum: sum}}
		}
	}
	rec := &buildRecord{Docs: docs, Fit: leg.fit, Removed: stale}
	free := func() { b.freeMemory(len(chunks)) }
	if err := writeGeneration(ctx, opt.Dir, &meta, chunks, lex, leg.vectors(), leg.local, rec, free, same, opt.crash); err != nil {
		return err
	}
	runtime.KeepAlive(b.old) // the reused vectors were copied from its mapping
	if err := removePages(b.db, stale, opt.crash); err != nil {
		return err
	}
	b.sum.Generation = gen
	return nil
}

// freshShare: a build whose fresh (analysed and embedded) chunks are at
// most 1/freshShare of the generation skips the collections that hand
// memory back to the OS (see Build).
const freshShare = 8

// part is one document of the generation being built: reused from the
// previous generation (its chunks, postings and vectors are taken from
// there, at sd.first) or fresh, with its chunks and, until they are added
// to the BM25 builder, their analysed terms.
type part struct {
	sd     *storedDoc
	reused bool
	// retimed: reused, but its source's modification time changed, so its
	// chunks take the new updated_at.
	retimed bool
	chunks  []chunk.Chunk
	terms   [][]string
}

// addTerms adds a fresh part's terms to the builder and drops them.
func (p *part) addTerms(b *bm25.Builder) {
	for _, t := range p.terms {
		b.Add(t)
	}
	p.terms = nil
}

// storedDoc is what a generation records per document (docs.gob) so that
// the next build can reuse an unchanged source without reading, chunking,
// analysing or embedding it again. Its chunks are the generation's own, in
// order: NChunks of them from the sum of NChunks of the documents before.
type storedDoc struct {
	Doc     document.Document // page texts dropped (Pages keeps the numbers)
	File    document.File
	Pages   []string // page identities
	NChunks int
	Extra   bool // a copy optimisation added to the page database (document.Copy)

	first int // index of the first chunk in the generation it was loaded from
}

// buildRecord is docs.gob: the documents of a generation, the state of
// its local embedder's fit, and the pages it retired.
type buildRecord struct {
	Docs []*storedDoc
	Fit  fitState
	// Removed lists the page identities of sources the generation no
	// longer has (deleted or skipped) whose files were still in the page
	// database when it was written: they are deleted right after the
	// switch. A build that finds any still there (the process was killed
	// in between) deletes them, and never takes them for copies.
	Removed []string
}

// openPrevious opens the live generation for reuse, sharing the build's
// analyser (a different one means the settings changed and nothing is
// reused anyway).
func openPrevious(ctx context.Context, opt BuildOptions, a *analysis.Analyzer, meta Meta) (*Index, error) {
	old, err := Open(ctx, opt.Dir, OpenOptions{Analyzer: a, Remote: opt.Remote, rawVectors: true})
	if err != nil {
		return nil, err
	}
	if old.Len() != meta.Chunks || old.meta.Generation != meta.Generation {
		return nil, fmt.Errorf("the live generation changed during the build — run `shirube index` again")
	}
	return old, nil
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

// previous is what a build reuses of the live generation: its sources by
// path and the page database copies it indexed by page identity; and what
// it must not take for copies: retired, the pages of sources it recorded
// as removed and, when nothing is reused (Rebuild, changed settings), the
// pages of all its sources.
type previous struct {
	sources map[string]*storedDoc
	copies  map[string]*storedDoc
	fit     fitState
	retired []string
}

// loadPrevious returns the previous generation's documents, when they can
// be reused by this build.
func loadPrevious(opt BuildOptions, warn func(string)) (previous, Meta, string) {
	out := previous{sources: map[string]*storedDoc{}, copies: map[string]*storedDoc{}}
	gen, _, err := readCurrent(opt.Dir)
	if err != nil {
		return out, Meta{}, ""
	}
	meta, err := readMeta(gen)
	if err != nil {
		warn(fmt.Sprintf("previous index not reused: %v", err))
		return out, Meta{}, ""
	}
	// retiredOnly keeps nothing of the previous generation but the pages
	// it knew were its sources': a build that reuses nothing still must
	// not index them as copies.
	retiredOnly := func(rec *buildRecord) {
		if meta.DatabaseDir != opt.DatabaseDir || rec == nil {
			return // another page database: its pages are not ours to judge
		}
		out.retired = append(out.retired, rec.Removed...)
		for _, d := range rec.Docs {
			if !d.Extra {
				out.retired = append(out.retired, d.Pages...)
			}
		}
	}
	var rec buildRecord
	b, err := readChecked(gen, &meta, docsFile)
	readErr := err
	if err == nil {
		err = decodeGob(b, &rec)
	}
	if opt.Rebuild {
		if err == nil {
			retiredOnly(&rec)
		}
		return out, Meta{}, ""
	}
	if meta.ChunkSize != opt.Chunk.Size || meta.ChunkOverlap != opt.Chunk.Overlap || meta.Analyzer != opt.Analyzer || meta.HTMLMode != opt.HTMLMode || meta.DatabaseDir != opt.DatabaseDir || meta.Categorized != (opt.Categorize != nil) {
		if err == nil {
			retiredOnly(&rec)
		}
		return out, meta, gen // settings changed: re-extract everything, keep the generation counter
	}
	if err != nil {
		// Unreadable, or an index written before docs.gob held a
		// buildRecord: its documents are extracted again, once.
		if readErr != nil {
			warn(fmt.Sprintf("previous index not reused: %v", readErr))
		}
		return out, meta, gen
	}
	out.retired = rec.Removed
	first := 0
	for _, d := range rec.Docs {
		d.first = first
		first += d.NChunks
		if d.Extra && len(d.Pages) == 1 {
			out.copies[d.Pages[0]] = d
		} else if !d.Extra {
			out.sources[d.Doc.Source] = d
		}
	}
	if first != meta.Chunks {
		out = previous{sources: map[string]*storedDoc{}, copies: map[string]*storedDoc{}}
		retiredOnly(&rec)
		return out, meta, gen
	}
	out.fit = rec.Fit
	return out, meta, gen
}

// prepare returns one source as a part of the generation: its pages
// synced into the page database, then, when they changed, chunked and
// analysed (an unchanged source is reused from the previous generation). A
// file that cannot be used is a Skip; a page database that cannot be
// written is an error that stops the build.
func prepare(ctx context.Context, db document.Database, ex *document.Extractor, a *analysis.Analyzer, copt chunk.Options, f document.File, prev *storedDoc) (*part, *document.Skip, error) {
	var prevSrc *document.Source
	var was string // the previous generation's updated_at of the source
	if prev != nil {
		prevSrc = &document.Source{Doc: prev.Doc, File: prev.File, Pages: prev.Pages}
		was = updatedAt(prev.Doc.ModTime)
	}
	src, changed, skip, err := db.Sync(ctx, ex, f, prevSrc)
	if err != nil || skip != nil {
		return nil, skip, err
	}
	if !changed {
		prev.Doc, prev.File = src.Doc, src.File
		return &part{sd: prev, reused: true, retimed: updatedAt(src.Doc.ModTime) != was}, nil, nil
	}
	p := &part{sd: &storedDoc{Doc: src.Doc, File: f, Pages: src.Pages}}
	updated := updatedAt(src.Doc.ModTime)
	texts := make([]string, len(src.Doc.Pages))
	for i, pg := range src.Doc.Pages {
		texts[i] = pg.Text
	}
	texts = chunk.MergeNearEmpty(texts) // a cover page is no chunk of its own
	for i, pg := range src.Doc.Pages {
		if i >= len(src.Pages) {
			break
		}
		cs, err := chunk.Page(src.Pages[i], src.Doc.Source, pg.Number, updated, texts[i], copt)
		if err != nil {
			return nil, &document.Skip{Path: f.Rel, Reason: "chunk: " + err.Error()}, nil
		}
		p.add(a, cs)
	}
	p.sd.Doc.Pages = pageNumbers(p.sd.Doc.Pages)
	return p, nil, nil
}

// updatedAt is a chunk's updated_at: its source's modification time,
// ISO 8601 without the zone (seed 002: "2024-12-29T13:00:00").
func updatedAt(t time.Time) string { return t.Format("2006-01-02T15:04:05") }

// add appends chunks to a fresh part with their analysed terms.
func (p *part) add(a *analysis.Analyzer, cs []chunk.Chunk) {
	for _, c := range cs {
		p.chunks = append(p.chunks, c)
		p.terms = append(p.terms, a.Terms(c.Text))
	}
	p.sd.NChunks = len(p.chunks)
}

// pageNumbers returns pages without their text: a generation records the
// pages a document had, not what they said (the chunks and the page
// database hold that).
func pageNumbers(pages []document.Page) []document.Page {
	out := make([]document.Page, len(pages))
	for i, p := range pages {
		out[i].Number = p.Number
	}
	return out
}

// copyPages indexes the page files that exist only in the page database —
// the copies that folder-structure optimisation places in better-named
// folders (document.Database.Copies). Each becomes a one-page document
// whose identity is its own path, so a question can retrieve the copy.
// changed reports whether the set or a content differs from the previous
// generation. Fresh copies' terms go into fresh at once.
func copyPages(ctx context.Context, db document.Database, copt chunk.Options, a *analysis.Analyzer, kept []*part, prev previous, reuse bool, fresh *bm25.Builder) ([]*part, bool, error) {
	known := map[string]bool{}
	for _, p := range kept {
		for _, id := range p.sd.Pages {
			known[id] = true
		}
	}
	// Pages of the previous generation's sources are never copies, even
	// when their source is gone or was skipped this time: they are deleted
	// after the switch (removeStale), not resurrected under another path.
	for _, sd := range prev.sources {
		for _, id := range sd.Pages {
			known[id] = true
		}
	}
	for _, id := range prev.retired {
		known[id] = true
	}
	prevCopy := maps.Clone(prev.copies)
	copies, err := db.Copies(ctx, func(id string) bool { return known[id] })
	var out []*part
	changed := false
	for _, c := range copies {
		if old := prevCopy[c.ID]; reuse && old != nil && old.Doc.Hash == c.Hash {
			out = append(out, &part{sd: old, reused: true})
			delete(prevCopy, c.ID)
			continue
		}
		changed = true
		doc := document.Document{Source: c.ID, Kind: document.Markdown, Pages: []document.Page{{Number: c.Page}}, Hash: c.Hash, ModTime: c.ModTime, Size: c.Size}
		p := &part{sd: &storedDoc{Doc: doc, Pages: []string{c.ID}, Extra: true}}
		cs, err := chunk.Page(c.ID, c.ID, c.Page, updatedAt(c.ModTime), c.Text, copt)
		if err != nil {
			continue
		}
		// The folder path is what optimisation chose to make the page
		// findable, so it heads every chunk of the copy, above the page's
		// own headings: a Markdown or HTML page's "# H1" must not push it
		// out (a level-1 heading would replace a "# folder" line).
		if c.Folder != "" {
			for i := range cs {
				cs[i].Text = "# " + c.Folder + "\n" + cs[i].Text
				if cs[i].Heading == "" {
					cs[i].Heading = c.Folder
				} else {
					cs[i].Heading = c.Folder + " > " + cs[i].Heading
				}
			}
		}
		p.add(a, cs)
		p.addTerms(fresh)
		out = append(out, p)
	}
	if len(prevCopy) > 0 {
		changed = true // a copy was removed (rollback or undo)
	}
	return out, changed, err
}

// stalePages lists, sorted, the page files of the previous generation's
// sources — and of the sources it had retired itself — that the new
// generation does not cite and that are still in the page database:
// sources that disappeared, sources skipped this time, and whatever a
// crash after the last switch left behind. Copies belong to the optimiser
// and are never listed.
func stalePages(db document.Database, prev previous, kept []*storedDoc) []string {
	cited := map[string]bool{}
	for _, sd := range kept {
		for _, id := range sd.Pages {
			cited[id] = true
		}
	}
	seen := map[string]bool{}
	var out []string
	add := func(id string) {
		if !cited[id] && !seen[id] && db.Exists([]string{id}) {
			seen[id] = true
			out = append(out, id)
		}
	}
	for _, sd := range prev.sources {
		for _, id := range sd.Pages {
			add(id)
		}
	}
	for _, id := range prev.retired {
		add(id)
	}
	slices.Sort(out)
	return out
}

// removePages deletes stale page files (and folders left empty), one at a
// time; crash is the tests' kill point after each.
func removePages(db document.Database, stale []string, crash func(string) error) error {
	for _, id := range stale {
		db.Remove([]string{id})
		if crash != nil {
			if err := crash("remove " + id); err != nil {
				return err
			}
		}
	}
	return nil
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
	lex, err := lexicalOf(ctx, a, chunks)
	if err != nil {
		return nil, err
	}
	leg, err := embedAll(ctx, opt.Embedder, opt.EmbeddingModel, opt.Remote, chunks, lex, nil)
	if err != nil {
		return nil, err
	}
	return &Index{
		meta:     Meta{FormatVersion: FormatVersion, Chunks: len(chunks), Analyzer: opt.Analyzer, Embedder: leg.info, BuiltAt: time.Now()},
		chunks:   chunks,
		lex:      lex,
		vec:      leg.flat,
		local:    leg.local,
		analyzer: a,
		remote:   opt.Remote,
	}, nil
}

// lexicalOf analyses chunks on all cores, a block at a time, and indexes
// their terms in order: only one block's terms are held at once.
func lexicalOf(ctx context.Context, a *analysis.Analyzer, chunks []chunk.Chunk) (*bm25.Index, error) {
	bb := bm25.NewBuilder(bm25.DefaultParams())
	const block = 1024
	terms := make([][]string, block)
	for lo := 0; lo < len(chunks); lo += block {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+block, len(chunks))
		parallelFor(hi-lo, func(i int) { terms[i] = a.Terms(chunks[lo+i].Text) })
		for i := range hi - lo {
			bb.Add(terms[i])
			terms[i] = nil
		}
	}
	return bb.Build(), nil
}

// writeGeneration writes a complete generation, installs it as the live one
// and removes older ones. meta.Files is filled in.
//
// same names files whose content is that of a file of the previous
// generation: they are hard-linked from it (written when linking fails).
//
// crash (tests only, may be nil) is called after each file system
// operation; an error returns at once, leaving everything as a kill would.
func writeGeneration(ctx context.Context, dir string, meta *Meta, chunks []chunk.Chunk, lex *bm25.Index, vectors func(io.Writer) error, local *embed.Local, rec *buildRecord, freeMemory func(), same map[string]sameFile, crash func(string) error) error {
	if rec == nil {
		rec = &buildRecord{}
	}
	if crash == nil {
		crash = func(string) error { return nil }
	}
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
		{vectorsFile, vectors},
		{docsFile, func(w io.Writer) error { return encodeGob(w, rec) }},
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
		if f, ok := same[s.name]; ok && gw.link(s.name, f) {
			if err := crash("link " + s.name); err != nil {
				return err
			}
			continue
		}
		if err := gw.write(s.name, s.fill); err != nil {
			os.RemoveAll(tmp)
			return err
		}
		if err := crash("write " + s.name); err != nil {
			return err
		}
		// An encoder's buffers (the chunks' gob holds the whole file) are
		// garbage now: return them before the next file adds its own.
		freeMemory()
	}
	meta.Files = gw.sums
	mb, _ := json.MarshalIndent(meta, "", "  ")
	if err := writeFileAtomic(filepath.Join(tmp, metaFile), mb); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("write metadata: %w", err)
	}
	if err := crash("write " + metaFile); err != nil {
		return err
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
	if err := crash("install " + genName(gen)); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, currentFile), []byte(genName(gen)+"\n")); err != nil {
		return fmt.Errorf("switch to the new generation: %w", err)
	}
	if err := crash("switch " + currentFile); err != nil {
		return err
	}
	removeOldGenerations(dir, genName(gen))
	return crash("remove old generations")
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
	if err := writeGeneration(ctx, dir, &meta, ix.chunks, ix.lex, flatWriter(ix.vec), ix.local, nil, debug.FreeOSMemory, nil, nil); err != nil {
		return err
	}
	ix.meta, ix.dir = meta, dir
	return nil
}
