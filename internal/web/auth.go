package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// MinTokenLength is the shortest SHIRUBE_TOKEN the server accepts: a
// shorter one could be guessed even through the login throttle.
const MinTokenLength = 16

// Login settings.
const (
	// DefaultLoginTTL is how long a browser stays logged in.
	DefaultLoginTTL = 30 * 24 * time.Hour
	// maxLogins bounds the logins kept in memory; the one expiring first
	// is dropped beyond it.
	maxLogins = 10000
)

// Login throttle: each client may get the token wrong loginFreeFailures
// times; after that it must wait loginBaseWait before its next attempt,
// doubling with every further failure up to loginMaxWait. A client's
// failures are forgotten loginForget after its last one, or at its first
// success.
const (
	loginFreeFailures = 5
	loginBaseWait     = time.Second
	loginMaxWait      = 5 * time.Minute
	loginForget       = time.Hour
	maxThrottled      = 10000 // clients remembered; the stalest are dropped beyond it
)

// CheckToken refuses a token too short to resist guessing. An empty token
// (no authentication, loopback only) is checked by CheckAddr instead.
func CheckToken(token string) error {
	if token == "" {
		return nil
	}
	if n := utf8.RuneCountInString(token); n < MinTokenLength {
		return fmt.Errorf("SHIRUBE_TOKEN is too short (%d characters): use at least %d random characters, e.g. the output of `openssl rand -hex 16`", n, MinTokenLength)
	}
	return nil
}

// loginStore keeps the browsers that entered the token on /login. The
// login cookie holds a random id; the store keeps only its SHA-256, with
// its expiry, so logging out (or restarting the server) ends the login
// for good.
type loginStore struct {
	ttl time.Duration

	mu sync.Mutex
	m  map[[32]byte]time.Time // sha256(id) → expiry
}

func newLoginStore(ttl time.Duration) *loginStore {
	return &loginStore{ttl: ttl, m: map[[32]byte]time.Time{}}
}

// issue starts a login and returns its id and expiry.
func (ls *loginStore) issue(now time.Time) (string, time.Time) {
	id := newSessionID() + newSessionID()
	exp := now.Add(ls.ttl)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(ls.m) >= maxLogins {
		var first [32]byte
		var firstExp time.Time
		for k, e := range ls.m {
			if firstExp.IsZero() || e.Before(firstExp) {
				first, firstExp = k, e
			}
		}
		delete(ls.m, first)
	}
	ls.m[sha256.Sum256([]byte(id))] = exp
	return id, exp
}

// valid reports whether id is a login that has not expired; an expired
// one is forgotten.
func (ls *loginStore) valid(id string, now time.Time) bool {
	k := sha256.Sum256([]byte(id))
	ls.mu.Lock()
	defer ls.mu.Unlock()
	exp, ok := ls.m[k]
	if ok && now.After(exp) {
		delete(ls.m, k)
		return false
	}
	return ok
}

// revoke ends the login id.
func (ls *loginStore) revoke(id string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	delete(ls.m, sha256.Sum256([]byte(id)))
}

// throttle slows down clients that keep presenting a wrong token: after
// loginFreeFailures failures each further attempt must wait, the wait
// doubling with every failure. Attempts made while waiting are answered
// 429 without looking at the token, so a guesser learns nothing.
type throttle struct {
	now func() time.Time

	mu sync.Mutex
	m  map[string]*strikes
}

// strikes are one client's failed attempts.
type strikes struct {
	fails int
	until time.Time // no attempt is considered before this
	last  time.Time // last failure
}

func newThrottle(now func() time.Time) *throttle {
	return &throttle{now: now, m: map[string]*strikes{}}
}

// wait returns how long client must wait before an attempt is considered
// (0: go ahead).
func (t *throttle) wait(client string) time.Duration {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.m[client]
	if !ok {
		return 0
	}
	if now.Sub(s.last) > loginForget {
		delete(t.m, client)
		return 0
	}
	return max(s.until.Sub(now), 0)
}

// fail records a wrong token from client and returns how long it must now
// wait.
func (t *throttle) fail(client string) time.Duration {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.m[client]
	if !ok || now.Sub(s.last) > loginForget {
		if len(t.m) >= maxThrottled {
			t.evictLocked(now)
		}
		s = &strikes{}
		t.m[client] = s
	}
	s.fails++
	s.last = now
	if over := s.fails - loginFreeFailures; over > 0 {
		w := loginMaxWait
		if over <= 20 { // beyond that the doubling has long passed the cap
			w = min(loginBaseWait<<(over-1), loginMaxWait)
		}
		s.until = now.Add(w)
		return w
	}
	return 0
}

// succeed forgets client's failures.
func (t *throttle) succeed(client string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, client)
}

// evictLocked drops forgotten clients, or the stalest one when none is.
func (t *throttle) evictLocked(now time.Time) {
	var oldest string
	var oldestT time.Time
	for c, s := range t.m {
		if now.Sub(s.last) > loginForget {
			delete(t.m, c)
			continue
		}
		if oldest == "" || s.last.Before(oldestT) {
			oldest, oldestT = c, s.last
		}
	}
	if len(t.m) >= maxThrottled {
		delete(t.m, oldest)
	}
}

// retryAfter is the value of a Retry-After header for d: whole seconds,
// rounded up, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// clientAddr names the client a request comes from, for the login
// throttle: the peer's IP address, or, when the server trusts a reverse
// proxy (Options.TrustProxy) and the peer is on this machine (a loopback
// address) and sent X-Forwarded-For, the address the proxy appended last.
// A remote client cannot reach the server from a loopback address, and
// without TrustProxy no local process can choose its name either.
func (s *Server) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if s.opt.TrustProxy && IsLoopback(host) {
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			parts := strings.Split(xff[len(xff)-1], ",")
			if last := strings.TrimSpace(parts[len(parts)-1]); last != "" {
				return last
			}
		}
	}
	return host
}

// secureRequest reports whether the browser reached the server over
// HTTPS: directly (--tls-cert), or through a reverse proxy on this machine
// that says so with X-Forwarded-Proto. Cookies are then marked Secure.
func secureRequest(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	return err == nil && IsLoopback(host) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// authResult is what a request's credentials amount to.
type authResult int

const (
	authNone      authResult = iota // no token and no login cookie
	authOK                          // the right token, or a valid login
	authWrong                       // a wrong bearer token
	authExpired                     // a login cookie that is no longer valid
	authThrottled                   // a bearer token from a client that must wait
)

// authenticate checks r's bearer token (throttled per client) or its login
// cookie. wait is set for authWrong and authThrottled.
func (s *Server) authenticate(r *http.Request) (res authResult, wait time.Duration) {
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		client := s.clientAddr(r)
		if w := s.throttle.wait(client); w > 0 {
			return authThrottled, w
		}
		if s.tokenRole(strings.TrimSpace(auth)) != "" {
			s.throttle.succeed(client)
			return authOK, 0
		}
		return authWrong, s.throttle.fail(client)
	}
	if c, err := r.Cookie(loginCookie); err == nil {
		if s.logins.valid(c.Value, s.now()) || s.adminLogins.valid(c.Value, s.now()) {
			return authOK, 0
		}
		return authExpired, 0
	}
	return authNone, 0
}

// Roles.
const (
	RoleAdmin = "admin" // sees and sends retrieval settings
	RoleUser  = "user"  // the clean page; the server's settings apply
)

// tokenRole is the role a presented token gives: RoleAdmin for the admin
// token, RoleUser for the team's token, "" for anything else. Both are
// compared in constant time.
func (s *Server) tokenRole(tok string) string {
	admin := s.opt.AdminToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.opt.AdminToken)) == 1
	user := s.opt.Token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.opt.Token)) == 1
	switch {
	case admin:
		return RoleAdmin
	case user:
		return RoleUser
	}
	return ""
}

// role is the role of an (authenticated) request. Without an admin token
// everyone is an administrator, as before roles existed; with one, only a
// request bearing it or a browser logged in with it is.
func (s *Server) role(r *http.Request) string {
	if s.opt.AdminToken == "" {
		return RoleAdmin
	}
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		if s.tokenRole(strings.TrimSpace(auth)) == RoleAdmin {
			return RoleAdmin
		}
		return RoleUser
	}
	if c, err := r.Cookie(loginCookie); err == nil && s.adminLogins.valid(c.Value, s.now()) {
		return RoleAdmin
	}
	return RoleUser
}

// needsLogin reports whether the server has any token (a login page).
func (s *Server) needsLogin() bool { return s.opt.Token != "" || s.opt.AdminToken != "" }

// authAPI requires the bearer token (or the page's login cookie) when the
// server has a token. The page's script goes back to /login on any 401.
func (s *Server) authAPI(h http.Handler) http.Handler {
	if s.opt.Token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, wait := s.authenticate(r)
		if res == authOK {
			h.ServeHTTP(w, r)
			return
		}
		openAI := strings.HasPrefix(r.URL.Path, "/v1/")
		if res == authThrottled {
			w.Header().Set("Retry-After", retryAfter(wait))
			msg := fmt.Sprintf("トークンの誤りが続いたため一時的に受け付けません — %s 秒後にもう一度お試しください", retryAfter(wait))
			if openAI {
				writeOpenAIError(w, http.StatusTooManyRequests, "rate_limit_exceeded", "too many wrong tokens: retry after "+retryAfter(wait)+" s")
				return
			}
			writeError(w, http.StatusTooManyRequests, "too_many_attempts", msg)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="shirube"`)
		if wait > 0 {
			w.Header().Set("Retry-After", retryAfter(wait))
		}
		switch {
		case openAI:
			writeOpenAIError(w, http.StatusUnauthorized, "invalid_api_key", "missing or wrong token: send Authorization: Bearer <SHIRUBE_TOKEN>")
		case res == authExpired:
			writeError(w, http.StatusUnauthorized, "login_expired", "ログインの有効期限が切れました — もう一度ログインしてください")
		default:
			writeError(w, http.StatusUnauthorized, "unauthorized", "認証が必要です — Authorization: Bearer <SHIRUBE_TOKEN> を付けてください")
		}
	})
}

// authPage sends a browser without a valid login to /login.
func (s *Server) authPage(h http.Handler) http.Handler {
	if s.opt.Token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch res, _ := s.authenticate(r); res {
		case authOK:
			h.ServeHTTP(w, r)
		case authExpired:
			http.Redirect(w, r, "/login?expired=1", http.StatusSeeOther)
		default:
			http.Redirect(w, r, "/login", http.StatusSeeOther)
		}
	})
}

// Login page messages.
const (
	msgLoginExpired   = "ログインの有効期限が切れたか、ログアウトしました — もう一度トークンを入力してください"
	msgWrongToken     = "トークンが違います — サーバーの SHIRUBE_TOKEN を入力してください"
	msgLoginThrottled = "トークンの誤りが続いたため一時的にログインできません — %s 秒後にもう一度お試しください"
)

func (s *Server) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	if !s.needsLogin() {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	msg := ""
	if r.URL.Query().Get("expired") != "" {
		msg = msgLoginExpired
	}
	s.renderLogin(w, r, http.StatusOK, msg)
}

// handleLogin checks the token entered on /login and, when it matches,
// starts a login: the cookie holds a random id, never the token. Wrong
// tokens are throttled per client (429 with Retry-After).
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if !s.needsLogin() {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	client := s.clientAddr(r)
	if wait := s.throttle.wait(client); wait > 0 {
		w.Header().Set("Retry-After", retryAfter(wait))
		s.renderLogin(w, r, http.StatusTooManyRequests, fmt.Sprintf(msgLoginThrottled, retryAfter(wait)))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.opt.MaxBodyBytes)
	if err := r.ParseForm(); err != nil {
		s.renderLogin(w, r, http.StatusBadRequest, "フォームを読み取れません — もう一度入力してください")
		return
	}
	role := s.tokenRole(r.PostForm.Get("token"))
	if role == "" {
		if wait := s.throttle.fail(client); wait > 0 {
			w.Header().Set("Retry-After", retryAfter(wait))
		}
		s.renderLogin(w, r, http.StatusUnauthorized, msgWrongToken)
		return
	}
	s.throttle.succeed(client)
	store := s.logins
	if role == RoleAdmin {
		store = s.adminLogins
	}
	id, exp := store.issue(s.now())
	http.SetCookie(w, &http.Cookie{
		Name: loginCookie, Value: id, Path: "/", Expires: exp,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secureRequest(r),
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// handleLogout ends the browser's login and returns to /login.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(loginCookie); err == nil {
		s.logins.revoke(c.Value)
		s.adminLogins.revoke(c.Value)
	}
	http.SetCookie(w, &http.Cookie{
		Name: loginCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secureRequest(r),
	})
	if !s.needsLogin() {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
