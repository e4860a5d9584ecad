package pgstore_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/pgstore"
	"github.com/shirube/shirube/internal/pgtest"
	"github.com/shirube/shirube/internal/retrieve"
)

const exampleData = "../../examples/data"

func settings(t *testing.T) pgstore.Settings {
	return pgstore.Settings{
		DataDir: exampleData, DatabaseDir: filepath.Join(t.TempDir(), "database"),
		ChunkSize: 500, ChunkOverlap: 50, Analyzer: analysis.DefaultOptions(), Embedder: "local",
	}
}

// embedded builds the embedded index of the same folder.
func embedded(t *testing.T, s pgstore.Settings) *index.Index {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	_, err := index.Build(ctx, index.BuildOptions{DataDir: s.DataDir, DatabaseDir: filepath.Join(dir, "database"), Dir: filepath.Join(dir, "index"),
		Chunk: chunk.Options{Size: s.ChunkSize, Overlap: s.ChunkOverlap}, Analyzer: s.Analyzer})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(ctx, filepath.Join(dir, "index"), index.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// checkComplete asserts that the store's current generation holds every
// chunk of the embedded index exactly once and ranks BM25 identically.
func checkComplete(t *testing.T, db *pgstore.DB, want *index.Index) *pgstore.Index {
	t.Helper()
	ctx := context.Background()
	pix, err := db.Open(ctx, pgstore.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pix.Len() != want.Len() {
		t.Fatalf("store has %d chunks, embedded index %d", pix.Len(), want.Len())
	}
	var dup int
	if err := db.Pool().QueryRow(ctx, "SELECT count(*) - count(DISTINCT chunk_id) FROM chunks WHERE gen = $1", pix.Generation()).Scan(&dup); err != nil {
		t.Fatal(err)
	}
	if dup != 0 {
		t.Errorf("%d duplicated chunks", dup)
	}
	if m := pix.Meta(); m.Documents != want.Meta().Documents || m.Pages != want.Meta().Pages {
		t.Errorf("store has %d documents and %d pages, embedded %d and %d", m.Documents, m.Pages, want.Meta().Documents, want.Meta().Pages)
	}
	es, ps := retrieve.New(want), retrieve.New(pix)
	for _, q := range []string{"アカウントロックアウトの解除手順", "バックアップからの復旧手順は？", "パスワードの長さ", "インシデント発生時の連絡先"} {
		opt := retrieve.Options{K: 5, Mode: "bm25"}
		w, _, err := es.Search(ctx, q, opt)
		if err != nil {
			t.Fatal(err)
		}
		g, _, err := ps.Search(ctx, q, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(g) != len(w) {
			t.Fatalf("%s: %d results, embedded %d", q, len(g), len(w))
		}
		for i := range w {
			if g[i].ChunkID != w[i].ChunkID || math.Abs(g[i].EvidenceScore-w[i].EvidenceScore) > 1e-4 {
				t.Errorf("%s rank %d: store %s (%.4f), embedded %s (%.4f)", q, i+1, g[i].ChunkID, g[i].EvidenceScore, w[i].ChunkID, w[i].EvidenceScore)
			}
		}
		if _, _, err := ps.Search(ctx, q, retrieve.Options{K: 4, BM25Weight: 0.6}); err != nil {
			t.Fatal(err)
		}
	}
	return pix
}

// TestIngestWorkers ingests the example folder with four workers and gets
// the embedded index's chunks and BM25 ranking; a second run copies every
// unchanged document instead of extracting it again.
func TestIngestWorkers(t *testing.T) {
	db := connect(t, pgstore.Options{})
	ctx := context.Background()
	s := settings(t)
	sum, err := db.Ingest(ctx, pgstore.IngestOptions{Settings: s, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Finished || sum.Processed != 7 || sum.Reused != 0 {
		t.Fatalf("summary %+v, want 7 documents processed and the build finished", sum)
	}
	checkComplete(t, db, embedded(t, s))
	again, err := db.Ingest(ctx, pgstore.IngestOptions{Settings: s, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if again.Reused != 7 || again.Generation <= sum.Generation {
		t.Errorf("second run %+v, want 7 documents reused in a new generation", again)
	}
	checkComplete(t, db, embedded(t, s))
	var gens int
	if err := db.Pool().QueryRow(ctx, "SELECT count(*) FROM generations").Scan(&gens); err != nil {
		t.Fatal(err)
	}
	if gens > 2 {
		t.Errorf("%d generations kept, want the current and the previous", gens)
	}
}

// TestIngestCrashedWorker cancels one process after its first document,
// leaves another job claimed by a worker that died (its lease running), and
// starts two more processes at once: they split the rest, take the dead
// worker's document back when its lease expires, and the generation holds
// every chunk once.
func TestIngestCrashedWorker(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	open := func() *pgstore.DB {
		db, err := pgstore.Connect(context.Background(), dsn, pgstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		return db
	}
	s := settings(t)
	first := open()
	ctx, cancel := context.WithCancel(context.Background())
	_, err := first.Ingest(ctx, pgstore.IngestOptions{Settings: s, Worker: "first", Progress: func(string, int, int) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ingest returned %v", err)
	}
	bg := context.Background()
	tag, err := first.Pool().Exec(bg, `UPDATE jobs SET state = 'running', worker = 'dead', lease_until = now() + interval '2 seconds', attempts = attempts + 1
		WHERE source = (SELECT min(source) FROM jobs WHERE state = 'pending')`)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("simulate a dead worker: %v (%d rows)", err, tag.RowsAffected())
	}
	var wg sync.WaitGroup
	sums := make([]pgstore.IngestSummary, 2)
	errs := make([]error, 2)
	for i, name := range []string{"a", "b"} {
		db := open()
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i], errs[i] = db.Ingest(bg, pgstore.IngestOptions{Settings: s, Worker: name, Workers: 2, Lease: time.Second})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if !sums[0].Joined || !sums[1].Joined {
		t.Errorf("both processes should join the cancelled build: %+v", sums)
	}
	if sums[0].Finished == sums[1].Finished {
		t.Errorf("exactly one process must finish the build: %v %v", sums[0].Finished, sums[1].Finished)
	}
	if got := sums[0].Processed + sums[1].Processed; got != 6 {
		t.Errorf("the two processes ingested %d documents, want the 6 the first left", got)
	}
	var dead, attempts int
	if err := first.Pool().QueryRow(bg, "SELECT count(*) FILTER (WHERE worker = 'dead'), max(attempts) FROM jobs").Scan(&dead, &attempts); err != nil {
		t.Fatal(err)
	}
	if dead != 0 || attempts != 2 {
		t.Errorf("the dead worker still holds %d jobs (max attempts %d)", dead, attempts)
	}
	checkComplete(t, first, embedded(t, s))
}

// TestIngestTouchRefreshesUpdatedAt: a source touched without a change
// keeps its chunks (reused, not extracted again) but they take its new
// modification time; the other documents keep theirs.
func TestIngestTouchRefreshesUpdatedAt(t *testing.T) {
	db := connect(t, pgstore.Options{})
	ctx := context.Background()
	data := t.TempDir()
	for name, text := range map[string]string{
		"vpn.md":  "# VPN接続手順\n\nVPNクライアントを起動し、接続先を選んで接続する。\n",
		"logs.md": "# ログ保管\n\n認証ログは1年間保管する。\n",
	} {
		p := filepath.Join(data, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Date(2024, 4, 1, 9, 0, 0, 0, time.Local)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	s := settings(t)
	s.DataDir = data
	if _, err := db.Ingest(ctx, pgstore.IngestOptions{Settings: s, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	touched := time.Date(2025, 6, 2, 10, 30, 0, 0, time.Local)
	if err := os.Chtimes(filepath.Join(data, "vpn.md"), touched, touched); err != nil {
		t.Fatal(err)
	}
	again, err := db.Ingest(ctx, pgstore.IngestOptions{Settings: s, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if again.Reused != 2 {
		t.Errorf("second run %+v, want both documents reused", again)
	}
	want := map[string]string{"vpn.md": "2025-06-02T10:30:00", "logs.md": "2024-04-01T09:00:00"}
	for src, at := range want {
		var got []string
		rows, err := db.Pool().Query(ctx, `SELECT DISTINCT c.updated_at FROM chunks c JOIN current_generation g ON c.gen = g.generation WHERE c.source = $1`, src)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var u string
			if err := rows.Scan(&u); err != nil {
				t.Fatal(err)
			}
			got = append(got, u)
		}
		rows.Close()
		if len(got) != 1 || got[0] != at {
			t.Errorf("%s: updated_at %q, want %s", src, got, at)
		}
	}
}
