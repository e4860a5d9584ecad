package web

// CLIENT STUB (test only, web-client branch of issue 21) — drop at merge.
//
// It stands in, for the page's browser tests, for server features the
// web-server branch builds: "chunk_id" in the citations of /api/ask,
// GET /api/source/{chunk_id}, and the conversations of docs/API.md (kept
// in memory; each conversation is a session_id of the old server, so the
// model's history stays per conversation). Where the wrapped server has
// them already (its citations carry a chunk_id, GET /api/conversations
// answers), everything passes through untouched, so after the merge these
// tests run against the real endpoints.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
)

type clientStub struct {
	next     http.Handler
	mu       sync.Mutex
	excerpts map[string]string // stub chunk id → excerpt
	real     *bool             // the wrapped server has conversations
	convs    []*stubConv
	asks     []string         // the conversation_id of each /api/ask, in order
	feedback []map[string]any // the bodies of POST /api/feedback
	role     string           // GET /api/me: "user", else admin
}

type stubConv struct {
	ID        string           `json:"id"`
	Title     string           `json:"title"`
	Exchanges []map[string]any `json:"exchanges"`
}

func withClientStub(next http.Handler) *clientStub {
	return &clientStub{next: next, excerpts: map[string]string{}}
}

func (s *clientStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && p == "/api/ask" && wantsSSE(r):
		s.ask(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/api/source/stub/"):
		s.source(w, strings.TrimPrefix(p, "/api/source/"))
	case strings.HasPrefix(p, "/api/conversations") && !s.hasConversations():
		s.conversations(w, r)
	case p == "/api/me" && s.role == "user":
		// A user's page, whatever the wrapped server would say of this
		// (token-less) browser.
		s.fallback(w, p, nil)
	case p == "/api/feedback" || p == "/api/corpus" || p == "/api/me":
		// The real answer when the server has the route, else the stub's.
		rec := httptest.NewRecorder()
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(raw))
		s.next.ServeHTTP(rec, r)
		if rec.Code != http.StatusNotFound {
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = rec.Body.WriteTo(w)
			return
		}
		s.fallback(w, p, raw)
	default:
		s.next.ServeHTTP(w, r)
	}
}

// fallback answers /api/feedback, /api/corpus and /api/me as docs/API.md
// says, for a server without them.
func (s *clientStub) fallback(w http.ResponseWriter, path string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch path {
	case "/api/feedback":
		var fb map[string]any
		_ = json.Unmarshal(body, &fb)
		s.feedback = append(s.feedback, fb)
		w.WriteHeader(http.StatusNoContent)
	case "/api/corpus":
		writeJSON(w, http.StatusOK, map[string]any{"documents": 7, "pages": 9, "chunks": 62, "updated_at": "2026-01-05T10:00:03+09:00",
			"examples": []string{"マルウェア感染端末の隔離手順について教えてください", "VPN に接続できないときの確認事項は？", "バックアップからの復旧手順は？", "パスワードをリセットする手順は？"}})
	case "/api/me":
		if s.role == "user" {
			writeJSON(w, http.StatusOK, map[string]any{"role": "user", "max_question": 2000, "max_history": 5})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"role": "admin", "max_question": 2000, "max_history": 5,
			"settings": map[string]any{"k": 4, "max_k": 20, "bm25_weight": nil, "auto_weight": true, "can_rebuild": true}})
	}
}

// hasConversations asks the wrapped server once.
func (s *clientStub) hasConversations() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.real == nil {
		rec := httptest.NewRecorder()
		s.next.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/conversations", nil))
		ok := rec.Code == http.StatusOK
		s.real = &ok
	}
	return *s.real
}

func (s *clientStub) find(id string) *stubConv {
	for _, c := range s.convs {
		if c.ID == id {
			return c
		}
	}
	return nil
}

func (s *clientStub) conversations(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/api/conversations"), "/"), "/")
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	if parts[0] == "" {
		switch r.Method {
		case http.MethodGet:
			list := []map[string]any{}
			q := r.URL.Query().Get("q")
			for _, c := range slices.Backward(s.convs) {
				if strings.Contains(c.Title, q) {
					list = append(list, map[string]any{"id": c.ID, "title": c.Title, "exchanges": len(c.Exchanges)})
				}
			}
			writeJSON(w, http.StatusOK, map[string]any{"conversations": list})
		case http.MethodPost:
			c := &stubConv{ID: fmt.Sprintf("c%d", len(s.convs)+1), Title: fmt.Sprint(body["title"])}
			s.convs = append(s.convs, c)
			writeJSON(w, http.StatusCreated, c)
		}
		return
	}
	c := s.find(parts[0])
	if c == nil {
		writeError(w, http.StatusNotFound, "conversation_not_found", "会話が見つかりません")
		return
	}
	switch {
	case len(parts) == 4 && r.Method == http.MethodPost: // …/exchanges/{xid}/version
		for _, x := range c.Exchanges {
			if x["id"] == parts[2] {
				x["version"] = body["version"]
			}
		}
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, c)
	case r.Method == http.MethodPatch:
		c.Title = fmt.Sprint(body["title"])
		writeJSON(w, http.StatusOK, map[string]any{"id": c.ID, "title": c.Title})
	case r.Method == http.MethodDelete:
		s.convs = slices.DeleteFunc(s.convs, func(x *stubConv) bool { return x == c })
		w.WriteHeader(http.StatusNoContent)
	}
}

// ask buffers the event stream, adds a stub chunk_id to citations that
// have none and, without the real conversations, keeps the exchange.
func (s *clientStub) ask(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var in map[string]any
	_ = json.Unmarshal(raw, &in)
	var conv *stubConv
	replace, _ := in["replace_exchange_id"].(string)
	s.mu.Lock()
	s.asks = append(s.asks, fmt.Sprint(in["conversation_id"]))
	s.mu.Unlock()
	if id, ok := in["conversation_id"].(string); ok && !s.hasConversations() {
		s.mu.Lock()
		if id == "new" {
			conv = &stubConv{ID: fmt.Sprintf("c%d", len(s.convs)+1), Title: fmt.Sprint(in["question"])}
			s.convs = append(s.convs, conv)
		} else {
			conv = s.find(id)
		}
		s.mu.Unlock()
		if conv != nil {
			in["session_id"] = "stub-" + conv.ID // the old server's history, per conversation
			delete(in, "conversation_id")
			delete(in, "replace_exchange_id")
			raw, _ = json.Marshal(in)
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	r.ContentLength = int64(len(raw))
	rec := httptest.NewRecorder()
	s.next.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	for _, block := range strings.SplitAfter(rec.Body.String(), "\n\n") {
		if strings.HasPrefix(block, "event: done\ndata: ") {
			block = "event: done\ndata: " + s.done(strings.TrimSpace(strings.TrimPrefix(block, "event: done\ndata: ")), conv, replace) + "\n\n"
		}
		_, _ = w.Write([]byte(block))
	}
}

func (s *clientStub) done(data string, conv *stubConv, replace string) string {
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
			break // the real server has them
		}
		id := fmt.Sprintf("stub/%d/%v", len(s.excerpts), m["n"])
		m["chunk_id"] = id
		m["label"] = fmt.Sprintf("%v p.%v", m["file"], m["page"])
		s.excerpts[id] = fmt.Sprint(m["excerpt"])
	}
	if conv != nil {
		v := map[string]any{"question": rep["query"], "html": rep["html"], "citations": rep["citations"], "status": "complete"}
		if q, ok := rep["rewritten_query"]; ok {
			v["rewritten_query"] = q
		}
		var x map[string]any
		for _, e := range conv.Exchanges {
			if e["id"] == replace {
				x = e
			}
		}
		if x == nil {
			x = map[string]any{"id": fmt.Sprintf("%s-x%d", conv.ID, len(conv.Exchanges)+1), "versions": []any{}}
			conv.Exchanges = append(conv.Exchanges, x)
		}
		x["versions"] = append(x["versions"].([]any), v)
		x["version"] = len(x["versions"].([]any)) - 1
		maps.Copy(x, v)
		rep["conversation_id"], rep["exchange_id"], rep["version"], rep["status"] = conv.ID, x["id"], x["version"], "complete"
	}
	b, _ := json.Marshal(rep)
	return string(b)
}

// feedbackSent returns the bodies of POST /api/feedback.
func (s *clientStub) feedbackSent() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.feedback)
}

// askedIn returns the conversation_id the page sent with each question.
func (s *clientStub) askedIn() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.asks)
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
