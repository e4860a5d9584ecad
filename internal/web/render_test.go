package web

import (
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/guard"
)

func TestMarkdownIsSanitised(t *testing.T) {
	md := newMarkdown()
	tests := []struct {
		name, src string
		want      []string // substrings of the output
		never     []string // never in the output
	}{
		{"script tag", "手順 <script>document.title='pwned'</script> 終わり", []string{"手順", "終わり"}, []string{"<script", "</script"}},
		{"event handler", `<img src=x onerror="alert(1)"> 画像`, []string{"画像", "&lt;img"}, []string{"<img"}},
		// A line that starts with an HTML tag used to open an HTML block that
		// swallowed the rest of the answer (issue 12 item 17).
		{"div at the start of a line", "1. 端末を隔離する。 [1]\n<div>ネットワークケーブルを抜く。</div> [1]\n上長に報告する。 [2]",
			[]string{"端末を隔離する", "&lt;div&gt;ネットワークケーブルを抜く。&lt;/div&gt;", "上長に報告する"}, []string{"<div", "raw HTML omitted"}},
		{"script at the start of the answer", "<script>alert(1)</script>\n手順を確認する。 [1]",
			[]string{"&lt;script&gt;alert(1)&lt;/script&gt;", "手順を確認する"}, []string{"<script", "raw HTML omitted"}},
		{"html comment", "<!-- 注記 -->\n本文。", []string{"&lt;!-- 注記 --&gt;", "本文。"}, []string{"<!--"}},
		{"javascript link", "[click](javascript:alert(1))", []string{"click"}, []string{"javascript:"}},
		{"markdown kept", "**重要**: 手順\n- 一つ目\n- 二つ目", []string{"<strong>重要</strong>", "<li>一つ目</li>"}, nil},
		{"one sentence per line", "一文目。 [1]\n二文目。 [2]", []string{"<br"}, nil},
		{"iframe", `<iframe src="https://evil.example"></iframe>`, nil, []string{"<iframe"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkHTML(t, string(md.render(tt.src)), tt.want, tt.never)
		})
	}
}

func TestRenderAnswer(t *testing.T) {
	p, err := newPageRenderer()
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("長い抜粋", 80)
	ev := []answer.Evidence{{N: 1, File: "database/runbooks/x/page_002.md", Page: 2, Heading: "手順 > 隔離", Score: 0.854, Excerpt: long}}
	tests := []struct {
		name  string
		rep   assistant.Reply
		want  []string
		never []string
	}{
		{"danger banner and citation", assistant.Reply{Answer: guard.Banner + "\n\n削除します。 [1]", Evidence: ev, Flags: answer.Flags{DangerousOperation: true}},
			[]string{`<div class="banner"><span class="ico-warn" aria-hidden="true"></span>承認・確認が必要</div>`, `<details class="citation" data-n="1" data-chunk="" data-label="x p.2" data-title="x" data-page="2"><summary>引用元: x p.2 &gt; 手順 &gt; 隔離 (スコア: 0.85)</summary>`, "（p.2）", "...</blockquote>"},
			[]string{"<p>⚠️"}},
		{"insufficient evidence template", assistant.Reply{Answer: guard.InsufficientEvidenceResponse, Evidence: ev, Flags: answer.Flags{InsufficientEvidence: true}},
			[]string{`answer-insufficient`, "該当する手順が見つかりませんでした", "<li>"},
			[]string{"citation", "banner", "verified"}},
		{"ambiguous template", assistant.Reply{Answer: guard.AmbiguousQueryResponse, Flags: answer.Flags{AmbiguousQuery: true}},
			[]string{`answer-ambiguous`, "質問が曖昧な可能性があります"}, []string{"citation"}},
		{"verification summary", assistant.Reply{Answer: "削除は承認後に行う。 [1]", Evidence: ev, Verification: &answer.Verification{Method: "lexical+llm",
			Claims: []answer.Claim{{Text: "削除は承認後に行う。", Supported: true}, {Text: "翌日に廃棄する。"}}}},
			[]string{`<p class="verified verified-partial">根拠確認: 2 件中 1 件の記述を引用元で確認（一部はモデルで再確認）</p>`}, nil},
		{"verification: none supported", assistant.Reply{Answer: "翌日に廃棄する。 [1]", Evidence: ev, Verification: &answer.Verification{Method: "lexical",
			Claims: []answer.Claim{{Text: "翌日に廃棄する。"}}}},
			[]string{`<p class="verified verified-none">根拠確認: 1 件中 0 件の記述を引用元で確認</p>`}, []string{"verified-all"}},
		{"verification: all supported", assistant.Reply{Answer: "削除は承認後に行う。 [1]", Evidence: ev, Verification: &answer.Verification{Method: "lexical",
			Claims: []answer.Claim{{Text: "削除は承認後に行う。", Supported: true}}}},
			[]string{`<p class="verified verified-all">根拠確認: 1 件中 1 件の記述を引用元で確認</p>`}, nil},
		{"excerpt is escaped", assistant.Reply{Answer: "x [1]", Evidence: []answer.Evidence{{N: 1, File: "f.md", Page: 1, Excerpt: "<script>alert(1)</script>"}}},
			[]string{"&lt;script&gt;"}, []string{"<script>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkHTML(t, string(p.renderAnswer(tt.rep, baseCitations(tt.rep))), tt.want, tt.never)
		})
	}
	if c := baseCitations(assistant.Reply{Evidence: ev})[0]; len([]rune(c.Excerpt)) != answer.MaxExcerptRunes || !strings.HasSuffix(c.Excerpt, "...") {
		t.Errorf("excerpt %d runes: %q", len([]rune(c.Excerpt)), c.Excerpt)
	}
}

// FuzzMarkdown: whatever the text, the rendered answer holds no markup
// from it that could run or hide text — no script, no raw-HTML
// placeholder, no event handler — and text after a line that starts with a
// tag is still shown.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{
		"<div>隔離する。</div>\n報告する。",
		"<script>alert(1)</script>\n手順。",
		"<!-- x -->\n本文",
		"<img src=x onerror=alert(1)>",
		"**重要** [1]\n- 一つ目",
		"<pre>\n<b>x</b>\n</pre>\n後",
	} {
		f.Add(s)
	}
	md := newMarkdown()
	f.Fuzz(func(t *testing.T, src string) {
		out := string(md.render(src + "\n\n末尾の文。"))
		for _, bad := range []string{"<script", "<iframe", "<img", "raw HTML omitted", "<div", "<!--"} {
			if strings.Contains(out, bad) {
				t.Fatalf("render(%q) contains %q:\n%s", src, bad, out)
			}
		}
		if !strings.Contains(out, "末尾の文。") {
			t.Fatalf("render(%q) lost the text after it:\n%s", src, out)
		}
	})
}

// TestVerifiedLineNeedsAnAnswer: quotes that all exist in their sources
// but that the reader does not find answering the question never give a
// green check line.
func TestVerifiedLineNeedsAnAnswer(t *testing.T) {
	no, yes := false, true
	ver := answer.Verification{Method: "lexical", Claims: []answer.Claim{{Supported: true}}, Answers: &no}
	line, level := verifiedLine(&ver, false)
	if level != "partial" || !strings.Contains(line, "質問に答えているかは確認できません") {
		t.Errorf("not answering: %q %q", line, level)
	}
	ver.Answers = &yes
	if line, level := verifiedLine(&ver, false); level != "all" || strings.Contains(line, "確認できません") {
		t.Errorf("answering: %q %q", line, level)
	}
	// A model stream cut off: what arrived is checked, the rest never was.
	if line, level := verifiedLine(&ver, true); level != "partial" || !strings.Contains(line, "途中で途切れた") {
		t.Errorf("incomplete: %q %q; want an amber line that says the answer was cut off", line, level)
	}
}

// TestCiteChips: the [n] markers of a rendered answer body become chips
// that carry the chunk id and name the source; markers in code and links,
// and numbers no citation has, stay text; what the chips carry is escaped.
func TestCiteChips(t *testing.T) {
	md := newMarkdown()
	cs := []Citation{
		{N: 1, ChunkID: "database/runbooks/x/page_001.md_3", Label: "隔離手順 p.1"},
		{N: 2, ChunkID: `db/"q"&<x>.md_1`, File: "database/y.md"},
	}
	chip1 := `<button type="button" class="cite" data-n="1" data-chunk="database/runbooks/x/page_001.md_3" aria-label="引用元 1: 隔離手順 p.1" aria-describedby="cite_card">1</button>`
	chip2 := `<button type="button" class="cite" data-n="2" data-chunk="db/&#34;q&#34;&amp;&lt;x&gt;.md_1" aria-label="引用元 2: database/y.md" aria-describedby="cite_card">2</button>`
	tests := []struct {
		name, src   string
		want, never []string
	}{
		{"one marker", "端末を隔離する。 [1]", []string{"端末を隔離する。 " + chip1}, []string{"[1]"}},
		{"two numbers in one marker", "報告する。 [1, 2]", []string{chip1 + chip2}, []string{"[1"}},
		{"an unknown number stays text", "確認する。 [1、7]", []string{chip1 + "[7]"}, nil},
		{"code and links stay text", "`cmd [1]` と [手順](https://example.com/[2])\n\n```\nls [1]\n```\n",
			[]string{"<code>cmd [1]</code>", "<code>ls [1]\n</code>"}, []string{"<button"}},
		{"escaped text around", "a &lt; b [2] <c>", []string{chip2, "&lt;c&gt;"}, []string{"<c>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkHTML(t, string(citeChips(md.render(tt.src), cs)), tt.want, tt.never)
		})
	}
	if got := citeChips("<p>x [1]</p>", nil); got != "<p>x [1]</p>" {
		t.Errorf("without citations: %s", got)
	}
}

// checkHTML fails t when got lacks one of want or contains one of never.
func checkHTML(t *testing.T, got string, want, never []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("lacks %q:\n%s", w, got)
		}
	}
	for _, n := range never {
		if strings.Contains(got, n) {
			t.Errorf("contains %q:\n%s", n, got)
		}
	}
}
