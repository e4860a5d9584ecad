package document

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"

	"github.com/shirube/shirube/internal/golden"
)

const lawDataset = "../../../shared/datasets/law-html-ja"

// squash removes white space (including U+3000) and the Markdown markup
// characters the converter may add, so that text can be compared across
// formats.
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\n', '\r', '\u3000', '*', '\\', '#', '|', '_', '>':
			return -1
		}
		return r
	}, s)
}

func TestLawHTMLMatchesTextTwin(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join(lawDataset, "html", "*.html"))
	if len(pages) == 0 {
		t.Skip("law-html-ja dataset missing")
	}
	for _, mode := range []HTMLMode{HTMLMarkdown, HTMLText} {
		for _, p := range pages {
			hash := strings.TrimSuffix(filepath.Base(p), ".html")
			t.Run(string(mode)+"/"+hash[:8], func(t *testing.T) {
				t.Parallel()
				src, err := os.ReadFile(p)
				must(t, err)
				twin, err := os.ReadFile(filepath.Join(lawDataset, "text", hash+".txt"))
				must(t, err)

				cs, err := DetectCharset(src)
				if err != nil || cs != "shift_jis" {
					t.Fatalf("DetectCharset = %q, %v; want shift_jis", cs, err)
				}
				out, err := ConvertHTML(context.Background(), src, mode)
				if err != nil {
					t.Fatal(err)
				}
				if !utf8.ValidString(out) || strings.ContainsRune(out, '\uFFFD') {
					t.Error("output has invalid or replaced characters")
				}
				// Table cells keep their line breaks as <br />.
				got := squash(strings.ReplaceAll(out, "<br />", ""))
				var lines, found, cursor int
				var missing []string
				for _, l := range strings.Split(string(twin), "\n") {
					l = squash(l)
					if l == "" {
						continue
					}
					lines++
					// Lines come in document order: search forward from
					// the last match first, the whole text only on a miss.
					if i := strings.Index(got[cursor:], l); i >= 0 {
						found++
						cursor += i + len(l)
					} else if strings.Contains(got, l) {
						found++
					} else if len(missing) < 3 {
						missing = append(missing, l)
					}
				}
				share := float64(found) / float64(lines)
				if share < 0.99 {
					t.Errorf("%d of %d twin lines found (%.1f%%); e.g. %q", found, lines, 100*share, missing)
				}
				t.Logf("%d of %d twin lines found (%.1f%%)", found, lines, 100*share)
				if mode == HTMLText && strings.ContainsAny(out, "*#|") {
					t.Error("text mode output contains Markdown markup")
				}
			})
		}
	}
}

func encode(t testing.TB, enc encoding.Encoding, s string) []byte {
	t.Helper()
	b, err := enc.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDetectCharset(t *testing.T) {
	const body = "<p>インシデント対応手順：初動は15分以内に起票する。ログの削除には承認が必要です。</p>"
	doc := func(meta string) string {
		return "<html><head>" + meta + "<title>手順</title></head><body>" + body + "</body></html>"
	}
	utf16, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().Bytes([]byte(doc("")))
	tests := []struct {
		name string
		src  []byte
		want string
	}{
		{"utf-8 no meta", []byte(doc("")), "utf-8"},
		{"utf-8 BOM", append([]byte("\xef\xbb\xbf"), doc("")...), "utf-8"},
		{"utf-16le BOM", utf16, "utf-16le"},
		{"meta charset", []byte(doc(`<meta charset="utf-8">`)), "utf-8"},
		{"shift_jis via http-equiv", encode(t, japanese.ShiftJIS, doc(`<META http-equiv="Content-Type" content="text/html; charset=Shift_JIS">`)), "shift_jis"},
		{"shift_jis via x-sjis label", encode(t, japanese.ShiftJIS, doc(`<meta charset="x-sjis">`)), "shift_jis"},
		{"shift_jis sniffed", encode(t, japanese.ShiftJIS, doc("")), "shift_jis"},
		{"euc-jp sniffed", encode(t, japanese.EUCJP, doc("")), "euc-jp"},
		{"euc-jp declared", encode(t, japanese.EUCJP, doc(`<meta charset="EUC-JP">`)), "euc-jp"},
		{"iso-2022-jp sniffed", encode(t, japanese.ISO2022JP, doc("")), "iso-2022-jp"},
		{"meta says utf-8, bytes are shift_jis", encode(t, japanese.ShiftJIS, doc(`<meta charset="utf-8">`)), "shift_jis"},
		{"meta says euc-jp, bytes are shift_jis", encode(t, japanese.ShiftJIS, doc(`<meta charset="euc-jp">`)), "shift_jis"},
		{"meta says iso-8859-1, bytes are shift_jis", encode(t, japanese.ShiftJIS, doc(`<meta charset="iso-8859-1">`)), "shift_jis"},
		{"meta says shift_jis, bytes are utf-8", []byte(doc(`<meta charset="shift_jis">`)), "utf-8"},
		{"unknown label, ascii", []byte(doc(`<meta charset="x-klingon">`))[:60], "utf-8"},
		{"latin-1 declared", []byte("<meta charset=\"iso-8859-1\"><p>caf\xe9 cr\xe8me</p>"), "windows-1252"},
		{"meta after a long comment", append([]byte("<!--"+strings.Repeat(" ", 2000)+"-->"), encode(t, japanese.ShiftJIS, doc(`<meta charset="shift_jis">`))...), "shift_jis"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DetectCharset(tt.src)
			if err != nil || got != tt.want {
				t.Fatalf("DetectCharset = %q, %v; want %q", got, err, tt.want)
			}
			text, _, err := DecodeHTML(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(tt.src), "<p>") && strings.Contains(doc(""), "手順") && tt.want != "windows-1252" && !strings.Contains(text, "ログの削除には承認が必要です") && !strings.Contains(tt.name, "ascii") {
				t.Errorf("decoded text lacks the body: %.120q", text)
			}
		})
	}
}

func TestDetectCharsetErrors(t *testing.T) {
	garbage := bytes.Repeat([]byte{0x80, 0xff, 0xfe, 0x81, 0x00, 0xa0}, 50)
	tests := []struct {
		name string
		src  []byte
		msg  string
	}{
		{"binary, no meta", garbage, "not UTF-8, Shift_JIS"},
		{"binary, unknown label", append([]byte(`<meta charset="x-klingon">`), garbage...), `declared "x-klingon"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DetectCharset(tt.src)
			if !errors.Is(err, ErrUnknownCharset) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want ErrUnknownCharset mentioning %q", err, tt.msg)
			}
			if _, err := ConvertHTML(context.Background(), tt.src, HTMLMarkdown); !errors.Is(err, ErrUnknownCharset) {
				t.Errorf("ConvertHTML err = %v", err)
			}
		})
	}
}

func TestConvertHTML(t *testing.T) {
	tests := []struct {
		name, src   string
		mode        HTMLMode
		want, unwan []string
	}{
		{
			name: "dropped elements",
			src: `<html><head><title>T</title><style>.x{color:red}</style><script>alert("s1")</script></head><body>
				<nav>メニュー</nav><h1>本文見出し</h1><script>var s2</script><noscript>NS</noscript>
				<iframe src="x">IF</iframe><form><input value="v"><button>送信ボタン</button></form><p>本文です。</p></body></html>`,
			mode:  HTMLMarkdown,
			want:  []string{"# 本文見出し", "本文です。"},
			unwan: []string{"color", "alert", "s2", "メニュー", "NS", "IF", "送信ボタン", "# T"},
		},
		{
			name: "title becomes a heading without h1",
			src:  `<title>  重大度 *分類*  </title><h2>節</h2><p>x</p>`,
			mode: HTMLMarkdown,
			want: []string{"# 重大度 \\*分類\\*\n\n## 節"},
		},
		{
			name:  "title becomes the first line in text mode",
			src:   `<title>重大度分類</title><h2>節</h2><p>x</p>`,
			mode:  HTMLText,
			want:  []string{"重大度分類\n節\nx"},
			unwan: []string{"#"},
		},
		{
			name: "table as Markdown table",
			src:  `<table><tr><th>重大度</th><th>期限</th></tr><tr><td>S1</td><td>15分</td></tr></table>`,
			mode: HTMLMarkdown,
			want: []string{"| 重大度 | 期限 |", "| S1 | 15分 |"},
		},
		{
			name: "table as tab-separated text",
			src:  `<table><tr><th>重大度</th><th>期限</th></tr><tr><td>S1</td><td>15分</td></tr></table>`,
			mode: HTMLText,
			want: []string{"重大度\t期限\nS1\t15分"},
		},
		{
			name: "ideographic space kept, pre kept",
			src:  "<p>\u3000第一条\u3000目的</p><pre>a  b\n  c</pre>",
			mode: HTMLText,
			want: []string{"\u3000第一条\u3000目的", "a  b\n  c"},
		},
		{
			name:  "CRLF normalised",
			src:   "<p>一行目<br>\r\n二行目</p>\r\n<p>三</p>",
			mode:  HTMLMarkdown,
			want:  []string{"一行目", "二行目", "三"},
			unwan: []string{"\r"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ConvertHTML(context.Background(), []byte(tt.src), tt.mode)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, u := range tt.unwan {
				if strings.Contains(out, u) {
					t.Errorf("output contains %q:\n%s", u, out)
				}
			}
		})
	}
	if _, err := ConvertHTML(context.Background(), []byte("<p>x"), "pdf"); err == nil {
		t.Error("unknown mode: want error")
	}
}

// TestGolden pins the conversion of the example HTML page.
//
//	go test ./internal/document/ -run TestGolden -update
func TestGolden(t *testing.T) {
	src, err := os.ReadFile("../../examples/data/policies/severity_matrix.html")
	if err != nil {
		t.Skipf("example missing: %v", err)
	}
	for _, tc := range []struct {
		mode   HTMLMode
		golden string
	}{
		{HTMLMarkdown, "testdata/severity_matrix.md.golden"},
		{HTMLText, "testdata/severity_matrix.txt.golden"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			got, err := ConvertHTML(context.Background(), src, tc.mode)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.golden, []byte(got))
			for _, gone := range []string{"trackPageView", "SOCポータル トップ", "この表へのご意見", "JavaScript を有効に", "border-collapse"} {
				if strings.Contains(got, gone) {
					t.Errorf("output keeps %q", gone)
				}
			}
		})
	}
}

// TestHTMLCodeAndEntities pins the conversion of a small Shift_JIS page
// shaped like the Apache manual: <code> examples whose lines are
// separated by <br> stay one command a line, entities read as characters.
//
//	go test ./internal/document/ -run TestHTMLCodeAndEntities -update
func TestHTMLCodeAndEntities(t *testing.T) {
	src, err := os.ReadFile("testdata/html/apache_like_sjis.html")
	must(t, err)
	got, err := ConvertHTML(context.Background(), src, HTMLMarkdown)
	must(t, err)
	golden.Check(t, "testdata/html/apache_like_sjis.md.golden", []byte(got))
	for _, want := range []string{
		"```\nSignal: USR1\napachectl -k graceful\n```",
		"```\nhttpd -k start\nhttpd -k stop\nhttpd -k restart\n```",
		"一行の例 `apachectl configtest` は文中に残ります。",
		"/user=<username>",
		"<username> でログインする。& と \"引用\" もそのまま。",
		"VT<->TEK",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "&lt;") || strings.Contains(got, "&gt;") {
		t.Errorf("entities left escaped:\n%s", got)
	}
}

func TestCodeBlocks(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"code with br in a paragraph", "<p><code>a<br>b</code></p>", "```\na\nb\n```"},
		{"code with br among text stays where it is", "<p>x <code>a<br/>b</code> y</p>", "x\n\n```\na\nb\n```\n\ny"},
		{"code inside pre is left alone", "<pre><code>a\nb</code></pre>", "```\na\nb\n```"},
		{"inline code without br stays inline", "<p>run <code>ls -l</code> now</p>", "run `ls -l` now"},
		{"nested markup in the code keeps its text", "<p><code><var>cmd</var> -k<br><b>stop</b></code></p>", "```\ncmd -k\nstop\n```"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConvertHTML(context.Background(), []byte(tt.src), HTMLMarkdown)
			must(t, err)
			if strings.TrimSpace(got) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func FuzzHTMLToMarkdown(f *testing.F) {
	f.Add([]byte(`<html><head><meta charset="shift_jis"><title>t</title></head><body><h1>x</h1><table><tr><td>a<td>b</table></body>`))
	f.Add([]byte("<p>\u3000第一条</p><pre>x</pre><script>y</script>"))
	f.Add([]byte{0xef, 0xbb, 0xbf, '<', 'p', '>', 0xe3, 0x81, 0x82})
	f.Add([]byte("<table><tr><td rowspan=3 colspan=99>x</td></tr><tr><td>\n</td></tr></table>"))
	f.Add([]byte("<table><tr><td rowspan=9999 colspan=9999>x<tr><td>y</table>"))
	if src, err := os.ReadFile("../../examples/data/policies/severity_matrix.html"); err == nil {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, mode := range []HTMLMode{HTMLMarkdown, HTMLText} {
			out, err := ConvertHTML(context.Background(), src, mode)
			if err != nil {
				continue
			}
			if !utf8.ValidString(out) {
				t.Fatalf("%s: invalid UTF-8 output %q", mode, out)
			}
		}
	})
}

func FuzzDetectCharset(f *testing.F) {
	f.Add([]byte(`<meta http-equiv="Content-Type" content="text/html; charset=euc-jp">`))
	f.Add([]byte(`<meta charset=>`))
	f.Add([]byte("\xff\xfe<\x00p\x00>\x00"))
	f.Add([]byte("\x1b$B$3$s$K$A$O\x1b(B"))
	f.Add([]byte{0x82, 0xa0, 0x82, 0xa2})
	f.Fuzz(func(t *testing.T, src []byte) {
		name, err := DetectCharset(src)
		if err != nil {
			if !errors.Is(err, ErrUnknownCharset) {
				t.Fatalf("error %v is not ErrUnknownCharset", err)
			}
			return
		}
		if name == "" {
			t.Fatal("empty name without error")
		}
		text, got, err := DecodeHTML(src)
		if err != nil || got != name {
			t.Fatalf("DecodeHTML = %q, %v after DetectCharset = %q", got, err, name)
		}
		if !utf8.ValidString(text) {
			t.Fatal("decoded text is not valid UTF-8")
		}
	})
}

// BenchmarkConvertHTML converts the largest law page (355 kB Shift_JIS).
//
//	go test -run '^$' -bench ConvertHTML ./internal/document/
func BenchmarkConvertHTML(b *testing.B) {
	src, err := os.ReadFile(filepath.Join(lawDataset, "html", "c25333a23b7e3b1f947dbbd68bb58001446afa91a9499d881448adcedb75ec66b34773971e0ec4ff399a9e4176b80d9fc18d3cf1d674d2ba0d3b362f65715a3e.html"))
	if err != nil {
		b.Skip("law-html-ja dataset missing")
	}
	for _, mode := range []HTMLMode{HTMLMarkdown, HTMLText} {
		b.Run(string(mode), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := ConvertHTML(context.Background(), src, mode); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestConvertHTMLHostileSpans checks that huge colspan/rowspan values cannot
// blow up the table conversion: output stays small and keeps the text.
func TestConvertHTMLHostileSpans(t *testing.T) {
	tests := []struct {
		name, src string
		maxLen    int
	}{
		{"huge colspan", `<table><tr><td colspan=100000000>x</td></tr></table>`, 20_000},
		{"overflowing colspan", `<table><tr><td colspan=99999999999999999999>x</td></tr></table>`, 20_000},
		{"rowspan past the last row", `<table><tr><td rowspan=100000000>x</td><td>y</td></tr><tr><td>z</td></tr></table>`, 100},
		{"stacked spans", "<table>" + strings.Repeat(`<tr><td rowspan=1000 colspan=64>x</td></tr>`, 300) + "</table>", 20_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ConvertHTML(context.Background(), []byte(tt.src), HTMLMarkdown)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) > tt.maxLen || !strings.Contains(out, "x") {
				t.Errorf("%d bytes (limit %d): %.200q", len(out), tt.maxLen, out)
			}
		})
	}
}
