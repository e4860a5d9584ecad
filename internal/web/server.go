// Package web serves shirube over HTTP: a chat page for people (seed 002 §2),
// a JSON API for programs, and an OpenAI-compatible chat endpoint so that
// existing chat clients can talk to the document assistant.
//
// Every route is answered by one Server, which is an http.Handler:
//
//	GET  /                     chat page (sidebar, chat, history of the session)
//	GET  /login, POST /login   token prompt when the server requires a token
//	POST /logout               end the browser's login
//	GET  /static/…             embedded CSS and JavaScript
//	POST /api/ask              answer a question (JSON, or SSE with Accept: text/event-stream)
//	GET  /api/search           hybrid search only
//	POST /api/index/rebuild    start an index rebuild of a server folder (202; progress in /api/status)
//	GET  /api/status           index and rebuild status
//	GET  /healthz              liveness
//	GET  /metrics              Prometheus metrics of this server
//	GET  /api/me               the user's role (and, for an administrator, the retrieval settings)
//	GET  /api/corpus           what the index holds and example questions (first screen)
//	GET  /api/conversations…   the user's conversations: list/search, create, get, rename, delete, choose a version
//	POST /api/feedback         👍/👎 of an answer, stored with its audit data
//	GET  /api/source/{chunk}   a cited page rendered with the passage marked (JSON); /source/{chunk} as a page
//	GET  /files/{path}         the original of an indexed document (PDF inline); /page-image/{path}?page=N a PDF page as PNG
//	GET  /favicon.ico          the icon, drawn in code
//	GET  /v1/models            OpenAI-compatible model list ("shirube")
//	POST /v1/chat/completions  OpenAI-compatible chat completion (streaming or not)
//
// Answers come from an assistant.Assistant, so the guardrails and the audit
// log are exactly those of the command line; the server adds the browser
// session's id to each audit line. Markdown is rendered on the server with
// goldmark and sanitised with bluemonday, and the page runs no inline
// script, so text from the documents can never execute in the browser.
package web

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/feedback"
	"github.com/shirube/shirube/internal/retrieve"
)

// Defaults of Options.
const (
	DefaultAddr             = "127.0.0.1:8080"
	DefaultDataDir          = "./data"
	DefaultDatabaseDir      = "./database"
	DefaultStateDir         = "./logs"
	DefaultMaxBodyBytes     = 64 << 10
	DefaultMaxQuestionRunes = assistant.MaxQuestionRunes // the command line's limit too
	DefaultAskTimeout       = 3 * time.Minute
	DefaultMaxSessions      = 1000
	DefaultSessionIdle      = 12 * time.Hour

	// MaxK is the largest k the sidebar and the API accept (seed 002 §2.1).
	MaxK = 20
)

// NoIndexMessage is shown while no index has been built yet.
const NoIndexMessage = "インデックスがありません — 再構築してください"

// RebuildFunc rebuilds the index from dataDir and returns a searcher over
// the new index. It reports progress as it goes (phase names are those of
// index.Build). It runs in the background; ctx ends when the server closes.
type RebuildFunc func(ctx context.Context, dataDir string, progress func(phase string, done, total int)) (*retrieve.Searcher, error)

// Status describes the live index, as shown in the sidebar.
type Status struct {
	Documents int       `json:"documents"`
	Pages     int       `json:"pages"`
	Chunks    int       `json:"chunks"`
	BuiltAt   time.Time `json:"built_at,omitzero"`
	Embedder  string    `json:"embedder,omitempty"`
	DataDir   string    `json:"data_dir,omitempty"`
	// Generation is the index generation the server answers from.
	Generation int `json:"generation,omitempty"`
}

// Options configure a Server. Assistant is required.
type Options struct {
	// Assistant answers the questions. Its searcher may be nil when no
	// index exists yet; questions are then refused with NoIndexMessage
	// until a rebuild succeeds.
	Assistant *assistant.Assistant
	// Rebuild rebuilds the index; nil disables the rebuild button.
	Rebuild RebuildFunc
	// Status reads the live index's metadata while the assistant has no
	// searcher yet; an error means there is no usable index. Once a
	// searcher is in, the status is that of the generation it serves.
	Status func() (Status, error)
	// Tokenizer finds the key terms of earlier questions when a follow-up
	// is rewritten; Rewriter, when set, rewrites follow-ups with a model.
	Tokenizer answer.Tokenizer
	Rewriter  answer.Completer
	// MaxHistory is how many exchanges a browser session keeps (default 5).
	MaxHistory int

	// Addr is the address the server will listen on. When it is not a
	// loopback address Token must be set: New refuses otherwise.
	Addr string
	// Token, when set, is required as "Authorization: Bearer <token>" on
	// the API and entered once on /login for the page.
	Token string
	// AdminToken, when set, is the administrator's token: only requests
	// bearing it (or browsers logged in with it) see and send retrieval
	// settings (k, BM25 weight, scope); the server ignores them from
	// everyone else. Unset, everyone is an administrator.
	AdminToken string
	// TrustProxy believes X-Forwarded-For from a loopback peer (a reverse
	// proxy on this machine) when naming the client for the login
	// throttle. Off (the default), the peer's address is the client:
	// a header any local process can set never chooses its name.
	TrustProxy bool

	// DataDir is the folder the index is built from (default ./data): the
	// sidebar shows it and a rebuild reads it. DataDirs are further folders
	// a rebuild may be asked for (the allow-list); no other folder is ever
	// read, whatever a client asks.
	DataDir  string
	DataDirs []string
	// StateDir is where the server keeps what people make: conversations
	// (StateDir/conversations/) and ratings (StateDir/feedback.jsonl).
	// shirube serve uses the audit log folder. Default ./logs.
	StateDir string
	// DatabaseDir is the page database the index was built from (default
	// ./database): the source viewer renders its pages.
	DatabaseDir string

	MaxBodyBytes     int64         // request body limit (default 64 KiB)
	MaxQuestionRunes int           // question length limit (default 2,000)
	AskTimeout       time.Duration // limit on one answer (default 3 min)
	MaxSessions      int           // browser sessions kept in memory (default 1,000)

	// MaxConcurrent is how many searches and answers run at once (default:
	// the number of cores, GOMAXPROCS); QueueWait how long one more waits
	// for its turn before it gets 503 with Retry-After (default 1 s). An
	// answer holds its slot until its last byte: with a remote model,
	// whose answers mostly wait on the network, raise MaxConcurrent.
	MaxConcurrent int
	QueueWait     time.Duration

	// Logger receives one line per request (method, route, status,
	// duration — never the question or a secret). nil discards.
	Logger *slog.Logger
}

// Server is the HTTP front end. Create it with New; it is an http.Handler.
// Call Close when done to stop a running rebuild.
type Server struct {
	opt      Options
	asst     *assistant.Assistant
	mux      *http.ServeMux
	handler  http.Handler
	metrics  *metrics
	sessions *sessionStore
	rebuild  *rebuilder
	// admission bounds the searches and answers running at once.
	admission *admission
	page      *pageRenderer
	static    *staticAssets
	catalogs  catalogs // what the served index holds (sources, titles)
	convs     *convStore
	answers   *recentAnswers
	feedback  *feedback.Log
	logins    *loginStore // browsers logged in with the token
	// adminLogins are browsers logged in with the admin token.
	adminLogins *loginStore
	throttle    *throttle // clients that got the token wrong
	now         func() time.Time

	baseCtx context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// New returns a Server for opt.
func New(opt Options) (*Server, error) {
	if opt.Assistant == nil {
		return nil, errors.New("web: Options.Assistant is required")
	}
	if opt.Addr == "" {
		opt.Addr = DefaultAddr
	}
	if err := CheckAddr(opt.Addr, opt.Token); err != nil {
		return nil, err
	}
	if err := CheckToken(opt.Token); err != nil {
		return nil, err
	}
	if err := CheckToken(opt.AdminToken); err != nil {
		return nil, fmt.Errorf("SHIRUBE_ADMIN_TOKEN: %w", err)
	}
	if opt.AdminToken != "" && opt.AdminToken == opt.Token {
		return nil, errors.New("SHIRUBE_ADMIN_TOKEN must differ from SHIRUBE_TOKEN: whoever has the team's token would otherwise be an administrator")
	}
	if opt.DataDir == "" {
		opt.DataDir = DefaultDataDir
	}
	if opt.StateDir == "" {
		opt.StateDir = DefaultStateDir
	}
	if opt.DatabaseDir == "" {
		opt.DatabaseDir = DefaultDatabaseDir
	}
	if opt.MaxBodyBytes <= 0 {
		opt.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opt.MaxQuestionRunes <= 0 {
		opt.MaxQuestionRunes = DefaultMaxQuestionRunes
	}
	if opt.AskTimeout <= 0 {
		opt.AskTimeout = DefaultAskTimeout
	}
	if opt.MaxSessions <= 0 {
		opt.MaxSessions = DefaultMaxSessions
	}
	if opt.MaxHistory <= 0 {
		opt.MaxHistory = answer.MaxConversationHistory
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	page, err := newPageRenderer()
	if err != nil {
		return nil, err
	}
	static, err := newStaticAssets()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		opt:         opt,
		asst:        opt.Assistant,
		mux:         http.NewServeMux(),
		metrics:     newMetrics(),
		page:        page,
		static:      static,
		logins:      newLoginStore(DefaultLoginTTL),
		adminLogins: newLoginStore(DefaultLoginTTL),
		now:         time.Now,
		baseCtx:     ctx,
		cancel:      cancel,
	}
	s.sessions = newSessionStore(opt.MaxSessions, DefaultSessionIdle, func() *answer.Session {
		return answer.NewSession(answer.SessionOptions{MaxExchanges: opt.MaxHistory, Tokenizer: opt.Tokenizer, Rewriter: opt.Rewriter})
	})
	s.convs = &convStore{dir: filepath.Join(opt.StateDir, "conversations"), now: func() time.Time { return s.now() }}
	s.answers = newRecentAnswers(1000, 24*time.Hour)
	s.feedback = feedback.Open(opt.StateDir)
	s.throttle = newThrottle(func() time.Time { return s.now() })
	s.rebuild = &rebuilder{state: RebuildState{DataDir: opt.DataDir}}
	s.admission = newAdmission(opt.MaxConcurrent, opt.QueueWait)
	s.routes()
	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(s.handleCrossOrigin))
	var h http.Handler = csrf.Handler(s.mux)
	if opt.Token == "" {
		h = loopbackHostOnly(h)
	}
	s.handler = securityHeaders(h, contentSecurityPolicy(static.styleSrc))
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Close cancels a running rebuild and waits for it to stop.
func (s *Server) Close() error {
	s.cancel()
	s.wg.Wait()
	return nil
}

// HTTPServer returns an http.Server for h listening on addr, with timeouts
// suited to s: headers and bodies must arrive promptly, and a response may
// take as long as the longest answer.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      s.opt.AskTimeout + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// ErrTLSPair is LoadTLS's error when the certificate or its key is not named.
var ErrTLSPair = errors.New("HTTPS needs both a certificate and its private key (PEM files)")

// LoadTLS reads a PEM certificate (chain) and its private key for serving
// HTTPS directly.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, ErrTLSPair
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load TLS certificate %s and key %s: %w — give a PEM certificate (chain) and its PEM private key", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Serve answers requests on ln until ctx ends, over HTTPS when tlsConf is
// set, then shuts down gracefully: requests in flight get up to grace to
// finish before their connections are closed.
func (s *Server) Serve(ctx context.Context, ln net.Listener, tlsConf *tls.Config, grace time.Duration) error {
	hs := s.HTTPServer(ln.Addr().String())
	errc := make(chan error, 1)
	go func() {
		if tlsConf != nil {
			hs.TLSConfig = tlsConf
			errc <- hs.ServeTLS(ln, "", "")
			return
		}
		errc <- hs.Serve(ln)
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close() // streams still open after the grace period
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// CheckAddr refuses to serve on a non-loopback address without a token:
// anyone on the network could otherwise read the documents through the
// assistant.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w — use host:port, e.g. 127.0.0.1:8080", addr, err)
	}
	if IsLoopback(host) || token != "" {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s without a token: set SHIRUBE_TOKEN (in the environment or .env) so that clients must authenticate, or listen on 127.0.0.1", addr)
}

// IsLoopback reports whether host (a name or IP, without port) only
// reaches this machine.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// routes registers every handler, each wrapped with metrics, logging and
// (except the public ones) authentication.
func (s *Server) routes() {
	s.handle("GET /{$}", "page", s.authPage(http.HandlerFunc(s.handlePage)))
	s.handle("GET /login", "login", http.HandlerFunc(s.handleLoginPage))
	s.handle("POST /login", "login", http.HandlerFunc(s.handleLogin))
	s.handle("POST /logout", "logout", http.HandlerFunc(s.handleLogout))
	s.handle("GET /static/", "static", s.static.handler())
	s.handle("GET /healthz", "healthz", http.HandlerFunc(s.handleHealth))
	s.handle("GET /metrics", "metrics", s.authAPI(s.metrics.handler()))
	s.handle("GET /api/status", "status", s.authAPI(http.HandlerFunc(s.handleStatus)))
	s.handle("GET /api/search", "search", s.authAPI(s.admit(s.handleSearch)))
	s.handle("POST /api/ask", "ask", s.authAPI(s.admit(s.handleAsk)))
	s.handle("POST /api/index/rebuild", "rebuild", s.authAPI(http.HandlerFunc(s.handleRebuild)))
	s.handle("POST /api/session/reset", "session_reset", s.authAPI(http.HandlerFunc(s.handleSessionReset)))
	s.handle("GET /api/me", "me", s.authAPI(http.HandlerFunc(s.handleMe)))
	s.handle("GET /api/corpus", "corpus", s.authAPI(http.HandlerFunc(s.handleCorpus)))
	s.handle("POST /api/feedback", "feedback", s.authAPI(http.HandlerFunc(s.handleFeedback)))
	s.handle("GET /api/conversations", "conversations", s.authAPI(http.HandlerFunc(s.handleConvList)))
	s.handle("POST /api/conversations", "conversations", s.authAPI(http.HandlerFunc(s.handleConvCreate)))
	s.handle("GET /api/conversations/{id}", "conversation", s.authAPI(http.HandlerFunc(s.handleConvGet)))
	s.handle("PATCH /api/conversations/{id}", "conversation", s.authAPI(http.HandlerFunc(s.handleConvRename)))
	s.handle("DELETE /api/conversations/{id}", "conversation", s.authAPI(http.HandlerFunc(s.handleConvDelete)))
	s.handle("POST /api/conversations/{id}/exchanges/{xid}/version", "conversation", s.authAPI(http.HandlerFunc(s.handleConvVersion)))
	s.handle("GET /api/source/{id...}", "source", s.authAPI(http.HandlerFunc(s.handleAPISource)))
	s.handle("GET /source/{id...}", "source_page", s.authPage(http.HandlerFunc(s.handleSourcePage)))
	s.handle("GET /page-image/{path...}", "page_image", s.authAPI(http.HandlerFunc(s.handlePageImage)))
	s.handle("GET /files/{path...}", "files", s.authAPI(http.HandlerFunc(s.handleFile)))
	s.handle("GET /v1/models", "models", s.authAPI(http.HandlerFunc(s.handleModels)))
	s.handle("POST /v1/chat/completions", "chat_completions", s.authAPI(s.admit(s.handleChatCompletions)))
	s.handle("GET /favicon.ico", "favicon", http.HandlerFunc(s.handleFavicon))
	s.mux.HandleFunc("/", s.handleNotFound)
}

// handle registers h under pattern, recording requests under route.
func (s *Server) handle(pattern, route string, h http.Handler) {
	s.mux.Handle(pattern, s.instrument(route, h))
}

// instrument counts and times requests and logs one line for each.
func (s *Server) instrument(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		d := time.Since(start)
		s.metrics.observeRequest(route, rec.status, d)
		s.opt.Logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("route", route),
			slog.Int("status", rec.status), slog.Duration("duration", d))
	})
}

// statusRecorder remembers the status code of a response. Unwrap lets
// http.ResponseController reach the underlying writer (flush, deadlines).
type statusRecorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wroteHeader = true
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush lets code that only knows http.Flusher stream through the recorder.
func (r *statusRecorder) Flush() { _ = http.NewResponseController(r.ResponseWriter).Flush() }

// contentSecurityPolicy allows only the server's own scripts and styles
// (no inline script, no eval, no framing) and, as inline style, only the
// server's own style sheet, named by its hash (styleSrc).
func contentSecurityPolicy(styleSrc string) string {
	return "default-src 'self'; script-src 'self'; style-src 'self' " + styleSrc + "; img-src 'self' data:; " +
		"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}

// securityHeaders sets the headers every response carries.
func securityHeaders(h http.Handler, csp string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", csp)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		// same-origin, not no-referrer: with no-referrer a browser sends
		// "Origin: null" on the page's own POSTs (form and fetch) over
		// plain HTTP, where it sends no Sec-Fetch-Site either, and the
		// cross-origin check could not tell them from a forged request.
		// Other sites still get no referrer.
		hd.Set("Referrer-Policy", "same-origin")
		// No Cross-Origin-Opener-Policy: "same-origin" made Chromium put the
		// page in a new browsing context group, so the first visit in a
		// new tab waited for a new renderer process to start — about a
		// third of a second added to the first paint on the 2-core test
		// machine (docs/BENCHMARKS.md, issue #21). What it guarded against
		// is covered otherwise: the page cannot be framed
		// (frame-ancestors, X-Frame-Options), opens other pages with
		// noopener, and holds no frames or state a window handle could
		// read.
		h.ServeHTTP(w, r)
	})
}

// loopbackHostOnly guards a server without a token against DNS rebinding:
// a web page whose name resolves to 127.0.0.1 could otherwise read the
// answers. Only requests naming a loopback host are served.
func loopbackHostOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hh, _, err := net.SplitHostPort(host); err == nil {
			host = hh
		}
		if !IsLoopback(host) {
			writeError(w, http.StatusMisdirectedRequest, "host_not_allowed",
				"このサーバーは 127.0.0.1 / localhost でのみ使えます — 他の名前で公開するには SHIRUBE_TOKEN を設定してください")
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
