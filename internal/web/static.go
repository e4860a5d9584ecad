package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"strings"
)

// staticAsset is an embedded file as it is served: its bytes, gzipped
// once, and an ETag from its content.
type staticAsset struct {
	ctype   string
	body    []byte
	gz      []byte
	version string // first 16 hex digits of the content's SHA-256
}

func newStaticAsset(name, ctype string) (*staticAsset, error) {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		return nil, fmt.Errorf("web: read embedded %s: %w", name, err)
	}
	sum := sha256.Sum256(b)
	gz, err := gzipBytes(b, gzip.BestCompression) // once, at start-up
	if err != nil {
		return nil, fmt.Errorf("web: compress %s: %w", name, err)
	}
	return &staticAsset{ctype: ctype, body: b, gz: gz, version: hex.EncodeToString(sum[:8])}, nil
}

// gzipBytes compresses b at the given level: the best for the embedded
// assets, compressed once; the default for pages, compressed per request.
func gzipBytes(b []byte, level int) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, level)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// staticAssets are the script and the style sheet. The chat and login
// pages carry the style sheet inline — a first visit then paints without
// waiting for a second request — and the CSP admits exactly that sheet by
// its hash (styleSrc); the script is linked with ?v=<version>, so a
// browser keeps it until it changes.
type staticAssets struct {
	js, css  *staticAsset
	styleSrc string // 'sha256-…' of style.css
}

func newStaticAssets() (*staticAssets, error) {
	js, err := newStaticAsset("app.js", "text/javascript; charset=utf-8")
	if err != nil {
		return nil, err
	}
	css, err := newStaticAsset("style.css", "text/css; charset=utf-8")
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(css.body)
	return &staticAssets{js: js, css: css, styleSrc: "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"}, nil
}

// inlineCSS is the style sheet for a <style> element of a page template.
func (a *staticAssets) inlineCSS() template.CSS {
	return template.CSS(a.css.body) // #nosec: our own embedded sheet, admitted by its hash
}

// handler serves /static/app.js and /static/style.css: gzipped when the
// client accepts it, with an ETag (304 when unchanged); kept for a year
// when asked for at the current ?v= (the URL changes with the content),
// revalidated otherwise.
func (a *staticAssets) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var f *staticAsset
		switch r.URL.Path {
		case "/static/app.js":
			f = a.js
		case "/static/style.css":
			f = a.css
		default:
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", f.ctype)
		h.Set("Vary", "Accept-Encoding")
		if r.URL.Query().Get("v") == f.version {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		body, etag := f.body, `"`+f.version+`"`
		if acceptsGzip(r) {
			body, etag = f.gz, `"`+f.version+`-gz"`
			h.Set("Content-Encoding", "gzip")
		}
		h.Set("ETag", etag)
		if inm := r.Header.Get("If-None-Match"); inm != "" && strings.Contains(inm, etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write(body)
		}
	})
}

// acceptsGzip reports whether the request's Accept-Encoding takes gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// writePage writes an HTML page, gzipped when the client accepts it. Pages
// are never stored (they hold the user's conversation).
func writePage(w http.ResponseWriter, r *http.Request, status int, page []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Vary", "Accept-Encoding")
	if acceptsGzip(r) {
		if gz, err := gzipBytes(page, gzip.DefaultCompression); err == nil {
			page = gz
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("Content-Length", fmt.Sprint(len(page)))
	w.WriteHeader(status)
	_, _ = w.Write(page)
}
