package web

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCitationsOpenTheirSource: every citation of an answer names a chunk
// whose source page renders with the cited passage inside <mark id="hit">,
// titled by the document's title, with a link to the original file.
func TestCitationsOpenTheirSource(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	tests := []struct {
		question  string
		wantTitle string // of the first citation
		wantFile  string // file_url prefix
	}{
		{qMalware, "マルウェア感染端末の隔離手順", "/files/runbooks/malware_isolation.md"},
		{"VPN に接続できないときの確認事項は？", "VPN接続マニュアル", "/files/manuals/vpn_manual.pdf#page="},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			rep := f.askJSON(t, `{"question":`+jq(tt.question)+`}`)
			if len(rep.Citations) == 0 {
				t.Fatal("no citations")
			}
			c := rep.Citations[0]
			if c.Title != tt.wantTitle || !strings.HasPrefix(c.FileURL, tt.wantFile) {
				t.Errorf("citation %+v: want title %q, file_url %q…", c, tt.wantTitle, tt.wantFile)
			}
			for _, c := range rep.Citations {
				resp, b := f.do(t, "GET", "/api/source/"+escapePath(c.ChunkID), "", nil)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("GET /api/source/%s: %d %s", c.ChunkID, resp.StatusCode, b)
				}
				var src SourceResponse
				if err := json.Unmarshal(b, &src); err != nil {
					t.Fatal(err)
				}
				if src.ChunkID != c.ChunkID || src.Label != c.Label || src.Title != c.Title || src.FileURL != c.FileURL {
					t.Errorf("source %+v does not match citation %+v", src, c)
				}
				if strings.Count(src.HTML, `<mark id="hit" class="hit">`) != 1 || strings.Count(src.HTML, "</mark>") != 1 {
					t.Fatalf("source html has no single mark:\n%s", src.HTML)
				}
				// The excerpt's first words are inside the marked blocks.
				marked := src.HTML[strings.Index(src.HTML, `<mark id="hit"`):strings.Index(src.HTML, "</mark>")]
				probe := []rune(normText(stripTags(c.Excerpt)))
				if len(probe) > 8 {
					probe = probe[:8]
				}
				if !strings.Contains(normText(stripTags(marked)), string(probe)) {
					t.Errorf("excerpt %q not in the marked passage:\n%s", c.Excerpt, marked)
				}
				// The full page of the same.
				resp, b = f.do(t, "GET", strings.TrimSuffix(c.SourceURL, "#hit"), "", nil)
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `<mark id="hit"`) || !strings.Contains(string(b), "<title>"+c.Label) {
					t.Errorf("GET %s: %d\n%s", c.SourceURL, resp.StatusCode, b)
				}
			}
		})
	}
}

// stripTags removes HTML tags (test helper).
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestRenderMarked: the blocks holding the passage, and only those, are
// marked; document markup is sanitised.
func TestRenderMarked(t *testing.T) {
	md := newMarkdown()
	page := "# 手順書\n\n最初の段落は関係のない前置きの文章です。\n\n## 2. 隔離\n\n端末をネットワークから切り離し、管理者に連絡する。その後ログを保全する。\n\n| 項目 | 値 |\n|---|---|\n| 期限 | 30分 |\n\n## 3. 報告\n\n<script>alert(1)</script> 報告書を提出する。\n"
	tests := []struct {
		name, passage string
		inMark        []string
		outMark       []string
	}{
		{"section with table", "# 手順書\n## 2. 隔離\n端末をネットワークから切り離し、管理者に連絡する。その後ログを保全する。\n| 項目 | 値 |\n|---|---|\n| 期限 | 30分 |",
			[]string{"端末をネットワークから切り離し", "<th>項目</th>", "30分"}, []string{"最初の段落", "報告書"}},
		{"window cut mid-paragraph", "# 手順書\n## 3. 報告\nalert(1)</script> 報告書を提出する。",
			[]string{"報告書を提出する"}, []string{"端末をネットワーク"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(md.renderMarked(page, tt.passage))
			i, j := strings.Index(got, `<mark id="hit"`), strings.Index(got, "</mark>")
			if i < 0 || j < i {
				t.Fatalf("no mark:\n%s", got)
			}
			marked, rest := got[i:j], got[:i]+got[j:]
			for _, w := range tt.inMark {
				if !strings.Contains(marked, w) {
					t.Errorf("%q not marked:\n%s", w, got)
				}
			}
			for _, w := range tt.outMark {
				if strings.Contains(marked, w) || !strings.Contains(rest, w) {
					t.Errorf("%q marked or lost:\n%s", w, got)
				}
			}
			if strings.Contains(got, "<script") {
				t.Errorf("script survived:\n%s", got)
			}
		})
	}
}

// TestFilesServesOnlyIndexedSources: the original of an indexed document
// is served (a PDF inline, anything else as a download); every other path
// — traversal, absolute, not in the index, a symlink out of the data
// folder — is 404.
func TestFilesServesOnlyIndexedSources(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	tests := []struct {
		path   string
		status int
		disp   string
	}{
		{"/files/manuals/vpn_manual.pdf", 200, "inline"},
		{"/files/policies/severity_matrix.html", 200, "attachment"},
		{"/files/runbooks/account_lockout.md", 200, "attachment"},
		{"/files/runbooks/nothing.md", 404, ""},
		{"/files/../../go.mod", 404, ""},
		{"/files/%2e%2e/%2e%2e/go.mod", 404, ""},
		{"/files/runbooks/..%2f..%2f..%2fgo.mod", 404, ""},
		{"/files/%2fetc%2fpasswd", 404, ""},
		{"/files/runbooks%5c..%5c..%5cgo.mod", 404, ""},
		{"/files/", 404, ""},
	}
	c := *f.ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, tt := range tests {
		resp, err := c.Get(f.ts.URL + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusMovedPermanently || resp.StatusCode == http.StatusTemporaryRedirect { // the mux cleaning "..": follow once
			resp, err = c.Get(f.ts.URL + resp.Header.Get("Location"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if resp.StatusCode != tt.status || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), tt.disp) {
			t.Errorf("GET %s: %d %q, want %d %q", tt.path, resp.StatusCode, resp.Header.Get("Content-Disposition"), tt.status, tt.disp)
		}
	}

	// A source that is a symbolic link out of the data folder.
	data := t.TempDir()
	if err := os.MkdirAll(filepath.Join(data, "runbooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(secret, []byte("秘密"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(data, "runbooks", "account_lockout.md")); err != nil {
		t.Fatal(err)
	}
	g := newFixture(t, fixtureOptions{configure: func(o *Options) { o.DataDir = data }})
	if resp, b := g.do(t, "GET", "/files/runbooks/account_lockout.md", "", nil); resp.StatusCode != http.StatusNotFound || strings.Contains(string(b), "秘密") {
		t.Errorf("symlink out of the data folder: %d %s", resp.StatusCode, b)
	}
}

// TestSourceNeedsAuth: with a token, sources and files need it too.
func TestSourceNeedsAuth(t *testing.T) {
	f, _, c := tokenFixture(t)
	for _, p := range []string{"/api/source/database/runbooks/account_lockout/page_001.md_0", "/files/manuals/vpn_manual.pdf"} {
		resp, err := c.Get(f.ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without token: %d", p, resp.StatusCode)
		}
	}
	resp, err := c.Get(f.ts.URL + "/source/database/runbooks/account_lockout/page_001.md_0")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("GET /source without login: %d, want a redirect to /login", resp.StatusCode)
	}
	resp, b := f.do(t, "GET", "/api/source/database/nothing/page_001.md_0", "", map[string]string{"Authorization": "Bearer " + testToken})
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "source_not_found") {
		t.Errorf("unknown chunk: %d %s", resp.StatusCode, b)
	}
}

// TestPageImage: a cited PDF page comes as a PNG rendered by pdftoppm and
// cached; pages the document lacks, other files and paths outside the
// index are 404.
func TestPageImage(t *testing.T) {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		t.Skip("pdftoppm not installed (poppler-utils)")
	}
	f := newFixture(t, fixtureOptions{})
	rep := f.askJSON(t, `{"question":"VPN に接続できないときの確認事項は？"}`)
	var src SourceResponse
	_, b := f.do(t, "GET", "/api/source/"+escapePath(rep.Citations[0].ChunkID), "", nil)
	if err := json.Unmarshal(b, &src); err != nil || !strings.HasPrefix(src.ImageURL, "/page-image/manuals/vpn_manual.pdf?page=") {
		t.Fatalf("image_url of a PDF source: %q (%v)", src.ImageURL, err)
	}
	for range 2 { // rendered, then from the cache
		resp, img := f.do(t, "GET", src.ImageURL, "", nil)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
			t.Fatalf("GET %s: %d %s", src.ImageURL, resp.StatusCode, img)
		}
		if _, err := png.Decode(bytes.NewReader(img)); err != nil {
			t.Fatalf("not a PNG: %v", err)
		}
	}
	if cached, _ := filepath.Glob(filepath.Join(f.logs, "page-images", "*.png")); len(cached) != 1 {
		t.Errorf("cache holds %v", cached)
	}
	for _, p := range []string{"/page-image/manuals/vpn_manual.pdf?page=99", "/page-image/manuals/vpn_manual.pdf?page=x",
		"/page-image/runbooks/account_lockout.md?page=1", "/page-image/other.pdf?page=1"} {
		if resp, _ := f.do(t, "GET", p, "", nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d", p, resp.StatusCode)
		}
	}
	var md SourceResponse
	rep = f.askJSON(t, `{"question":`+jq(qMalware)+`}`)
	_, b = f.do(t, "GET", "/api/source/"+escapePath(rep.Citations[0].ChunkID), "", nil)
	if json.Unmarshal(b, &md); md.ImageURL != "" {
		t.Errorf("image_url of a Markdown source: %q", md.ImageURL)
	}
}

// BenchmarkSource: the catalogue of the demo index (built once per
// generation), then one source page rendered with its passage marked.
func BenchmarkSource(b *testing.B) {
	f := newFixture(b, fixtureOptions{})
	rep := f.askJSON(b, `{"question":`+jq(qMalware)+`}`)
	id := rep.Citations[0].ChunkID
	b.Run("catalog", func(b *testing.B) {
		st := f.asst.Searcher().Index()
		for b.Loop() {
			if _, err := buildCatalog(context.Background(), st); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("source", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.srv.source(context.Background(), id); err != nil {
				b.Fatal(err)
			}
		}
	})
}
