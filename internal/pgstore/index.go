package pgstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/bm25"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/embed"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/vector"
)

// Index is one generation of the store, opened for searching: it implements
// retrieve.Store. It holds only the generation's statistics and embedding
// model in memory; chunks, postings and vectors stay in the database. It is
// safe for concurrent use.
type Index struct {
	db       *DB
	gen      int64
	meta     index.Meta
	analyzer *analysis.Analyzer
	local    *embed.Local
	remote   index.TextEmbedder
	n        int     // chunks
	avgdl    float64 // mean chunk length in terms
	params   bm25.Params
	vectors  string       // hnsw, exact or memory
	flat     *vector.Flat // vectors == memory: exact search here
	byRow    []int64      // flat position → chunk id
	exact    bool         // ignore the HNSW index
	sqlBM25  bool         // sum BM25 in SQL instead of in Go
	pages    []string
	minChunk int64 // chunk ids of the generation lie in [minChunk, maxChunk]
	maxChunk int64
	scratch  sync.Pool // *[]float64 accumulators, maxChunk − minChunk + 1 long

	mu  sync.Mutex
	dfs map[string]int // document frequency cache (a generation never changes)
}

// OpenOptions configure Open.
type OpenOptions struct {
	// Remote embeds queries of a generation built with the openai embedder.
	Remote index.TextEmbedder
	// Analyzer may be shared; nil builds one from the generation's options.
	Analyzer *analysis.Analyzer
	// Generation opens that generation instead of the current one.
	Generation int64
	// Exact searches vectors by an exact scan even when an HNSW index
	// exists (for benchmarks and parity checks).
	Exact bool
	// SQLBM25 sums BM25 in SQL over the postings table (one row per term
	// and chunk) instead of scoring the query terms' encoded postings in
	// this process. Both give the embedded index's scores; the SQL sum
	// reads every posting of every query term inside the database and is
	// slower on large corpora (docs/BENCHMARKS.md).
	SQLBM25 bool
}

// Open opens the current generation for searching.
func (db *DB) Open(ctx context.Context, opt OpenOptions) (*Index, error) {
	gen := opt.Generation
	if gen == 0 {
		var err error
		if gen, err = db.Current(ctx); err != nil {
			return nil, err
		}
	}
	ix := &Index{db: db, gen: gen, remote: opt.Remote, analyzer: opt.Analyzer, params: bm25.DefaultParams(), exact: opt.Exact, sqlBM25: opt.SQLBM25, dfs: map[string]int{}}
	var mj, model []byte
	var state string
	err := db.pool.QueryRow(ctx, "SELECT state, meta, model, chunks, coalesce(avgdl, 1), coalesce(vectors, ''), coalesce(min_chunk, 0), coalesce(max_chunk, -1) FROM generations WHERE id = $1", gen).
		Scan(&state, &mj, &model, &ix.n, &ix.avgdl, &ix.vectors, &ix.minChunk, &ix.maxChunk)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("generation %d is not in the database (replaced meanwhile?) — retry", gen)
	}
	if err != nil {
		return nil, fmt.Errorf("read generation %d: %w", gen, err)
	}
	if state == "building" {
		return nil, fmt.Errorf("generation %d is still being built", gen)
	}
	if err := json.Unmarshal(mj, &ix.meta); err != nil {
		return nil, fmt.Errorf("generation %d metadata: %w", gen, err)
	}
	if ix.analyzer == nil {
		if ix.analyzer, err = analysis.New(ix.meta.Analyzer); err != nil {
			return nil, fmt.Errorf("analyser: %w", err)
		}
	}
	if len(model) > 0 {
		ix.local = new(embed.Local)
		if err := ix.local.UnmarshalBinary(model); err != nil {
			return nil, fmt.Errorf("generation %d embedding model: %w", gen, err)
		}
	}
	rows, err := db.pool.Query(ctx, fmt.Sprintf("SELECT DISTINCT file FROM %s ORDER BY file", partition("chunks", gen)))
	if err != nil {
		return nil, fmt.Errorf("read pages: %w", err)
	}
	if ix.pages, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return nil, fmt.Errorf("read pages: %w", err)
	}
	if ix.vectors == "memory" {
		if err := ix.loadVectors(ctx); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// loadVectors reads a generation's embeddings into memory, for databases
// without pgvector.
func (ix *Index) loadVectors(ctx context.Context) error {
	flat, err := vector.NewFlat(ix.meta.Embedder.Dim)
	if err != nil {
		return err
	}
	rows, err := ix.db.pool.Query(ctx, fmt.Sprintf("SELECT chunk, embedding FROM %s ORDER BY chunk", partition("embeddings", ix.gen)))
	if err != nil {
		return fmt.Errorf("read embeddings: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var v []float32
		if err := rows.Scan(&id, &v); err != nil {
			return err
		}
		if _, err := flat.Add(v); err != nil {
			return fmt.Errorf("embedding of chunk %d: %w", id, err)
		}
		ix.byRow = append(ix.byRow, id)
	}
	ix.flat = flat
	return rows.Err()
}

// Generation is the generation's id.
func (ix *Index) Generation() int64 { return ix.gen }

// Meta returns the generation's metadata.
func (ix *Index) Meta() index.Meta { return ix.meta }

// Len is the number of chunks.
func (ix *Index) Len() int { return ix.n }

// Analyzer is the analyser the generation was built with.
func (ix *Index) Analyzer() *analysis.Analyzer { return ix.analyzer }

// Terms analyses text as the chunks were analysed.
func (ix *Index) Terms(text string) []string { return ix.analyzer.Terms(text) }

// Pages lists every page identity, sorted, once each.
func (ix *Index) Pages() []string { return ix.pages }

// VectorSearch says how the vector leg searches: hnsw (pgvector's index),
// exact (pgvector, full scan) or memory (exact, in this process).
func (ix *Index) VectorSearch() string {
	if ix.vectors == "hnsw" && ix.exact {
		return "exact"
	}
	return ix.vectors
}

// HasVectors reports whether queries can be embedded.
func (ix *Index) HasVectors() bool { return ix.local != nil || ix.remote != nil }

// EmbedQuery embeds a query the way the generation's chunks were embedded.
func (ix *Index) EmbedQuery(ctx context.Context, query string, terms []string) ([]float32, error) {
	if ix.local != nil {
		if terms == nil {
			terms = ix.analyzer.Terms(query)
		}
		return index.QueryVector(ix.local, terms, query), nil
	}
	if ix.remote == nil {
		return nil, fmt.Errorf("the index uses the %s embedder: set OPENAI_API_KEY to embed queries", ix.meta.Embedder.Model)
	}
	return index.RemoteQueryVector(ctx, ix.remote, query)
}

// docFreqs returns the document frequency of each term (0 when no chunk
// contains it), from the cache or the terms table.
func (ix *Index) docFreqs(ctx context.Context, terms []string) (map[string]int, error) {
	out := make(map[string]int, len(terms))
	var missing []string
	ix.mu.Lock()
	for _, t := range terms {
		if df, ok := ix.dfs[t]; ok {
			out[t] = df
		} else if _, dup := out[t]; !dup {
			out[t] = 0
			missing = append(missing, t)
		}
	}
	ix.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	rows, err := ix.db.pool.Query(ctx, fmt.Sprintf("SELECT term, df FROM %s WHERE term = ANY($1)", partition("terms", ix.gen)), missing)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var df int
		if err := rows.Scan(&t, &df); err != nil {
			return nil, err
		}
		out[t] = df
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ix.mu.Lock()
	if len(ix.dfs) > 200_000 {
		clear(ix.dfs) // bounded: a long-running replica sees unbounded query vocabularies
	}
	for _, t := range missing {
		ix.dfs[t] = out[t]
	}
	ix.mu.Unlock()
	return out, nil
}

// idf is bm25's ln(1 + (N − n + 0.5)/(n + 0.5)).
func (ix *Index) idf(df int) float64 {
	n := float64(df)
	return math.Log(1 + (float64(ix.n)-n+0.5)/(n+0.5))
}

// IDFs returns the BM25 idf of each term.
func (ix *Index) IDFs(ctx context.Context, terms []string) (map[string]float64, error) {
	dfs, err := ix.docFreqs(ctx, terms)
	if err != nil {
		return nil, fmt.Errorf("term statistics: %w", err)
	}
	out := make(map[string]float64, len(dfs))
	for t, df := range dfs {
		out[t] = ix.idf(df)
	}
	return out, nil
}

// lexicalSQL sums BM25 in SQL over the postings of the query's terms with
// the embedded index's arithmetic: per term w = idf·(k1+1) (computed in Go,
// as bm25 does), per posting w·tf / (tf + norm) where
// norm = float32(k1·(1 − b + b·dl/avgdl)) — the ::real cast is the embedded
// index's float32 — summed per chunk; ties by ascending chunk id.
const lexicalSQL = `SELECT p.chunk, sum(q.w * p.tf::float8 / (p.tf::float8 + (($3::float8 * (1::float8 - $4::float8 + $4::float8 * p.dl::float8 / $5::float8))::real)::float8)) AS score
FROM unnest($1::text[], $2::float8[]) AS q(term, w)
JOIN %s p ON p.term = q.term
GROUP BY p.chunk
ORDER BY score DESC, p.chunk
LIMIT $6`

// LexicalHits runs BM25 in SQL: up to n hits, best first, and the query's
// upper bound Σ idf·(k1+1) (see bm25.Index.UpperBound).
func (ix *Index) LexicalHits(ctx context.Context, terms []string, n int) ([]index.Hit, float64, error) {
	if n <= 0 || ix.n == 0 {
		return nil, 0, nil
	}
	var lists map[string][]byte
	var dfs map[string]int
	var err error
	if ix.sqlBM25 {
		dfs, err = ix.docFreqs(ctx, terms)
	} else {
		dfs, lists, err = ix.fetchPostings(ctx, terms)
	}
	if err != nil {
		return nil, 0, err
	}
	// Distinct vocabulary terms in query order, as bm25's resolve.
	var qt []string
	var qw []float64
	var ub float64
	seen := map[string]bool{}
	for _, t := range terms {
		if seen[t] || dfs[t] == 0 {
			continue
		}
		seen[t] = true
		w := 1 * ix.idf(dfs[t]) * (ix.params.K1 + 1)
		qt, qw = append(qt, t), append(qw, w)
		ub += w
	}
	if len(qt) == 0 {
		return nil, 0, nil
	}
	if !ix.sqlBM25 {
		hits, err := ix.scorePostings(qt, qw, lists, n)
		return hits, ub, err
	}
	rows, err := ix.db.pool.Query(ctx, fmt.Sprintf(lexicalSQL, partition("postings", ix.gen)), qt, qw, ix.params.K1, ix.params.B, ix.avgdl, n)
	if err != nil {
		return nil, 0, err
	}
	hits, err := collectHits(rows)
	return hits, ub, err
}

// fetchPostings reads the document frequency and the encoded postings of
// each term in one round trip (and caches the frequencies).
func (ix *Index) fetchPostings(ctx context.Context, terms []string) (map[string]int, map[string][]byte, error) {
	rows, err := ix.db.pool.Query(ctx, fmt.Sprintf("SELECT term, df, postings FROM %s WHERE term = ANY($1)", partition("terms", ix.gen)), terms)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	dfs := make(map[string]int, len(terms))
	lists := make(map[string][]byte, len(terms))
	for rows.Next() {
		var t string
		var df int
		var p []byte
		if err := rows.Scan(&t, &df, &p); err != nil {
			return nil, nil, err
		}
		dfs[t], lists[t] = df, p
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	ix.mu.Lock()
	if len(ix.dfs) > 200_000 {
		clear(ix.dfs)
	}
	for _, t := range terms {
		ix.dfs[t] = dfs[t]
	}
	ix.mu.Unlock()
	return dfs, lists, nil
}

// scorePostings sums BM25 over the query terms' encoded postings here,
// term by term in query order with the embedded index's float32 length
// norm, so the scores are the embedded index's to the last bit. Ties go to
// the lower chunk id.
func (ix *Index) scorePostings(qt []string, qw []float64, lists map[string][]byte, n int) ([]index.Hit, error) {
	size := int(ix.maxChunk - ix.minChunk + 1)
	accp, _ := ix.scratch.Get().(*[]float64)
	if accp == nil || len(*accp) != size {
		a := make([]float64, size)
		accp = &a
	}
	defer ix.scratch.Put(accp)
	acc := *accp
	var touched []int32
	k1, b := ix.params.K1, ix.params.B
	for i, t := range qt {
		p, w := lists[t], qw[i]
		id := int64(0)
		for j := 0; j < len(p); {
			delta, k := binary.Uvarint(p[j:])
			if k <= 0 {
				return nil, fmt.Errorf("postings of %q are damaged", t)
			}
			j += k
			tf, k := binary.Uvarint(p[j:])
			if k <= 0 {
				return nil, fmt.Errorf("postings of %q are damaged", t)
			}
			j += k
			dl, k := binary.Uvarint(p[j:])
			if k <= 0 {
				return nil, fmt.Errorf("postings of %q are damaged", t)
			}
			j += k
			id += int64(delta)
			pos := id - ix.minChunk
			if pos < 0 || pos >= int64(size) {
				return nil, fmt.Errorf("postings of %q name chunk %d outside the generation", t, id)
			}
			if acc[pos] == 0 {
				touched = append(touched, int32(pos))
			}
			norm := float32(k1 * (1 - b + b*float64(dl)/ix.avgdl))
			f := float64(tf)
			acc[pos] += w * f / (f + float64(norm))
		}
	}
	top := newTopN(n)
	for _, pos := range touched {
		top.add(index.Hit{Chunk: int(ix.minChunk + int64(pos)), Score: acc[pos]})
		acc[pos] = 0
	}
	return top.sorted(), nil
}

func collectHits(rows pgx.Rows) ([]index.Hit, error) {
	defer rows.Close()
	var out []index.Hit
	for rows.Next() {
		var id int64
		var s float64
		if err := rows.Scan(&id, &s); err != nil {
			return nil, err
		}
		out = append(out, index.Hit{Chunk: int(id), Score: s})
	}
	return out, rows.Err()
}

// DenseHits ranks chunks by cosine: pgvector's HNSW index (or its exact
// scan), or the in-memory exact search without pgvector.
func (ix *Index) DenseHits(ctx context.Context, q []float32, n int) ([]index.Hit, error) {
	if n <= 0 {
		return nil, nil
	}
	if len(q) != ix.meta.Embedder.Dim {
		return nil, fmt.Errorf("query vector has %d dimensions, the index %d", len(q), ix.meta.Embedder.Dim)
	}
	if ix.flat != nil {
		hs, err := ix.flat.Search(q, n)
		if err != nil {
			return nil, err
		}
		out := make([]index.Hit, len(hs))
		for i, h := range hs {
			out[i] = index.Hit{Chunk: int(ix.byRow[h.ID]), Score: h.Score}
		}
		return out, nil
	}
	hnsw := !ix.exact && ix.vectors == "hnsw"
	sql := denseSQL(partition("embeddings", ix.gen), hnsw)
	rows, err := ix.db.pool.Query(ctx, sql, vectorText(unit(q)), n)
	if err != nil {
		return nil, err
	}
	hits, err := collectHits(rows)
	if err != nil {
		return nil, err
	}
	if hnsw {
		sort.SliceStable(hits, func(i, j int) bool { return better(hits[i], hits[j]) })
	}
	return hits, nil
}

// denseSQL is the vector leg's query on a generation's embeddings table.
// pgvector's HNSW index serves only an ORDER BY on the bare distance: a
// second sort key (the chunk id, for stable ties) makes the planner scan and
// sort the whole table instead. So the index query orders by distance alone
// and DenseHits breaks ties afterwards; the exact query orders by an
// expression no index matches, ties included.
func denseSQL(table string, hnsw bool) string {
	order := "(embedding <=> $1::vector) + 0, chunk"
	if hnsw {
		order = "embedding <=> $1::vector"
	}
	return fmt.Sprintf("SELECT chunk, 1 - (embedding <=> $1::vector) FROM %s ORDER BY %s LIMIT $2", table, order)
}

// Chunks returns the chunks with the given ids, in order.
func (ix *Index) Chunks(ctx context.Context, ids []int) ([]chunk.Chunk, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	keys := make([]int64, len(ids))
	for i, id := range ids {
		keys[i] = int64(id)
	}
	rows, err := ix.db.pool.Query(ctx, fmt.Sprintf(`SELECT id, chunk_id, file, source, page, heading, idx, text, updated_at
		FROM %s WHERE id = ANY($1)`, partition("chunks", ix.gen)), keys)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[int64]chunk.Chunk, len(ids))
	for rows.Next() {
		var c chunk.Chunk
		var id int64
		if err := rows.Scan(&id, &c.ID, &c.File, &c.Source, &c.Page, &c.Heading, &c.Index, &c.Text, &c.UpdatedAt); err != nil {
			return nil, err
		}
		byID[id] = c
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]chunk.Chunk, len(ids))
	for i, k := range keys {
		c, ok := byID[k]
		if !ok {
			return nil, fmt.Errorf("chunk %d is not in generation %d", k, ix.gen)
		}
		out[i] = c
	}
	return out, nil
}

// topN keeps the n best hits: higher score first, then lower chunk id.
type topN struct {
	n int
	h []index.Hit // min-heap on rank: h[0] is the worst kept
}

func newTopN(n int) *topN { return &topN{n: n} }

func better(a, b index.Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Chunk < b.Chunk
}

func (t *topN) add(x index.Hit) {
	if len(t.h) < t.n {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !better(t.h[p], t.h[i]) {
				break
			}
			t.h[p], t.h[i] = t.h[i], t.h[p]
			i = p
		}
		return
	}
	if !better(x, t.h[0]) {
		return
	}
	t.h[0] = x
	for i := 0; ; {
		l, r, worst := 2*i+1, 2*i+2, i
		if l < len(t.h) && better(t.h[worst], t.h[l]) {
			worst = l
		}
		if r < len(t.h) && better(t.h[worst], t.h[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		t.h[i], t.h[worst] = t.h[worst], t.h[i]
		i = worst
	}
}

func (t *topN) sorted() []index.Hit {
	sort.Slice(t.h, func(i, j int) bool { return better(t.h[i], t.h[j]) })
	return t.h
}
