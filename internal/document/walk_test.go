package document

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// writeTree creates files under dir; a value of "" creates an empty file.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func rels(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Rel+"="+f.Stem+":"+string(f.Kind))
	}
	return out
}

func TestWalk(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name: "kinds, case-insensitive extensions, hidden and unsupported ignored",
			files: map[string]string{
				"b.md":                  "# b",
				"a.PDF":                 "%PDF-",
				"c.Markdown":            "x",
				"d.HTM":                 "<p>x",
				"e.html":                "<p>x",
				"f.txt":                 "x",
				"g.docx":                "x",
				".hidden.md":            "x",
				".git/config.md":        "x",
				"sub/.secret/notes.txt": "x",
				"README":                "x",
			},
			want: []string{"a.PDF=a:pdf", "b.md=b:markdown", "c.Markdown=c:markdown", "d.HTM=d:html", "e.html=e:html", "f.txt=f:text"},
		},
		{
			name: "sorted by Rel across folders",
			files: map[string]string{
				"runbooks/z.md":        "x",
				"runbooks/a.md":        "x",
				"policies/sev.html":    "x",
				"manuals/deep/vpn.txt": "x",
			},
			want: []string{"manuals/deep/vpn.txt=vpn:text", "policies/sev.html=sev:html", "runbooks/a.md=a:markdown", "runbooks/z.md=z:markdown"},
		},
		{
			name: "shared stems get name_ext",
			files: map[string]string{
				"a.md":      "x",
				"a.html":    "x",
				"b.txt":     "x",
				"sub/a.pdf": "x",
			},
			want: []string{"a.html=a_html:html", "a.md=a_md:markdown", "b.txt=b:text", "sub/a.pdf=a:pdf"},
		},
		{
			name: "an empty sibling still forces name_ext (stable identities)",
			files: map[string]string{
				"a.md":  "x",
				"a.txt": "",
			},
			want: []string{"a.md=a_md:markdown"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.files)
			files, _, err := Walk(context.Background(), dir, WalkOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := rels(files); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			for _, f := range files {
				if f.Path != filepath.Join(dir, filepath.FromSlash(f.Rel)) {
					t.Errorf("%s: Path = %q", f.Rel, f.Path)
				}
				if f.ModTime.IsZero() || f.Size != int64(len(tt.files[f.Rel])) {
					t.Errorf("%s: Size %d ModTime %v", f.Rel, f.Size, f.ModTime)
				}
			}
		})
	}
}

func TestStemsFor(t *testing.T) {
	got := stemsFor([]string{"a.md", "a.html", "a_md.txt", "b.pdf"})
	want := map[string]string{"a.md": "a.md", "a.html": "a_html", "a_md.txt": "a_md.txt", "b.pdf": "b"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestWalkDataDirErrors(t *testing.T) {
	tmp := t.TempDir()
	writeTree(t, tmp, map[string]string{"empty/.keep": "", "unsupported/a.docx": "x", "file.md": "x"})
	tests := []struct {
		name    string
		dir     string
		wantIs  error
		wantMsg string
	}{
		{"missing", "./no-such-data", ErrDataDirMissing, "データフォルダが見つかりません: ./no-such-data — create it or choose another data folder"},
		{"empty", filepath.Join(tmp, "empty"), ErrDataDirEmpty, "データフォルダが空です: " + filepath.Join(tmp, "empty") + " — データを追加してください (.pdf .md .html .txt)"},
		{"only unsupported", filepath.Join(tmp, "unsupported"), ErrDataDirEmpty, "データフォルダが空です: "},
		{"a file, not a folder", filepath.Join(tmp, "file.md"), nil, "データフォルダがフォルダではありません"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Walk(context.Background(), tt.dir, WalkOptions{})
			if err == nil {
				t.Fatal("want error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
			}
			if !strings.HasPrefix(err.Error(), tt.wantMsg) {
				t.Errorf("message %q, want prefix %q", err, tt.wantMsg)
			}
		})
	}
}

func TestWalkSkips(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"ok.md":        "# ok",
		"empty.md":     "",
		"big.txt":      strings.Repeat("x", 2048),
		"sub/fine.txt": "fine",
	})
	must(t, os.Symlink("self.md", filepath.Join(dir, "self.md")))                    // ELOOP
	must(t, os.Symlink("nowhere.md", filepath.Join(dir, "broken.md")))               // dangling
	must(t, os.Symlink("..", filepath.Join(dir, "sub", "up")))                       // cycle to root
	must(t, os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "sub_link")))   // same folder twice
	must(t, os.Symlink(filepath.Join(dir, "ok.md"), filepath.Join(dir, "alias.md"))) // link to a file: followed
	must(t, os.Symlink("nowhere", filepath.Join(dir, "ignored.docx")))               // unsupported: silent

	files, skips, err := Walk(context.Background(), dir, WalkOptions{MaxFileSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{"alias.md=alias:markdown", "ok.md=ok:markdown", "sub/fine.txt=fine:text"}
	if got := rels(files); !reflect.DeepEqual(got, wantFiles) {
		t.Errorf("files %q, want %q", got, wantFiles)
	}
	want := map[string]string{
		"big.txt":   "over the 1024 bytes limit",
		"broken.md": "broken symlink",
		"empty.md":  "empty file",
		"self.md":   "symlink loop",
		"sub/up/":   "symlink loop",
		"sub_link/": "same folder as \"sub\"",
	}
	checkSkips(t, skips, want)
}

func TestWalkPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: permission bits are not enforced")
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"ok.md": "x", "secret.md": "x", "locked/a.md": "x"})
	must(t, os.Chmod(filepath.Join(dir, "secret.md"), 0))
	must(t, os.Chmod(filepath.Join(dir, "locked"), 0))
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "locked"), 0o755) })

	files, skips, err := Walk(context.Background(), dir, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rels(files); !reflect.DeepEqual(got, []string{"ok.md=ok:markdown"}) {
		t.Errorf("files %q", got)
	}
	checkSkips(t, skips, map[string]string{
		"locked/":   "permission denied",
		"secret.md": "permission denied",
	})
}

func TestWalkVanishingFile(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"stays.md": "x", "goes.md": "x"})
	w := walker{afterList: func(d string) {
		if d == dir {
			os.Remove(filepath.Join(dir, "goes.md"))
		}
	}}
	files, skips, err := w.walk(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := rels(files); !reflect.DeepEqual(got, []string{"stays.md=stays:markdown"}) {
		t.Errorf("files %q", got)
	}
	checkSkips(t, skips, map[string]string{"goes.md": "disappeared during the scan"})
}

func TestWalkExclude(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.md": "x", "database/a/page_001.md": "x"})
	files, _, err := Walk(context.Background(), dir, WalkOptions{Exclude: []string{filepath.Join(dir, "database")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := rels(files); !reflect.DeepEqual(got, []string{"a.md=a:markdown"}) {
		t.Errorf("files %q", got)
	}
}

// TestWalkLinksOutOrIntoDatabase: links to the page database or the index
// (inside or outside the data folder) and links leading out of the data
// folder are skipped with a reason, never followed.
func TestWalkLinksOutOrIntoDatabase(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data")
	writeTree(t, base, map[string]string{
		"data/a.md":                     "# a",
		"data/inner_db/x/page_001.md":   "# page inside the data folder",
		"database/a/page_001.md":        "# a",
		".shirube/gen-000001/chunks.md": "index file",
		"secret/passwd.txt":             "root:x:0:0",
		"secret.md":                     "# secret",
	})
	db, ix := filepath.Join(base, "database"), filepath.Join(base, ".shirube")
	must(t, os.Symlink(db, filepath.Join(data, "db")))                                    // the database, outside
	must(t, os.Symlink("../database/a/page_001.md", filepath.Join(data, "page.md")))      // a page file
	must(t, os.Symlink(ix, filepath.Join(data, "ix")))                                    // the index
	must(t, os.Symlink(filepath.Join(base, "secret"), filepath.Join(data, "etc")))        // a folder outside
	must(t, os.Symlink(filepath.Join(base, "secret.md"), filepath.Join(data, "leak.md"))) // a file outside
	must(t, os.Symlink("inner_db", filepath.Join(data, "db_alias")))                      // the database, inside
	must(t, os.Symlink(filepath.Join(data, "a.md"), filepath.Join(data, "a_alias.md")))   // inside: followed

	files, skips, err := Walk(context.Background(), data, WalkOptions{Exclude: []string{filepath.Join(data, "inner_db"), db, ix}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rels(files), []string{"a.md=a:markdown", "a_alias.md=a_alias:markdown"}; !reflect.DeepEqual(got, want) {
		t.Errorf("files %q, want %q", got, want)
	}
	checkSkips(t, skips, map[string]string{
		"db/":       "page database or index",
		"ix/":       "page database or index",
		"db_alias/": "page database or index",
		"page.md":   "page database or index",
		"etc/":      "outside the data folder",
		"leak.md":   "outside the data folder",
	})
}

func TestWalkCanceled(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.md": "x"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Walk(ctx, dir, WalkOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestWalkModTime(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.md": "x"})
	mt := time.Date(2024, 12, 29, 13, 0, 0, 0, time.UTC)
	must(t, os.Chtimes(filepath.Join(dir, "a.md"), mt, mt))
	files, _, err := Walk(context.Background(), dir, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !files[0].ModTime.Equal(mt) {
		t.Errorf("ModTime = %v, want %v", files[0].ModTime, mt)
	}
}

// checkSkips asserts that skips hold exactly the paths in want, each with
// a one-line reason containing the wanted text.
func checkSkips(t *testing.T, skips []Skip, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, s := range skips {
		got[s.Path] = s.Reason
		if strings.Contains(s.Reason, "\n") {
			t.Errorf("%s: reason spans lines: %q", s.Path, s.Reason)
		}
	}
	for p, frag := range want {
		if r, ok := got[p]; !ok {
			t.Errorf("no skip for %s (skips: %v)", p, skips)
		} else if !strings.Contains(r, frag) {
			t.Errorf("%s: reason %q lacks %q", p, r, frag)
		}
	}
	for p, r := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("unexpected skip %s: %s", p, r)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
