// Package pgstore keeps shirube's index in PostgreSQL (with pgvector when
// the `vector` extension is available), so that several `shirube serve`
// replicas answer from one database and several `shirube index` workers
// fill it concurrently.
//
// The store holds exactly what the embedded index holds — chunks, their
// analysed terms as BM25 postings, their embeddings and the fitted local
// embedding model — and answers the same queries with the same scores:
// terms are produced by shirube's own analyser (internal/analysis) before
// they reach the database, BM25 is summed in SQL from the postings with the
// embedded index's formula and floating-point steps, and vectors are ranked
// by pgvector (`ORDER BY embedding <=> $1`).
//
// # Generations
//
// Every build writes a new generation (its own partitions of chunks,
// postings and terms, and its own embeddings table) while the current one
// keeps answering. Finishing a build fills the statistics, builds the
// indexes and moves the single `current_generation` row to it in one
// transaction, then notifies the `shirube_current` channel: every replica
// switches on the notification (or on its next poll), none ever sees a
// half-built generation. The schema is described in docs/ARCHITECTURE.md.
package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/index"
)

// Channel is the LISTEN/NOTIFY channel a switch of generation is announced
// on; the payload is the new generation's id.
const Channel = "shirube_current"

// ErrNoGeneration means the database holds no finished generation yet.
// It wraps index.ErrNotFound, so callers treat both stores alike.
// Front ends say how to build one (the command line: shirube index --store).
var ErrNoGeneration = fmt.Errorf("%w in the database", index.ErrNotFound)

// Options configure Connect.
type Options struct {
	// MaxConns caps the connection pool (default: pgxpool's, max(4, CPUs)).
	MaxConns int32
	// NoVector ignores the vector extension even when it is installed
	// (embeddings are then searched exactly in the replica's memory).
	NoVector bool
}

// DB is a connection pool to a shirube database whose schema is migrated to
// the version this binary knows. It is safe for concurrent use.
type DB struct {
	pool      *pgxpool.Pool
	masked    string // the DSN with its password hidden, for messages
	hasVector bool
}

// Connect opens a pool on dsn (postgres://user@host/db?sslmode=…) and
// applies the schema migrations this binary knows; it refuses a database
// whose schema is newer. The DSN is never returned in an error unmasked.
func Connect(ctx context.Context, dsn string, opt Options) (*DB, error) {
	masked := config.MaskDSN(dsn)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store %s: not a valid PostgreSQL DSN (postgres://user@host/db?sslmode=disable)", masked)
	}
	if opt.MaxConns > 0 {
		cfg.MaxConns = opt.MaxConns
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		// hnsw.ef_search is a placeholder until pgvector is loaded; HNSW
		// then returns up to 200 candidates (the default, 40, is below the
		// fusion's 100). JIT compilation pays tens of milliseconds to speed
		// up long analytic queries; a search's queries are short, and the
		// planner's cost estimate for a scan of 100k rows would trigger it
		// on every query.
		_, err := c.Exec(ctx, "SET hnsw.ef_search = 200; SET jit = off")
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", masked, err)
	}
	db := &DB{pool: pool, masked: masked}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store %s: cannot connect: %w — is PostgreSQL running and the DSN right?", masked, err)
	}
	if err := db.migrate(ctx, opt.NoVector); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store %s: %w", masked, err)
	}
	return db, nil
}

// Close closes the pool.
func (db *DB) Close() { db.pool.Close() }

// String is the masked DSN.
func (db *DB) String() string { return db.masked }

// HasVector reports whether the pgvector extension is in use.
func (db *DB) HasVector() bool { return db.hasVector }

// Pool is the connection pool (for the audit log and tests).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Current returns the id of the current generation, or ErrNoGeneration.
func (db *DB) Current(ctx context.Context) (int64, error) {
	var gen int64
	err := db.pool.QueryRow(ctx, "SELECT generation FROM current_generation").Scan(&gen)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, ErrNoGeneration
	}
	if err != nil {
		return 0, fmt.Errorf("read current generation: %w", err)
	}
	return gen, nil
}
