package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are the schema versions in order: migrations[i] brings the
// schema to version i+1. Append; never edit a released one.
var migrations = []string{
	// 1: generations, ingest jobs, documents, pages, chunks, postings,
	// terms and the audit log. Embeddings live in one table per generation
	// (embeddings_g<N>, created when the generation is finished) because
	// their dimension is the generation's.
	`
CREATE TABLE generations (
	id           bigint PRIMARY KEY,
	state        text NOT NULL CHECK (state IN ('building', 'ready', 'retired')),
	settings     jsonb NOT NULL,
	meta         jsonb,
	model        bytea,
	chunks       integer NOT NULL DEFAULT 0,
	total_length bigint NOT NULL DEFAULT 0,
	avgdl        double precision,
	min_chunk    bigint,
	max_chunk    bigint,
	vectors      text,
	created_at   timestamptz NOT NULL DEFAULT now(),
	ready_at     timestamptz
);
CREATE SEQUENCE generation_ids;
CREATE TABLE current_generation (
	singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
	generation  bigint NOT NULL REFERENCES generations (id),
	switched_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE jobs (
	gen         bigint NOT NULL REFERENCES generations (id) ON DELETE CASCADE,
	source      text NOT NULL,
	file        jsonb NOT NULL,
	state       text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'done', 'skipped')),
	worker      text,
	lease_until timestamptz,
	attempts    integer NOT NULL DEFAULT 0,
	detail      text,
	PRIMARY KEY (gen, source)
);
CREATE INDEX jobs_open ON jobs (gen, state);
CREATE TABLE documents (
	gen      bigint NOT NULL REFERENCES generations (id) ON DELETE CASCADE,
	source   text NOT NULL,
	hash     text NOT NULL,
	kind     text NOT NULL,
	size     bigint NOT NULL,
	mod_time timestamptz,
	notes    text[] NOT NULL DEFAULT '{}',
	PRIMARY KEY (gen, source)
);
CREATE INDEX documents_hash ON documents (hash);
CREATE TABLE pages (
	gen    bigint NOT NULL,
	id     text NOT NULL,
	source text NOT NULL,
	number integer NOT NULL,
	text   text NOT NULL,
	PRIMARY KEY (gen, id),
	FOREIGN KEY (gen, source) REFERENCES documents (gen, source) ON DELETE CASCADE
);
CREATE SEQUENCE chunk_ids;
CREATE TABLE chunks (
	gen          bigint NOT NULL,
	id           bigint NOT NULL,
	chunk_id     text NOT NULL,
	file         text NOT NULL,
	source       text NOT NULL,
	page         integer NOT NULL,
	heading      text NOT NULL,
	heading_path text[] NOT NULL,
	idx          integer NOT NULL,
	text         text NOT NULL,
	updated_at   text NOT NULL,
	length       integer NOT NULL,
	terms        text NOT NULL,
	metadata     jsonb NOT NULL DEFAULT '{}',
	PRIMARY KEY (gen, id)
) PARTITION BY LIST (gen);
CREATE TABLE postings (
	gen   bigint NOT NULL,
	term  text NOT NULL,
	chunk bigint NOT NULL,
	tf    integer NOT NULL,
	dl    integer NOT NULL
) PARTITION BY LIST (gen);
CREATE TABLE terms (
	gen      bigint NOT NULL,
	term     text NOT NULL,
	df       integer NOT NULL,
	postings bytea NOT NULL,
	PRIMARY KEY (gen, term)
) PARTITION BY LIST (gen);
CREATE TABLE audit_log (
	id         bigserial PRIMARY KEY,
	logged_at  timestamptz NOT NULL DEFAULT now(),
	session_id text NOT NULL DEFAULT '',
	query      text NOT NULL,
	entry      jsonb NOT NULL
);
CREATE INDEX audit_log_time ON audit_log (logged_at);
`,
	// 2: every audit row written by this version carries a unique key, so
	// that a row spooled during an outage and written again after an
	// uncertain commit is stored once (AuditLog).
	`
ALTER TABLE audit_log ADD COLUMN entry_key text UNIQUE;
`,
}

// SchemaVersion is the schema version this binary writes and reads.
func SchemaVersion() int { return len(migrations) }

// migrateLock is the advisory lock key that serialises migrations between
// processes starting at the same time.
const migrateLock = 0x5348495255424531 // "SHIRUBE1"

// migrate applies the missing migrations, each in its own transaction, and
// enables pgvector when it is installed.
func (db *DB) migrate(ctx context.Context, noVector bool) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrateLock)); err != nil {
		return fmt.Errorf("lock schema: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(migrateLock))
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	var have int
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&have); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if have > len(migrations) {
		return fmt.Errorf("the database schema is version %d, newer than this shirube knows (%d) — upgrade shirube", have, len(migrations))
	}
	for v := have + 1; v <= len(migrations); v++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, migrations[v-1]); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version) VALUES ($1)", v)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", v, err)
		}
	}
	if noVector {
		return nil
	}
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')").Scan(&db.hasVector); err != nil {
		return err
	}
	if !db.hasVector {
		var available bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')").Scan(&available); err != nil {
			return err
		}
		if available {
			// Needs CREATE privilege on the database; without it the store
			// works with exact vector search in memory.
			if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector"); err == nil {
				db.hasVector = true
			}
		}
	}
	return nil
}
