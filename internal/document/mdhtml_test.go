package document

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/golden"
)

// TestMarkdownHTMLGolden pins the conversion of raw HTML in a Markdown
// file written for this test (a <div> of dates, a <table> whose cells hold
// lists, a <figure>, <span> icons, <u>, <br> in a table cell, comments).
//
//	go test ./internal/document/ -run TestMarkdownHTMLGolden -update
func TestMarkdownHTMLGolden(t *testing.T) {
	src, err := os.ReadFile("testdata/markdown/raw_html.md")
	must(t, err)
	got := MarkdownHTML(context.Background(), string(src))
	golden.Check(t, "testdata/markdown/raw_html.md.golden", []byte(got))
	for _, gone := range []string{"<div", "<span", "<table", "<td", "<figure", "<img", "<u>", "<br>", "<!--", "<abbr", "<a "} {
		if strings.Contains(strings.Split(got, "`<div>`")[0], gone) {
			t.Errorf("output keeps %q", gone)
		}
	}
	if want := squashText(stripAll(string(src))); !containsInOrder(squashText(got), want) {
		t.Errorf("text lost:\n%s", got)
	}
}

// stripAll removes every tag and attribute of the fixture, what a reader
// of the rendered page does not see, keeping alt text.
func stripAll(s string) string {
	s = strings.ReplaceAll(s, `alt="対応フロー図"`, `>対応フロー図<`)
	for {
		i := strings.Index(s, "<")
		j := strings.Index(s[max(i, 0):], ">")
		if i < 0 || j < 0 {
			return s
		}
		tag := s[i : i+j+1]
		if tag == "<username>" || tag == "<none>" || tag == "<div>" {
			s = s[:i] + "\x00" + s[i+1:]
			continue
		}
		s = s[:i] + s[i+j+1:]
	}
}

func TestMarkdownHTML(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no HTML", "# 見出し\n\n本文 a < b\n", "# 見出し\n\n本文 a < b\n"},
		{"simple table becomes a Markdown table", "前\n\n<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>\n\n後",
			"前\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n後"},
		{"inline tags go, text stays", "これは <u>重要</u> な<strong>点</strong>です。", "これは 重要 な点です。"},
		{"br in a table row is a space", "| a<br/>b | c |", "| a b | c |"},
		{"br in a paragraph is a line end", "一行目<br>二行目", "一行目\n二行目"},
		{"comment in a heading goes", "## 目次 <!-- omit in toc -->", "## 目次"},
		{"comment over lines goes", "前\n<!--\n隠す\n-->\n後", "前\n後"},
		{"an unclosed comment stays", "前\n<!--\n後", "前\n<!--\n後"},
		{"placeholders and autolinks are text", "/user=<username> <none> <https://example.com>", "/user=<username> <none> <https://example.com>"},
		{"code spans and fences stay", "`<span>x</span>` <span>y</span>\n```\n<div>z</div>\n```", "`<span>x</span>` y\n```\n<div>z</div>\n```"},
		{"img leaves its alt", `見よ <img src="a.png" alt="構成図"> 以上`, "見よ 構成図 以上"},
		{"block closing at the end", "<div>\n本文\n</div>", "本文"},
		{"a pre block runs to its end over blank lines", "<pre>\n行1\n\n行2 <b>x</b>\n</pre>\n\n後", "```\n行1\n\n行2 x\n```\n\n後"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MarkdownHTML(context.Background(), tt.in); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func FuzzMarkdownHTML(f *testing.F) {
	f.Add("<div>\n<span>a</span>\n</div>\n\n<table><tr><td><ul><li>x</li></ul></td></tr></table>")
	f.Add("| a<br>b |\n<!-- c\n-->\n`<u>`<u>d</u> <x>")
	f.Add("<!--")
	f.Add("<table><tr><td rowspan=9999 colspan=9999>x")
	if src, err := os.ReadFile("testdata/markdown/raw_html.md"); err == nil {
		f.Add(string(src))
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := MarkdownHTML(context.Background(), in)
		if strings.Contains(in, "\x00") {
			return
		}
		// Letters and digits outside tags are never lost.
		if !strings.Contains(in, "<") && out != in {
			t.Fatalf("text without HTML changed: %q → %q", in, out)
		}
	})
}
