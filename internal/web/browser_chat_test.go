package web

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/feedback"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/llmtest"
	"github.com/shirube/shirube/internal/retrieve"
)

// gated streams an answer in pieces of 12 characters, each only when the
// test lets it through the gate (one receive per piece; closing the gate
// lets everything through). text, when set, replaces the extractive text
// (the evidence stays the extractive generator's).
type gated struct {
	extractive
	gate chan struct{}
	text string
}

func (g gated) GenerateStream(ctx context.Context, q string, rs []retrieve.Result, h []llm.Message, on func(string)) (answer.Answer, error) {
	a, err := g.Generate(ctx, q, rs, h)
	if err != nil {
		return a, err
	}
	if g.text != "" {
		a.Text = g.text
	}
	full := a.Text
	a.Text = ""
	for rest := full; rest != ""; {
		i, n := 0, 0
		for i < len(rest) && n < 12 {
			_, size := utf8.DecodeRuneInString(rest[i:])
			i += size
			n++
		}
		select {
		case <-g.gate:
		case <-ctx.Done():
			return a, ctx.Err()
		}
		on(rest[:i])
		a.Text += rest[:i]
		rest = rest[i:]
	}
	return a, nil
}

// ready waits for the page's script to have started (conversations and
// role looked up).
func (p *bpage) ready() {
	p.t.Helper()
	p.until("page ready", `document.documentElement.dataset.ready === 'true'`)
}

// send types q and presses Enter without waiting for the answer.
func (p *bpage) send(q string) {
	p.t.Helper()
	var ok bool
	p.eval(fmt.Sprintf(`(() => { const b = document.querySelector('#question'); b.value = %s; b.focus(); return true; })()`, jq(q)), &ok)
	p.do("send "+q, pressEnter(false))
}

// waitDone waits for the last exchange to be finished, however it ended.
func (p *bpage) waitDone() {
	p.t.Helper()
	p.until("the exchange ends", `(() => { const li = document.querySelector('#chat > li:last-child'); return !!li && li.dataset.done === 'true'; })()`)
}

// longAnswer is a Markdown answer long enough to stream past a phone
// screen: a heading, a list, a table and a code block.
var longAnswer = func() string {
	var b strings.Builder
	b.WriteString("## ログの削除手順\n\n削除の前に承認を得てください [1]\n\n")
	for i := 1; i <= 14; i++ {
		fmt.Fprintf(&b, "%d. 手順 %d: 対象のログファイルを確認し、保存期間を過ぎたものだけを選びます [1]\n", i, i)
	}
	b.WriteString("\n| 項目 | 内容 |\n|---|---|\n| 保存期間 | 90 日 |\n| 承認者 | 情報システム部 |\n\n")
	b.WriteString("```sh\nfind /var/log/app -mtime +90 -delete\n```\n\n以上です [1]\n")
	return b.String()
}()

// TestBrowserStreaming: the danger banner is in the DOM before the first
// answer token; streamed Markdown is rendered as elements while it
// streams (no raw text at the end); the view follows the newest text and
// keeps the question in view; scrolling up stops following and shows
// 「最新へ移動」, which brings the view back.
func TestBrowserStreaming(t *testing.T) {
	skipWithoutBrowser(t)
	gate := make(chan struct{})
	f := newFixture(t, fixtureOptions{gen: gated{extractive: newExtractive(t), gate: gate, text: longAnswer}})
	p := newBrowser(t, f.ts.URL, 390, 844)
	p.ready()

	p.send(qDelete)
	p.until("danger banner", `!!document.querySelector('#chat > li:last-child .banner')`)
	var state struct {
		Text  string `json:"text"`
		First bool   `json:"first"`
		Role  string `json:"role"`
	}
	p.eval(`(() => { const li = document.querySelector('#chat > li:last-child'); const b = li.querySelector('.banner');
		return {text: li.querySelector('.streaming .body').textContent, first: b === b.parentElement.firstElementChild, role: b.getAttribute('role')}; })()`, &state)
	if state.Text != "" || !state.First || state.Role != "alert" {
		t.Fatalf("when the banner arrived: answer text %q, banner first %v, role %q; want no token yet, the banner first, an alert", state.Text, state.First, state.Role)
	}

	// Let the answer through to past the list: Markdown is elements, not
	// raw text, while it streams.
	for range 40 {
		gate <- struct{}{}
	}
	p.until("list streamed", `document.querySelectorAll('#chat > li:last-child .streaming .body ol > li').length >= 3`)
	var raw bool
	p.eval(`document.querySelector('#chat > li:last-child .streaming .body').textContent.includes('##')`, &raw)
	if raw {
		t.Error("the streamed heading is shown as raw Markdown")
	}
	var view struct {
		QTop, QBottom, ReplyBottom, Limit, Header float64
	}
	readView := func() {
		p.eval(`(() => { const li = document.querySelector('#chat > li:last-child'); const q = li.querySelector('.question').getBoundingClientRect();
			const r = li.querySelector('.reply').getBoundingClientRect();
			return {QTop: q.top, QBottom: q.bottom, ReplyBottom: r.bottom, Limit: innerHeight - document.querySelector('#ask').offsetHeight,
				Header: document.querySelector('header.top').getBoundingClientRect().bottom}; })()`, &view)
	}
	readView()
	if view.ReplyBottom > view.Limit+1 || view.QTop < view.Header-1 || view.QBottom > view.Limit {
		t.Errorf("while streaming: question at %.0f–%.0f, newest text ends at %.0f; want both between the header (%.0f) and the question box (%.0f)",
			view.QTop, view.QBottom, view.ReplyBottom, view.Header, view.Limit)
	}

	// The reader scrolls up: the view stays, 「最新へ移動」 appears.
	var y0, y1 float64
	p.eval(`window.scrollBy(0, -300); window.scrollY`, &y0)
	p.until("jump button", `!document.querySelector('#jump').hidden`)
	for range 10 {
		gate <- struct{}{}
	}
	p.until("more text", `document.querySelector('#chat > li:last-child .streaming .body').textContent.includes('手順 12')`)
	p.eval(`window.scrollY`, &y1)
	if y1 != y0 {
		t.Errorf("the view moved from %.0f to %.0f after the reader scrolled up", y0, y1)
	}
	p.do("jump to latest", chromedp.Click(chromedp.CSS("#jump")))
	readView()
	if view.ReplyBottom > view.Limit+1 {
		t.Errorf("after 最新へ移動 the newest text ends at %.0f, below the question box at %.0f", view.ReplyBottom, view.Limit)
	}

	close(gate)
	p.waitDone()
	var final struct {
		Table, Header, Code, Banner int
		Copy                        bool
		Status                      string
	}
	p.eval(`(() => { const li = document.querySelector('#chat > li:last-child');
		return {Table: li.querySelectorAll('.answer .body table').length, Header: li.querySelectorAll('.answer .body table thead th').length,
			Code: li.querySelectorAll('.answer .body .code pre').length, Banner: li.querySelectorAll('.banner').length,
			Copy: !!li.querySelector('.code .copy-code'), Status: li.dataset.status}; })()`, &final)
	if final.Table != 1 || final.Header != 2 || final.Code != 1 || !final.Copy || final.Banner != 1 || final.Status != "complete" {
		t.Errorf("final answer %+v; want one table with a 2-cell header, one code block with a copy button, one banner, complete", final)
	}
}

// TestBrowserServerDies: killing the server mid-stream keeps the partial
// answer (marked incomplete, with copy and regenerate) and the question,
// and offers 再試行, which answers once the server is back.
func TestBrowserServerDies(t *testing.T) {
	skipWithoutBrowser(t)
	gate := make(chan struct{})
	f := newFixture(t, fixtureOptions{gen: gated{extractive: newExtractive(t), gate: gate}})
	p := newBrowser(t, f.ts.URL, 1280, 900)
	p.ready()

	p.send(qIsolate)
	gate <- struct{}{}
	gate <- struct{}{}
	p.until("partial answer", `document.querySelector('#chat > li:last-child .streaming .body').textContent.length >= 20`)
	var partial string
	p.eval(`document.querySelector('#chat > li:last-child .streaming .body').textContent`, &partial)
	f.ts.CloseClientConnections()
	p.waitDone()

	var got struct {
		Answer, Input, Status, Line string
		Copy, Regenerate, Retry     bool
	}
	p.eval(`(() => { const li = document.querySelector('#chat > li:last-child');
		return {Answer: li.querySelector('.answer .body').textContent, Input: document.querySelector('#question').value, Status: li.dataset.status,
			Line: (li.querySelector('.status-line') || {}).textContent || '',
			Copy: !!li.querySelector('.actions .copy'), Regenerate: !!li.querySelector('.actions .regenerate'), Retry: !!li.querySelector('.actions .retry')}; })()`, &got)
	if got.Answer != partial || got.Input != qIsolate || got.Status != "incomplete" || !strings.Contains(got.Line, "途中") ||
		!got.Copy || !got.Regenerate || !got.Retry {
		t.Fatalf("after the server died: %+v; want the partial answer %q kept and marked, the question back in the box, copy, regenerate and 再試行", got, partial)
	}

	// The server is back (new connections are accepted): 再試行 answers in place.
	close(gate)
	p.do("retry", chromedp.Click(chromedp.CSS("#chat > li:last-child .actions .retry")))
	p.waitDone()
	var after struct {
		N             int
		Status, Input string
		Citations     int
	}
	p.eval(`(() => { const li = document.querySelector('#chat > li:last-child');
		return {N: document.querySelectorAll('#chat > li').length, Status: li.dataset.status, Input: document.querySelector('#question').value,
			Citations: li.querySelectorAll('details.citation').length}; })()`, &after)
	if after.N != 1 || after.Status != "complete" || after.Citations == 0 || after.Input != "" {
		t.Errorf("after 再試行: %+v; want the one exchange answered in place with citations and the box emptied", after)
	}
}

func newExtractive(t testing.TB) extractive {
	t.Helper()
	a, err := analysis.New(analysis.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return extractive{answer.NewExtractive(a, answer.ExtractiveOptions{})}
}

// TestBrowserCitations: [n] in an answer are chips; focusing one shows a
// card with the source's name and the quoted passage; clicking it opens
// the viewer with the passage highlighted and scrolled into view.
func TestBrowserCitations(t *testing.T) {
	skipWithoutBrowser(t)
	f := newFixture(t, fixtureOptions{})
	p := newBrowser(t, f.ts.URL, 1280, 900)
	p.ready()

	p.ask(qIsolate)
	var chips int
	p.eval(`document.querySelectorAll('#chat > li:last-child .answer .body .cite').length`, &chips)
	if chips == 0 {
		t.Fatal("no [n] chips in the answer")
	}
	card := p.focusChip("focus a chip")
	if !card.Shown || card.Title == "" || len([]rune(card.Excerpt)) < 10 || card.Described != "cite_card" {
		t.Errorf("card on focus: %+v; want the source and the passage", card)
	}

	hit := p.openChip("open the source")
	var excerpt string
	p.eval(fmt.Sprintf(`document.querySelector('#chat > li:last-child').cites.get(%d).excerpt`, hit.N), &excerpt)
	start := string([]rune(strings.TrimSuffix(excerpt, "..."))[:10])
	if !hit.InView || !strings.Contains(strings.Join(strings.Fields(hit.Text), " "), start) || hit.Title == "" {
		t.Errorf("viewer: %+v; want the cited passage (%q…) highlighted and in view, under the source's name", hit, start)
	}
	p.do("close with Escape", chromedp.KeyEvent(kb.Escape))
	var open bool
	p.eval(`document.querySelector('#viewer').open`, &open)
	if open {
		t.Error("Escape did not close the viewer")
	}

	// After a reload the server renders the conversation (the tab's
	// address names it): its chips carry the chunk ids and open the
	// viewer at the passage as the streamed ones did.
	var url string
	p.eval(`location.href`, &url)
	if !strings.Contains(url, "?c=c_") {
		t.Errorf("the tab's address %s does not name its conversation", url)
	}
	p.do("reload", chromedp.Reload())
	p.ready()
	var served struct {
		Rendered string
		Chips    int
		Chunks   []string
	}
	p.eval(`(() => { const li = document.querySelector('#chat > li:last-child');
		return {Rendered: li.dataset.rendered || '', Chips: li.querySelectorAll('.answer .body .cite').length,
			Chunks: Array.from(li.querySelectorAll('.answer .body .cite'), c => c.dataset.chunk || '')}; })()`, &served)
	if served.Rendered != "server" || served.Chips != chips || slices.Contains(served.Chunks, "") {
		t.Fatalf("after the reload: %+v; want the exchange rendered by the server with its %d chips, each with data-chunk", served, chips)
	}
	var html string
	p.fetchText("/?c="+url[strings.Index(url, "?c=")+3:], &html)
	if !strings.Contains(html, `class="cite" data-n="1" data-chunk="`+served.Chunks[0]+`"`) {
		t.Errorf("the page as the server sends it has no chip with data-chunk %q", served.Chunks[0])
	}
	card = p.focusChip("focus a reloaded chip")
	if !card.Shown || card.Title == "" || len([]rune(card.Excerpt)) < 10 {
		t.Errorf("card on a reloaded chip: %+v; want the source and the passage", card)
	}
	again := p.openChip("open the source from the reloaded chip")
	if !again.InView || !strings.Contains(strings.Join(strings.Fields(again.Text), " "), start) || again.Title != hit.Title {
		t.Errorf("viewer from the reloaded chip: %+v; want the passage (%q…) highlighted and in view under %q", again, start, hit.Title)
	}
}

// TestBrowserCitationsStoredWithoutChips: a conversation stored by a
// server from before the citation chips (its answer HTML has the [n]
// markers as plain text and sources without data-chunk) is shown after a
// reload with [n] chips that work: the script makes the chips, takes the
// chunk ids from the stored citations (GET /api/conversations/{id}), and
// a chip shows its card and opens the viewer at the passage.
func TestBrowserCitationsStoredWithoutChips(t *testing.T) {
	skipWithoutBrowser(t)
	f := newFixture(t, fixtureOptions{})
	p := newBrowser(t, f.ts.URL, 1280, 900)
	p.ready()
	p.ask(qIsolate)
	var chips int
	p.eval(`document.querySelectorAll('#chat > li:last-child .answer .body .cite').length`, &chips)
	if chips == 0 {
		t.Fatal("no [n] chips in the answer")
	}
	var url string
	p.eval(`location.href`, &url)
	_, conv, ok := strings.Cut(url, "?c=")
	if !ok {
		t.Fatalf("the tab's address %s does not name its conversation", url)
	}

	// Turn the stored answer back into what the server stored before the
	// chips: plain [n] markers, sources without data-* attributes.
	res, err := chromedp.Call(p.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{f.ts.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	var user string
	for _, c := range res.Cookies {
		if c.Name == sessionCookie {
			user = c.Value
		}
	}
	chipTag := regexp.MustCompile(`<button type="button" class="cite" data-n="(\d+)"[^>]*>\d+</button>`)
	sourceTag := regexp.MustCompile(`<details class="citation"[^>]*>`)
	var stored Version
	_, err = f.srv.convs.update(user, conv, func(c *Conversation) error {
		x := &c.Exchanges[len(c.Exchanges)-1]
		v := &x.Versions[x.Current]
		v.HTML = chipTag.ReplaceAllString(v.HTML, "[$1]")
		v.HTML = sourceTag.ReplaceAllString(v.HTML, `<details class="citation">`)
		stored = *v
		return nil
	})
	if err != nil {
		t.Fatalf("rewrite the stored conversation: %v", err)
	}
	if strings.Contains(stored.HTML, `class="cite"`) || strings.Contains(stored.HTML, "data-chunk") || !regexp.MustCompile(`\[\d+\]`).MatchString(stored.HTML) {
		t.Fatalf("stored HTML still has chips or lost its markers: %s", stored.HTML)
	}
	if len(stored.Citations) == 0 || stored.Citations[0].ChunkID == "" {
		t.Fatalf("stored citations without chunk ids: %+v", stored.Citations)
	}
	var html string
	p.fetchText("/?c="+conv, &html)
	if strings.Contains(html, `class="cite"`) {
		t.Fatal("the server sends chips for the old answer: the script's fill path is not tested")
	}

	p.do("reload", chromedp.Reload())
	p.ready()
	var shown struct {
		Rendered string
		Chips    int
		Text     string
		Chunks   []string
	}
	p.eval(`(() => { const li = document.querySelector('#chat > li:last-child');
		return {Rendered: li.dataset.rendered || '', Chips: li.querySelectorAll('.answer .body .cite').length,
			Text: li.querySelector('.answer .body').textContent,
			Chunks: Array.from(li.cites ? li.cites.values() : [], c => c.chunk)}; })()`, &shown)
	if shown.Rendered != "server" || shown.Chips != chips || regexp.MustCompile(`\[\d+\]`).MatchString(shown.Text) {
		t.Fatalf("after the reload: %+v; want the stored answer with its %d markers turned into chips", shown, chips)
	}
	if len(shown.Chunks) != len(stored.Citations) || slices.Contains(shown.Chunks, "") {
		t.Errorf("chips' citations %v; want the chunk ids of the %d stored citations", shown.Chunks, len(stored.Citations))
	}

	// Headless Chromium sends focus events only to a page that has had
	// input since it loaded: a click first, as a person's would be.
	p.do("click the heading", chromedp.Click(chromedp.CSS("header h1")))
	card := p.focusChip("focus a chip")
	if !card.Shown || card.Title == "" || len([]rune(card.Excerpt)) < 10 {
		t.Errorf("card on a filled chip: %+v; want the source and the passage", card)
	}
	hit := p.openChip("open the source")
	var cited Citation
	for _, c := range stored.Citations {
		if c.N == hit.N {
			cited = c
		}
	}
	start := string([]rune(strings.TrimSuffix(cited.Excerpt, "..."))[:10])
	if !hit.InView || !strings.Contains(strings.Join(strings.Fields(hit.Text), " "), start) || hit.Title == "" {
		t.Errorf("viewer from a filled chip: %+v; want citation %d's passage (%q…) highlighted and in view", hit, hit.N, start)
	}
}

// TestBrowserEdit: 編集 on a sent question (not the last one) sends the
// edited question in place of the exchange — its new answer streams into
// the same exchange, nothing is appended —, the old question and answer
// stay reachable as version 1/2, and a reload shows the edited state with
// both versions.
func TestBrowserEdit(t *testing.T) {
	skipWithoutBrowser(t)
	gate := make(chan struct{})
	f := newFixture(t, fixtureOptions{gen: gated{extractive: newExtractive(t), gate: gate}})
	p := newBrowser(t, f.ts.URL, 1280, 900)
	p.ready()

	// The first two answers go through ungated.
	feeding, fed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(fed)
		for {
			select {
			case gate <- struct{}{}:
			case <-feeding:
				return
			}
		}
	}()
	const qOld, qNew = qIsolate, "VPN に接続できないときの確認事項は？"
	p.ask(qOld)
	p.ask(qDelete)
	close(feeding)
	<-fed // from here on the test alone lets pieces through
	type shown struct {
		N                int
		Question, Answer string
		Count            string
		Status           string
	}
	first := func() shown {
		var s shown
		p.eval(`(() => { const li = document.querySelector('#chat > li:first-child');
			return {N: document.querySelectorAll('#chat > li').length, Question: li.querySelector('.question').textContent,
				Answer: (li.querySelector('.answer .body') || {}).textContent || '', Count: (li.querySelector('.versions .count') || {}).textContent || '',
				Status: li.dataset.status || ''}; })()`, &s)
		return s
	}
	before := first()
	var xid string
	p.eval(`document.querySelector('#chat > li:first-child').dataset.id`, &xid)

	p.do("edit", chromedp.Click(chromedp.CSS("#chat > li:first-child .msg.user .edit")))
	p.until("edit box", `!!document.querySelector('#chat > li:first-child .edit-form textarea')`)
	var ok bool
	p.eval(fmt.Sprintf(`(() => { const f = document.querySelector('#chat > li:first-child .edit-form'); f.querySelector('textarea').value = %s; f.requestSubmit(); return true; })()`, jq(qNew)), &ok)
	// The new answer streams into the edited exchange.
	gate <- struct{}{}
	p.until("the new answer streams in place", `(() => { const li = document.querySelector('#chat > li:first-child');
		const s = li.querySelector('.streaming .body'); return !!s && s.textContent.length > 0; })()`)
	var streaming shown
	p.eval(`(() => { const li = document.querySelector('#chat > li:first-child');
		return {N: document.querySelectorAll('#chat > li').length, Question: li.querySelector('.question').textContent, Status: li.dataset.status}; })()`, &streaming)
	if streaming.N != 2 || streaming.Question != qNew || streaming.Status != "streaming" {
		t.Errorf("while the edited question is answered: %+v; want 2 exchanges, the first streaming the answer to %q", streaming, qNew)
	}
	close(gate)
	p.until("edited answer done", `document.querySelector('#chat > li:first-child').dataset.done === 'true'`)
	after := first()
	var id string
	p.eval(`document.querySelector('#chat > li:first-child').dataset.id`, &id)
	if after.N != 2 || after.Question != qNew || after.Count != "2/2" || after.Status != "complete" || after.Answer == before.Answer || id != xid {
		t.Fatalf("after the edit: %+v (exchange %s); want the same exchange %s in place, 2 exchanges, version 2/2 answering %q with a new answer", after, id, xid, qNew)
	}

	// The old version is one click back.
	p.do("previous version", chromedp.Click(chromedp.CSS("#chat > li:first-child .versions .prev")))
	if old := first(); old.Question != qOld || old.Answer != before.Answer || old.Count != "1/2" {
		t.Errorf("version 1: %+v; want the old question %q and its answer", old, qOld)
	}
	p.do("back to the edit", chromedp.Click(chromedp.CSS("#chat > li:first-child .versions .next")))

	// What the server stored: the exchange has both versions, the edit current.
	var convID string
	p.eval(`sessionStorage.getItem('shirube.conv')`, &convID)
	var c Conversation
	p.fetchJSON("/api/conversations/"+convID, &c)
	if len(c.Exchanges) != 2 || c.Exchanges[0].ID != xid || len(c.Exchanges[0].Versions) != 2 || c.Exchanges[0].Current != 1 ||
		c.Exchanges[0].Versions[0].Question != qOld || c.Exchanges[0].Versions[1].Question != qNew {
		t.Errorf("stored conversation: %d exchanges, first %+v", len(c.Exchanges), c.Exchanges[0])
	}

	// A reload shows the edited state, with the versions.
	p.do("reload", chromedp.Reload())
	p.ready()
	p.until("versions after the reload", `!!document.querySelector('#chat > li:first-child .versions .count')`)
	reloaded := first()
	var rendered string
	p.eval(`document.querySelector('#chat > li:first-child').dataset.rendered || ''`, &rendered)
	if reloaded.N != 2 || reloaded.Question != qNew || reloaded.Answer != after.Answer || reloaded.Count != "2/2" || rendered != "server" {
		t.Errorf("after the reload: %+v (rendered by %q); want the edited exchange as version 2/2, rendered by the server", reloaded, rendered)
	}
	p.do("previous version after the reload", chromedp.Click(chromedp.CSS("#chat > li:first-child .versions .prev")))
	if old := first(); old.Question != qOld || old.Answer != before.Answer || old.Count != "1/2" {
		t.Errorf("version 1 after the reload: %+v; want the old question %q and its answer", old, qOld)
	}
}

// TestBrowserModelTable: a model's Markdown table keeps its header row
// (and stays a table) after the claim check removes an invented row; the
// page shows it with borders.
func TestBrowserModelTable(t *testing.T) {
	skipWithoutBrowser(t)
	const invented = "端末はメーカーへ修理に出し代替機をリースで手配する"
	var kept string
	fake := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
		// Row 1 quotes the first sentence of evidence 1 word for word.
		ev := r.User[strings.Index(r.User, `<evidence n="1"`):]
		ev = ev[strings.Index(ev, ">\n")+2:]
		for _, line := range strings.Split(ev, "\n") {
			line = strings.TrimSpace(strings.TrimLeft(line, "#-*0123456789. "))
			if utf8.RuneCountInString(line) >= 15 && !strings.ContainsAny(line, "|<>") {
				kept, _, _ = strings.Cut(line, "。")
				break
			}
		}
		return llmtest.Reply{Text: "| 手順 | 内容 |\n|---|---|\n| 1 | " + kept + " [1] |\n| 2 | " + invented + " [1] |\n"}
	})
	f := llmServer(t, fake, false, t.TempDir(), nil)
	p := newBrowser(t, f.ts.URL, 1280, 900)
	p.ready()
	p.ask("バックアップからの復旧手順は？")
	var got struct {
		Head, Rows     []string
		Body, Unknowns string
		Border         string
	}
	p.eval(`(() => { const li = document.querySelector('#chat > li:last-child'); const b = li.querySelector('.answer .body');
		const td = b.querySelector('td');
		return {Head: Array.from(b.querySelectorAll('table thead th'), x => x.textContent.trim()),
			Rows: Array.from(b.querySelectorAll('table tbody tr'), x => x.textContent.trim()), Body: b.innerText,
			Unknowns: (li.querySelector('.unknowns') || {}).textContent || '', Border: td ? getComputedStyle(td).borderTopStyle : ''}; })()`, &got)
	if strings.Join(got.Head, "|") != "手順|内容" || len(got.Rows) != 1 || !strings.Contains(got.Rows[0], kept) || strings.Contains(got.Body, "|") || got.Border != "solid" {
		t.Errorf("table after the claim check: %+v; want the header 手順|内容, the supported row only, no raw |, bordered cells", got)
	}
	if strings.Contains(got.Body, invented) || !strings.Contains(got.Unknowns, invented) {
		t.Errorf("the invented row: body %q, unknowns %q; want it moved to the unknowns", got.Body, got.Unknowns)
	}
}

// TestBrowserTwoTabs: each tab has its own conversation — a follow-up in
// tab A goes to A's conversation, a reload shows each tab its own whole
// conversation — and the list renames, searches and deletes (after asking).
func TestBrowserTwoTabs(t *testing.T) {
	skipWithoutBrowser(t)
	f := newFixture(t, fixtureOptions{})
	a := newBrowser(t, f.ts.URL, 1280, 900)
	a.ready()
	bctx, cancel := chromedp.NewContext(a.ctx)
	t.Cleanup(cancel)
	if err := chromedp.Do(bctx, chromedp.Navigate(f.ts.URL)); err != nil {
		t.Fatal(err)
	}
	b := &bpage{t: t, ctx: bctx}
	b.ready()
	const listShown = `!document.querySelector('#convs').hidden`
	a.until("conversation list", listShown)
	b.until("conversation list", listShown)

	const qA, qB, qA2 = "マルウェア感染端末の隔離手順を教えてください", qDelete, "その報告先は？"
	a.ask(qA)
	b.ask(qB)
	a.ask(qA2)
	// The follow-up was searched as a stand-alone query made from A's
	// conversation (not B's): the page says what it searched.
	var searched string
	a.eval(`(document.querySelector('#chat > li:last-child .rewritten') || {}).textContent || ''`, &searched)
	if !strings.HasPrefix(searched, "検索した内容: ") || !strings.Contains(searched, "隔離") || strings.Contains(searched, "削除") {
		t.Errorf("under the follow-up: %q; want 「検索した内容: …」 about A's topic", searched)
	}
	var convA, convB string
	a.eval(`sessionStorage.getItem('shirube.conv')`, &convA)
	b.eval(`sessionStorage.getItem('shirube.conv')`, &convB)
	// What the server stored: the follow-up in A's conversation.
	stored := func(id string) []string {
		var c Conversation
		a.fetchJSON("/api/conversations/"+id, &c)
		var qs []string
		for _, x := range c.Exchanges {
			qs = append(qs, x.Versions[x.Current].Question)
		}
		return qs
	}
	if convA == "" || convA == convB {
		t.Fatalf("tab A in %q, tab B in %q; want two conversations", convA, convB)
	}
	if inA, inB := stored(convA), stored(convB); !slices.Equal(inA, []string{qA, qA2}) || !slices.Equal(inB, []string{qB}) {
		t.Fatalf("the server holds %q in A's conversation and %q in B's; want the follow-up in A's", inA, inB)
	}

	questions := func(p *bpage) []string {
		var qs []string
		p.eval(`Array.from(document.querySelectorAll('#chat > li .question'), q => q.textContent)`, &qs)
		return qs
	}
	a.do("reload A", chromedp.Reload())
	a.until("A's conversation back", `document.querySelectorAll('#chat > li').length === 2`)
	b.do("reload B", chromedp.Reload())
	b.until("B's conversation back", `document.querySelectorAll('#chat > li').length === 1`)
	if got := questions(a); !slices.Equal(got, []string{qA, qA2}) {
		t.Errorf("tab A after reload shows %q", got)
	}
	if got := questions(b); !slices.Equal(got, []string{qB}) {
		t.Errorf("tab B after reload shows %q", got)
	}
	var answers int
	a.eval(`document.querySelectorAll('#chat > li .answer .body').length`, &answers)
	if answers != 2 {
		t.Errorf("tab A shows %d answers after reload, want 2", answers)
	}

	// The list: A's conversation is the current one; rename it, find it,
	// delete B's after the confirmation.
	a.until("two conversations listed", `document.querySelectorAll('#conv_list li[data-id]').length === 2`)
	var current string
	a.eval(`document.querySelector('#conv_list [aria-current=true]').closest('li').dataset.id`, &current)
	if current != convA {
		t.Errorf("current conversation in the list %q, want %q", current, convA)
	}
	item := func(id string) string { return fmt.Sprintf(`#conv_list li[data-id=%q]`, id) }
	a.do("rename", chromedp.Click(chromedp.CSS(item(convA)+" .conv-rename")))
	var ok bool
	a.eval(`(() => { const f = document.querySelector('#conv_list .conv-edit'); f.querySelector('input').value = '隔離の相談'; f.requestSubmit(); return true; })()`, &ok)
	a.until("renamed", fmt.Sprintf(`(document.querySelector('%s .conv-open') || {}).textContent === '隔離の相談'`, item(convA)))
	a.eval(`(() => { const s = document.querySelector('#conv_search'); s.value = '隔離の'; s.dispatchEvent(new Event('input')); return true; })()`, &ok)
	a.until("search finds one", `document.querySelectorAll('#conv_list li[data-id]').length === 1`)
	a.eval(`(() => { const s = document.querySelector('#conv_search'); s.value = ''; s.dispatchEvent(new Event('input')); return true; })()`, &ok)
	a.until("both listed again", `document.querySelectorAll('#conv_list li[data-id]').length === 2`)
	a.do("delete B's", chromedp.Click(chromedp.CSS(item(convB)+" .conv-delete")))
	var asking string
	a.eval(fmt.Sprintf(`document.querySelector('%s').textContent`, item(convB)), &asking)
	if !strings.Contains(asking, "削除しますか") {
		t.Errorf("delete did not ask first: %q", asking)
	}
	a.do("confirm", chromedp.Click(chromedp.CSS(item(convB)+" .conv-delete-yes")))
	a.until("deleted", `document.querySelectorAll('#conv_list li[data-id]').length === 1`)
}

// TestBrowserFirstScreen: an employee (logged in with the team's token
// on a server that has an admin token) on a phone sees what the corpus
// holds and example questions, no retrieval settings, header and question
// box within a fifth of the screen, named lists; an example asks itself;
// 👎 with a comment is stored in the feedback log; the thumbs are drawn
// without an emoji font. Logged in again with the admin token, the same
// browser gets the settings.
func TestBrowserFirstScreen(t *testing.T) {
	skipWithoutBrowser(t)
	f := newFixture(t, fixtureOptions{configure: func(o *Options) { o.Token, o.AdminToken = testToken, testAdminToken }})
	p := newBrowser(t, f.ts.URL, 390, 844)
	p.login(testToken)
	p.ready()
	p.do("phone", chromedp.EmulateViewport(390, 844))
	var me MeResponse
	p.fetchJSON("/api/me", &me)
	if me.Role != RoleUser || me.Settings != nil {
		t.Fatalf("/api/me for the team's token: %+v; want a user without settings", me)
	}

	p.until("first screen", `!document.querySelector('#welcome').hidden && document.querySelectorAll('#examples .example').length >= 4`)
	var facts string
	p.eval(`document.querySelector('#corpus_facts').textContent`, &facts)
	if !regexp.MustCompile(`文書 \d+ 件・\d+ ページ・最終更新 \d{4}/`).MatchString(facts) {
		t.Errorf("corpus line %q", facts)
	}
	p.until("settings hidden for a user", `document.querySelector('.settings').hidden`)
	p.do("open the menu", chromedp.Click(chromedp.CSS("#settings_toggle")))
	var kShown bool
	p.eval(`!!document.querySelector('#k').offsetParent`, &kShown)
	if kShown {
		t.Error("a user sees the retrieval settings")
	}
	p.do("close the menu", chromedp.Click(chromedp.CSS("#settings_toggle")))
	var share float64
	p.eval(`(document.querySelector('header.top').offsetHeight + document.querySelector('#ask').offsetHeight) / innerHeight`, &share)
	if share > 0.2 {
		t.Errorf("header and question box take %.0f %% of a 390×844 screen, want ≤ 20 %%", share*100)
	}
	var unnamed []string
	p.eval(`['#chat', '#conv_list', '#examples'].filter(s => { const l = document.querySelector(s);
		return !(l.getAttribute('aria-label') || (l.getAttribute('aria-labelledby') && document.getElementById(l.getAttribute('aria-labelledby')).textContent.trim())); })`, &unnamed)
	if len(unnamed) > 0 {
		t.Errorf("lists without a name: %q", unnamed)
	}

	var example string
	p.eval(`document.querySelector('#examples .example').textContent`, &example)
	p.do("ask an example", chromedp.Click(chromedp.CSS("#examples .example")))
	p.waitDone()
	var asked string
	var welcome bool
	p.eval(`document.querySelector('#chat > li:last-child .question').textContent`, &asked)
	p.eval(`document.querySelector('#welcome').hidden`, &welcome)
	if asked != example || !welcome {
		t.Errorf("after the example: asked %q (want %q), first screen hidden %v", asked, example, welcome)
	}

	var thumbs struct {
		SVG   int
		Text  string
		Label string
	}
	p.eval(`(() => { const f = document.querySelector('#chat > li:last-child .feedback');
		return {SVG: f.querySelectorAll('button svg').length, Text: f.textContent, Label: f.querySelector('.down').getAttribute('aria-label')}; })()`, &thumbs)
	if thumbs.SVG != 2 || strings.TrimSpace(thumbs.Text) != "" || thumbs.Label == "" {
		t.Errorf("feedback buttons %+v; want two labelled SVG icons and no emoji text", thumbs)
	}
	p.do("thumbs down", chromedp.Click(chromedp.CSS("#chat > li:last-child .thumb.down")))
	p.until("comment box", `!!document.querySelector('#chat > li:last-child .fb-form input')`)
	var ok bool
	p.eval(`(() => { const f = document.querySelector('#chat > li:last-child .fb-form'); f.querySelector('input').value = '手順が古い'; f.requestSubmit(); return true; })()`, &ok)
	p.until("thanks", `!!document.querySelector('#chat > li:last-child .fb-done')`)
	var pressed, xid string
	p.eval(`document.querySelector('#chat > li:last-child .thumb.down').getAttribute('aria-pressed')`, &pressed)
	p.eval(`document.querySelector('#chat > li:last-child').dataset.id`, &xid)
	// Two ratings were posted (👎, then 👎 with the comment); the log keeps
	// both lines and reads back the last one of the answer.
	raw, err := os.ReadFile(f.srv.feedback.Path())
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := feedback.Read(f.srv.feedback.Path())
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(raw), "\n"); pressed != "true" || lines != 2 || len(recs) != 1 || recs[0].Rating != feedback.Down ||
		recs[0].Comment != "手順が古い" || recs[0].ExchangeID != xid || recs[0].Query != example {
		t.Errorf("feedback: pressed %s, %d lines logged, read back %+v; want 👎 then 👎 with the comment, stored with exchange %s", pressed, lines, recs, xid)
	}

	// The administrator's token makes the same browser an administrator.
	p.do("log out", chromedp.Click(chromedp.CSS("#logout")))
	p.login(testAdminToken)
	p.ready()
	p.fetchJSON("/api/me", &me)
	if me.Role != RoleAdmin || me.Settings == nil {
		t.Errorf("/api/me for the admin token: %+v; want an administrator with settings", me)
	}
	p.until("settings shown to an administrator", `!document.querySelector('.settings').hidden`)
}

// TestBrowserSettings: an administrator's sidebar says the weight is
// chosen per question until the slider moves, then shows it rounded; a k
// out of range is shown in the field and nothing is sent; a dangerous
// answer's banner is not an alert again after a reload.
func TestBrowserSettings(t *testing.T) {
	skipWithoutBrowser(t)
	f := newFixture(t, fixtureOptions{})
	p := newBrowser(t, f.ts.URL, 1280, 900)
	p.ready()
	p.until("automatic weight shown", `document.querySelector('#bm25_out').value.startsWith('自動')`)
	p.do("move the slider", chromedp.Focus(chromedp.CSS("#bm25_weight")), chromedp.KeyEvent(kb.ArrowRight))
	var out string
	p.eval(`document.querySelector('#bm25_out').value`, &out)
	if len(out) != 4 || !strings.HasPrefix(out, "0.") {
		t.Errorf("slider value shown as %q, want two decimals", out)
	}

	p.do("k out of range", chromedp.SetValue(chromedp.CSS("#k"), "50"))
	var ok bool
	p.eval(`document.querySelector('#k').dispatchEvent(new Event('input')); true`, &ok)
	p.send(qIsolate)
	var k struct {
		Invalid, Msg string
		Shown        bool
		Sent         int
	}
	p.eval(`({Invalid: document.querySelector('#k').getAttribute('aria-invalid'), Msg: document.querySelector('#k_error').textContent,
		Shown: !document.querySelector('#k_error').hidden, Sent: document.querySelectorAll('#chat > li').length})`, &k)
	if k.Invalid != "true" || !k.Shown || !strings.Contains(k.Msg, "1〜20") || k.Sent != 0 {
		t.Errorf("k=50: %+v; want the field marked with its range and nothing sent", k)
	}
	p.do("k back", chromedp.SetValue(chromedp.CSS("#k"), "4"))
	p.eval(`document.querySelector('#k').dispatchEvent(new Event('input')); true`, &ok)

	p.ask(qDelete)
	var alerts int
	p.eval(`document.querySelectorAll('#chat > li:last-child .banner').length`, &alerts)
	if alerts != 1 {
		t.Fatalf("%d banners on the dangerous answer", alerts)
	}
	p.do("reload", chromedp.Reload())
	p.until("conversation back", `document.querySelectorAll('#chat > li .banner').length === 1`)
	p.eval(`document.querySelectorAll('#chat [role=alert]').length`, &alerts)
	if alerts != 0 {
		t.Errorf("%d alerts in the reloaded history; banners seen before are not announced again", alerts)
	}
}

// writeScreenshots makes TestScreenshots write the chat page's screenshots
// into docs/ (desktop 1440×900 and phone 390×844, light and dark):
//
//	go test ./internal/web -run TestScreenshots -screenshots
var writeScreenshots = flag.Bool("screenshots", false, "write docs/chat-*.png from TestScreenshots")

// TestScreenshots takes the README's screenshots of a conversation with a
// citation card open, and logs the page's weight and first paint as the
// browser measured them (figures, not assertions).
func TestScreenshots(t *testing.T) {
	skipWithoutBrowser(t)
	if !*writeScreenshots {
		t.Skip("screenshots are written only with -screenshots")
	}
	docs, err := filepath.Abs(filepath.Join("..", "..", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fixtureOptions{gen: streaming{newExtractive(t)}})
	p := newBrowser(t, f.ts.URL, 1440, 900)
	p.ready()
	p.do("desktop", chromedp.EmulateViewport(1440, 900))
	p.until("first screen", `!document.querySelector('#welcome').hidden && document.querySelectorAll('#examples .example').length >= 4`)
	var weight struct {
		Bytes, Requests int
		FCP, Load       float64
		Third           []string
	}
	const measure = `(() => { const nav = performance.getEntriesByType('navigation')[0]; const rs = performance.getEntriesByType('resource').filter(r => !r.name.includes('/api/'));
		const fcp = performance.getEntriesByName('first-contentful-paint')[0];
		return {Bytes: nav.transferSize + rs.reduce((n, r) => n + r.transferSize, 0), Requests: 1 + rs.length,
			FCP: fcp ? fcp.startTime : -1, Load: nav.loadEventEnd,
			Third: rs.map(r => r.name).filter(n => !n.startsWith(location.origin))}; })()`
	p.eval(measure, &weight)
	t.Logf("cold browser: page %d bytes over the wire in %d requests (API calls aside), first contentful paint %.0f ms, load %.0f ms, third-party %q",
		weight.Bytes, weight.Requests, weight.FCP, weight.Load, weight.Third)
	for i := range 3 {
		// Warm: the browser is up; the page is fetched again, the script
		// (immutable at its version) comes from the browser's cache.
		p.do("reload", chromedp.Reload())
		p.until("reloaded", `document.readyState === 'complete' && performance.getEntriesByName('first-contentful-paint').length > 0`)
		p.eval(measure, &weight)
		t.Logf("reload %d: page %d bytes over the wire in %d requests, first contentful paint %.0f ms, load %.0f ms, third-party %q",
			i+1, weight.Bytes, weight.Requests, weight.FCP, weight.Load, weight.Third)
	}
	p.until("first screen", `!document.querySelector('#welcome').hidden && document.querySelectorAll('#examples .example').length >= 4`)
	var share float64
	p.do("phone", chromedp.EmulateViewport(390, 844))
	p.eval(`(document.querySelector('header.top').offsetHeight + document.querySelector('#ask').offsetHeight) / innerHeight`, &share)
	t.Logf("phone 390×844: header + question box = %.1f %% of the screen", share*100)
	p.do("desktop", chromedp.EmulateViewport(1440, 900))
	shoot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		writeShot(t, filepath.Join(docs, name), png)
	}
	shoot("chat-first-screen.png")
	p.ask("マルウェア感染端末の隔離手順を教えてください")
	p.ask(qDelete)
	p.eval(`document.querySelector('#chat > li:first-child .question').scrollIntoView(); true`, new(bool))
	p.do("card", chromedp.Focus(chromedp.CSS("#chat > li:first-child .answer .body .cite")))
	shoot("chat-desktop-light.png")
	p.colorScheme("dark")
	shoot("chat-desktop-dark.png")
	p.do("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	p.colorScheme("light")
	p.eval(`document.activeElement.blur(); window.scrollTo(0, document.documentElement.scrollHeight); true`, new(bool))
	shoot("chat-phone-light.png")
	p.colorScheme("dark")
	shoot("chat-phone-dark.png")
	p.colorScheme("light")
	p.do("viewer", chromedp.EmulateViewport(1440, 900))
	p.do("open a source", chromedp.Click(chromedp.CSS("#chat > li:first-child .answer .body .cite")))
	p.until("viewer", `!!document.querySelector('#viewer mark#hit')`)
	shoot("chat-source-viewer.png")
}

// chipCard is what the citation card shows for the focused chip.
type chipCard struct {
	Shown          bool
	Title, Excerpt string
	Described      string // the chip's aria-describedby
}

// focusChip focuses the last answer's first [n] chip and returns the card
// it shows.
func (p *bpage) focusChip(what string) chipCard {
	p.do(what, chromedp.Focus(chromedp.CSS("#chat > li:last-child .answer .body .cite")))
	var card chipCard
	p.eval(`(() => { const c = document.querySelector('#cite_card');
		return {Shown: !c.hidden && c.offsetHeight > 0, Title: (c.querySelector('.card-title') || {}).textContent || '',
			Excerpt: (c.querySelector('.card-excerpt') || {}).textContent || '', Described: document.activeElement.getAttribute('aria-describedby') || ''}; })()`, &card)
	return card
}

// viewerHit is the passage the source viewer highlights.
type viewerHit struct {
	Text   string // the highlighted text
	InView bool   // scrolled into the viewer's view
	Title  string // the viewer's title: the source's name
	N      int    // the number of the chip that opened it
}

// openChip clicks the last answer's first [n] chip, waits for the viewer
// to show a highlighted passage and returns it.
func (p *bpage) openChip(what string) viewerHit {
	p.do(what, chromedp.Click(chromedp.CSS("#chat > li:last-child .answer .body .cite")))
	p.until("viewer with the passage", `document.querySelector('#viewer').open && !!document.querySelector('#viewer mark#hit')`)
	var hit viewerHit
	p.eval(`(() => { const v = document.querySelector('#viewer'); const m = v.querySelector('mark#hit');
		const vr = v.getBoundingClientRect(); const mr = m.getBoundingClientRect();
		return {Text: m.textContent, InView: mr.top >= vr.top && mr.top < vr.bottom, Title: document.querySelector('#viewer_title').textContent,
			N: Number(document.querySelector('#chat > li:last-child .answer .body .cite').dataset.n)}; })()`, &hit)
	return hit
}
