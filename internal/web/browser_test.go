package web

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/guard"
	"github.com/shirube/shirube/internal/retrieve"
)

// updateScreenshot makes TestBrowser write docs/screenshot.png:
//
//	go test ./internal/web -run TestBrowser -update-screenshot
var updateScreenshot = flag.Bool("update-screenshot", false, "write ../../docs/screenshot.png from TestBrowser")

const chromiumPath = "/usr/bin/chromium"

// scriptDoc is a runbook that tries to run script in the reader's browser.
const scriptDoc = `# スクリプト検証手順

## 1. スクリプト検証の目的

スクリプト検証手順では、受信した添付ファイルのスクリプト検証を隔離環境で行う。<script>document.title='pwned';window.shirubePwned=true;</script>

## 2. スクリプト検証の手順

スクリプト検証は必ずサンドボックス端末で実施し、結果をチケットに記録する。<img src=x onerror="window.shirubePwned=true">
`

// TestBrowser drives the page in headless Chromium: notice, streamed
// answer with an opening citation, danger banner, k = 1, rebuild with a
// status update, a document with <script> that must not run, phone width
// and dark mode.
func TestBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skip("browser test skipped: " + chromiumPath + " not found — install Debian's chromium and fonts-noto-cjk (`make deps`)")
	}
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}

	// The server's data folder is ./data, as in a real set-up (and in the
	// screenshot): a copy of the demo corpus plus a document with <script>.
	work := t.TempDir()
	if err := copyTree(demoData, filepath.Join(work, "data")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "data", "runbooks", "script_check.md"), []byte(scriptDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	shotDir, err := filepath.Abs(filepath.Join("..", "..", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	const data = "./data"
	a, _ := analysis.New(analysis.DefaultOptions())
	f := newFixture(t, fixtureOptions{
		gen: streaming{extractive{answer.NewExtractive(a, answer.ExtractiveOptions{})}},
		configure: func(o *Options) {
			o.DataDir = data
			o.Rebuild = func(ctx context.Context, dir string, progress func(string, int, int)) (*retrieve.Searcher, error) {
				root := t.TempDir()
				if err := buildIndex(ctx, dir, filepath.Join(root, "db"), filepath.Join(root, "index"), progress); err != nil {
					return nil, err
				}
				return openSearcher(t, filepath.Join(root, "index")), nil
			}
		},
	})

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	defer cancelCtx()

	// The first call starts the browser and must not carry a timeout.
	if err := chromedp.Do(ctx, chromedp.Navigate(f.ts.URL)); err != nil {
		t.Fatalf("open page: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	shots := t.TempDir()

	eval := func(expr string, out any) {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		if err := json.Unmarshal(v, out); err != nil {
			t.Fatalf("evaluate %s: %v (%s)", expr, err, v)
		}
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// ask types q, presses Enter and waits for the answer to be rendered.
	ask := func(q string) {
		t.Helper()
		do("ask "+q,
			chromedp.SetValue(chromedp.CSS("#question"), q),
			chromedp.Focus(chromedp.CSS("#question")),
			pressEnter(false),
		)
		pred := fmt.Sprintf(`(() => { const li = document.querySelector('#chat > li:last-child');
			if (!li || li.querySelector('.question').textContent !== %s) return false;
			const err = li.querySelector('.error'); if (err) return 'error: ' + err.textContent;
			return li.dataset.done === 'true' ? 'done' : false; })()`, jq(q))
		got, err := chromedp.Run(ctx, chromedp.Poll[string](pred, chromedp.WithPollingTimeout(time.Minute)))
		if err != nil || got != "done" {
			t.Fatalf("answer to %s: %q %v", q, got, err)
		}
	}

	// Notice, defaults and the live vector weight.
	// The seed's notice, its ⚠️ drawn with CSS (no emoji font needed).
	var notice, title string
	var sign bool
	eval(`document.querySelector('.notice').textContent`, &notice)
	eval(`(() => { const i = document.querySelector('.notice > .ico-warn:first-child'); return !!i && i.offsetWidth > 0; })()`, &sign)
	eval(`document.title`, &title)
	if want := strings.TrimSpace(strings.TrimPrefix(guard.ConfidentialNotice, "⚠️")); notice != want || !sign || want == guard.ConfidentialNotice {
		t.Errorf("notice %q (warning sign drawn: %v); want the sign and %q", notice, sign, want)
	}
	var defaults []string
	eval(`['#data_folder_path','#k','#bm25_weight','#vector_out'].map(s => document.querySelector(s).value)`, &defaults)
	// A server that chooses the weight per question says so (「自動」)
	// until the slider moves (issue 21 item 7).
	if d := strings.Join(defaults, " "); d != data+" 4 0.6 0.40" && d != data+" 4 0.6 自動" {
		t.Errorf("sidebar defaults %q, want %s 4 0.6 and 0.40 or 自動", defaults, data)
	}
	var readOnly bool
	eval(`document.querySelector('#data_folder_path').readOnly`, &readOnly)
	if !readOnly {
		t.Error("the data folder can be typed in")
	}
	do("move the BM25 slider with the keyboard", chromedp.Focus(chromedp.CSS("#bm25_weight")), chromedp.SendKeys(chromedp.CSS("#bm25_weight"), kb.ArrowRight))
	var vec string
	eval(`document.querySelector('#vector_out').value`, &vec)
	if vec != "0.35" {
		t.Errorf("vector weight after ArrowRight = %s, want 0.35", vec)
	}
	do("reset slider", chromedp.SendKeys(chromedp.CSS("#bm25_weight"), kb.ArrowLeft))

	// Shift+Enter is a new line, not a send.
	do("Shift+Enter",
		chromedp.SetValue(chromedp.CSS("#question"), "一行目"),
		chromedp.Focus(chromedp.CSS("#question")),
		pressEnter(true),
	)
	var draft string
	var exchanges int
	eval(`document.querySelector('#question').value`, &draft)
	eval(`document.querySelectorAll('#chat > li').length`, &exchanges)
	if draft != "一行目\n" || exchanges != 0 {
		t.Errorf("Shift+Enter: text %q, %d exchanges; want a new line and nothing sent", draft, exchanges)
	}

	// Count the streamed updates of the answer text.
	var ok bool
	eval(`window.__deltas = 0; new MutationObserver(ms => { for (const m of ms) if (m.target.closest && m.target.closest('.streaming')) window.__deltas++; })
		.observe(document.querySelector('#chat'), {subtree: true, childList: true, characterData: true}); true`, &ok)

	// A question from the demo corpus: streamed answer (the isolation
	// steps), citations that open.
	ask(qIsolate)
	eval(`document.querySelector('#question').value`, &draft)
	if draft != "" {
		t.Errorf("question box holds %q after Enter sent it", draft)
	}
	var deltas, nCites int
	eval(`window.__deltas`, &deltas)
	eval(`document.querySelectorAll('#chat > li:last-child details.citation').length`, &nCites)
	// Deltas arriving within one frame are drawn together (on a local
	// server that may be all of them); TestBrowserStreaming holds the
	// stream piece by piece.
	if deltas < 1 {
		t.Errorf("answer text updated %d times; not streamed", deltas)
	}
	if nCites == 0 {
		t.Fatal("no citations")
	}
	var focused string
	eval(`document.activeElement.id`, &focused)
	if focused != "question" {
		t.Errorf("focus after answering is on %q, want the question box", focused)
	}
	do("open a citation", chromedp.Click(chromedp.CSS("#chat > li:last-child details.citation summary")))
	var open bool
	var summary, excerpt string
	eval(`document.querySelector('#chat > li:last-child details.citation').open`, &open)
	eval(`document.querySelector('#chat > li:last-child details.citation summary').textContent`, &summary)
	eval(`document.querySelector('#chat > li:last-child details.citation .excerpt').innerText`, &excerpt)
	if !open || !strings.HasPrefix(summary, "引用元: ") || !strings.Contains(summary, "(スコア: ") {
		t.Errorf("citation open=%v summary %q", open, summary)
	}
	if n := len([]rune(excerpt)); n == 0 || n > answer.MaxExcerptRunes {
		t.Errorf("excerpt of %d runes", n)
	}
	var verified string
	eval(`(document.querySelector('#chat > li:last-child .answer .verified') || {}).textContent || ''`, &verified)
	if !strings.HasPrefix(verified, "根拠確認: ") {
		t.Errorf("claim check line %q, want 根拠確認: …", verified)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	writeShot(t, filepath.Join(shots, "answer.png"), png)
	if *updateScreenshot {
		writeShot(t, filepath.Join(shotDir, "screenshot.png"), png)
	}

	// A dangerous operation: red banner at the top of the answer.
	ask(qDelete)
	var banner struct {
		Text  string `json:"text"`
		Color string `json:"color"`
		First bool   `json:"first"`
	}
	eval(`(() => { const b = document.querySelector('#chat > li:last-child .answer .banner');
		return b ? {text: b.textContent, color: getComputedStyle(b).backgroundColor, first: b === b.parentElement.firstElementChild} : {}; })()`, &banner)
	var r, g, b int
	fmt.Sscanf(banner.Color, "rgb(%d, %d, %d)", &r, &g, &b)
	if banner.Text != strings.TrimPrefix(guard.Banner, "⚠️ ") || !banner.First || r < 150 || g > 90 || b > 90 {
		t.Errorf("banner %+v, want a red %q first in the answer", banner, guard.Banner)
	}

	// k = 1 in the sidebar: exactly one citation.
	do("set k", chromedp.SetValue(chromedp.CSS("#k"), "1"))
	ask("マルウェア感染端末の隔離手順を教えてください")
	eval(`document.querySelectorAll('#chat > li:last-child details.citation').length`, &nCites)
	if nCites != 1 {
		t.Errorf("%d citations with k=1", nCites)
	}

	// A page edited to name another folder (one with a secret) is refused
	// (issue 12 item 1).
	secret := t.TempDir()
	if err := os.WriteFile(filepath.Join(secret, "secret.md"), []byte("# 秘密\n\n社外秘の情報。\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	do("rebuild from a forged folder",
		chromedp.SetValue(chromedp.CSS("#data_folder_path"), secret),
		chromedp.Click(chromedp.CSS("#rebuild")),
	)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('#index_status').textContent.includes('再構築できません')`,
		chromedp.WithPollingTimeout(time.Minute))); err != nil {
		var now string
		eval(`document.querySelector('#index_status').textContent`, &now)
		t.Fatalf("forged folder not refused: %v (status %q)", err, now)
	}

	// Rebuild from the server's folder, which holds a document with <script>.
	var before string
	eval(`document.querySelector('#index_status').textContent`, &before)
	do("rebuild",
		chromedp.SetValue(chromedp.CSS("#data_folder_path"), data),
		chromedp.Click(chromedp.CSS("#rebuild")),
	)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('#index_status').textContent.includes('再構築が完了しました')`,
		chromedp.WithPollingTimeout(2*time.Minute))); err != nil {
		var now string
		eval(`document.querySelector('#index_status').textContent`, &now)
		t.Fatalf("rebuild did not complete: %v (status %q)", err, now)
	}
	var after string
	eval(`document.querySelector('#index_status').textContent`, &after)
	if after == before || !strings.Contains(after, "チャンク数") {
		t.Errorf("status did not change after rebuild: %q → %q", before, after)
	}

	// The document's <script> and onerror must not run.
	do("k back to 4", chromedp.SetValue(chromedp.CSS("#k"), "4"))
	ask("スクリプト検証の手順を教えてください")
	var answerText, nowTitle, pwned string
	eval(`document.querySelector('#chat > li:last-child .reply').innerText`, &answerText)
	eval(`document.title`, &nowTitle)
	eval(`typeof window.shirubePwned`, &pwned)
	if !strings.Contains(answerText, "スクリプト検証") {
		t.Errorf("answer does not come from the script document: %q", answerText)
	}
	if nowTitle != title || pwned != "undefined" {
		t.Errorf("document script ran: title %q, shirubePwned %s", nowTitle, pwned)
	}
	var scripts int
	eval(`document.querySelectorAll('#chat script, #chat img').length`, &scripts)
	if scripts != 0 {
		t.Errorf("%d script/img elements in the chat", scripts)
	}

	// Phone width and dark mode.
	do("phone viewport and dark mode",
		chromedp.EmulateViewport(390, 844),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
			})
			return err
		}),
	)
	var cols int
	var bg string
	eval(`getComputedStyle(document.querySelector('.layout')).gridTemplateColumns.split(' ').length`, &cols)
	eval(`getComputedStyle(document.body).backgroundColor`, &bg)
	if cols != 1 {
		t.Errorf("%d columns at phone width, want 1", cols)
	}
	if bg != "rgb(22, 23, 26)" {
		t.Errorf("dark mode background %s", bg)
	}
	if png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		writeShot(t, filepath.Join(shots, "phone-dark.png"), png)
	}
	t.Logf("screenshots in %s", shots)
}

// pressEnter sends Enter (with Shift when shift is set) as one key event
// with text, as a keyboard does: the page's keydown handler can cancel the
// new line.
func pressEnter(shift bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		var mod int64
		if shift {
			mod = 8 // Shift in the protocol's modifier bit field
		}
		down := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: "Enter", Code: "Enter",
			WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13, Text: "\r", UnmodifiedText: "\r", Modifiers: mod}
		if _, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, down); err != nil {
			return err
		}
		up := down
		up.Type, up.Text, up.UnmodifiedText = input.DispatchKeyEventTypeKeyUp, "", ""
		_, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, up)
		return err
	})
}

func writeShot(t *testing.T, path string, png []byte) {
	t.Helper()
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("save screenshot: %v", err)
	}
}

// copyTree copies the regular files under src into dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
}
