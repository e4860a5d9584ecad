package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/index"
)

// Settings are what a generation is built with; every worker of one build
// uses the same (they are stored with the generation).
type Settings struct {
	DataDir        string           `json:"data_dir"`
	DatabaseDir    string           `json:"database_dir"`
	ChunkSize      int              `json:"chunk_size"`
	ChunkOverlap   int              `json:"chunk_overlap"`
	Analyzer       analysis.Options `json:"analyzer"`
	Embedder       string           `json:"embedder"` // local or openai
	EmbeddingModel string           `json:"embedding_model,omitempty"`
	HTMLMode       string           `json:"html_mode"`
}

// termSep joins a chunk's analysed terms in chunks.terms. Analysed terms
// never contain it (the analyser splits on control characters).
const termSep = "\x1f"

// ErrBusy means another process is finishing the generation.
var ErrBusy = errors.New("another worker is finishing this generation")

// partition names a generation's partition of a table.
func partition(table string, gen int64) string { return fmt.Sprintf("%s_g%d", table, gen) }

// newGeneration creates a generation in state building with its partitions.
func newGeneration(ctx context.Context, tx pgx.Tx, s Settings) (int64, error) {
	var gen int64
	if err := tx.QueryRow(ctx, "SELECT nextval('generation_ids')").Scan(&gen); err != nil {
		return 0, err
	}
	sj, _ := json.Marshal(s)
	if _, err := tx.Exec(ctx, "INSERT INTO generations (id, state, settings) VALUES ($1, 'building', $2)", gen, sj); err != nil {
		return 0, err
	}
	for _, t := range []string{"chunks", "postings", "terms"} {
		if _, err := tx.Exec(ctx, fmt.Sprintf("CREATE TABLE %s PARTITION OF %s FOR VALUES IN (%d)", partition(t, gen), t, gen)); err != nil {
			return 0, fmt.Errorf("create partition of %s: %w", t, err)
		}
	}
	return gen, nil
}

// docRow is one document of a generation.
type docRow struct {
	Source  string
	Hash    string
	Kind    string
	Size    int64
	ModTime time.Time
	Notes   []string
	Pages   []pageRow
}

type pageRow struct {
	ID     string
	Number int
	Text   string
}

// writeDocument stores one document with its pages, chunks and postings in
// tx. terms[i] are the analysed terms of chunks[i]. Chunk ids come from one
// sequence, in chunk order.
func writeDocument(ctx context.Context, tx pgx.Tx, gen int64, d docRow, chunks []chunk.Chunk, terms [][]string) error {
	if _, err := tx.Exec(ctx, `INSERT INTO documents (gen, source, hash, kind, size, mod_time, notes)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, gen, d.Source, d.Hash, d.Kind, d.Size, nullTime(d.ModTime), nonNil(d.Notes)); err != nil {
		return fmt.Errorf("store document %s: %w", d.Source, err)
	}
	if len(d.Pages) > 0 {
		rows := make([][]any, len(d.Pages))
		for i, p := range d.Pages {
			rows[i] = []any{gen, p.ID, d.Source, p.Number, p.Text}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"pages"}, []string{"gen", "id", "source", "number", "text"}, pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("store pages of %s: %w", d.Source, err)
		}
	}
	return writeChunks(ctx, tx, gen, d.Kind, chunks, terms)
}

// writeChunks stores chunks and their postings in tx.
func writeChunks(ctx context.Context, tx pgx.Tx, gen int64, kind string, chunks []chunk.Chunk, terms [][]string) error {
	if len(chunks) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(chunks))
	rows, err := tx.Query(ctx, "SELECT nextval('chunk_ids') FROM generate_series(1, $1)", len(chunks))
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	crow := make([][]any, len(chunks))
	var prow [][]any
	for i, c := range chunks {
		tf := map[string]int{}
		var order []string
		n := 0
		for _, t := range terms[i] {
			if t == "" {
				continue
			}
			n++
			if tf[t] == 0 {
				order = append(order, t)
			}
			tf[t]++
		}
		for _, t := range order {
			prow = append(prow, []any{gen, t, ids[i], int32(min(tf[t], 65535)), int32(n)})
		}
		h := sha256.Sum256([]byte(c.Text))
		meta, _ := json.Marshal(map[string]string{"kind": kind, "content_sha256": hex.EncodeToString(h[:])})
		crow[i] = []any{gen, ids[i], c.ID, c.File, c.Source, int32(c.Page), c.Heading, headingPath(c.Heading),
			int32(c.Index), c.Text, c.UpdatedAt, int32(n), strings.Join(terms[i], termSep), meta}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{partition("chunks", gen)},
		[]string{"gen", "id", "chunk_id", "file", "source", "page", "heading", "heading_path", "idx", "text", "updated_at", "length", "terms", "metadata"},
		pgx.CopyFromRows(crow)); err != nil {
		return fmt.Errorf("store chunks: %w", err)
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{partition("postings", gen)}, []string{"gen", "term", "chunk", "tf", "dl"}, pgx.CopyFromRows(prow)); err != nil {
		return fmt.Errorf("store postings: %w", err)
	}
	return nil
}

// headingPath splits "A > B > C" into its levels.
func headingPath(h string) []string {
	if h == "" {
		return []string{}
	}
	parts := strings.Split(h, " > ")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// FinishOptions configure finishing a generation.
type FinishOptions struct {
	Remote index.TextEmbedder // required for the openai embedder
	// Exact skips the HNSW index: vector search scans every embedding.
	Exact    bool
	Progress func(phase string, done, total int)
}

// finish embeds every chunk of a generation whose ingest is complete,
// fills the BM25 statistics, builds the indexes and makes it current, all in
// one transaction: a crash leaves the generation building and the previous
// one current. It returns ErrBusy when another process is finishing it.
func (db *DB) finish(ctx context.Context, gen int64, opt FinishOptions) (index.Meta, error) {
	progress := opt.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	var meta index.Meta
	var prev int64
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var state string
		var sj []byte
		err := tx.QueryRow(ctx, "SELECT state, settings FROM generations WHERE id = $1 FOR UPDATE NOWAIT", gen).Scan(&state, &sj)
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "55P03" {
			return ErrBusy
		}
		if err != nil {
			return fmt.Errorf("lock generation %d: %w", gen, err)
		}
		if state != "building" {
			return fmt.Errorf("generation %d is already %s", gen, state)
		}
		var s Settings
		if err := json.Unmarshal(sj, &s); err != nil {
			return fmt.Errorf("generation %d settings: %w", gen, err)
		}
		var open int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM jobs WHERE gen = $1 AND state IN ('pending', 'running')", gen).Scan(&open); err != nil {
			return err
		}
		if open > 0 {
			return fmt.Errorf("generation %d still has %d documents to ingest", gen, open)
		}
		if _, err := tx.Exec(ctx, "SET LOCAL maintenance_work_mem = '512MB'"); err != nil {
			return err
		}

		// Every chunk, in id order (the order ties are broken in).
		progress("read", 0, 1)
		var ids []int64
		var chunks []chunk.Chunk
		var terms [][]string
		var total int64
		rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT id, chunk_id, file, source, page, heading, idx, text, updated_at, length, terms
			FROM %s ORDER BY id`, partition("chunks", gen)))
		if err != nil {
			return err
		}
		for rows.Next() {
			var c chunk.Chunk
			var id int64
			var length int32
			var ts string
			if err := rows.Scan(&id, &c.ID, &c.File, &c.Source, &c.Page, &c.Heading, &c.Index, &c.Text, &c.UpdatedAt, &length, &ts); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
			chunks = append(chunks, c)
			if ts == "" {
				terms = append(terms, nil)
			} else {
				terms = append(terms, strings.Split(ts, termSep))
			}
			total += int64(length)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(chunks) == 0 {
			return errors.New("nothing to index: no document produced any chunk")
		}
		progress("read", 1, 1)

		progress("embed", 0, len(chunks))
		emb, err := index.EmbedCorpus(ctx, index.MemoryOptions{Analyzer: s.Analyzer, Embedder: s.Embedder, EmbeddingModel: s.EmbeddingModel, Remote: opt.Remote}, terms, chunks)
		if err != nil {
			return err
		}
		progress("embed", len(chunks), len(chunks))
		vectors := "memory"
		etable := partition("embeddings", gen)
		if db.hasVector {
			_, err = tx.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (chunk bigint PRIMARY KEY, embedding vector(%d) NOT NULL)", etable, emb.Info.Dim))
		} else {
			_, err = tx.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (chunk bigint PRIMARY KEY, embedding real[] NOT NULL)", etable))
		}
		if err != nil {
			return fmt.Errorf("create embeddings table: %w", err)
		}
		erows := make([][]any, len(ids))
		for i, id := range ids {
			v := unit(emb.Vectors[i])
			if db.hasVector {
				erows[i] = []any{id, vectorText(v)}
			} else {
				erows[i] = []any{id, v}
			}
		}
		if db.hasVector {
			// pgvector's text input: COPY through a text staging column.
			if _, err := tx.Exec(ctx, "CREATE TEMP TABLE embeddings_in (chunk bigint, embedding text) ON COMMIT DROP"); err != nil {
				return err
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"embeddings_in"}, []string{"chunk", "embedding"}, pgx.CopyFromRows(erows)); err != nil {
				return fmt.Errorf("store embeddings: %w", err)
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf("INSERT INTO %s SELECT chunk, embedding::vector FROM embeddings_in", etable)); err != nil {
				return fmt.Errorf("store embeddings: %w", err)
			}
			vectors = "exact"
			if !opt.Exact {
				progress("hnsw", 0, 1)
				if _, err := tx.Exec(ctx, fmt.Sprintf("CREATE INDEX %s_hnsw ON %s USING hnsw (embedding vector_cosine_ops)", etable, etable)); err != nil {
					return fmt.Errorf("build HNSW index: %w", err)
				}
				vectors = "hnsw"
				progress("hnsw", 1, 1)
			}
		} else if _, err := tx.CopyFrom(ctx, pgx.Identifier{etable}, []string{"chunk", "embedding"}, pgx.CopyFromRows(erows)); err != nil {
			return fmt.Errorf("store embeddings: %w", err)
		}

		// BM25 statistics: document frequencies and the average length,
		// computed as the embedded index computes them.
		progress("bm25", 0, 1)
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{partition("terms", gen)}, []string{"gen", "term", "df", "postings"}, termRows(gen, ids, terms)); err != nil {
			return fmt.Errorf("document frequencies: %w", err)
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf("CREATE INDEX %s_term ON %s (term) INCLUDE (chunk, tf, dl)", partition("postings", gen), partition("postings", gen))); err != nil {
			return fmt.Errorf("postings index: %w", err)
		}
		progress("bm25", 1, 1)
		avgdl := 1.0
		if total > 0 {
			avgdl = float64(total) / float64(len(chunks))
		}
		var docs, pages int
		if err := tx.QueryRow(ctx, "SELECT (SELECT count(*) FROM documents WHERE gen = $1), (SELECT count(*) FROM pages WHERE gen = $1)", gen).Scan(&docs, &pages); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(generation), 0) FROM current_generation").Scan(&prev); err != nil {
			return err
		}
		meta = index.Meta{
			FormatVersion: index.FormatVersion,
			Generation:    int(gen),
			BuiltAt:       time.Now(),
			DataDir:       s.DataDir,
			DatabaseDir:   s.DatabaseDir,
			Documents:     docs,
			Pages:         pages,
			Chunks:        len(chunks),
			ChunkSize:     s.ChunkSize,
			ChunkOverlap:  s.ChunkOverlap,
			Analyzer:      s.Analyzer,
			Embedder:      emb.Info,
			HTMLMode:      s.HTMLMode,
		}
		mj, _ := json.Marshal(meta)
		var model []byte
		if emb.Local != nil {
			if model, err = emb.Local.MarshalBinary(); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE generations SET state = 'ready', meta = $2, model = $3, chunks = $4,
			total_length = $5, avgdl = $6, vectors = $7, min_chunk = $8, max_chunk = $9, ready_at = now() WHERE id = $1`,
			gen, mj, model, len(chunks), total, avgdl, vectors, ids[0], ids[len(ids)-1]); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE generations SET state = 'retired' WHERE state = 'ready' AND id <> $1", gen); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO current_generation (generation) VALUES ($1)
			ON CONFLICT (singleton) DO UPDATE SET generation = excluded.generation, switched_at = now()`, gen); err != nil {
			return fmt.Errorf("switch to generation %d: %w", gen, err)
		}
		_, err = tx.Exec(ctx, "SELECT pg_notify($1, $2)", Channel, fmt.Sprint(gen))
		return err
	})
	if err != nil {
		return meta, err
	}
	// Visibility maps for index-only scans of the postings, fresh planner
	// statistics; then drop generations older than the one just replaced
	// (replicas may still be answering from that one for a moment).
	for _, t := range []string{partition("postings", gen), partition("chunks", gen), partition("terms", gen), partition("embeddings", gen)} {
		if _, err := db.pool.Exec(ctx, "VACUUM (ANALYZE) "+t); err != nil {
			return meta, fmt.Errorf("vacuum %s: %w", t, err)
		}
	}
	return meta, db.dropOld(ctx, gen, prev)
}

// dropOld removes every retired generation except keep (the one current
// until now), and abandoned builds older than cur.
func (db *DB) dropOld(ctx context.Context, cur, keep int64) error {
	rows, err := db.pool.Query(ctx, "SELECT id FROM generations WHERE id NOT IN ($1, $2) AND (state = 'retired' OR (state = 'building' AND id < $1))", cur, keep)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	for _, g := range ids {
		if err := db.dropGeneration(ctx, g); err != nil {
			return err
		}
	}
	return nil
}

// dropGeneration deletes a generation's rows and tables.
func (db *DB) dropGeneration(ctx context.Context, gen int64) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		for _, t := range []string{"chunks", "postings", "terms", "embeddings"} {
			if _, err := tx.Exec(ctx, "DROP TABLE IF EXISTS "+partition(t, gen)); err != nil {
				return fmt.Errorf("drop generation %d: %w", gen, err)
			}
		}
		_, err := tx.Exec(ctx, "DELETE FROM generations WHERE id = $1", gen)
		return err
	})
}

// LoadChunks builds a generation from ready-made chunks (one BEIR document
// per chunk, as index.FromChunks does for the embedded store), makes it
// current and returns its metadata. Chunk ids follow the order of chunks,
// so ties are broken as in the embedded index.
func (db *DB) LoadChunks(ctx context.Context, chunks []chunk.Chunk, opt index.MemoryOptions, fopt FinishOptions) (index.Meta, error) {
	if opt.Embedder == "" {
		opt.Embedder = "local"
	}
	a, err := analysis.New(opt.Analyzer)
	if err != nil {
		return index.Meta{}, fmt.Errorf("analyser: %w", err)
	}
	terms := index.ChunkTerms(a, chunks)
	var gen int64
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		gen, err = newGeneration(ctx, tx, Settings{Analyzer: opt.Analyzer, Embedder: opt.Embedder, EmbeddingModel: opt.EmbeddingModel})
		return err
	})
	if err != nil {
		return index.Meta{}, fmt.Errorf("new generation: %w", err)
	}
	const batch = 2000
	for lo := 0; lo < len(chunks); lo += batch {
		hi := min(lo+batch, len(chunks))
		err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			return writeChunks(ctx, tx, gen, "beir", chunks[lo:hi], terms[lo:hi])
		})
		if err != nil {
			return index.Meta{}, err
		}
		if fopt.Progress != nil {
			fopt.Progress("store", hi, len(chunks))
		}
	}
	if fopt.Remote == nil {
		fopt.Remote = opt.Remote
	}
	return db.finish(ctx, gen, fopt)
}

// termRows returns one row per distinct term of a generation: its document
// frequency and its postings encoded for scoring in Go — per chunk, in
// ascending id order, the uvarints id − previous id, tf and the chunk's
// length in terms.
func termRows(gen int64, ids []int64, terms [][]string) pgx.CopyFromSource {
	type list struct {
		df   int32
		prev int64
		buf  []byte
	}
	lists := map[string]*list{}
	var order []string
	tf := map[string]int{}
	for i, ts := range terms {
		clear(tf)
		n := 0
		var seen []string
		for _, t := range ts {
			if t == "" {
				continue
			}
			n++
			if tf[t] == 0 {
				seen = append(seen, t)
			}
			tf[t]++
		}
		for _, t := range seen {
			l := lists[t]
			if l == nil {
				l = &list{}
				lists[t] = l
				order = append(order, t)
			}
			l.df++
			l.buf = binary.AppendUvarint(l.buf, uint64(ids[i]-l.prev))
			l.buf = binary.AppendUvarint(l.buf, uint64(min(tf[t], 65535)))
			l.buf = binary.AppendUvarint(l.buf, uint64(n))
			l.prev = ids[i]
		}
	}
	rows := make([][]any, len(order))
	for i, t := range order {
		rows[i] = []any{gen, t, lists[t].df, lists[t].buf}
	}
	return pgx.CopyFromRows(rows)
}
