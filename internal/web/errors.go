package web

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strings"
)

// apiPath reports whether a path is answered in JSON (programs) rather
// than with an HTML page (people).
func apiPath(p string) bool {
	for _, pre := range []string{"/api/", "/v1/", "/files/", "/page-image/", "/metrics", "/healthz"} {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}

// writeErrorFor answers an error in the form the path calls for: the
// OpenAI shape under /v1, JSON under the other API paths, a Japanese HTML
// page elsewhere.
func (s *Server) writeErrorFor(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1/"):
		writeOpenAIError(w, status, code, msg)
	case apiPath(r.URL.Path):
		writeError(w, status, code, msg)
	default:
		s.errorPage(w, status, msg)
	}
}

// msgCrossOrigin is the 403 of a cross-site POST.
const msgCrossOrigin = "別のサイトからのリクエストは受け付けません — ページを開き直してからもう一度お試しください"

// handleCrossOrigin answers a request refused by the cross-origin check.
func (s *Server) handleCrossOrigin(w http.ResponseWriter, r *http.Request) {
	s.writeErrorFor(w, r, http.StatusForbidden, "cross_origin", msgCrossOrigin)
}

// handleNotFound answers a request no route serves: 405 with Allow when
// the path is served for other methods (GET /api/ask), else 404.
func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
			allow = append(allow, m)
			if m == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.writeErrorFor(w, r, http.StatusMethodNotAllowed, "method_not_allowed",
			fmt.Sprintf("%s %s はできません — 使える方法: %s", r.Method, r.URL.Path, strings.Join(allow, ", ")))
		return
	}
	s.writeErrorFor(w, r, http.StatusNotFound, "not_found", "ページが見つかりません: "+r.URL.Path)
}

// favicon is the page's icon, drawn here (no third-party file): a 32×32
// PNG of a white signpost on an indigo disc, in an ICO container.
var favicon = func() []byte {
	const n = 32
	img := image.NewNRGBA(image.Rect(0, 0, n, n))
	indigo := color.NRGBA{0x3b, 0x4c, 0xca, 0xff}
	white := color.NRGBA{0xff, 0xff, 0xff, 0xff}
	for y := range n {
		for x := range n {
			dx, dy := float64(x)-15.5, float64(y)-15.5
			if dx*dx+dy*dy <= 15.5*15.5 {
				img.Set(x, y, indigo)
			}
		}
	}
	fill := func(x0, y0, x1, y1 int) {
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				img.Set(x, y, white)
			}
		}
	}
	fill(15, 6, 18, 27)  // the post
	fill(9, 9, 23, 13)   // the sign pointing right…
	fill(23, 10, 25, 12) // …with its tip
	fill(11, 16, 19, 19) // a second sign
	var p bytes.Buffer
	_ = png.Encode(&p, img)
	var ico bytes.Buffer
	le := func(v uint32, size int) {
		for i := 0; i < size; i++ {
			ico.WriteByte(byte(v >> (8 * i)))
		}
	}
	le(0, 2) // reserved
	le(1, 2) // type: icon
	le(1, 2) // one image
	ico.Write([]byte{n, n, 0, 0})
	le(1, 2)  // planes
	le(32, 2) // bits per pixel
	le(uint32(p.Len()), 4)
	le(6+16, 4) // offset of the image
	ico.Write(p.Bytes())
	return ico.Bytes()
}()

// handleFavicon answers GET /favicon.ico.
func (s *Server) handleFavicon(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "image/x-icon")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	_, _ = w.Write(favicon)
}
