package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

const testAdminToken = "adm-0123456789abcdef"

// TestRoles: with an admin token, only its bearer sees the retrieval
// settings and has them applied; a user's k and weight are ignored and the
// reply's "search" says what the server used. Without one, everyone is an
// administrator.
func TestRoles(t *testing.T) {
	f := newFixture(t, fixtureOptions{configure: func(o *Options) {
		o.Addr, o.Token, o.AdminToken = "0.0.0.0:8080", testToken, testAdminToken
	}})
	userH := map[string]string{"Authorization": "Bearer " + testToken}
	adminH := map[string]string{"Authorization": "Bearer " + testAdminToken}

	for _, tt := range []struct {
		name     string
		hd       map[string]string
		role     string
		settings bool
	}{{"user", userH, RoleUser, false}, {"admin", adminH, RoleAdmin, true}} {
		resp, b := f.do(t, "GET", "/api/me", "", tt.hd)
		var me MeResponse
		if err := json.Unmarshal(b, &me); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s /api/me: %d %s", tt.name, resp.StatusCode, b)
		}
		if me.Role != tt.role || (me.Settings != nil) != tt.settings {
			t.Errorf("%s /api/me = %s", tt.name, b)
		}
	}

	body := `{"question":` + jq(qDelete) + `,"k":1,"bm25_weight":0.3}`
	var asUser, asAdmin AskResponse
	resp, b := f.do(t, "POST", "/api/ask", body, userH)
	if resp.StatusCode != 200 || json.Unmarshal(b, &asUser) != nil {
		t.Fatalf("user ask: %d %s", resp.StatusCode, b)
	}
	resp, b = f.do(t, "POST", "/api/ask", body, adminH)
	if resp.StatusCode != 200 || json.Unmarshal(b, &asAdmin) != nil {
		t.Fatalf("admin ask: %d %s", resp.StatusCode, b)
	}
	if s := asUser.Search; s == nil || s.K != 4 || !s.AutoWeight {
		t.Errorf("user's settings applied: search %+v", s)
	}
	if s := asAdmin.Search; s == nil || s.K != 1 || s.AutoWeight || s.BM25Weight != 0.3 || s.VectorWeight != 0.7 || len(asAdmin.Citations) != 1 {
		t.Errorf("admin's settings not applied: search %+v, %d citations", s, len(asAdmin.Citations))
	}
	// A user's out-of-range k is ignored too (it is not theirs to send).
	if resp, _ := f.do(t, "POST", "/api/ask", `{"question":`+jq(qDelete)+`,"k":99}`, userH); resp.StatusCode != 200 {
		t.Errorf("user with k=99: %d", resp.StatusCode)
	}
	if resp, b := f.do(t, "POST", "/api/ask", `{"question":`+jq(qDelete)+`,"k":99}`, adminH); resp.StatusCode != 400 || !strings.Contains(string(b), "1〜20") {
		t.Errorf("admin with k=99: %d %s", resp.StatusCode, b)
	}
	if resp, b := f.do(t, "POST", "/api/index/rebuild", `{}`, userH); resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "admin_only") {
		t.Errorf("user rebuild: %d %s", resp.StatusCode, b)
	}
	// A browser logged in with the admin token is an administrator.
	c, _, _ := tokenFixtureClient(t, f)
	loginAndGetPage(t, f, c, testAdminToken)

	// No admin token: everyone is an administrator, as before.
	g := newFixture(t, fixtureOptions{})
	_, b = g.do(t, "GET", "/api/me", "", nil)
	if !strings.Contains(string(b), `"role":"admin"`) || !strings.Contains(string(b), `"settings"`) {
		t.Errorf("no admin token: /api/me = %s", b)
	}
	if _, err := New(Options{Assistant: f.asst, Addr: "0.0.0.0:8080", Token: testToken, AdminToken: testToken}); err == nil {
		t.Error("an admin token equal to the team token was accepted")
	}
}

// tokenFixtureClient is a client that keeps cookies and stops at redirects.
func tokenFixtureClient(t *testing.T, f *fixture) (*http.Client, *fixture, error) {
	u := newUser(t, f)
	u.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return u.c, f, nil
}

// loginAndGetPage logs in with token on /login and returns the chat page.
func loginAndGetPage(t *testing.T, f *fixture, c *http.Client, token string) string {
	t.Helper()
	resp := postLogin(t, f, c, token, "")
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	r, err := c.Get(f.ts.URL + "/api/me")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var me MeResponse
	json.NewDecoder(r.Body).Decode(&me)
	if me.Role != RoleAdmin {
		t.Errorf("logged in with the admin token: role %q", me.Role)
	}
	p, err := c.Get(f.ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := p.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return sb.String()
}

// TestCorpus: the first screen's figures and 4–6 example questions made
// from the demo corpus's headings, Japanese, the same every time.
func TestCorpus(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	get := func() CorpusResponse {
		resp, b := f.do(t, "GET", "/api/corpus", "", nil)
		var c CorpusResponse
		if resp.StatusCode != 200 || json.Unmarshal(b, &c) != nil {
			t.Fatalf("/api/corpus: %d %s", resp.StatusCode, b)
		}
		return c
	}
	c := get()
	if c.Documents != 7 || c.Pages < 7 || c.Chunks == 0 || c.UpdatedAt.IsZero() || c.UpdatedAt.After(time.Now()) {
		t.Errorf("corpus %+v", c)
	}
	if n := len(c.Examples); n < 4 || n > 6 {
		t.Fatalf("%d examples: %q", n, c.Examples)
	}
	for _, q := range c.Examples {
		if !hasJapanese(q) || utf8.RuneCountInString(q) > 50 || strings.ContainsAny(q, "#*|>") || !strings.HasSuffix(q, "教えてください") {
			t.Errorf("example %q is not a readable Japanese question", q)
		}
	}
	t.Logf("examples: %q", c.Examples)
	if again := get(); strings.Join(again.Examples, "|") != strings.Join(c.Examples, "|") {
		t.Errorf("examples differ between calls: %q vs %q", c.Examples, again.Examples)
	}
	noIndex := newFixture(t, fixtureOptions{noIndex: true})
	if resp, b := noIndex.do(t, "GET", "/api/corpus", "", nil); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "no_index") {
		t.Errorf("without an index: %d %s", resp.StatusCode, b)
	}
}
