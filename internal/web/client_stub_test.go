package web

// CLIENT STUB (test only, web-client branch of issue 21) — drop at merge.
//
// It stands in, for the page's browser tests, for server features the
// web-server branch builds: "chunk_id" in the citations of /api/ask and
// GET /api/source/{chunk_id}. Where the wrapped server has them already
// (its citations carry a chunk_id), everything passes through untouched,
// so after the merge these tests run against the real endpoints.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

type clientStub struct {
	next     http.Handler
	mu       sync.Mutex
	excerpts map[string]string // stub chunk id → excerpt
}

func withClientStub(next http.Handler) http.Handler {
	return &clientStub{next: next, excerpts: map[string]string{}}
}

func (s *clientStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/ask" && wantsSSE(r):
		s.ask(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/source/stub/"):
		s.source(w, strings.TrimPrefix(r.URL.Path, "/api/source/"))
	default:
		s.next.ServeHTTP(w, r)
	}
}

// ask buffers the event stream and adds a stub chunk_id to citations that
// have none.
func (s *clientStub) ask(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	s.next.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	for _, block := range strings.SplitAfter(rec.Body.String(), "\n\n") {
		if strings.HasPrefix(block, "event: done\ndata: ") {
			block = "event: done\ndata: " + s.addChunkIDs(strings.TrimSpace(strings.TrimPrefix(block, "event: done\ndata: "))) + "\n\n"
		}
		_, _ = w.Write([]byte(block))
	}
}

func (s *clientStub) addChunkIDs(data string) string {
	var rep map[string]any
	if err := json.Unmarshal([]byte(data), &rep); err != nil {
		return data
	}
	cs, _ := rep["citations"].([]any)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cs {
		m, _ := c.(map[string]any)
		if m == nil || m["chunk_id"] != nil {
			return data // the real server has them
		}
		id := fmt.Sprintf("stub/%d/%v", len(s.excerpts), m["n"])
		m["chunk_id"] = id
		m["label"] = fmt.Sprintf("%v p.%v", m["file"], m["page"])
		s.excerpts[id] = fmt.Sprint(m["excerpt"])
	}
	b, _ := json.Marshal(rep)
	return string(b)
}

// source answers as GET /api/source/{chunk_id} does: a long page with the
// passage in <mark id="hit"> well below its top.
func (s *clientStub) source(w http.ResponseWriter, id string) {
	s.mu.Lock()
	ex, ok := s.excerpts[id]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "source_not_found", "引用元が見つかりません")
		return
	}
	var b bytes.Buffer
	b.WriteString("<h1>スタブの文書</h1>")
	for i := range 40 {
		fmt.Fprintf(&b, "<p>前置きの段落 %d。</p>", i+1)
	}
	fmt.Fprintf(&b, `<mark id="hit"><p>%s</p></mark>`, html.EscapeString(ex))
	for i := range 40 {
		fmt.Fprintf(&b, "<p>後ろの段落 %d。</p>", i+1)
	}
	writeJSON(w, http.StatusOK, map[string]any{"chunk_id": id, "title": "スタブの文書", "page": 1, "label": "スタブの文書 p.1",
		"path": "stub.md", "html": b.String(), "file_url": ""})
}
