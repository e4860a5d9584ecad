package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/index"
)

// IngestOptions configure Ingest.
type IngestOptions struct {
	Settings
	// Workers is the number of documents this process ingests at once
	// (default 1). Other processes may work on the same build.
	Workers int
	// Worker names this process in the job table (default host:pid).
	Worker string
	// Lease is how long a claimed document stays with its worker; a worker
	// that crashed loses its documents to the others after it (default 2 min).
	Lease       time.Duration
	MaxFileSize int64
	// FileTimeout bounds the reading of one file (document.Options).
	FileTimeout time.Duration
	// Rebuild re-extracts every document instead of copying unchanged ones
	// (same source, same content hash) from the current generation.
	Rebuild bool
	Finish  FinishOptions
	Warn    func(string)
	// Progress is called after each document this process finished.
	Progress func(phase string, done, total int)
}

// IngestSummary reports what Ingest did.
type IngestSummary struct {
	Generation int64           `json:"generation"`
	Joined     bool            `json:"joined"`    // the build was started by another process
	Processed  int             `json:"processed"` // documents this process ingested
	Reused     int             `json:"reused"`    // of which copied unchanged from the current generation
	Skipped    []document.Skip `json:"skipped,omitempty"`
	Finished   bool            `json:"finished"` // this process finished the build
	Meta       index.Meta      `json:"meta"`
	Seconds    float64         `json:"seconds"`
	// IngestSeconds is the time until every document was stored (the rest
	// of Seconds is embedding, statistics, indexes and the switch).
	IngestSeconds float64        `json:"ingest_seconds"`
	Workers       map[string]int `json:"workers,omitempty"` // documents per worker, over the whole build
}

// buildLock serialises starting a build between processes.
const buildLock = 0x5348495255424532 // "SHIRUBE2"

// Ingest builds a new generation from the data folder with a job table:
// the first process walks the folder and queues one job per source; every
// process (this one with opt.Workers goroutines, and any other running
// Ingest on the same database) claims jobs with FOR UPDATE SKIP LOCKED,
// extracts, chunks and analyses its documents and stores them in one
// transaction per document. A document is stored at most once per
// generation (the job's completion and the rows commit together, and only
// while the worker still holds the lease); a worker that crashes leaves its
// jobs to the others once the lease expires. When no job is left, one
// process embeds, fills the statistics and switches the generation.
func (db *DB) Ingest(ctx context.Context, opt IngestOptions) (IngestSummary, error) {
	start := time.Now()
	var sum IngestSummary
	if opt.Workers <= 0 {
		opt.Workers = 1
	}
	if opt.Lease <= 0 {
		opt.Lease = 2 * time.Minute
	}
	if opt.Worker == "" {
		host, _ := os.Hostname()
		opt.Worker = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if opt.Embedder == "" {
		opt.Embedder = "local"
	}
	if opt.HTMLMode == "" {
		opt.HTMLMode = "markdown"
	}
	warn := opt.Warn
	if warn == nil {
		warn = func(string) {}
	}
	gen, joined, total, err := db.startBuild(ctx, opt)
	if err != nil {
		return sum, err
	}
	sum.Generation, sum.Joined = gen, joined

	a, err := analysis.New(opt.Analyzer)
	if err != nil {
		return sum, fmt.Errorf("analyser: %w", err)
	}
	ex := document.NewExtractor(document.Options{HTMLMode: document.HTMLMode(opt.HTMLMode), Warn: warn, FileTimeout: opt.FileTimeout})
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for w := 0; w < opt.Workers; w++ {
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			for {
				r, err := db.work(ctx, gen, name, opt, a, ex)
				mu.Lock()
				if err != nil && firstErr == nil && ctx.Err() == nil {
					firstErr = err
				}
				if r.done {
					sum.Processed++
					if r.reused {
						sum.Reused++
					}
					if r.skip != nil {
						sum.Skipped = append(sum.Skipped, *r.skip)
					}
					if opt.Progress != nil {
						opt.Progress("ingest", sum.Processed, total)
					}
				}
				mu.Unlock()
				if err != nil || r.idle {
					return
				}
			}
		}(fmt.Sprintf("%s/%d", opt.Worker, w))
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	if firstErr != nil {
		return sum, firstErr
	}
	sum.IngestSeconds = time.Since(start).Seconds()
	sum.Workers, _ = db.jobsByWorker(ctx, gen)
	meta, err := db.finish(ctx, gen, opt.Finish)
	switch {
	case errors.Is(err, ErrBusy):
		// Another process finishes the build.
	case err != nil && strings.Contains(err.Error(), "is already"):
		// Another process finished it while this one waited.
	case err != nil:
		return sum, err
	default:
		sum.Finished, sum.Meta = true, meta
	}
	sum.Seconds = time.Since(start).Seconds()
	return sum, nil
}

// startBuild joins the generation being built or starts one: walk the data
// folder and queue a job per source. It returns the number of jobs.
func (db *DB) startBuild(ctx context.Context, opt IngestOptions) (gen int64, joined bool, total int, err error) {
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(buildLock)); err != nil {
			return err
		}
		var sj []byte
		err := tx.QueryRow(ctx, "SELECT id, settings FROM generations WHERE state = 'building' ORDER BY id DESC LIMIT 1").Scan(&gen, &sj)
		if err == nil {
			var s Settings
			if err := json.Unmarshal(sj, &s); err != nil {
				return err
			}
			if s != opt.Settings {
				return fmt.Errorf("generation %d is being built with other settings (%+v) — wait for it, or run with the same flags", gen, s)
			}
			joined = true
			return tx.QueryRow(ctx, "SELECT count(*) FROM jobs WHERE gen = $1", gen).Scan(&total)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		files, skips, err := document.Walk(ctx, opt.DataDir, document.WalkOptions{MaxFileSize: opt.MaxFileSize, Exclude: []string{opt.DatabaseDir}})
		if err != nil {
			return err
		}
		for _, s := range skips {
			if opt.Warn != nil {
				opt.Warn(fmt.Sprintf("%s: %s", s.Path, s.Reason))
			}
		}
		if len(files) == 0 {
			return fmt.Errorf("no documents in %s (.pdf .md .html .txt)", opt.DataDir)
		}
		if gen, err = newGeneration(ctx, tx, opt.Settings); err != nil {
			return err
		}
		rows := make([][]any, len(files))
		for i, f := range files {
			fj, _ := json.Marshal(f)
			rows[i] = []any{gen, f.Rel, fj}
		}
		total = len(files)
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"jobs"}, []string{"gen", "source", "file"}, pgx.CopyFromRows(rows))
		return err
	})
	if err != nil {
		err = fmt.Errorf("start build: %w", err)
	}
	return gen, joined, total, err
}

// workResult is what one call of work did.
type workResult struct {
	done   bool // a document was finished (stored or skipped)
	reused bool
	skip   *document.Skip
	idle   bool // no job is left for anyone: stop
}

// claimSQL takes one pending job, or one whose worker's lease expired.
const claimSQL = `UPDATE jobs SET state = 'running', worker = $2, lease_until = now() + $3::interval, attempts = attempts + 1
WHERE (gen, source) = (
	SELECT gen, source FROM jobs
	WHERE gen = $1 AND (state = 'pending' OR (state = 'running' AND lease_until < now()))
	ORDER BY source
	LIMIT 1
	FOR UPDATE SKIP LOCKED)
RETURNING source, file`

// work claims and ingests one document. With nothing to claim it waits
// while other workers still hold leases (their jobs may come back), and
// reports idle once every job is done or skipped.
func (db *DB) work(ctx context.Context, gen int64, worker string, opt IngestOptions, a *analysis.Analyzer, ex *document.Extractor) (workResult, error) {
	for {
		var source string
		var fj []byte
		err := db.pool.QueryRow(ctx, claimSQL, gen, worker, opt.Lease.String()).Scan(&source, &fj)
		if err == nil {
			var f document.File
			if err := json.Unmarshal(fj, &f); err != nil {
				return workResult{}, fmt.Errorf("job %s: %w", source, err)
			}
			return db.ingestOne(ctx, gen, worker, opt, a, ex, f)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return workResult{}, fmt.Errorf("claim a document: %w", err)
		}
		var running int
		if err := db.pool.QueryRow(ctx, "SELECT count(*) FROM jobs WHERE gen = $1 AND state = 'running'", gen).Scan(&running); err != nil {
			return workResult{}, err
		}
		if running == 0 {
			return workResult{idle: true}, nil
		}
		select {
		case <-ctx.Done():
			return workResult{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ingestOne stores one claimed document: copied from the current
// generation when its content hash is unchanged, else extracted, chunked
// and analysed. The rows and the job's completion commit together, and only
// if this worker still holds the job.
func (db *DB) ingestOne(ctx context.Context, gen int64, worker string, opt IngestOptions, a *analysis.Analyzer, ex *document.Extractor, f document.File) (workResult, error) {
	hash, err := fileHash(f.Path)
	if err != nil {
		return db.skip(ctx, gen, worker, f, err.Error())
	}
	var d docRow
	var chunks []chunk.Chunk
	var terms [][]string
	reused := false
	if !opt.Rebuild {
		d, chunks, terms, reused, err = db.previous(ctx, opt.Settings, f.Rel, hash)
		if err != nil {
			return workResult{}, err
		}
	}
	if reused && !f.ModTime.IsZero() {
		// A source touched without a change (same content, new
		// modification time) keeps its chunks, with the new time.
		if updated := f.ModTime.Format("2006-01-02T15:04:05"); len(chunks) > 0 && chunks[0].UpdatedAt != updated {
			d.ModTime = f.ModTime
			for i := range chunks {
				chunks[i].UpdatedAt = updated
			}
		}
	}
	if !reused {
		doc, err := ex.Extract(ctx, f)
		if err != nil {
			if ctx.Err() != nil {
				return workResult{}, ctx.Err()
			}
			return db.skip(ctx, gen, worker, f, strings.TrimPrefix(err.Error(), f.Rel+": "))
		}
		ids := make([]string, len(doc.Pages))
		if opt.DatabaseDir != "" {
			if ids, err = document.WriteDatabase(ctx, opt.DatabaseDir, f, doc, nil); err != nil {
				return db.skip(ctx, gen, worker, f, "write page database: "+err.Error())
			}
		} else {
			for i, p := range doc.Pages {
				ids[i] = fmt.Sprintf("database/%s/page_%03d.md", strings.TrimSuffix(f.Rel, "/"+f.Stem), p.Number)
			}
		}
		d = docRow{Source: f.Rel, Hash: doc.Hash, Kind: string(doc.Kind), Size: doc.Size, ModTime: doc.ModTime, Notes: doc.Notes}
		updated := doc.ModTime.Format("2006-01-02T15:04:05")
		texts := make([]string, len(doc.Pages))
		for i, p := range doc.Pages {
			texts[i] = p.Text
		}
		texts = chunk.MergeNearEmpty(texts) // as index.Build: a cover page is no chunk of its own
		for i, p := range doc.Pages {
			if i >= len(ids) {
				break
			}
			d.Pages = append(d.Pages, pageRow{ID: ids[i], Number: p.Number, Text: p.Text})
			cs, err := chunk.Page(ids[i], doc.Source, p.Number, updated, texts[i], chunk.Options{Size: opt.ChunkSize, Overlap: opt.ChunkOverlap})
			if err != nil {
				return db.skip(ctx, gen, worker, f, "chunk: "+err.Error())
			}
			for _, c := range cs {
				chunks = append(chunks, c)
				terms = append(terms, a.Terms(c.Text))
			}
		}
	}
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE jobs SET state = 'done', lease_until = NULL, detail = $4
			WHERE gen = $1 AND source = $2 AND worker = $3 AND state = 'running'`, gen, f.Rel, worker, map[bool]string{true: "reused", false: "extracted"}[reused])
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return errLostLease
		}
		return writeDocument(ctx, tx, gen, d, chunks, terms)
	})
	if errors.Is(err, errLostLease) {
		opt.warn(fmt.Sprintf("%s: lease expired before the document was stored; another worker has it", f.Rel))
		return workResult{}, nil
	}
	if err != nil {
		return workResult{}, fmt.Errorf("store %s: %w", f.Rel, err)
	}
	return workResult{done: true, reused: reused}, nil
}

var errLostLease = errors.New("lease lost")

func (o IngestOptions) warn(s string) {
	if o.Warn != nil {
		o.Warn(s)
	}
}

// skip marks a job skipped with a one-line reason.
func (db *DB) skip(ctx context.Context, gen int64, worker string, f document.File, reason string) (workResult, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE jobs SET state = 'skipped', lease_until = NULL, detail = $4
		WHERE gen = $1 AND source = $2 AND worker = $3 AND state = 'running'`, gen, f.Rel, worker, reason)
	if err != nil {
		return workResult{}, err
	}
	if tag.RowsAffected() != 1 {
		return workResult{}, nil
	}
	return workResult{done: true, skip: &document.Skip{Path: f.Rel, Reason: reason}}, nil
}

// previous returns a document of the current generation with the same
// source and content hash, built with the same settings, ready to copy:
// its pages, chunks and analysed terms.
func (db *DB) previous(ctx context.Context, s Settings, source, hash string) (docRow, []chunk.Chunk, [][]string, bool, error) {
	var d docRow
	var cur int64
	var sj []byte
	err := db.pool.QueryRow(ctx, `SELECT g.id, g.settings FROM current_generation c JOIN generations g ON g.id = c.generation`).Scan(&cur, &sj)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, nil, nil, false, nil
	}
	if err != nil {
		return d, nil, nil, false, err
	}
	var ps Settings
	if json.Unmarshal(sj, &ps) != nil || ps != s {
		return d, nil, nil, false, nil
	}
	err = db.pool.QueryRow(ctx, "SELECT source, hash, kind, size, mod_time, notes FROM documents WHERE gen = $1 AND source = $2 AND hash = $3", cur, source, hash).
		Scan(&d.Source, &d.Hash, &d.Kind, &d.Size, &d.ModTime, &d.Notes)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, nil, nil, false, nil
	}
	if err != nil {
		return d, nil, nil, false, err
	}
	rows, err := db.pool.Query(ctx, "SELECT id, number, text FROM pages WHERE gen = $1 AND source = $2 ORDER BY number, id", cur, source)
	if err != nil {
		return d, nil, nil, false, err
	}
	if d.Pages, err = pgx.CollectRows(rows, pgx.RowToStructByPos[pageRow]); err != nil {
		return d, nil, nil, false, err
	}
	rows, err = db.pool.Query(ctx, fmt.Sprintf(`SELECT chunk_id, file, source, page, heading, idx, text, updated_at, terms
		FROM %s WHERE source = $1 ORDER BY id`, partition("chunks", cur)), source)
	if err != nil {
		return d, nil, nil, false, err
	}
	defer rows.Close()
	var chunks []chunk.Chunk
	var terms [][]string
	for rows.Next() {
		var c chunk.Chunk
		var ts string
		if err := rows.Scan(&c.ID, &c.File, &c.Source, &c.Page, &c.Heading, &c.Index, &c.Text, &c.UpdatedAt, &ts); err != nil {
			return d, nil, nil, false, err
		}
		chunks = append(chunks, c)
		if ts == "" {
			terms = append(terms, nil)
		} else {
			terms = append(terms, strings.Split(ts, termSep))
		}
	}
	return d, chunks, terms, rows.Err() == nil, rows.Err()
}

// jobsByWorker counts the stored documents of a build per worker.
func (db *DB) jobsByWorker(ctx context.Context, gen int64) (map[string]int, error) {
	rows, err := db.pool.Query(ctx, "SELECT worker, count(*) FROM jobs WHERE gen = $1 AND state = 'done' GROUP BY worker", gen)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var w string
		var n int
		if err := rows.Scan(&w, &n); err != nil {
			return nil, err
		}
		out[w] = n
	}
	return out, rows.Err()
}

// fileHash is the hex SHA-256 of a file, as document.Document.Hash.
func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("cannot read: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
