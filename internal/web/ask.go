package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/guard"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
)

// AskRequest is the body of POST /api/ask.
type AskRequest struct {
	Question   string   `json:"question"`
	K          int      `json:"k,omitempty"`           // 1–20; 0 means the server's default
	BM25Weight *float64 `json:"bm25_weight,omitempty"` // 0–1; absent means the server's default
	// SessionID continues a conversation (and labels the audit log line).
	// Without it the browser's session cookie is used, or a new session
	// is started; the response names it.
	SessionID string `json:"session_id,omitempty"`
	// Scope limits the search to these folders or documents (paths
	// relative to the data folder or the page database, as the CLI's
	// --scope); absent means the server's setting.
	Scope []string `json:"scope,omitempty"`
	// ConversationID stores the exchange in the user's conversation
	// ("new" starts one); ReplaceExchangeID makes the answer a new
	// version of that exchange (regenerate, or edit with a new question).
	ConversationID    string `json:"conversation_id,omitempty"`
	ReplaceExchangeID string `json:"replace_exchange_id,omitempty"`
}

// AskResponse is the reply of POST /api/ask: the assistant's Reply plus the
// rendered HTML (banner, body, citations) and the session id.
type AskResponse struct {
	assistant.Reply
	Citations []Citation `json:"citations"`
	HTML      string     `json:"html"`
	SessionID string     `json:"session_id"`
	// RequestID names this answer for POST /api/feedback.
	RequestID string `json:"request_id"`
	// Status is complete, incomplete, stopped or error.
	Status string `json:"status"`
	// ConversationID, ExchangeID and Version (the index in the exchange's
	// versions) place a stored answer.
	ConversationID string `json:"conversation_id,omitempty"`
	ExchangeID     string `json:"exchange_id,omitempty"`
	Version        *int   `json:"version,omitempty"`
}

// searchOptions resolves k and the BM25 weight against the assistant's
// defaults, rejecting values outside the sidebar's ranges.
func (s *Server) searchOptions(k int, w *float64) (retrieve.Options, error) {
	opt := s.asst.Options().Search
	if opt.K <= 0 {
		opt.K = 4
	}
	if k != 0 {
		if k < 1 || k > MaxK {
			return opt, badRequest("invalid_k", "k は 1〜%d で指定してください (受け取った値: %d)", MaxK, k)
		}
		opt.K = k
	}
	if w != nil {
		if *w < 0 || *w > 1 || *w != *w {
			return opt, badRequest("invalid_bm25_weight", "bm25_weight は 0.0〜1.0 で指定してください (受け取った値: %g)", *w)
		}
		opt.BM25Weight = *w
		opt.AutoWeight = false
	}
	return opt, nil
}

// checkQuestion trims q and enforces the length limit.
func (s *Server) checkQuestion(q string) (string, error) {
	q = strings.TrimSpace(q)
	if retrieve.Blank(q) { // control characters, NULs and invalid bytes too
		return "", badRequest("empty_question", "質問が空です — 質問を入力してください")
	}
	if n := utf8.RuneCountInString(q); n > s.opt.MaxQuestionRunes {
		return "", badRequest("question_too_long", "質問が長すぎます（%d 文字）— %d 文字以内にしてください", n, s.opt.MaxQuestionRunes)
	}
	if !utf8.ValidString(q) {
		return "", badRequest("invalid_utf8", "質問が UTF-8 ではありません")
	}
	return q, nil
}

// errNoIndex refuses questions while there is no index.
var errNoIndex = &requestError{status: http.StatusServiceUnavailable, code: "no_index", msg: NoIndexMessage}

// ask runs one question through the assistant with the request's time
// limit, and counts it. A cancelled request cancels the answer.
func (s *Server) ask(ctx context.Context, req assistant.Request) (assistant.Reply, error) {
	if s.asst.Searcher() == nil {
		return assistant.Reply{}, errNoIndex
	}
	ctx, cancel := context.WithTimeout(ctx, s.opt.AskTimeout)
	defer cancel()
	rep, err := s.asst.Ask(ctx, req)
	if rep.AuditError != nil {
		// The answer stands, but the operator must see the lost line.
		s.metrics.auditErrors.Inc()
		s.opt.Logger.LogAttrs(ctx, slog.LevelError, "audit log not written", slog.String("session_id", req.SessionID), slog.String("error", rep.AuditError.Error()))
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return rep, &requestError{status: http.StatusGatewayTimeout, code: "timeout",
				msg: fmt.Sprintf("回答が %s 以内に終わりませんでした — 質問を短くするか、もう一度お試しください", s.opt.AskTimeout)}
		}
		// Japanese, without internals (endpoint URL, Go error); the audit
		// log and the server log keep the details.
		s.opt.Logger.LogAttrs(ctx, slog.LevelError, "answer failed", slog.String("session_id", req.SessionID), slog.String("error", err.Error()))
		return rep, &requestError{status: http.StatusInternalServerError, code: "answer_failed", msg: assistant.UserMessage(err)}
	}
	s.metrics.observeReply(rep)
	return rep, nil
}

// wantsSSE reports whether the client asked for an event stream.
func wantsSSE(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/event-stream" {
			return true
		}
	}
	return false
}

// dangerEvent is the data of the SSE "danger" event: the banner to show
// and the operation the question asks for.
type dangerEvent struct {
	Banner string `json:"banner"`
	guard.Danger
}

// handleAsk answers POST /api/ask, as JSON or as an SSE stream: a "danger"
// event first when the question asks for a dangerous operation (always
// before the first "delta"), "delta" events with the answer text, then
// one "done" event carrying the AskResponse (whose flags also cover an
// operation only the answer quotes) or one "error" event.
//
// With a conversation_id the exchange is stored in that conversation of
// the user (a new version of replace_exchange_id when given), whatever
// its end: complete, incomplete, stopped by the client (the text streamed
// so far) or failed.
func (s *Server) handleAsk(w http.ResponseWriter, r *http.Request) {
	var in AskRequest
	if err := decodeJSON(w, r, s.opt.MaxBodyBytes, &in); err != nil {
		writeRequestError(w, err)
		return
	}
	q, err := s.checkQuestion(in.Question)
	if err != nil {
		writeRequestError(w, err)
		return
	}
	admin := s.role(r) == RoleAdmin
	if !admin {
		// Retrieval settings are the administrator's: a user's are
		// ignored, and the reply's "search" says what applied.
		in.K, in.BM25Weight, in.Scope = 0, nil, nil
	}
	sopt, err := s.searchOptions(in.K, in.BM25Weight)
	if err != nil {
		writeRequestError(w, err)
		return
	}
	if len(in.Scope) > 0 {
		sopt.Scope = in.Scope
	}
	id := in.SessionID
	if id != "" && !validSessionID.MatchString(id) {
		writeError(w, http.StatusBadRequest, "invalid_session_id", "session_id は英数字と _ . : - の 64 文字以内にしてください")
		return
	}
	user := browserSession(w, r)
	if id == "" {
		id = user
	}
	sess := s.sessions.get(id)
	req := assistant.Request{Query: q, SessionID: id, Conversation: sess.conv, Search: sopt}
	t := &turn{requestID: newID("r"), sessionID: id, user: user}
	if in.ConversationID != "" {
		if err := s.openTurn(t, in, &req); err != nil {
			writeRequestError(w, err)
			return
		}
	} else if in.ReplaceExchangeID != "" {
		writeError(w, http.StatusBadRequest, "missing_conversation_id", "replace_exchange_id には conversation_id も指定してください")
		return
	}

	if !wantsSSE(r) {
		rep, err := s.ask(r.Context(), req)
		if err != nil {
			s.finishTurn(r.Context(), t, q, rep, "", err)
			writeRequestError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, s.finishTurn(r.Context(), t, q, rep, "", nil))
		return
	}

	if s.asst.Searcher() == nil {
		writeRequestError(w, errNoIndex)
		return
	}
	sse := newSSE(w, s.opt.AskTimeout)
	var mu sync.Mutex
	var streamed strings.Builder
	req.OnDanger = func(d guard.Danger) {
		// Decided from the question before retrieval, and before the
		// generator writes a word: the page shows the banner above the
		// answer before its first token.
		if d.Dangerous {
			sse.event("danger", dangerEvent{Banner: guard.Banner, Danger: d})
		}
	}
	// The "meta" event names the answer before its text, so that a
	// client whose stream ends early (停止, a dropped connection) can
	// still rate, regenerate or reload it.
	var metaOnce sync.Once
	meta := func() {
		metaOnce.Do(func() {
			sse.event("meta", streamMeta{RequestID: t.requestID, ConversationID: t.convID, ExchangeID: t.exchangeID, SessionID: t.sessionID})
		})
	}
	req.OnDelta = func(text string) {
		meta()
		mu.Lock()
		streamed.WriteString(text)
		mu.Unlock()
		sse.event("delta", map[string]string{"text": text})
	}
	rep, err := s.ask(r.Context(), req)
	meta()
	mu.Lock()
	partial := streamed.String()
	mu.Unlock()
	if err != nil {
		s.finishTurn(r.Context(), t, q, rep, partial, err)
		if r.Context().Err() != nil {
			return // the client went away; nobody to tell
		}
		var re *requestError
		code := "internal"
		if errors.As(err, &re) {
			code = re.code
		}
		sse.event("error", streamError{Error: err.Error(), Code: code, RequestID: t.requestID, ConversationID: t.convID, ExchangeID: t.exchangeID})
		return
	}
	sse.event("done", s.finishTurn(r.Context(), t, q, rep, partial, nil))
}

// streamMeta is the data of the SSE "meta" event.
type streamMeta struct {
	RequestID      string `json:"request_id"`
	ConversationID string `json:"conversation_id,omitempty"`
	ExchangeID     string `json:"exchange_id,omitempty"`
	SessionID      string `json:"session_id"`
}

// streamError is the data of the SSE "error" event.
type streamError struct {
	Error          string `json:"error"`
	Code           string `json:"code"`
	RequestID      string `json:"request_id"`
	ConversationID string `json:"conversation_id,omitempty"`
	ExchangeID     string `json:"exchange_id,omitempty"`
}

// turn is one question on its way: who asked, in which conversation.
type turn struct {
	requestID  string
	sessionID  string // the audit log's session id
	user       string // the browser session owning the conversations
	convID     string
	replace    string
	exchangeID string
	version    int
	history    []llm.Message
}

// openTurn resolves the request's conversation ("new" creates one) and
// gives the assistant the conversation's last exchanges before this one.
func (s *Server) openTurn(t *turn, in AskRequest, req *assistant.Request) error {
	var c *Conversation
	var err error
	if in.ConversationID == "new" {
		if in.ReplaceExchangeID != "" {
			return errExchangeNotFound
		}
		c, err = s.convs.create(t.user, "")
	} else {
		c, err = s.convs.get(t.user, in.ConversationID)
	}
	if err != nil {
		return err
	}
	before := len(c.Exchanges)
	if in.ReplaceExchangeID != "" {
		_, i := c.exchange(in.ReplaceExchangeID)
		if i < 0 {
			return errExchangeNotFound
		}
		before = i
	}
	t.convID, t.replace = c.ID, in.ReplaceExchangeID
	t.exchangeID = in.ReplaceExchangeID
	if t.exchangeID == "" {
		t.exchangeID = newID("x") // named now, so the stream can say it before the answer
	}
	t.history = c.history(before, s.opt.MaxHistory)
	conv := answer.NewSession(answer.SessionOptions{MaxExchanges: s.opt.MaxHistory, Tokenizer: s.opt.Tokenizer, Rewriter: s.opt.Rewriter})
	conv.AddHistory(t.history)
	req.Conversation = conv
	return nil
}

// finishTurn renders the reply, records the exchange (in the browser
// session's history, and in the conversation when there is one) and
// remembers it for feedback. err is the answer's failure, partial the
// text streamed before it.
func (s *Server) finishTurn(ctx context.Context, t *turn, q string, rep assistant.Reply, partial string, err error) AskResponse {
	cancelled := ctx.Err() != nil // the client closed the stream
	ctx = context.WithoutCancel(ctx)
	status := StatusComplete
	switch {
	case err != nil && cancelled:
		status = StatusStopped
	case err != nil:
		status = StatusError
	case rep.Incomplete:
		status = StatusIncomplete
	}
	cs := s.citations(ctx, rep)
	var html template.HTML
	if err == nil {
		html = s.page.renderAnswer(rep, cs)
		if sess, ok := s.sessions.peek(t.sessionID); ok && t.convID == "" {
			sess.add(exchange{Question: q, HTML: html})
		}
	} else {
		rep.Answer = partial
		if status == StatusStopped || partial != "" {
			html = s.page.renderPartial(rep, status)
		}
		cs = []Citation{}
	}
	v := Version{Question: q, Answer: rep.Answer, HTML: string(html), Citations: cs, Status: status,
		RewrittenQuery: rep.RewrittenQuery, RequestID: t.requestID, CreatedAt: s.now(), Flags: rep.Flags}
	out := AskResponse{Reply: rep, Citations: cs, HTML: string(html), SessionID: t.sessionID, RequestID: t.requestID, Status: status}
	if t.convID != "" {
		xid, ver, rerr := s.convs.record(t.user, t.convID, t.replace, t.exchangeID, v)
		if rerr != nil {
			s.opt.Logger.LogAttrs(ctx, slog.LevelError, "conversation not saved", slog.String("error", rerr.Error()))
		} else {
			t.exchangeID, t.version = xid, ver
			out.ConversationID, out.ExchangeID, out.Version = t.convID, xid, &ver
		}
	}
	s.answers.put(answered{turn: *t, v: v, at: s.now()})
	return out
}

// sseWriter writes server-sent events, flushing each one. It is safe for
// concurrent use (a generator may stream from its own goroutine).
type sseWriter struct {
	mu sync.Mutex
	w  http.ResponseWriter
	rc *http.ResponseController
}

// newSSE starts an event stream and lifts the server's write deadline to
// the answer's time limit, so a long answer is not cut off.
func newSSE(w http.ResponseWriter, limit time.Duration) *sseWriter {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(limit + 10*time.Second))
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	return &sseWriter{w: w, rc: rc}
}

// event sends one event whose data is v as JSON (one line).
func (s *sseWriter) event(name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	_ = s.rc.Flush()
}

// data sends one unnamed event with raw data (the OpenAI stream format).
func (s *sseWriter) data(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	_ = s.rc.Flush()
}

// SearchResponse is the reply of GET /api/search.
type SearchResponse struct {
	Query string `json:"query"`
	K     int    `json:"k"`
	// BM25Weight is the fusion weight the search used; AutoWeight says it
	// was chosen for this query (no bm25_weight given, none configured).
	BM25Weight float64           `json:"bm25_weight"`
	AutoWeight bool              `json:"auto_weight"`
	Results    []retrieve.Result `json:"results"`
}

// handleSearch answers GET /api/search?q=…&k=…&bm25_weight=… with the
// hybrid search results only (no answer, no audit line).
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	qv := r.URL.Query()
	q, err := s.checkQuestion(qv.Get("q"))
	if err != nil {
		writeRequestError(w, err)
		return
	}
	if s.role(r) != RoleAdmin {
		qv.Del("k") // the administrator's settings; a user's are ignored
		qv.Del("bm25_weight")
	}
	k := 0
	if v := qv.Get("k"); v != "" {
		if k, err = strconv.Atoi(v); err != nil || k == 0 {
			writeError(w, http.StatusBadRequest, "invalid_k", fmt.Sprintf("k は 1〜%d の整数で指定してください (受け取った値: %q)", MaxK, v))
			return
		}
	}
	var wp *float64
	if v := qv.Get("bm25_weight"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_bm25_weight", fmt.Sprintf("bm25_weight は 0.0〜1.0 の数で指定してください (受け取った値: %q)", v))
			return
		}
		wp = &f
	}
	sopt, err := s.searchOptions(k, wp)
	if err != nil {
		writeRequestError(w, err)
		return
	}
	searcher := s.asst.Live(r.Context())
	if searcher == nil {
		writeRequestError(w, errNoIndex)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opt.AskTimeout)
	defer cancel()
	res, info, err := searcher.Search(ctx, q, sopt)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "search_failed", "検索に失敗しました: "+err.Error())
		return
	}
	if res == nil {
		res = []retrieve.Result{}
	}
	writeJSON(w, http.StatusOK, SearchResponse{Query: q, K: sopt.K, BM25Weight: info.BM25Weight, AutoWeight: info.AutoWeight, Results: res})
}
