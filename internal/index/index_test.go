package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/document"
)

// writeCorpus writes n small Markdown runbooks into dir.
func writeCorpus(t testing.TB, dir string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("team%d", i%3))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("# 手順書 %d\n\n## 概要\n\nサーバー%d の障害対応とログ保管の手順を説明する。担当者は SOC の一次対応者である。\n\n## 手順\n\n1. アラートを確認する。\n2. 影響範囲を調査し、チケット番号 INC-%04d を記録する。\n3. 必要ならエスカレーションする。\n", i, i, i)
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("doc%03d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func testOptions(root string) BuildOptions {
	return BuildOptions{
		DataDir:     filepath.Join(root, "data"),
		DatabaseDir: filepath.Join(root, "database"),
		Dir:         filepath.Join(root, "index"),
		Chunk:       chunk.Options{Size: 500, Overlap: 50},
		Analyzer:    analysis.DefaultOptions(),
	}
}

func TestBuildOpenIncremental(t *testing.T) {
	root := t.TempDir()
	opt := testOptions(root)
	writeCorpus(t, opt.DataDir, 6)
	ctx := context.Background()

	sum, err := Build(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Documents != 6 || sum.Extracted != 6 || sum.Pages != 6 || sum.Chunks < 12 {
		t.Fatalf("first build: %+v", sum)
	}
	ix, err := Open(ctx, opt.Dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != sum.Chunks {
		t.Fatalf("loaded %d chunks, built %d", ix.Len(), sum.Chunks)
	}
	if got := ix.Chunk(0).File; !strings.HasPrefix(got, "database/team0/doc000/page_001.md") {
		t.Errorf("page identity %q", got)
	}
	if _, err := os.Stat(filepath.Join(opt.DatabaseDir, "team0", "doc000", "page_001.md")); err != nil {
		t.Errorf("page file not written: %v", err)
	}

	// Nothing changed: the generation is kept.
	sum2, err := Build(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !sum2.Unchanged || sum2.Reused != 6 || sum2.Extracted != 0 || sum2.Generation != sum.Generation {
		t.Fatalf("unchanged rebuild: %+v", sum2)
	}

	// One file changed, one deleted: only the changed one is read again.
	changed := filepath.Join(opt.DataDir, "team1", "doc001.md")
	if err := os.WriteFile(changed, []byte("# 変更\n\n新しい内容：バックアップの復旧手順。\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(2 * time.Second)
	os.Chtimes(changed, future, future)
	if err := os.Remove(filepath.Join(opt.DataDir, "team2", "doc002.md")); err != nil {
		t.Fatal(err)
	}
	sum3, err := Build(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum3.Extracted != 1 || sum3.Reused != 4 || sum3.Removed != 1 || sum3.Documents != 5 || sum3.Generation != sum.Generation+1 {
		t.Fatalf("incremental build: %+v", sum3)
	}
	if _, err := os.Stat(filepath.Join(opt.DatabaseDir, "team2", "doc002")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("deleted source's pages still in the database: %v", err)
	}
	ix3, err := Open(ctx, opt.Dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < ix3.Len(); i++ {
		if strings.Contains(ix3.Chunk(i).File, "doc002") {
			t.Fatalf("deleted document still indexed: %s", ix3.Chunk(i).ID)
		}
	}
	// Only one generation is kept on disk.
	gens, _ := filepath.Glob(filepath.Join(opt.Dir, "gen-*"))
	if len(gens) != 1 {
		t.Errorf("generations on disk: %v", gens)
	}

	// --rebuild reads everything again.
	opt.Rebuild = true
	sum4, err := Build(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum4.Extracted != 5 || sum4.Reused != 0 {
		t.Fatalf("rebuild: %+v", sum4)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, t.TempDir(), OpenOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty dir: %v, want ErrNotFound", err)
	}

	root := t.TempDir()
	opt := testOptions(root)
	writeCorpus(t, opt.DataDir, 2)
	if _, err := Build(ctx, opt); err != nil {
		t.Fatal(err)
	}
	gen, _, err := readCurrent(opt.Dir)
	if err != nil {
		t.Fatal(err)
	}

	// A damaged file is detected by its checksum.
	chunks := filepath.Join(gen, chunksBinFile)
	b, _ := os.ReadFile(chunks)
	b[len(b)/2] ^= 0xff
	os.WriteFile(chunks, b, 0o644)
	if _, err := Open(ctx, opt.Dir, OpenOptions{}); !errors.Is(err, ErrDamaged) {
		t.Fatalf("damaged chunks: %v", err)
	}

	// Another format version is refused with a clear message.
	metaPath := filepath.Join(gen, metaFile)
	m, _ := os.ReadFile(metaPath)
	os.WriteFile(metaPath, []byte(strings.Replace(string(m), `"format_version": 1`, `"format_version": 999`, 1)), 0o644)
	_, err = Open(ctx, opt.Dir, OpenOptions{})
	if !errors.Is(err, ErrFormat) || !errors.Is(err, ErrDamaged) {
		t.Fatalf("format mismatch: %v", err)
	}
}

func TestBuildBadInputContinues(t *testing.T) {
	root := t.TempDir()
	opt := testOptions(root)
	writeCorpus(t, opt.DataDir, 2)
	os.WriteFile(filepath.Join(opt.DataDir, "sjis.md"), []byte{0x82, 0xa0, 0x82, 0xa2, '\n'}, 0o644)
	os.WriteFile(filepath.Join(opt.DataDir, "empty.md"), nil, 0o644)
	os.WriteFile(filepath.Join(opt.DataDir, "broken.pdf"), []byte("%PDF-1.4 garbage"), 0o644)
	sum, err := Build(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Documents != 2 || len(sum.Skipped) != 3 {
		t.Fatalf("summary %+v", sum)
	}
	for _, s := range sum.Skipped {
		if s.Reason == "" || strings.Contains(s.Reason, "\n") {
			t.Errorf("skip reason for %s is not one line: %q", s.Path, s.Reason)
		}
	}
}

func TestBuildMissingDataDir(t *testing.T) {
	opt := testOptions(t.TempDir())
	_, err := Build(context.Background(), opt)
	if err == nil || !strings.Contains(err.Error(), "データフォルダが見つかりません") {
		t.Fatalf("missing data dir: %v", err)
	}
}

// TestKillDuringBuild kills a build with SIGKILL at several moments and
// checks that the previous generation always stays loadable.
func TestKillDuringBuild(t *testing.T) {
	if os.Getenv("SHIRUBE_HELPER_BUILD") != "" {
		return
	}
	root := t.TempDir()
	opt := testOptions(root)
	writeCorpus(t, opt.DataDir, 4)
	ctx := context.Background()
	first, err := Build(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	// Grow the corpus so the next build takes a while.
	writeCorpus(t, filepath.Join(opt.DataDir, "more"), 200)
	for _, delay := range []time.Duration{50 * time.Millisecond, 300 * time.Millisecond, 900 * time.Millisecond} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBuild$")
		cmd.Env = append(os.Environ(), "SHIRUBE_HELPER_BUILD="+root)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		ix, err := Open(ctx, opt.Dir, OpenOptions{})
		if err != nil {
			t.Fatalf("after kill at %v: index not loadable: %v", delay, err)
		}
		if ix.Len() < first.Chunks {
			t.Fatalf("after kill at %v: %d chunks, want ≥ %d", delay, ix.Len(), first.Chunks)
		}
	}
	// A later build recovers and completes.
	if _, err := Build(ctx, opt); err != nil {
		t.Fatalf("build after kills: %v", err)
	}
	ix, err := Open(ctx, opt.Dir, OpenOptions{})
	if err != nil || ix.Meta().Documents != 204 {
		t.Fatalf("final index: %v %+v", err, ix.Meta())
	}
}

// TestHelperBuild is the child process of TestKillDuringBuild.
func TestHelperBuild(t *testing.T) {
	root := os.Getenv("SHIRUBE_HELPER_BUILD")
	if root == "" {
		t.Skip("helper process only")
	}
	opt := testOptions(root)
	opt.Rebuild = true
	Build(context.Background(), opt)
}

func TestBuildCategorize(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext not installed")
	}
	root := t.TempDir()
	opt := testOptions(root)
	os.MkdirAll(opt.DataDir, 0o755)
	pdf, err := os.ReadFile("../../examples/data/manuals/vpn_manual.pdf")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(opt.DataDir, "vpn_manual.pdf"), pdf, 0o644)
	opt.Categorize = &document.CategorizeOptions{}
	sum, err := Build(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Open(context.Background(), opt.Dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pages := ix.Pages()
	if len(pages) != sum.Pages || sum.Pages != 4 {
		t.Fatalf("pages %v (summary %+v)", pages, sum)
	}
	for _, p := range pages {
		// database/vpn_manual/<category>/page_NNN.md
		parts := strings.Split(p, "/")
		if len(parts) != 4 || parts[1] != "vpn_manual" || parts[2] == "" {
			t.Errorf("page identity %q is not categorised", p)
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			t.Errorf("page file missing: %v", err)
		}
	}
	// Switching categorisation off rewrites the plain layout.
	opt.Categorize = nil
	if _, err := Build(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	ix, _ = Open(context.Background(), opt.Dir, OpenOptions{})
	if got := ix.Pages()[0]; got != "database/vpn_manual/page_001.md" {
		t.Errorf("uncategorised identity %q", got)
	}
}

// TestBuildCategorizeWriteFailure checks that a page database that cannot
// be written skips the document with a reason instead of indexing pages
// that do not exist.
func TestBuildCategorizeWriteFailure(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext not installed")
	}
	root := t.TempDir()
	opt := testOptions(root)
	os.MkdirAll(opt.DataDir, 0o755)
	pdf, err := os.ReadFile("../../examples/data/manuals/vpn_manual.pdf")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(opt.DataDir, "vpn_manual.pdf"), pdf, 0o644)
	writeCorpus(t, opt.DataDir, 1)
	// A file where the document's page folder must go.
	os.MkdirAll(opt.DatabaseDir, 0o755)
	os.WriteFile(filepath.Join(opt.DatabaseDir, "vpn_manual"), []byte("in the way"), 0o644)
	opt.Categorize = &document.CategorizeOptions{}
	sum, err := Build(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Documents != 1 || len(sum.Skipped) != 1 || !strings.Contains(sum.Skipped[0].Reason, "write page database") {
		t.Fatalf("summary %+v", sum)
	}
}

// TestExtraPageFindableByFolder: a page copied by folder optimisation into
// database/<folder>/ is indexed under the words of that folder in every
// chunk, above its own headings — also when the page is a Markdown or HTML
// page starting with its own "# H1", which used to replace the folder.
func TestExtraPageFindableByFolder(t *testing.T) {
	for name, page := range map[string]string{
		"markdown h1": "# 手順書 9\n\n## 概要\n\nアラートを確認し、影響範囲を調査する。\n\n## 手順\n\n" + strings.Repeat("チケットを記録する。", 80),
		"pdf text":    "アラートを確認し、影響範囲を調査する。\n" + strings.Repeat("チケットを記録する。", 80),
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			opt := testOptions(root)
			writeCorpus(t, opt.DataDir, 1)
			copyDir := filepath.Join(opt.DatabaseDir, "ランサムウェア隔離", "夜間当番")
			if err := os.MkdirAll(copyDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(copyDir, "page_001.md"), []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := Build(ctx, opt); err != nil {
				t.Fatal(err)
			}
			ix, err := Open(ctx, opt.Dir, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			const id = "database/ランサムウェア隔離/夜間当番/page_001.md"
			n := 0
			for i := range ix.Len() {
				c := ix.Chunk(i)
				if c.File != id {
					continue
				}
				n++
				if !strings.HasPrefix(c.Heading, "ランサムウェア隔離 / 夜間当番") || !strings.HasPrefix(c.Text, "# ランサムウェア隔離 / 夜間当番\n") {
					t.Errorf("chunk %d of the copy: heading %q, text %.40q; want the folder first", c.Index, c.Heading, c.Text)
				}
			}
			if n < 2 {
				t.Fatalf("%d chunks of the copy; want several", n)
			}
			hits, _ := ix.Lexical(ix.Terms("ランサムウェア隔離の夜間当番"), 3)
			if len(hits) == 0 || ix.Chunk(hits[0].Chunk).File != id {
				t.Errorf("the folder's words do not find the copy first: %+v", hits)
			}
		})
	}
}

// TestTouchRefreshesUpdatedAt: a source whose modification time changes
// but whose content does not keeps its chunks (no re-chunking, no
// re-embedding) but their updated_at follows the new time, in a new
// generation (issue 22: it kept the old time); the others keep theirs, and
// the next build without a change keeps the generation.
func TestTouchRefreshesUpdatedAt(t *testing.T) {
	root := t.TempDir()
	opt := testOptions(root)
	writeCorpus(t, opt.DataDir, 3)
	ctx := context.Background()
	sum, err := Build(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	updated := func() map[string]string {
		t.Helper()
		ix, err := Open(ctx, opt.Dir, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for i := range ix.Len() {
			c := ix.Chunk(i)
			m[c.ID] = c.UpdatedAt
		}
		return m
	}
	before := updated()
	touched := filepath.Join(opt.DataDir, "team1", "doc001.md")
	when := time.Date(2030, 1, 2, 3, 4, 5, 0, time.Local)
	if err := os.Chtimes(touched, when, when); err != nil {
		t.Fatal(err)
	}
	sum2, err := Build(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Unchanged || sum2.Generation != sum.Generation+1 || sum2.Extracted != 0 || sum2.Reused != 3 || sum2.Retimed != 1 {
		t.Fatalf("build after touching one source: %+v, want a new generation with 3 reused, 1 retimed", sum2)
	}
	after := updated()
	if len(after) != len(before) {
		t.Fatalf("%d chunks, want %d", len(after), len(before))
	}
	n := 0
	for id, u := range after {
		switch {
		case strings.Contains(id, "doc001"):
			n++
			if u != "2030-01-02T03:04:05" {
				t.Errorf("%s: updated_at %q, want 2030-01-02T03:04:05", id, u)
			}
		case u != before[id]:
			t.Errorf("%s: updated_at %q changed from %q, its source was not touched", id, u, before[id])
		}
	}
	if n == 0 {
		t.Fatal("no chunk of the touched source")
	}
	sum3, err := Build(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !sum3.Unchanged || sum3.Retimed != 0 || sum3.Generation != sum2.Generation {
		t.Errorf("build with nothing changed: %+v, want the generation kept", sum3)
	}
}
