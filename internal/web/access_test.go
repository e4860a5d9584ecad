package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirube/shirube/internal/retrieve"
)

// recordingRebuild records the folders it is asked to rebuild from and
// fails at once, so tests can run one rebuild after another.
type recordingRebuild struct {
	mu   sync.Mutex
	dirs []string
}

func (r *recordingRebuild) run(ctx context.Context, dir string, _ func(string, int, int)) (*retrieve.Searcher, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dirs = append(r.dirs, dir)
	return nil, errors.New("test rebuild")
}

func (r *recordingRebuild) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.dirs...)
}

// waitRebuild waits until no rebuild runs.
func (f *fixture) waitRebuild(t *testing.T) {
	t.Helper()
	for f.status(t).Rebuild.Running {
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRebuildReadsOnlyTheServersFolders: a client can no longer point the
// index at a folder of its choosing (issue 12 item 1).
func TestRebuildReadsOnlyTheServersFolders(t *testing.T) {
	data := t.TempDir()
	extra := t.TempDir()
	secret := t.TempDir()
	if err := os.WriteFile(filepath.Join(secret, "secret.md"), []byte("# 秘密\n\n社外秘の情報。\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "data-link")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	rb := &recordingRebuild{}
	f := newFixture(t, fixtureOptions{configure: func(o *Options) {
		o.DataDir, o.DataDirs, o.Rebuild = data, []string{extra}, rb.run
	}})
	tests := []struct {
		name, asked string
		status      int
		dir         string // folder the rebuild reads
	}{
		{"no folder means --data", "", 202, data},
		{"--data itself", data, 202, data},
		{"another spelling of --data", data + "/./", 202, data},
		{"a link to --data", link, 202, data},
		{"a folder of the allow-list", extra, 202, extra},
		{"another folder", secret, 403, ""},
		{"the parent of --data", filepath.Dir(data), 403, ""},
		{"the root", "/", 403, ""},
		{"a relative path", "../../examples/data", 403, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(rb.calls())
			body := ""
			if tt.asked != "" {
				body = `{"data_folder_path":` + jq(tt.asked) + `}`
			}
			resp, b := f.do(t, "POST", "/api/index/rebuild", body, nil)
			if resp.StatusCode != tt.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, b, tt.status)
			}
			f.waitRebuild(t)
			calls := rb.calls()
			if tt.status != 202 {
				var e apiError
				_ = json.Unmarshal(b, &e)
				if e.Code != "data_folder_not_allowed" || !strings.Contains(e.Error, "再構築できません") || !strings.Contains(e.Error, data) {
					t.Errorf("refusal %+v", e)
				}
				if len(calls) != before {
					t.Errorf("rebuild ran on %v", calls[before:])
				}
				return
			}
			if len(calls) != before+1 || calls[len(calls)-1] != tt.dir {
				t.Errorf("rebuild read %v, want %s", calls[before:], tt.dir)
			}
		})
	}

	// The page shows the folders and does not let the user type one.
	_, page := f.do(t, "GET", "/", "", nil)
	for _, want := range []string{`<select id="data_folder_path"`, `<option value="` + data + `"`, `<option value="` + extra + `"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("page lacks %s", want)
		}
	}
	one := newFixture(t, fixtureOptions{configure: func(o *Options) { o.DataDir, o.Rebuild = data, rb.run }})
	_, page = one.do(t, "GET", "/", "", nil)
	if !strings.Contains(string(page), `value="`+data+`" readonly`) {
		t.Errorf("single data folder is not shown read-only")
	}
}

func TestCheckToken(t *testing.T) {
	tests := []struct {
		token string
		ok    bool
	}{
		{"", true},
		{"s3cret", false},
		{"0123456789abcde", false},
		{"0123456789abcdef", true},
		{"トークンは十六文字以上であること必須", true},
	}
	for _, tt := range tests {
		err := CheckToken(tt.token)
		if (err == nil) != tt.ok {
			t.Errorf("CheckToken(%q) = %v, want ok=%v", tt.token, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "at least 16") {
			t.Errorf("message does not say how long: %v", err)
		}
	}
	asst := newFixture(t, fixtureOptions{}).asst
	if _, err := New(Options{Assistant: asst, Addr: "0.0.0.0:8080", Token: "short-token"}); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Errorf("New accepted an 11-character token: %v", err)
	}
}

// fakeClock is a settable time source for the login throttle.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const testToken = "tok-0123456789abcdef"

// tokenFixture is a server with testToken on a fake clock, and a client
// that does not follow redirects.
func tokenFixture(t *testing.T) (*fixture, *fakeClock, *http.Client) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	f := newFixture(t, fixtureOptions{
		configure: func(o *Options) { o.Addr = "0.0.0.0:8080"; o.Token = testToken; o.TrustProxy = true },
		prepare:   func(s *Server) { s.now = clock.now },
	})
	c := *f.ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return f, clock, &c
}

// postLogin submits the login form as client (X-Forwarded-For, honoured
// because the test server's peer is loopback).
func postLogin(t *testing.T, f *fixture, c *http.Client, token, client string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", f.ts.URL+"/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if client != "" {
		req.Header.Set("X-Forwarded-For", client)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestLoginThrottle: 300 wrong tokens in a row no longer all get checked
// (issue 12 item 3).
func TestLoginThrottle(t *testing.T) {
	f, clock, c := tokenFixture(t)
	const attacker = "192.0.2.7"
	var checked, throttled int
	var retry string
	for range 300 {
		resp := postLogin(t, f, c, "wrong-token-guess", attacker)
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			checked++
		case http.StatusTooManyRequests:
			throttled++
			retry = resp.Header.Get("Retry-After")
		default:
			t.Fatalf("wrong token: %d", resp.StatusCode)
		}
	}
	if checked != loginFreeFailures+1 || throttled != 300-checked {
		t.Errorf("%d wrong tokens checked, %d refused with 429; want %d checked", checked, throttled, loginFreeFailures+1)
	}
	if retry != "1" {
		t.Errorf("Retry-After %q after the first wait, want 1", retry)
	}
	// While it waits, even the right token is not looked at.
	if resp := postLogin(t, f, c, testToken, attacker); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("right token while throttled: %d, want 429", resp.StatusCode)
	}
	// Another client is not affected.
	if resp := postLogin(t, f, c, testToken, "192.0.2.8"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("other client's login: %d, want 303", resp.StatusCode)
	}
	// Each further failure doubles the wait.
	clock.add(time.Second)
	if resp := postLogin(t, f, c, "wrong-again", attacker); resp.StatusCode != 401 || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("after waiting: %d Retry-After %q, want 401 and 2", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	clock.add(2 * time.Second)
	if resp := postLogin(t, f, c, testToken, attacker); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("right token after the wait: %d, want 303", resp.StatusCode)
	}
	// A success forgets the failures.
	if resp := postLogin(t, f, c, "one-more-wrong", attacker); resp.StatusCode != 401 || resp.Header.Get("Retry-After") != "" {
		t.Errorf("first failure after a success: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	// Bearer tokens on the API are throttled the same way.
	bearer := func(tok string) *http.Response {
		req, _ := http.NewRequest("GET", f.ts.URL+"/api/status", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("X-Forwarded-For", "198.51.100.1")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	codes := map[int]int{}
	for range 50 {
		codes[bearer("wrong").StatusCode]++
	}
	if codes[401] != loginFreeFailures+1 || codes[429] != 50-codes[401] {
		t.Errorf("bearer guesses: %v", codes)
	}
	if resp := bearer(testToken); resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("right bearer while throttled: %d %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	clock.add(loginMaxWait)
	if resp := bearer(testToken); resp.StatusCode != 200 {
		t.Errorf("right bearer after the wait: %d", resp.StatusCode)
	}
}

func TestThrottleWaitIsCapped(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	th := newThrottle(clock.now)
	var last time.Duration
	for range 100 {
		last = th.fail("c")
	}
	if last != loginMaxWait || th.wait("c") != loginMaxWait {
		t.Errorf("wait after 100 failures %s, want the cap %s", last, loginMaxWait)
	}
	clock.add(loginForget + loginMaxWait + time.Second)
	if w := th.wait("c"); w != 0 {
		t.Errorf("failures not forgotten after %s: wait %s", loginForget, w)
	}
	if retryAfter(1500*time.Millisecond) != "2" || retryAfter(0) != "1" {
		t.Error("Retry-After is not rounded up to whole seconds")
	}
}

// TestLogoutAndExpiredLogin: the page can log out, and a login that is no
// longer valid sends the browser back to the login page; the API says so
// in Japanese (issue 12 item 3).
func TestLogoutAndExpiredLogin(t *testing.T) {
	f, clock, c := tokenFixture(t)
	resp := postLogin(t, f, c, testToken, "")
	var login *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == loginCookie {
			login = ck
		}
	}
	if login == nil || strings.Contains(login.Value, testToken) || !login.HttpOnly || login.Secure {
		t.Fatalf("login cookie %+v", login)
	}
	get := func(path string, ck *http.Cookie) (*http.Response, string) {
		req, _ := http.NewRequest("GET", f.ts.URL+path, nil)
		if ck != nil {
			req.AddCookie(ck)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp, b.String()
	}
	if resp, page := get("/", login); resp.StatusCode != 200 || !strings.Contains(page, `action="/logout"`) {
		t.Fatalf("page after login: %d, logout button %v", resp.StatusCode, strings.Contains(page, `action="/logout"`))
	}

	// Logging out ends the login on the server, not only in the browser.
	req, _ := http.NewRequest("POST", f.ts.URL+"/logout", nil)
	req.AddCookie(login)
	out, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out.Body.Close()
	cleared := false
	for _, ck := range out.Cookies() {
		cleared = cleared || (ck.Name == loginCookie && ck.MaxAge < 0)
	}
	if out.StatusCode != http.StatusSeeOther || out.Header.Get("Location") != "/login" || !cleared {
		t.Errorf("logout: %d to %q, cookie cleared %v", out.StatusCode, out.Header.Get("Location"), cleared)
	}
	if resp, _ := get("/", login); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?expired=1" {
		t.Errorf("page with a logged-out cookie: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := get("/api/status", login)
	var e apiError
	_ = json.Unmarshal([]byte(body), &e)
	if resp.StatusCode != 401 || e.Code != "login_expired" || strings.Contains(e.Error, "Bearer") {
		t.Errorf("API with a logged-out cookie: %d %+v", resp.StatusCode, e)
	}
	if _, page := get("/login?expired=1", nil); !strings.Contains(page, msgLoginExpired) {
		t.Error("login page does not say the login ended")
	}

	// A login expires after DefaultLoginTTL.
	resp = postLogin(t, f, c, testToken, "")
	for _, ck := range resp.Cookies() {
		if ck.Name == loginCookie {
			login = ck
		}
	}
	if resp, _ := get("/api/status", login); resp.StatusCode != 200 {
		t.Fatalf("fresh login: %d", resp.StatusCode)
	}
	clock.add(DefaultLoginTTL + time.Minute)
	if resp, _ := get("/api/status", login); resp.StatusCode != 401 {
		t.Errorf("login after %s: %d, want 401", DefaultLoginTTL, resp.StatusCode)
	}
}

// TestSameOriginPOSTWithoutFetchMetadata: over plain HTTP to a LAN address
// a browser sends no Sec-Fetch-Site; the page's own POSTs carry their
// Origin (Referrer-Policy same-origin) and pass, forged ones do not.
func TestSameOriginPOSTWithoutFetchMetadata(t *testing.T) {
	f, _, c := tokenFixture(t)
	host := strings.TrimPrefix(f.ts.URL, "http://")
	for _, tt := range []struct {
		origin string
		status int
	}{
		{"http://" + host, http.StatusSeeOther},
		{"null", http.StatusForbidden},
		{"http://evil.example", http.StatusForbidden},
	} {
		req, _ := http.NewRequest("POST", f.ts.URL+"/login", strings.NewReader("token="+testToken))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", tt.origin)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("Origin %s: %d, want %d", tt.origin, resp.StatusCode, tt.status)
		}
	}
	resp, _ := f.do(t, "GET", "/login", "", nil)
	if rp := resp.Header.Get("Referrer-Policy"); rp != "same-origin" {
		t.Errorf("Referrer-Policy %q: browsers would send Origin: null on the login form", rp)
	}
}

// TestForwardedForNeedsTrustProxy: without Options.TrustProxy a client on
// this machine cannot escape the login throttle by naming itself anew in
// X-Forwarded-For on every wrong token; with it (behind a reverse proxy)
// each forwarded client is counted on its own.
func TestForwardedForNeedsTrustProxy(t *testing.T) {
	for _, trust := range []bool{false, true} {
		clock := &fakeClock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
		f := newFixture(t, fixtureOptions{
			configure: func(o *Options) { o.Addr = "0.0.0.0:8080"; o.Token = testToken; o.TrustProxy = trust },
			prepare:   func(s *Server) { s.now = clock.now },
		})
		c := *f.ts.Client()
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		throttled := 0
		for i := range 20 {
			resp := postLogin(t, f, &c, "wrong-token-guess", fmt.Sprintf("203.0.113.%d", i+1))
			resp.Body.Close()
			if resp.StatusCode == http.StatusTooManyRequests {
				throttled++
			}
		}
		if !trust && throttled == 0 {
			t.Error("without TrustProxy, rotating X-Forwarded-For escaped the throttle")
		}
		if trust && throttled != 0 {
			t.Errorf("with TrustProxy, %d distinct forwarded clients were throttled", throttled)
		}
	}
}

// TestAdmissionBusy: when every slot is taken and none frees within the
// queue wait, a search, an answer and a chat completion get 503 with
// Retry-After; once a slot is free they run again.
func TestAdmissionBusy(t *testing.T) {
	f := newFixture(t, fixtureOptions{configure: func(o *Options) { o.MaxConcurrent = 1; o.QueueWait = time.Millisecond }})
	release, ok := f.srv.admission.acquire(t.Context())
	if !ok {
		t.Fatal("the only slot is not free")
	}
	reqs := []struct{ method, path, body string }{
		{"GET", "/api/search?q=" + urlq("アカウントロック 解除"), ""},
		{"POST", "/api/ask", askBody},
		{"POST", "/v1/chat/completions", `{"model":"shirube","messages":[{"role":"user","content":"アカウントロックの解除手順は？"}]}`},
	}
	for _, r := range reqs {
		resp, b := f.do(t, r.method, r.path, r.body, nil)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), `"busy"`) {
			t.Errorf("%s %s while busy: %d Retry-After %q %s", r.method, r.path, resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}
	release()
	for _, r := range reqs {
		if resp, b := f.do(t, r.method, r.path, r.body, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s once free: %d %s", r.method, r.path, resp.StatusCode, b)
		}
	}
}
