package index

import (
	"bufio"
	"context"
	"encoding/gob"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/bm25"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/embed"
	"github.com/shirube/shirube/internal/mapped"
	"github.com/shirube/shirube/internal/vector"
)

func newBufWriter(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 1<<20) }

// TextEmbedder embeds texts with a remote model (the openai embedder).
type TextEmbedder interface {
	EmbedTexts(ctx context.Context, texts []string) ([][]float32, error)
}

// Hit is one chunk found by a leg of the index, by position in Chunks.
type Hit struct {
	Chunk int
	Score float64
}

// Index is a loaded, immutable generation. It is safe for concurrent use.
type Index struct {
	dir      string
	meta     Meta
	chunks   []chunk.Chunk // in memory (FromChunks, chunks.gob); nil when store is set
	store    *chunkFile    // mapped chunks.bin
	lex      *bm25.Index
	vec      *vector.Flat
	rows     *vector.Rows // instead of vec for a build's previous generation (OpenOptions.rawVectors)
	local    *embed.Local
	analyzer *analysis.Analyzer
	remote   TextEmbedder
	loadTime time.Duration
	missing  []string     // cited page files no longer in the page database
	gone     map[int]bool // chunks citing a missing page: never returned by a search
}

// OpenOptions configure Open.
type OpenOptions struct {
	// Remote embeds queries for an index built with the openai embedder.
	// It is required for the vector leg of such an index; without it
	// searches use BM25 only.
	Remote TextEmbedder
	// Analyzer may be shared across indexes; nil builds one from the
	// options stored in the index.
	Analyzer *analysis.Analyzer

	// rawVectors leaves vectors.bin mapped and checked but not decoded
	// (Index.rows instead of Index.vec): a build copies the rows of its
	// unchanged chunks from it as they are stored.
	rawVectors bool
}

// Open loads the live generation of the index in dir.
func Open(ctx context.Context, dir string, opt OpenOptions) (*Index, error) {
	start := time.Now()
	gen, _, err := readCurrent(dir)
	if err != nil {
		return nil, err
	}
	meta, err := readMeta(gen)
	if err != nil {
		return nil, err
	}
	ix := &Index{dir: dir, meta: meta, remote: opt.Remote, analyzer: opt.Analyzer}
	if ix.analyzer == nil {
		if ix.analyzer, err = analysis.New(meta.Analyzer); err != nil {
			return nil, fmt.Errorf("analyser: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The files are memory-mapped: chunks.bin and the BM25 postings are used
	// in place (pages are read when a search needs them), the others are
	// decoded from the mapping, which is then unmapped. A mapping that stays
	// is unmapped when the Index is garbage-collected.
	var keep []*mapped.File
	fail := func(err error) (*Index, error) {
		for _, f := range keep {
			f.Close()
		}
		return nil, err
	}
	if _, ok := meta.Files[chunksBinFile]; ok {
		f, err := openChecked(gen, &meta, chunksBinFile, true)
		if err != nil {
			return fail(err)
		}
		keep = append(keep, f)
		if ix.store, err = openChunkFile(f, false); err != nil {
			return fail(fmt.Errorf("decode chunks: %w: %w", err, ErrDamaged))
		}
	} else {
		f, err := openChecked(gen, &meta, chunksFile, false)
		if err != nil {
			return fail(err)
		}
		err = gob.NewDecoder(f.Reader()).Decode(&ix.chunks)
		f.Close()
		if err != nil {
			return fail(fmt.Errorf("decode chunks: %w: %w", err, ErrDamaged))
		}
	}
	f, err := openChecked(gen, &meta, bm25File, true)
	if err != nil {
		return fail(err)
	}
	keep = append(keep, f)
	if ix.lex, err = bm25.Decode(f.Data); err != nil {
		return fail(fmt.Errorf("decode BM25 index: %w: %w", err, ErrDamaged))
	}
	f.Release()
	if f, err = openChecked(gen, &meta, vectorsFile, true); err != nil {
		return fail(err)
	}
	nvec := 0
	if opt.rawVectors {
		keep = append(keep, f)
		rows, err := vector.OpenRows(f.Data)
		if err != nil {
			return fail(fmt.Errorf("decode vectors: %w: %w", err, ErrDamaged))
		}
		ix.rows, nvec = &rows, rows.N
	} else {
		ix.vec, err = vector.ReadFlat(f.Reader())
		f.Close()
		if err != nil {
			return fail(fmt.Errorf("decode vectors: %w: %w", err, ErrDamaged))
		}
		nvec = ix.vec.Len()
	}
	if meta.Embedder.Kind == "local" {
		if f, err = openChecked(gen, &meta, embedderFile, true); err != nil {
			return fail(err)
		}
		ix.local = new(embed.Local)
		err = ix.local.UnmarshalBinary(f.Data)
		f.Close()
		if err != nil {
			return fail(fmt.Errorf("decode embedding model: %w: %w", err, ErrDamaged))
		}
	}
	runtime.AddCleanup(ix, func(fs []*mapped.File) {
		for _, f := range fs {
			f.Close()
		}
	}, keep)
	if ix.Len() != ix.lex.Len() || ix.Len() != nvec {
		return nil, fmt.Errorf("index in %s is inconsistent (%d chunks, %d BM25 docs, %d vectors): %w", dir, ix.Len(), ix.lex.Len(), nvec, ErrDamaged)
	}
	// Every cited page file must still exist: a search never cites a page
	// that is gone (after a crash, or deleted by hand); MissingPages lists
	// them and `shirube index` rebuilds.
	if ix.missing = missingPages(meta.DatabaseDir, ix.Pages()); len(ix.missing) > 0 {
		ix.gone = ix.chunksCiting(ix.missing)
	}
	ix.loadTime = time.Since(start)
	return ix, nil
}

// Meta returns the generation's metadata.
func (ix *Index) Meta() Meta { return ix.meta }

// Dir is the index directory.
func (ix *Index) Dir() string { return ix.dir }

// LoadTime is how long Open took.
func (ix *Index) LoadTime() time.Duration { return ix.loadTime }

// Len is the number of chunks.
func (ix *Index) Len() int {
	if ix.store != nil {
		return ix.store.Len()
	}
	return len(ix.chunks)
}

// Chunk returns chunk i.
func (ix *Index) Chunk(i int) chunk.Chunk {
	if ix.store != nil {
		defer runtime.KeepAlive(ix) // the mapping lives as long as ix
		return ix.store.Chunk(i)
	}
	return ix.chunks[i]
}

// Analyzer is the analyser the index was built with.
func (ix *Index) Analyzer() *analysis.Analyzer { return ix.analyzer }

// Terms analyses text as the index does.
func (ix *Index) Terms(text string) []string { return ix.analyzer.Terms(text) }

// Pages lists every page identity in the index, once each, in order of
// first appearance.
func (ix *Index) Pages() []string {
	if ix.store != nil {
		defer runtime.KeepAlive(ix)
		return ix.store.Pages()
	}
	seen := map[string]bool{}
	var out []string
	for _, c := range ix.chunks {
		if !seen[c.File] {
			seen[c.File] = true
			out = append(out, c.File)
		}
	}
	return out
}

// chunksCiting returns the positions of the chunks citing one of pages.
func (ix *Index) chunksCiting(pages []string) map[int]bool {
	gone := map[string]bool{}
	for _, id := range pages {
		gone[id] = true
	}
	out := map[int]bool{}
	if ix.store != nil {
		all := ix.store.Pages()
		for i := range ix.store.Len() {
			if gone[all[ix.store.PageOf(i)]] {
				out[i] = true
			}
		}
		runtime.KeepAlive(ix)
		return out
	}
	for i, c := range ix.chunks {
		if gone[c.File] {
			out[i] = true
		}
	}
	return out
}

// MissingPages lists, sorted, the page files the index cites that were not
// in the page database when it was loaded; their chunks are left out of
// every search. Empty for a healthy index. Run `shirube index` to rebuild.
func (ix *Index) MissingPages() []string { return ix.missing }

// present drops hits on chunks whose page is missing and keeps at most n.
func (ix *Index) present(hs []Hit, n int) []Hit {
	if len(ix.gone) == 0 {
		return hs
	}
	out := hs[:0]
	for _, h := range hs {
		if !ix.gone[h.Chunk] && len(out) < n {
			out = append(out, h)
		}
	}
	return out
}

// Lexical runs the BM25 leg for already analysed query terms and returns up
// to n hits, best first, with the query's upper bound (the score no chunk can
// exceed), which makes BM25 scores comparable across queries.
func (ix *Index) Lexical(terms []string, n int) ([]Hit, float64) {
	defer runtime.KeepAlive(ix) // the postings may be mapped (Open)
	hs := ix.lex.Search(terms, n+len(ix.gone))
	out := make([]Hit, len(hs))
	for i, h := range hs {
		out[i] = Hit{Chunk: h.Doc, Score: h.Score}
	}
	return ix.present(out, n), ix.lex.UpperBound(terms)
}

// ZeroHit reports whether the BM25 leg matches no chunk at all for text:
// none of its analysed terms occurs in the index.
func (ix *Index) ZeroHit(text string) bool {
	hs, _ := ix.Lexical(ix.Terms(text), 1)
	return len(hs) == 0
}

// IDF returns the BM25 inverse document frequency of an analysed term,
// ln(1 + (N − n + 0.5)/(n + 0.5)); a term no chunk contains gets the
// largest value, as the rarest possible term.
func (ix *Index) IDF(term string) float64 {
	n := float64(ix.lex.DocFreq(term))
	N := float64(ix.lex.Len())
	return math.Log(1 + (N-n+0.5)/(n+0.5))
}

// HasVectors reports whether queries can be embedded (false for an openai
// index opened without a remote embedder).
func (ix *Index) HasVectors() bool { return ix.local != nil || ix.remote != nil }

// EmbedQuery embeds a query the way the index's chunks were embedded.
// terms are the query's analysed terms when the caller already has them
// (the BM25 leg needs them too); nil means analyse here.
func (ix *Index) EmbedQuery(ctx context.Context, query string, terms []string) ([]float32, error) {
	if ix.local != nil {
		if terms == nil {
			terms = ix.analyzer.Terms(query)
		}
		return ix.local.Embed(featuresOf(terms, query)), nil
	}
	if ix.remote == nil {
		return nil, fmt.Errorf("index %s uses the %s embedder: set OPENAI_API_KEY to embed queries", ix.dir, ix.meta.Embedder.Model)
	}
	return RemoteQueryVector(ctx, ix.remote, query)
}

// Dense runs the vector leg and returns up to n hits by cosine, best first.
func (ix *Index) Dense(q []float32, n int) []Hit {
	hs, err := ix.vec.Search(q, n+len(ix.gone))
	if err != nil {
		return nil
	}
	out := make([]Hit, len(hs))
	for i, h := range hs {
		out[i] = Hit{Chunk: h.ID, Score: h.Score}
	}
	return ix.present(out, n)
}

// featuresOf returns what the local embedder sees of a text: its analysed
// terms (words, and character bigrams of Japanese runs) plus character
// trigrams of Latin words, which carry spelling variants and inflections
// (measured on JSQuAD and SciFact, docs/BENCHMARKS.md). The terms come from
// the caller, who needs them for BM25 anyway, so a text is analysed once.
func featuresOf(terms []string, text string) []string {
	f := append([]string(nil), terms...)
	for _, w := range strings.FieldsFunc(analysis.Normalize(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if len(w) > 3 {
			f = append(f, embed.CharNGrams(w, 3)...)
		}
	}
	return f
}
