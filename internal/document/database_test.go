package document

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"
)

func TestPageFile(t *testing.T) {
	tests := []struct {
		db   string
		f    File
		page int
		want string
	}{
		{"./database", File{Rel: "runbooks/incident_response.md", Stem: "incident_response"}, 1, "database/runbooks/incident_response/page_001.md"},
		{"/var/lib/shirube/database", File{Rel: "manual.pdf", Stem: "manual"}, 12, "database/manual/page_012.md"},
		{"db/", File{Rel: "a/b/c.html", Stem: "c_html"}, 1000, "db/a/b/c_html/page_1000.md"},
		{"database", File{Rel: "冷蔵庫/r_h54xg_b/操作と機能.pdf"}, 8, "database/冷蔵庫/r_h54xg_b/操作と機能/page_008.md"},
	}
	for _, tt := range tests {
		if got := PageFile(tt.db, tt.f, tt.page); got != tt.want {
			t.Errorf("PageFile(%q, %q, %d) = %q, want %q", tt.db, tt.f.Rel, tt.page, got, tt.want)
		}
		if n, ok := PageNumber(tt.want); !ok || n != tt.page {
			t.Errorf("PageNumber(%q) = %d, %v", tt.want, n, ok)
		}
	}
	if _, ok := PageNumber("database/a/notes.md"); ok {
		t.Error("PageNumber accepted a non-page file")
	}
}

func listPages(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func TestWriteDatabase(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "database")
	f := File{Rel: "manuals/vpn.pdf", Stem: "vpn"}
	nested := File{Rel: "manuals/vpn/extra.md", Stem: "extra"} // a data folder named like the stem

	doc := Document{Pages: []Page{{1, "一ページ目"}, {2, ""}, {3, "三ページ目\n"}}}
	ids, err := WriteDatabase(ctx, db, f, doc, nil)
	must(t, err)
	want := []string{"database/manuals/vpn/page_001.md", "database/manuals/vpn/page_002.md", "database/manuals/vpn/page_003.md"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("ids = %q, want %q", ids, want)
	}
	_, err = WriteDatabase(ctx, db, nested, Document{Pages: []Page{{1, "x"}}}, nil)
	must(t, err)
	for name, body := range map[string]string{"page_001.md": "一ページ目\n", "page_002.md": "", "page_003.md": "三ページ目\n"} {
		got, err := os.ReadFile(filepath.Join(db, "manuals", "vpn", name))
		must(t, err)
		if string(got) != body {
			t.Errorf("%s = %q, want %q", name, got, body)
		}
	}

	// Unchanged pages are not rewritten.
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	p1 := filepath.Join(db, "manuals", "vpn", "page_001.md")
	must(t, os.Chtimes(p1, old, old))

	// A shorter new version drops the stale page 3 but not the nested folder.
	must(t, os.WriteFile(filepath.Join(db, "manuals", "vpn", "notes.txt"), []byte("keep"), 0o644))
	ids, err = WriteDatabase(ctx, db, f, Document{Pages: []Page{{1, "一ページ目"}, {2, "改訂"}}}, nil)
	must(t, err)
	if len(ids) != 2 {
		t.Errorf("ids = %q", ids)
	}
	if info, _ := os.Stat(p1); !info.ModTime().Equal(old) {
		t.Error("unchanged page 1 was rewritten")
	}
	wantFiles := []string{"manuals/vpn/extra/page_001.md", "manuals/vpn/notes.txt", "manuals/vpn/page_001.md", "manuals/vpn/page_002.md"}
	if got := listPages(t, db); !reflect.DeepEqual(got, wantFiles) {
		t.Errorf("files = %q, want %q (no temp files, stale page removed)", got, wantFiles)
	}

	// RemoveDocument removes only the document's pages.
	must(t, RemoveDocument(ctx, db, f))
	wantFiles = []string{"manuals/vpn/extra/page_001.md", "manuals/vpn/notes.txt"}
	if got := listPages(t, db); !reflect.DeepEqual(got, wantFiles) {
		t.Errorf("after RemoveDocument: %q, want %q", got, wantFiles)
	}
	must(t, RemoveDocument(ctx, db, nested))
	must(t, os.Remove(filepath.Join(db, "manuals", "vpn", "notes.txt")))
	must(t, RemoveDocument(ctx, db, f)) // again: no pages left, folders pruned
	if _, err := os.Stat(filepath.Join(db, "manuals")); !os.IsNotExist(err) {
		t.Errorf("empty folders left behind: %v", err)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("database folder itself removed: %v", err)
	}
}

func TestWriteDatabaseErrors(t *testing.T) {
	ctx := context.Background()
	db := t.TempDir()
	for _, tt := range []struct {
		f   File
		doc Document
	}{
		{File{Rel: "", Stem: "x"}, Document{Pages: []Page{{1, "x"}}}},
		{File{Rel: "../escape.md", Stem: "escape"}, Document{Pages: []Page{{1, "x"}}}},
		{File{Rel: "/abs.md", Stem: "abs"}, Document{Pages: []Page{{1, "x"}}}},
		{File{Rel: "a.md", Stem: "a"}, Document{}},
	} {
		if _, err := WriteDatabase(ctx, db, tt.f, tt.doc, nil); err == nil {
			t.Errorf("WriteDatabase(%q, %d pages): want error", tt.f.Rel, len(tt.doc.Pages))
		}
	}
}

// TestDatabaseSyncCopiesRemove drives the page database the way a build
// does: sync a source (written, then unchanged), list the copies
// optimisation added, remove a source's pages.
func TestDatabaseSyncCopiesRemove(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	data, dbDir := filepath.Join(root, "data"), filepath.Join(root, "database")
	must(t, os.MkdirAll(filepath.Join(data, "runbooks"), 0o755))
	src := filepath.Join(data, "runbooks", "vpn.md")
	must(t, os.WriteFile(src, []byte("# VPN\n\n接続手順。\n"), 0o644))
	info, err := os.Stat(src)
	must(t, err)
	f := File{Path: src, Rel: "runbooks/vpn.md", Stem: "vpn", Kind: Markdown, Size: info.Size(), ModTime: info.ModTime()}
	db := Database{Dir: dbDir}
	ex := NewExtractor(Options{})

	s, changed, skip, err := db.Sync(ctx, ex, f, nil)
	must(t, err)
	if skip != nil || !changed || !reflect.DeepEqual(s.Pages, []string{"database/runbooks/vpn/page_001.md"}) {
		t.Fatalf("first Sync = %v, changed %v, skip %v", s.Pages, changed, skip)
	}
	if again, changed, _, _ := db.Sync(ctx, ex, f, &s); changed || !reflect.DeepEqual(again.Pages, s.Pages) {
		t.Errorf("Sync of an unchanged source: changed %v, pages %v", changed, again.Pages)
	}

	// A copy (and a renamed copy) under a better-named folder; the source's
	// own page is known and is not a copy; notes.md is no page at all.
	for _, p := range []string{"接続_設定/page_001.md", "接続_設定/page_001_2.md", "接続_設定/notes.md"} {
		must(t, os.MkdirAll(filepath.Join(dbDir, filepath.Dir(p)), 0o755))
		must(t, os.WriteFile(filepath.Join(dbDir, p), []byte("# VPN\n"), 0o644))
	}
	known := map[string]bool{s.Pages[0]: true}
	copies, err := db.Copies(ctx, func(id string) bool { return known[id] })
	must(t, err)
	var got []string
	for _, c := range copies {
		got = append(got, c.ID+" "+c.Folder+" "+strconv.Itoa(c.Page))
	}
	want := []string{"database/接続_設定/page_001.md 接続 設定 1", "database/接続_設定/page_001_2.md 接続 設定 0"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Copies = %q, want %q", got, want)
	}
	if !db.Exists(s.Pages) {
		t.Error("Exists: the synced page is missing")
	}
	db.Remove(s.Pages)
	if db.Exists(s.Pages) {
		t.Error("Remove left the page")
	}
	if _, err := os.Stat(filepath.Join(dbDir, "runbooks")); !os.IsNotExist(err) {
		t.Errorf("Remove left the empty folders: %v", err)
	}
}
