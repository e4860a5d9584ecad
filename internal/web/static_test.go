package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestStaticAssets: the chat and login pages carry the style sheet inline
// and the CSP admits exactly that sheet by its hash (nothing inline else);
// the script is linked at its version, kept for a year there, revalidated
// by ETag elsewhere, gzipped for clients that take it; pages are gzipped
// too and never stored.
func TestStaticAssets(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	gz := map[string]string{"Accept-Encoding": "gzip, deflate"}
	gunzip := func(t *testing.T, b []byte) []byte {
		t.Helper()
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("not gzip: %v", err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	css, _ := assets.ReadFile("assets/style.css")
	js, _ := assets.ReadFile("assets/app.js")
	styleRe := regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	var scriptURL string
	for _, path := range []string{"/", "/login"} {
		resp, b := f.do(t, "GET", path, "", gz)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("GET %s: %d, encoding %q, cache %q", path, resp.StatusCode, resp.Header.Get("Content-Encoding"), resp.Header.Get("Cache-Control"))
		}
		page := gunzip(t, b)
		m := styleRe.FindAllSubmatch(page, -1)
		if len(m) != 1 || !bytes.Equal(m[0][1], css) || bytes.Contains(page, []byte(`rel="stylesheet"`)) {
			t.Fatalf("GET %s: %d <style> elements, the first equal to style.css: %v; want the sheet inline, once, and no stylesheet request", path, len(m), len(m) > 0 && bytes.Equal(m[0][1], css))
		}
		sum := sha256.Sum256(m[0][1])
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "style-src 'self' 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"';") || strings.Contains(csp, "unsafe") || !strings.Contains(csp, "script-src 'self';") {
			t.Errorf("GET %s: CSP %q does not admit exactly the inline sheet", path, csp)
		}
		if path == "/" {
			if sm := regexp.MustCompile(`<script src="(/static/app\.js\?v=[0-9a-f]{16})" defer></script>`).FindSubmatch(page); sm != nil {
				scriptURL = string(sm[1])
			}
		}
		// Without gzip the page comes plain.
		resp, b = f.do(t, "GET", path, "", map[string]string{"Accept-Encoding": "identity"})
		if resp.Header.Get("Content-Encoding") != "" || !bytes.Contains(b, []byte("<style>")) {
			t.Errorf("GET %s without gzip: encoding %q", path, resp.Header.Get("Content-Encoding"))
		}
	}
	if scriptURL == "" {
		t.Fatal("the page links no versioned script")
	}

	resp, b := f.do(t, "GET", scriptURL, "", gz)
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || etag == "" ||
		resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(gunzip(t, b), js) || len(b) >= len(js)/2 {
		t.Errorf("GET %s: %d, cache %q, ETag %q, encoding %q, %d bytes for %d", scriptURL, resp.StatusCode, resp.Header.Get("Cache-Control"), etag,
			resp.Header.Get("Content-Encoding"), len(b), len(js))
	}
	if resp, _ := f.do(t, "GET", scriptURL, "", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": etag}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("GET %s again with its ETag: %d, want 304", scriptURL, resp.StatusCode)
	}
	// Another version (an old page) or none: revalidated each time.
	for _, path := range []string{"/static/app.js", "/static/app.js?v=0000000000000000", "/static/style.css"} {
		resp, b := f.do(t, "GET", path, "", map[string]string{"Accept-Encoding": "identity"})
		want := js
		if strings.Contains(path, "css") {
			want = css
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("ETag") == "" || !bytes.Equal(b, want) {
			t.Errorf("GET %s: %d, cache %q, ETag %q", path, resp.StatusCode, resp.Header.Get("Cache-Control"), resp.Header.Get("ETag"))
		}
	}
	if resp, _ := f.do(t, "GET", "/static/page.html", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /static/page.html: %d, want 404", resp.StatusCode)
	}
}
