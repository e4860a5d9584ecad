package web

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"image/png"
	"net/http"
	"strings"
	"testing"
)

// TestJapaneseErrors: wrong methods get 405 with Allow, unknown paths 404,
// cross-site posts 403, out-of-range k 400 naming the range — in Japanese,
// as JSON on API paths and as an HTML page elsewhere.
func TestJapaneseErrors(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	tests := []struct {
		method, path, body string
		header             map[string]string
		status             int
		allow              string
		html               bool
		want               string
	}{
		{"GET", "/api/ask", "", nil, 405, "POST", false, "GET /api/ask はできません"},
		{"DELETE", "/api/status", "", nil, 405, "GET", false, "使える方法"},
		{"POST", "/api/feedback", `{"rating":"up"}`, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "", false, "別のサイトからのリクエストは受け付けません"},
		{"GET", "/no/such/page", "", nil, 404, "", true, "ページが見つかりません"},
		{"GET", "/api/nothing", "", nil, 404, "", false, "ページが見つかりません"},
		{"GET", "/source/database/none/page_001.md_0", "", nil, 404, "", true, "引用元が見つかりません"},
		{"POST", "/api/ask", `{"question":"VPN","k":21}`, nil, 400, "", false, "k は 1〜20 で指定してください (受け取った値: 21)"},
		{"POST", "/api/ask", `{"question":"VPN","k":-1}`, nil, 400, "", false, "k は 1〜20"},
		{"GET", "/api/search?q=VPN&k=25", "", nil, 400, "", false, "k は 1〜20"},
		{"GET", "/api/search?q=VPN&k=x", "", nil, 400, "", false, "k は 1〜20 の整数"},
	}
	for _, tt := range tests {
		resp, b := f.do(t, tt.method, tt.path, tt.body, tt.header)
		body := string(b)
		ct := resp.Header.Get("Content-Type")
		if resp.StatusCode != tt.status || !strings.Contains(body, tt.want) {
			t.Errorf("%s %s: %d %s, want %d with %q", tt.method, tt.path, resp.StatusCode, body, tt.status, tt.want)
		}
		if tt.allow != "" && !strings.Contains(resp.Header.Get("Allow"), tt.allow) {
			t.Errorf("%s %s: Allow %q, want %q", tt.method, tt.path, resp.Header.Get("Allow"), tt.allow)
		}
		if tt.html != strings.HasPrefix(ct, "text/html") {
			t.Errorf("%s %s: Content-Type %s, html %v", tt.method, tt.path, ct, tt.html)
		}
		if !tt.html {
			var e apiError
			if json.Unmarshal(b, &e) != nil || e.Code == "" {
				t.Errorf("%s %s: not a JSON error: %s", tt.method, tt.path, body)
			}
		}
		if strings.Contains(body, "Method Not Allowed") || strings.Contains(body, "cross-origin") {
			t.Errorf("%s %s: English text left: %s", tt.method, tt.path, body)
		}
	}
}

// TestFavicon: /favicon.ico is an ICO holding a 32×32 PNG.
func TestFavicon(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	resp, b := f.do(t, "GET", "/favicon.ico", "", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/x-icon" || len(b) < 22 {
		t.Fatalf("favicon: %d %s, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(b))
	}
	if binary.LittleEndian.Uint16(b[2:]) != 1 || binary.LittleEndian.Uint16(b[4:]) != 1 {
		t.Fatalf("not an ICO header: % x", b[:6])
	}
	size, off := binary.LittleEndian.Uint32(b[14:]), binary.LittleEndian.Uint32(b[18:])
	img, err := png.Decode(bytes.NewReader(b[off : off+size]))
	if err != nil || img.Bounds().Dx() != 32 || img.Bounds().Dy() != 32 {
		t.Errorf("icon image: %v %v", err, img)
	}
}

// TestRebuildPhasesInJapanese: every phase a build reports has a Japanese
// name in /api/status.
func TestRebuildPhasesInJapanese(t *testing.T) {
	for _, p := range []string{"starting", "extract", "ocr pages", "read", "ingest", "store", "bm25", "embed", "hnsw", "done", "failed"} {
		var rb rebuilder
		rb.progress(p, 1, 2)
		if got := rb.snapshot().PhaseJA; got == p || got == "" {
			t.Errorf("phase %q has no Japanese name (%q)", p, got)
		}
	}
	f := newFixture(t, fixtureOptions{})
	_, b := f.do(t, "GET", "/api/status", "", nil)
	if !strings.Contains(string(b), `"phase_ja"`) && strings.Contains(string(b), `"phase"`) {
		t.Errorf("status without phase_ja: %s", b)
	}
	if resp, _ := f.do(t, "GET", "/api/status", "", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("status: %d", resp.StatusCode)
	}
}
