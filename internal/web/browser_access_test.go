package web

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
)

// lanHost is the name the browser opens: not localhost, so the page is not
// a potentially trustworthy origin over plain HTTP (no Sec-Fetch-Site, no
// Clipboard API), while Chromium maps it to 127.0.0.1 and every packet
// stays on loopback.
const lanHost = "shirube.test"

// skipWithoutBrowser skips browser tests where Chromium is missing or in
// -short mode.
func skipWithoutBrowser(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skip("browser test skipped: " + chromiumPath + " not found — install Debian's chromium and fonts-noto-cjk (`make deps`)")
	}
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
}

// bpage drives one browser tab.
type bpage struct {
	t   *testing.T
	ctx context.Context
	// stop ends the browser (newBrowser's pages; also at the test's end).
	stop func()
}

// close ends the page's browser.
func (p *bpage) close() {
	if p.stop != nil {
		p.stop()
	}
}

// newBrowser starts headless Chromium (with extra flags) and opens url.
func newBrowser(t *testing.T, url string, width, height int, extra ...chromedp.ExecAllocatorOption) *bpage {
	t.Helper()
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	// The first call starts the browser and must not carry a timeout.
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		cancelCtx()
		cancelAlloc()
		t.Fatalf("open %s: %v", url, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	stop := func() {
		cancel()
		cancelCtx()
		cancelAlloc()
	}
	t.Cleanup(stop)
	return &bpage{t: t, ctx: ctx, stop: stop}
}

func (p *bpage) eval(expr string, out any) {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[json.RawMessage](expr))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	if err := json.Unmarshal(v, out); err != nil {
		p.t.Fatalf("evaluate %s: %v (%s)", expr, err, v)
	}
}

// do runs steps. Right after a page load chromedp may still hold the old
// document's nodes ("No node with given id found"); the steps are then
// tried again on the new document.
func (p *bpage) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	var err error
	for range 5 {
		if err = chromedp.Do(p.ctx, steps...); err == nil || !strings.Contains(err.Error(), "No node with given id") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// until waits for the JavaScript expression pred to be true, across page
// loads (a poll is cut short when the page navigates: it starts again on
// the new page); on time-out it fails with what the page shows.
func (p *bpage) until(what, pred string) {
	p.t.Helper()
	deadline := time.Now().Add(time.Minute)
	var err error
	for {
		_, err = chromedp.Run(p.ctx, chromedp.Poll[bool](pred, chromedp.WithPollingTimeout(time.Until(deadline))))
		if err == nil || p.ctx.Err() != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // the page is loading: poll it again
	}
	if err != nil {
		var body, where string
		_ = chromedp.Do(p.ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			body, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 400) : ''`))
			where, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
			return nil
		}))
		p.t.Fatalf("%s: %v\nat %s the page shows: %q", what, err, where, body)
	}
}

// ask types q, presses Enter and waits for the exchange to finish.
func (p *bpage) ask(q string) {
	p.t.Helper()
	var ok bool
	p.eval(fmt.Sprintf(`(() => { const b = document.querySelector('#question'); b.value = %s; b.focus(); return true; })()`, jq(q)), &ok)
	p.do("ask "+q, pressEnter(false))
	p.until("answer to "+q, fmt.Sprintf(`(() => { const li = document.querySelector('#chat > li:last-child');
		return !!li && li.querySelector('.question').textContent === %s && li.dataset.done === 'true'; })()`, jq(q)))
	var errText string
	p.eval(`(document.querySelector('#chat > li:last-child .error') || {}).textContent || ''`, &errText)
	if errText != "" {
		p.t.Fatalf("answer to %s: %s", q, errText)
	}
}

// login waits for the login page, enters token and waits for the chat
// page.
func (p *bpage) login(token string) {
	p.t.Helper()
	p.until("login page", `location.pathname === '/login' && !!document.querySelector('#token')`)
	p.do("log in", chromedp.SetValue(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS("form button[type=submit]")))
	p.until("chat page after login", `location.pathname === '/' && document.readyState === 'complete' && !!document.querySelector('#question')`)
}

// fetchJSON GETs path from the page (its cookies, the real endpoint) and
// decodes the JSON answer into out.
func (p *bpage) fetchJSON(path string, out any) {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[json.RawMessage](
		fmt.Sprintf(`fetch(%s, {headers: {Accept: 'application/json'}}).then(r => r.ok ? r.json() : {status: r.status})`, jq(path)), chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("GET %s from the page: %v", path, err)
	}
	if err := json.Unmarshal(v, out); err != nil {
		p.t.Fatalf("GET %s from the page: %v (%s)", path, err, v)
	}
}

// fetchText GETs path from the page and returns the body as text.
func (p *bpage) fetchText(path string, out *string) {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](fmt.Sprintf(`fetch(%s).then(r => r.text())`, jq(path)), chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("GET %s from the page: %v", path, err)
	}
	*out = v
}

// colorScheme switches prefers-color-scheme.
func (p *bpage) colorScheme(scheme string) {
	p.do("colour scheme "+scheme, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	}))
}

// serveLAN serves srv on 0.0.0.0 (all interfaces, as `serve --addr
// 0.0.0.0:…` does), over HTTPS when tlsConf is set, and returns the port.
func serveLAN(t *testing.T, srv *Server, tlsFiles [2]string) int {
	t.Helper()
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		if tlsFiles[0] == "" {
			done <- srv.Serve(ctx, ln, nil, time.Second)
			return
		}
		conf, err := LoadTLS(tlsFiles[0], tlsFiles[1])
		if err != nil {
			ln.Close()
			done <- err
			return
		}
		done <- srv.Serve(ctx, ln, conf, time.Second)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().(*net.TCPAddr).Port
}

// selfSignedCert writes a certificate and key for host into dir.
func selfSignedCert(t *testing.T, dir, host string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestBrowserLANLogin logs in with SHIRUBE_TOKEN from a browser that
// reaches the server under a non-localhost name, over plain HTTP and over
// HTTPS (serve --tls-cert/--tls-key), asks a question, meets an expired
// login and logs out (issue 12 items 2 and 3).
func TestBrowserLANLogin(t *testing.T) {
	skipWithoutBrowser(t)
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{configure: func(o *Options) { o.Addr = "0.0.0.0:8080"; o.Token = testToken }})
			var files [2]string
			flags := []chromedp.ExecAllocatorOption{chromedp.Flag("host-resolver-rules", "MAP "+lanHost+" 127.0.0.1")}
			if scheme == "https" {
				files[0], files[1] = selfSignedCert(t, t.TempDir(), lanHost)
				flags = append(flags, chromedp.Flag("ignore-certificate-errors", true))
			}
			port := serveLAN(t, f.srv, files)
			base := fmt.Sprintf("%s://%s:%d", scheme, lanHost, port)
			p := newBrowser(t, base+"/", 1280, 900, flags...)

			login := func() { p.login(testToken) }
			login()
			var secure bool
			p.eval(`window.isSecureContext`, &secure)
			if secure != (scheme == "https") {
				t.Errorf("isSecureContext = %v: the page is not opened as a LAN client would", secure)
			}
			p.ask(qMalware)
			var cites int
			p.eval(`document.querySelectorAll('#chat > li:last-child details.citation').length`, &cites)
			if cites == 0 {
				t.Error("answer without citations")
			}
			// Copy works without the Clipboard API too (plain HTTP to a LAN
			// name is not a secure context).
			p.do("copy", chromedp.Click(chromedp.CSS("#chat > li:last-child .actions .copy")))
			p.until("copy confirmed", `document.querySelector('#chat > li:last-child .actions .copy').textContent === 'コピーしました'`)
			res, err := chromedp.Call(p.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Cookies {
				if c.Name == loginCookie && (!c.HTTPOnly || c.Secure != (scheme == "https")) {
					t.Errorf("login cookie HttpOnly=%v Secure=%v over %s", c.HTTPOnly, c.Secure, scheme)
				}
			}

			// The login ends on the server (expiry, restart): the next
			// question goes back to the login page, with a Japanese reason.
			f.srv.logins.mu.Lock()
			clear(f.srv.logins.m)
			f.srv.logins.mu.Unlock()
			p.do("ask after the login ended",
				chromedp.SetValue(chromedp.CSS("#question"), qDelete),
				chromedp.Focus(chromedp.CSS("#question")),
				pressEnter(false),
			)
			p.until("back to the login page", `location.pathname === '/login'`)
			var msg string
			p.eval(`(document.querySelector('.login-box .error') || {}).textContent || ''`, &msg)
			if msg != msgLoginExpired {
				t.Errorf("login page says %q, want %q", msg, msgLoginExpired)
			}

			// Log in again, then out.
			login()
			p.do("log out", chromedp.Click(chromedp.CSS("#logout")))
			p.until("login page after logout", `location.pathname === '/login'`)
			p.do("open the chat again", chromedp.Navigate(base+"/"))
			p.until("chat needs a login again", `location.pathname === '/login'`)
		})
	}
}

// pageGen is the extractive generator, streaming, with two test modes:
// "unverified" marks every claim of the answer unsupported, "block"
// streams a first piece and then waits until the request ends.
type pageGen struct {
	streaming
	mu        sync.Mutex
	mode      string
	cancelled chan error
}

func (g *pageGen) setMode(m string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mode = m
}

func (g *pageGen) GenerateStream(ctx context.Context, q string, rs []retrieve.Result, h []llm.Message, on func(string)) (answer.Answer, error) {
	g.mu.Lock()
	mode := g.mode
	g.mu.Unlock()
	switch mode {
	case "block":
		on("隔離の手順を確認しています")
		<-ctx.Done()
		g.cancelled <- ctx.Err()
		return answer.Answer{}, ctx.Err()
	case "unverified":
		a, err := g.streaming.GenerateStream(ctx, q, rs, h, on)
		if a.Verification != nil {
			v := *a.Verification
			v.Claims = append([]answer.Claim(nil), v.Claims...)
			for i := range v.Claims {
				v.Claims[i].Supported = false
			}
			a.Verification = &v
		}
		return a, err
	}
	return g.streaming.GenerateStream(ctx, q, rs, h, on)
}

// htmlDoc is a runbook whose lines start with HTML tags. It is indexed as a
// text file: Markdown ingestion turns raw HTML into its text
// (document.MarkdownHTML), a .txt keeps the tags as characters, so the
// answer quotes them and the page must show them as text.
const htmlDoc = `# 証跡保全手順

## 1. 証跡の保全

<div>証跡保全では、隔離した端末のメモリを取得してから電源を切る。</div>
<script>証跡保全の記録は、取得日時と担当者をチケットに残す。</script>
`

// TestBrowserAnswers covers the answer on the page (issue 12 items 17–19):
// HTML at the start of a document line is shown as text; the verification
// line's colour follows the result with enough contrast; a new answer is
// scrolled clear of the sticky question box; on a phone the notice stays
// in view and the settings fold away; stop, copy and regenerate; the
// conversation survives a reload until 会話をクリア.
func TestBrowserAnswers(t *testing.T) {
	skipWithoutBrowser(t)
	data := t.TempDir()
	if err := copyTree(demoData, data); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "runbooks", "evidence.txt"), []byte(htmlDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := buildIndex(context.Background(), data, filepath.Join(root, "db"), filepath.Join(root, "index"), nil); err != nil {
		t.Fatal(err)
	}
	a, _ := analysis.New(analysis.DefaultOptions())
	gen := &pageGen{streaming: streaming{extractive{answer.NewExtractive(a, answer.ExtractiveOptions{})}}, cancelled: make(chan error, 1)}
	f := newFixture(t, fixtureOptions{gen: gen})
	f.asst.Swap(openSearcher(t, filepath.Join(root, "index")))
	p := newBrowser(t, f.ts.URL, 1280, 1000)
	p.until("page ready", `document.documentElement.dataset.ready === 'true'`)

	// Item 17: a document line starting with <div> / <script>.
	p.ask("証跡保全の手順を教えてください")
	var body string
	var nodes int
	p.eval(`document.querySelector('#chat > li:last-child .answer .body').innerText`, &body)
	p.eval(`document.querySelectorAll('#chat > li:last-child .answer .body div, #chat script').length`, &nodes)
	if !strings.Contains(body, "<div>証跡保全では、隔離した端末") && !strings.Contains(body, "<script>証跡保全の記録は") || nodes != 0 {
		t.Errorf("answer body %q (%d div/script elements); want the HTML shown as text", body, nodes)
	}

	// Item 18: the verification line is green only when every claim is
	// supported, and readable in both colour schemes.
	type look struct {
		Class string `json:"class"`
		Color string `json:"color"`
		Bg    string `json:"bg"`
	}
	// verified looks at the verification line of the n-th exchange from
	// the end (1: the last).
	verified := func(n int) look {
		var l look
		p.eval(fmt.Sprintf(`(() => { const v = document.querySelector('#chat > li:nth-last-child(%d) .verified'); if (!v) return {};
			return {class: v.className, color: getComputedStyle(v).color, bg: getComputedStyle(v.closest('.reply')).backgroundColor}; })()`, n), &l)
		return l
	}
	checkLine := func(scheme string, l look, wantGreen bool) {
		t.Helper()
		fg, bg := parseRGB(t, l.Color), parseRGB(t, l.Bg)
		green := fg[1] > fg[0] && fg[1] > fg[2]
		if green != wantGreen {
			t.Errorf("%s: verification line %q is coloured %s; green=%v, want %v", scheme, l.Class, l.Color, green, wantGreen)
		}
		if c := contrast(fg, bg); c < 4.5 {
			t.Errorf("%s: verification line %s on %s has contrast %.2f:1, want ≥ 4.5", scheme, l.Color, l.Bg, c)
		}
	}
	p.ask(qIsolate)
	gen.setMode("unverified")
	p.ask(qIsolate)
	gen.setMode("")
	if l := verified(1); !strings.Contains(l.Class, "verified-none") {
		t.Errorf("unsupported answer's verification line has class %q", l.Class)
	}
	for _, scheme := range []string{"light", "dark"} {
		p.colorScheme(scheme)
		checkLine(scheme+", 0 supported", verified(1), false)
		checkLine(scheme+", all supported", verified(2), true)
	}
	p.colorScheme("light")

	// Item 18: the new answer's end (citations, buttons) is not under the
	// sticky question box, at desktop and at phone width.
	clearOfBox := func(width string) {
		t.Helper()
		var gap float64
		p.eval(`(() => { const li = document.querySelector('#chat > li:last-child');
			return document.querySelector('#ask').getBoundingClientRect().top - li.getBoundingClientRect().bottom; })()`, &gap)
		var scrolled bool
		p.eval(`document.documentElement.scrollHeight > window.innerHeight`, &scrolled)
		if !scrolled {
			t.Errorf("%s: the page does not scroll; the test proves nothing", width)
		}
		if gap < 0 {
			t.Errorf("%s: the new answer ends %.0f px under the question box", width, -gap)
		}
	}
	p.ask(qDelete)
	clearOfBox("desktop")

	// Item 19: copy and regenerate.
	var copied string
	p.eval(`navigator.clipboard.writeText = (s) => { window.__copied = s; return Promise.resolve(); }; true`, new(bool))
	p.do("copy", chromedp.Click(chromedp.CSS("#chat > li:last-child .actions .copy")))
	p.until("copied", `typeof window.__copied === 'string'`)
	p.eval(`window.__copied`, &copied)
	var shown string
	p.eval(`document.querySelector('#chat > li:last-child .answer .body').innerText.trim()`, &shown)
	if !strings.HasPrefix(copied, shown) || !strings.Contains(copied, "引用元: ") {
		t.Errorf("copied %q; want the answer %q and its sources", copied, shown)
	}
	// Regenerate replaces the answer in place, as its second version
	// (issue 21 item 3): 「< 2/2 >」, and 「<」 shows the first again.
	var before int
	p.eval(`document.querySelectorAll('#chat > li').length`, &before)
	p.do("regenerate the first answer", chromedp.Click(chromedp.CSS("#chat > li:first-child .actions .regenerate")))
	p.until("regenerated answer", fmt.Sprintf(`(() => { const li = document.querySelector('#chat > li:first-child');
		return document.querySelectorAll('#chat > li').length === %d
			&& li.querySelector('.question').textContent === '証跡保全の手順を教えてください' && li.dataset.done === 'true' && !!li.querySelector('.answer')
			&& (li.querySelector('.versions .count') || {}).textContent === '2/2'; })()`, before))
	p.do("previous version", chromedp.Click(chromedp.CSS("#chat > li:first-child .versions .prev")))
	var count string
	p.eval(`document.querySelector('#chat > li:first-child .versions .count').textContent`, &count)
	if count != "1/2" {
		t.Errorf("after 「<」 the versions read %q, want 1/2", count)
	}

	// Item 19: stop while the answer streams; the server sees the request end.
	gen.setMode("block")
	p.do("ask a question that streams forever",
		chromedp.SetValue(chromedp.CSS("#question"), qMalware),
		chromedp.Focus(chromedp.CSS("#question")),
		pressEnter(false),
	)
	p.until("first piece streamed and stop shown", `document.querySelector('#chat > li:last-child .streaming').textContent.length > 0 && !document.querySelector('#stop').hidden`)
	p.do("stop", chromedp.Click(chromedp.CSS("#stop")))
	select {
	case err := <-gen.cancelled:
		if err == nil {
			t.Error("generator not cancelled")
		}
	case <-p.ctx.Done():
		t.Fatal("the server did not see the browser stop the answer")
	}
	gen.setMode("")
	p.until("stopped exchange finished", `document.querySelector('#chat > li:last-child').dataset.status === 'stopped' && !document.querySelector('#send').hidden && document.querySelector('#stop').hidden`)

	// Item 19: the conversation survives a reload (the stopped exchange was
	// never answered and is not kept) and 会話をクリア ends it.
	var shownBefore, shownAfter []string
	p.eval(`Array.from(document.querySelectorAll('#chat > li:not([data-status=stopped]) .question'), q => q.textContent)`, &shownBefore)
	p.do("reload", chromedp.Reload())
	p.until("page reloaded", `document.readyState === 'complete' && document.documentElement.dataset.ready === 'true'`)
	p.eval(`Array.from(document.querySelectorAll('#chat > li .question'), q => q.textContent)`, &shownAfter)
	// The page had trimmed the oldest answer to make room for the stopped
	// exchange; the server keeps the last five answered ones.
	missing := false
	for _, q := range shownBefore {
		missing = missing || !slices.Contains(shownAfter, q)
	}
	if len(shownAfter) > 5 || missing {
		t.Errorf("after reload the chat shows %q, want each of %q", shownAfter, shownBefore)
	}
	var buttons int
	p.eval(`document.querySelectorAll('#chat > li .actions .copy').length`, &buttons)
	if buttons != len(shownAfter) {
		t.Errorf("%d copy buttons for %d kept exchanges", buttons, len(shownAfter))
	}

	// Phone width (item 18): settings folded away behind a button, the
	// notice always in view, answers clear of the question box.
	p.do("phone viewport", chromedp.EmulateViewport(390, 844))
	var settingsShown, toggleShown bool
	p.eval(`!!document.querySelector('#settings').offsetParent`, &settingsShown)
	p.eval(`!!document.querySelector('#settings_toggle').offsetParent`, &toggleShown)
	if settingsShown || !toggleShown {
		t.Errorf("phone: settings shown %v, toggle shown %v; want the settings folded behind the toggle", settingsShown, toggleShown)
	}
	p.do("open settings", chromedp.Click(chromedp.CSS("#settings_toggle")))
	p.eval(`!!document.querySelector('#k').offsetParent`, &settingsShown)
	var expanded string
	p.eval(`document.querySelector('#settings_toggle').getAttribute('aria-expanded')`, &expanded)
	if !settingsShown || expanded != "true" {
		t.Errorf("phone: after the toggle settings shown %v, aria-expanded %s", settingsShown, expanded)
	}
	p.do("close settings", chromedp.Click(chromedp.CSS("#settings_toggle")))
	p.ask(qIsolate)
	clearOfBox("phone")
	p.eval(`window.scrollTo(0, document.documentElement.scrollHeight); true`, new(bool))
	var noticeVisible bool
	p.eval(`(() => { const n = document.querySelector('.notice'); const r = n.getBoundingClientRect();
		if (r.top < 0 || r.bottom > window.innerHeight || r.height === 0) return false;
		const e = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); return !!e && n.contains(e); })()`, &noticeVisible)
	if !noticeVisible {
		t.Error("phone: the confidentiality notice scrolled out of view")
	}

	// 会話をクリア forgets the conversation on the server.
	p.do("open settings", chromedp.Click(chromedp.CSS("#settings_toggle")))
	// It asks first (issue 21 item 9): one click only arms it.
	p.do("clear", chromedp.Click(chromedp.CSS("#reset")))
	var armed string
	var kept int
	p.eval(`document.querySelector('#reset').textContent`, &armed)
	p.eval(`document.querySelectorAll('#chat > li').length`, &kept)
	if armed != "本当にクリアする" || kept == 0 {
		t.Errorf("one click on 会話をクリア: button %q, %d exchanges left; want it to ask first", armed, kept)
	}
	p.do("confirm clear", chromedp.Click(chromedp.CSS("#reset")))
	p.until("chat cleared", `document.querySelectorAll('#chat > li').length === 0`)
	p.do("reload", chromedp.Reload())
	p.until("page reloaded", `document.readyState === 'complete' && document.documentElement.dataset.ready === 'true'`)
	var left int
	p.eval(`document.querySelectorAll('#chat > li').length`, &left)
	if left != 0 {
		t.Errorf("%d exchanges back after 会話をクリア and a reload", left)
	}
}

// parseRGB reads a computed CSS colour "rgb(r, g, b)".
func parseRGB(t *testing.T, s string) [3]float64 {
	t.Helper()
	var c [3]float64
	if _, err := fmt.Sscanf(s, "rgb(%f, %f, %f)", &c[0], &c[1], &c[2]); err != nil {
		t.Fatalf("colour %q: %v", s, err)
	}
	return c
}

// contrast is the WCAG 2 contrast ratio of two sRGB colours.
func contrast(a, b [3]float64) float64 {
	lum := func(c [3]float64) float64 {
		var l [3]float64
		for i, v := range c {
			v /= 255
			if v <= 0.03928 {
				l[i] = v / 12.92
			} else {
				l[i] = math.Pow((v+0.055)/1.055, 2.4)
			}
		}
		return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
	}
	la, lb := lum(a), lum(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}
