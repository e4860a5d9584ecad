package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/guard"
)

// assets holds the page templates, the style sheet and the script. There
// is no build step: these files are served as written.
//
//go:embed assets
var assets embed.FS

// pageRenderer holds the parsed templates and the Markdown renderer.
type pageRenderer struct {
	page   *template.Template
	login  *template.Template
	answer *template.Template
	md     *markdown
}

func newPageRenderer() (*pageRenderer, error) {
	parse := func(name string) (*template.Template, error) {
		t, err := template.ParseFS(assets, "assets/"+name)
		if err != nil {
			return nil, fmt.Errorf("web: parse template %s: %w", name, err)
		}
		return t, nil
	}
	p := &pageRenderer{md: newMarkdown()}
	var err error
	if p.page, err = parse("page.html"); err != nil {
		return nil, err
	}
	if p.login, err = parse("login.html"); err != nil {
		return nil, err
	}
	if p.answer, err = parse("answer.html"); err != nil {
		return nil, err
	}
	return p, nil
}

// renderAnswer returns the sanitised HTML of a reply: banner, Markdown
// body, citations as <details>, unknowns.
func (p *pageRenderer) renderAnswer(rep assistant.Reply, cs []Citation) template.HTML {
	var buf bytes.Buffer
	if err := p.answer.Execute(&buf, p.md.view(rep, cs)); err != nil {
		return template.HTML("<p>" + template.HTMLEscapeString(rep.Answer) + "</p>")
	}
	return template.HTML(buf.String()) // #nosec: template output, body sanitised
}

// renderPartial is the HTML of an answer that did not finish (stopped or
// failed): the banner when the question asked for a dangerous operation
// (decided before the answer streamed), then the text that arrived, in the
// answer template's structure.
func (p *pageRenderer) renderPartial(rep assistant.Reply, status string) template.HTML {
	var b strings.Builder
	b.WriteString(`<div class="answer answer-answer answer-` + status + `">`)
	if rep.Flags.DangerousOperation {
		// The same banner as a finished answer's (answer.html): no alert
		// (the page announces a new banner once), no emoji.
		b.WriteString(`<div class="banner"><span class="ico-warn" aria-hidden="true"></span>承認・確認が必要</div>`)
	}
	b.WriteString(`<div class="body">` + string(p.md.render(rep.Answer)) + `</div></div>`)
	return template.HTML(b.String()) // #nosec: the body is sanitised, the rest is ours
}

// pageData is what page.html shows.
type pageData struct {
	Notice      string
	DataDir     string   // the folder the next rebuild reads
	DataDirs    []string // every folder a rebuild may read (DataDir among them)
	CanLogout   bool     // the server has a token
	K           int
	MaxK        int
	BM25        float64
	Vector      float64
	MaxQuestion int
	MaxHistory  int
	CanRebuild  bool
	Status      StatusResponse
	History     []exchange
	// Conversation is the conversation History shows ("" for the browser
	// session's exchanges).
	Conversation string
	// CSS is the style sheet, inline; JSVersion the script's ?v=.
	CSS       template.CSS
	JSVersion string
	// Role is "admin" or "user": only an administrator is shown (and may
	// send) the retrieval settings.
	Role    string
	IsAdmin bool
}

// handlePage renders the chat page with the tab's conversation (?c=, which
// the script keeps in the tab's address) or else the session's last
// exchanges, so a reload shows them at its first paint.
func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	id := browserSession(w, r)
	hist, conv := s.pageHistory(id, r.URL.Query().Get("c"))
	def := s.asst.Options().Search
	k := def.K
	if k <= 0 {
		k = 4
	}
	st := s.status()
	data := pageData{
		Notice:      noticeText(),
		DataDir:     st.Rebuild.DataDir,
		DataDirs:    s.dataDirs(),
		CanLogout:   s.opt.Token != "",
		K:           k,
		MaxK:        MaxK,
		BM25:        def.BM25Weight,
		Vector:      1 - def.BM25Weight,
		MaxQuestion: s.opt.MaxQuestionRunes,
		MaxHistory:  s.opt.MaxHistory,
		CanRebuild:  s.opt.Rebuild != nil,
		Status:      st,
		History:     hist,
		Role:        s.role(r),

		Conversation: conv,
		CSS:          s.static.inlineCSS(),
		JSVersion:    s.static.js.version,
	}
	data.IsAdmin = data.Role == RoleAdmin
	var buf bytes.Buffer
	if err := s.page.page.Execute(&buf, data); err != nil {
		http.Error(w, "ページを表示できません: "+err.Error(), http.StatusInternalServerError)
		return
	}
	writePage(w, r, http.StatusOK, buf.Bytes())
}

// pageHistory is what the page shows when it loads: each exchange of the
// user's conversation convID at its current version, or, without one (or
// when it is not the user's), the browser session's last exchanges.
func (s *Server) pageHistory(user, convID string) ([]exchange, string) {
	if convID != "" {
		if c, err := s.convs.get(user, convID); err == nil {
			out := make([]exchange, 0, len(c.Exchanges))
			for _, e := range c.Exchanges {
				v := e.Versions[e.Current]
				x := exchange{ID: e.ID, Question: v.Question, Status: v.Status, Version: e.Current, Versions: len(e.Versions),
					// Rendered and sanitised by this server when it was answered.
					HTML: template.HTML(v.HTML)} // #nosec
				if v.RewrittenQuery != v.Question {
					x.Rewritten = v.RewrittenQuery
				}
				if e.Feedback != nil {
					x.Rating = e.Feedback.Rating
				}
				out = append(out, x)
			}
			return out, c.ID
		}
	}
	sess, ok := s.sessions.peek(user)
	if !ok {
		return nil, ""
	}
	hist := sess.exchanges()
	for i := range hist {
		hist[i].Status, hist[i].Versions = StatusComplete, 1
	}
	return hist, ""
}

// noticeText is the confidentiality notice of seed 002 without its leading
// ⚠️: the pages draw the sign with CSS (.ico-warn), as they do the danger
// banner's. The emoji is in no font the page names, so laying it out sent
// Chromium through the whole font-family list and a fallback font before
// the first paint (docs/BENCHMARKS.md, issue #21), and it was tofu on a
// machine without an emoji font.
func noticeText() string {
	return strings.TrimSpace(strings.TrimPrefix(guard.ConfidentialNotice, "⚠️"))
}

type loginData struct {
	Notice string
	Error  string
	CSS    template.CSS
}

func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	var buf bytes.Buffer
	if err := s.page.login.Execute(&buf, loginData{Notice: noticeText(), Error: msg, CSS: s.static.inlineCSS()}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writePage(w, r, status, buf.Bytes())
}

// handleSessionReset forgets the browser session's conversation.
func (s *Server) handleSessionReset(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.sessions.drop(c.Value)
	}
	w.WriteHeader(http.StatusNoContent)
}

// errorPage is the Japanese HTML page of an error on a page route.
var errorPageTmpl = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="ja"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} — shirube</title><link rel="icon" href="/favicon.ico"><link rel="stylesheet" href="/static/style.css"></head>
<body class="error-page"><main class="error-view"><h1>{{.Title}}</h1><p>{{.Message}}</p><p><a href="/">チャットに戻る</a></p></main></body></html>
`))

// errorTitles names the statuses an error page may show.
var errorTitles = map[int]string{
	http.StatusBadRequest:          "リクエストが正しくありません",
	http.StatusUnauthorized:        "ログインが必要です",
	http.StatusForbidden:           "このリクエストは受け付けられません",
	http.StatusNotFound:            "ページが見つかりません",
	http.StatusMethodNotAllowed:    "この操作はできません",
	http.StatusServiceUnavailable:  "ただいま利用できません",
	http.StatusInternalServerError: "サーバーでエラーが起きました",
}

// errorPage writes a Japanese HTML error page.
func (s *Server) errorPage(w http.ResponseWriter, status int, msg string) {
	title := errorTitles[status]
	if title == "" {
		title = fmt.Sprintf("エラー（%d）", status)
	}
	var buf bytes.Buffer
	_ = errorPageTmpl.Execute(&buf, struct{ Title, Message string }{title, msg})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}
