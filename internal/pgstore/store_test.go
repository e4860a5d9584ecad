package pgstore_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/auditlog"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/pgstore"
	"github.com/shirube/shirube/internal/pgtest"
)

var tiny = []chunk.Chunk{
	{ID: "a", File: "a", Source: "a", Page: 1, Text: "猫は夜行性の動物で、暗い場所でもよく見える目を持つ。"},
	{ID: "b", File: "b", Source: "b", Page: 1, Text: "犬は嗅覚が鋭く、警察犬として働くこともある。"},
	{ID: "c", File: "c", Source: "c", Page: 1, Text: "Backups are restored from the weekly snapshot."},
}

// TestMigrationRefusesNewerSchema: a database migrated by a newer shirube
// is refused with a message that says to upgrade; reconnecting with the
// same version is a no-op.
func TestMigrationRefusesNewerSchema(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	db, err := pgstore.Connect(ctx, dsn, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	again, err := pgstore.Connect(ctx, dsn, pgstore.Options{})
	if err != nil {
		t.Fatalf("second connect: %v", err)
	}
	again.Close()
	if _, err := db.Pool().Exec(ctx, "INSERT INTO schema_migrations (version) VALUES ($1)", pgstore.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	_, err = pgstore.Connect(ctx, dsn, pgstore.Options{})
	if err == nil || !strings.Contains(err.Error(), "newer than this shirube knows") {
		t.Fatalf("connect to a newer schema: %v", err)
	}
}

// TestConnectMasksPassword: a DSN with a password never appears unmasked
// in an error.
func TestConnectMasksPassword(t *testing.T) {
	_, err := pgstore.Connect(context.Background(), "postgres://u:hunter2@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", pgstore.Options{})
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "u:****@") {
		t.Fatalf("error %v", err)
	}
}

// TestWatchSeesNewGeneration: a replica watching the store is told about
// a generation another connection finished, and an empty store opens with
// index.ErrNotFound.
func TestWatchSeesNewGeneration(t *testing.T) {
	db := connect(t, pgstore.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := db.Open(ctx, pgstore.OpenOptions{}); !errors.Is(err, pgstore.ErrNoGeneration) || !errors.Is(err, index.ErrNotFound) {
		t.Fatalf("open an empty store: %v", err)
	}
	seen := make(chan int64, 4)
	go db.Watch(ctx, 0, time.Hour, func(ctx context.Context, gen int64) error {
		seen <- gen
		return nil
	}, func(s string) { t.Log(s) })
	opt := index.MemoryOptions{Analyzer: analysis.DefaultOptions()}
	for want := int64(1); want <= 2; want++ {
		if _, err := db.LoadChunks(ctx, tiny, opt, pgstore.FinishOptions{}); err != nil {
			t.Fatal(err)
		}
		// The poll interval is an hour: only the notification can deliver.
		if got := <-seen; got != want {
			t.Fatalf("watch reported generation %d, want %d", got, want)
		}
	}
	pix, err := db.Open(ctx, pgstore.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pix.Generation() != 2 || pix.Len() != 3 {
		t.Errorf("current generation %d with %d chunks", pix.Generation(), pix.Len())
	}
}

// TestNoVectorExtension: without pgvector the store keeps embeddings as
// arrays and searches them exactly in memory, with the embedded results.
func TestNoVectorExtension(t *testing.T) {
	db := connect(t, pgstore.Options{NoVector: true})
	ctx := context.Background()
	opt := index.MemoryOptions{Analyzer: analysis.DefaultOptions()}
	if _, err := db.LoadChunks(ctx, tiny, opt, pgstore.FinishOptions{}); err != nil {
		t.Fatal(err)
	}
	pix, err := db.Open(ctx, pgstore.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pix.VectorSearch() != "memory" {
		t.Fatalf("vector search %q, want memory", pix.VectorSearch())
	}
	ix, err := index.FromChunks(ctx, tiny, opt)
	if err != nil {
		t.Fatal(err)
	}
	q, err := ix.EmbedQuery(ctx, "夜に目が見える動物", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := ix.Dense(q, 3)
	got, err := pix.DenseHits(ctx, q, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d hits, embedded %d", len(got), len(want))
	}
	for i := range want {
		chs, _ := pix.Chunks(ctx, []int{got[i].Chunk})
		if chs[0].ID != ix.Chunk(want[i].Chunk).ID || got[i].Score != want[i].Score {
			t.Errorf("rank %d: %s %v, embedded %s %v", i+1, chs[0].ID, got[i].Score, ix.Chunk(want[i].Chunk).ID, want[i].Score)
		}
	}
}

type memLog struct{ entries []auditlog.Entry }

func (m *memLog) Log(_ context.Context, e auditlog.Entry) error {
	m.entries = append(m.entries, e)
	return nil
}

// TestAuditLogTable: entries go to the audit_log table with the JSONL
// line's content, and to the second log too.
func TestAuditLogTable(t *testing.T) {
	db := connect(t, pgstore.Options{})
	ctx := context.Background()
	also := &memLog{}
	l := pgstore.NewAuditLog(db, pgstore.AuditOptions{Also: also})
	defer l.Close()
	e := auditlog.Entry{SessionID: "s1", Query: "猫は？", Answer: "夜行性です。", SearchResults: []auditlog.SearchResult{{ChunkID: "a", Score: 0.9}}}
	if err := l.Log(ctx, e); err != nil {
		t.Fatal(err)
	}
	got, err := db.AuditEntries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Query != e.Query || got[0].Answer != e.Answer || got[0].SessionID != "s1" || len(got[0].SearchResults) != 1 || got[0].Timestamp.IsZero() {
		t.Errorf("table holds %+v", got)
	}
	if len(also.entries) != 1 || also.entries[0].Query != e.Query {
		t.Errorf("second log holds %+v", also.entries)
	}
}

// TestDenseQueryUsesHNSW: the vector leg's query is one pgvector's HNSW
// index can serve. A second sort key (the chunk id) once made every
// "hnsw" search a full scan and sort; with sequential scans disabled, the
// planner must pick the index, and the exact query must not.
func TestDenseQueryUsesHNSW(t *testing.T) {
	db := connect(t, pgstore.Options{})
	if !db.HasVector() {
		t.Skip("pgvector is not installed in this cluster")
	}
	ctx := context.Background()
	opt := index.MemoryOptions{Analyzer: analysis.DefaultOptions()}
	if _, err := db.LoadChunks(ctx, tiny, opt, pgstore.FinishOptions{}); err != nil {
		t.Fatal(err)
	}
	pix, err := db.Open(ctx, pgstore.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pix.VectorSearch() != "hnsw" {
		t.Fatalf("vector search %q, want hnsw", pix.VectorSearch())
	}
	q, err := pix.EmbedQuery(ctx, "夜に目が見える動物", nil)
	if err != nil {
		t.Fatal(err)
	}
	vec := make([]string, len(q))
	for i, x := range q {
		vec[i] = strconv.FormatFloat(float64(x), 'g', -1, 32)
	}
	literal := "[" + strings.Join(vec, ",") + "]"
	for _, hnsw := range []bool{true, false} {
		tx, err := db.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
			t.Fatal(err)
		}
		rows, err := tx.Query(ctx, "EXPLAIN "+pgstore.DenseSQL(pix, hnsw), literal, 3)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		rows.Close()
		_ = tx.Rollback(ctx)
		usesIndex := strings.Contains(strings.Join(plan, "\n"), "_hnsw")
		if usesIndex != hnsw {
			t.Errorf("hnsw=%v: plan uses the HNSW index = %v:\n%s", hnsw, usesIndex, strings.Join(plan, "\n"))
		}
	}
	hits, err := pix.DenseHits(ctx, q, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("hits out of order: %v", hits)
		}
	}
}
