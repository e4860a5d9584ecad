package index

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/document"
)

// fullDisk is a fault-injecting page writer: the first left writes reach
// the disk, every later one fails with ENOSPC, as on a disk that fills up
// in the middle of a build.
type fullDisk struct {
	mu     sync.Mutex
	left   int
	failed int
}

func (d *fullDisk) WriteFile(name string, data []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.left <= 0 {
		d.failed++
		return &fs.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
	}
	d.left--
	return document.DiskWriter{}.WriteFile(name, data)
}

// touch rewrites a file with new content and a later mtime.
func touch(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(5 * time.Second)
	os.Chtimes(p, future, future)
}

// sources maps each indexed source to its chunk count, and fails on a
// database-only ("@database/…") document, which is what a skipped
// document's leftover pages used to come back as.
func sources(t *testing.T, dir string) map[string]int {
	t.Helper()
	ix, err := Open(context.Background(), dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for i := range ix.Len() {
		c := ix.Chunk(i)
		if strings.HasPrefix(c.Source, "@") || c.Source == c.File {
			t.Errorf("stale page indexed under another path: %s", c.Source)
		}
		out[c.Source]++
	}
	return out
}

// TestBuildDiskFullKeepsPrevious: when the page database's disk fills in
// the middle of a build, the build fails with the cause and the previous
// generation stays live and intact; once there is room again the next
// build indexes everything, with nothing stale under another path.
func TestBuildDiskFullKeepsPrevious(t *testing.T) {
	ctx := context.Background()
	opt := testOptions(t.TempDir())
	writeCorpus(t, opt.DataDir, 6)
	first, err := Build(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	before := sources(t, opt.Dir)

	// Three documents change, one is new, one disappears.
	for _, p := range []string{"team0/doc000.md", "team1/doc001.md", "team2/doc002.md", "team0/new.md"} {
		touch(t, filepath.Join(opt.DataDir, p), "# 改訂版\n\nディスクが一杯になったときの手順。"+p+"\n")
	}
	gone := filepath.Join(opt.DatabaseDir, "team0", "doc003", "page_001.md")
	must(t, os.Remove(filepath.Join(opt.DataDir, "team0", "doc003.md")))

	disk := &fullDisk{left: 1}
	full := opt
	full.PageWriter = disk
	full.Workers = 1
	sum, err := Build(ctx, full)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "previous index stays in use") {
		t.Fatalf("disk full: summary %+v, err %v; want ENOSPC and the previous index kept", sum, err)
	}
	if disk.failed == 0 {
		t.Fatal("the fault was never injected")
	}
	m, err := ReadMeta(opt.Dir)
	if err != nil || m.Generation != first.Generation {
		t.Fatalf("live generation %d (%v); want %d kept", m.Generation, err, first.Generation)
	}
	if got := sources(t, opt.Dir); len(got) != len(before) {
		t.Errorf("live index after the failed build has %d sources, want the %d of before", len(got), len(before))
	}
	// The disappeared source's page is still there: the live generation
	// cites it, and pages are only deleted after a switch.
	if _, err := os.Stat(gone); err != nil {
		t.Errorf("page of the previous generation deleted by a failed build: %v", err)
	}
	ix, _ := Open(ctx, opt.Dir, OpenOptions{})
	if miss := ix.MissingPages(); len(miss) != 0 {
		t.Errorf("live index cites missing pages after a failed build: %v", miss)
	}

	// Room again: everything is indexed, under its own path only.
	sum, err = Build(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	got := sources(t, opt.Dir)
	if sum.Documents != 6 || len(got) != 6 || got["team0/new.md"] == 0 || got["team0/doc003.md"] != 0 {
		t.Errorf("after the disk was freed: %+v, sources %v", sum, got)
	}
	if _, err := os.Stat(gone); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("disappeared source's page kept after the switch: %v", err)
	}
}

// TestSkippedDocumentNotResurrected: a document indexed before and skipped
// now (it became unreadable) is dropped with its pages, not indexed again
// from its leftover page files as a database-only copy.
func TestSkippedDocumentNotResurrected(t *testing.T) {
	ctx := context.Background()
	opt := testOptions(t.TempDir())
	writeCorpus(t, opt.DataDir, 3)
	if _, err := Build(ctx, opt); err != nil {
		t.Fatal(err)
	}
	// Not UTF-8 any more: skipped with a reason.
	bad := filepath.Join(opt.DataDir, "team1", "doc001.md")
	must(t, os.WriteFile(bad, []byte{0x82, 0xa0, 0x82, 0xa2, '\n'}, 0o644))
	future := time.Now().Add(5 * time.Second)
	os.Chtimes(bad, future, future)
	for run := range 2 {
		sum, err := Build(ctx, opt)
		if err != nil {
			t.Fatal(err)
		}
		got := sources(t, opt.Dir)
		if sum.Documents != 2 || len(got) != 2 || len(sum.Skipped) != 1 {
			t.Errorf("run %d: %+v, sources %v", run, sum, got)
		}
	}
	if _, err := os.Stat(filepath.Join(opt.DatabaseDir, "team1", "doc001", "page_001.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("skipped document's old page kept: %v", err)
	}
}

// TestBuildRebuildsDamagedGeneration: a plain `index` with no source
// changed does not keep a generation whose files are damaged; it warns
// and writes a sound one.
func TestBuildRebuildsDamagedGeneration(t *testing.T) {
	ctx := context.Background()
	opt := testOptions(t.TempDir())
	writeCorpus(t, opt.DataDir, 3)
	first, err := Build(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{chunksBinFile, bm25File, vectorsFile, embedderFile} {
		t.Run(name, func(t *testing.T) {
			gen, _, err := readCurrent(opt.Dir)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(gen, name)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0xff
			must(t, os.WriteFile(p, b, 0o644))
			if _, err := Open(ctx, opt.Dir, OpenOptions{}); err == nil {
				t.Fatal("damage not detected on load")
			}
			var warnings []string
			o := opt
			o.Warn = func(s string) { warnings = append(warnings, s) }
			sum, err := Build(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Unchanged || sum.Generation <= first.Generation {
				t.Errorf("damaged generation kept: %+v", sum)
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "damaged") || !strings.Contains(warnings[0], name) {
				t.Errorf("warnings %q; want one naming the damaged %s", warnings, name)
			}
			if ix, err := Open(ctx, opt.Dir, OpenOptions{}); err != nil || ix.Len() != first.Chunks {
				t.Errorf("after the rebuild: %v", err)
			}
		})
	}
}

// TestOpenMarksMissingPages: a loaded index whose page files were deleted
// lists them and never returns their chunks; `index` then rebuilds them.
func TestOpenMarksMissingPages(t *testing.T) {
	ctx := context.Background()
	opt := testOptions(t.TempDir())
	writeCorpus(t, opt.DataDir, 3)
	if _, err := Build(ctx, opt); err != nil {
		t.Fatal(err)
	}
	const id = "database/team1/doc001/page_001.md"
	must(t, os.Remove(filepath.Join(opt.DatabaseDir, "team1", "doc001", "page_001.md")))
	ix, err := Open(ctx, opt.Dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if miss := ix.MissingPages(); len(miss) != 1 || miss[0] != id {
		t.Fatalf("MissingPages = %v; want [%s]", miss, id)
	}
	// "INC-0001" occurs only on the missing page.
	terms := ix.Terms("INC-0001 サーバー1")
	hits, _ := ix.Lexical(terms, 10)
	q, err := ix.EmbedQuery(ctx, "INC-0001 サーバー1", terms)
	if err != nil {
		t.Fatal(err)
	}
	hits = append(hits, ix.Dense(q, 10)...)
	if len(hits) == 0 {
		t.Fatal("no hits at all")
	}
	for _, h := range hits {
		if ix.Chunk(h.Chunk).File == id {
			t.Fatalf("search returned a chunk of the missing page %s", id)
		}
	}
	sum, err := Build(ctx, opt)
	if err != nil || sum.Unchanged || sum.Extracted != 1 {
		t.Fatalf("index after a page was deleted: %+v %v; want it re-extracted", sum, err)
	}
	if ix, _ := Open(ctx, opt.Dir, OpenOptions{}); len(ix.MissingPages()) != 0 {
		t.Errorf("still missing after index: %v", ix.MissingPages())
	}
}

// TestBuildIgnoresLinkToDatabase: a link in the data folder to the page
// database does not add a copy of every page on each run.
func TestBuildIgnoresLinkToDatabase(t *testing.T) {
	ctx := context.Background()
	opt := testOptions(t.TempDir())
	writeCorpus(t, opt.DataDir, 3)
	if err := os.MkdirAll(opt.DatabaseDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(opt.DatabaseDir, filepath.Join(opt.DataDir, "db_link")); err != nil {
		t.Skip("symlinks not supported:", err)
	}
	for run := range 3 {
		sum, err := Build(ctx, opt)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Documents != 3 {
			t.Fatalf("run %d: %d documents, want 3 (skipped %v)", run, sum.Documents, sum.Skipped)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
