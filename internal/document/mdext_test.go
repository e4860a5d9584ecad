package document

import (
	"strings"
	"testing"
)

func TestMarkdownExtensions(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"front matter: description kept, site keys dropped",
			"---\ncover: assets/img/a.png\ndescription: セキュリティインシデント対応のチェックリストです。\n---\n## チェックリスト\n1. 攻撃を停止する。\n",
			"セキュリティインシデント対応のチェックリストです。\n\n## チェックリスト\n1. 攻撃を停止する。\n"},
		{"front matter: title becomes the heading",
			"---\ntitle: \"重大度レベル\"\ntags: [ir]\n---\n本文です。\n",
			"# 重大度レベル\n\n本文です。\n"},
		{"front matter: a heading already there wins",
			"---\ntitle: 手順\n---\n# 復旧手順\n本文\n",
			"# 復旧手順\n本文\n"},
		{"a thematic break is no front matter",
			"---\nこれは本文です。\n---\n続き\n",
			"---\nこれは本文です。\n---\n続き\n"},
		{"admonition with a title",
			"前文\n\n!!! warning \"インシデントコマンダーが必要\"\n     すべての重大インシデントに関与します。\n    二行目です。\n\n後文\n",
			"前文\n\n**インシデントコマンダーが必要**\n\nすべての重大インシデントに関与します。\n二行目です。\n\n後文\n"},
		{"collapsible admonition without a title",
			"??? note\n    注記の本文。\n",
			"注記の本文。\n"},
		{"an admonition inside a code fence stays",
			"```\n!!! warning \"x\"\n    y\n```\n",
			"```\n!!! warning \"x\"\n    y\n```\n"},
		{"ordinary text", "# 見出し\n本文!!! です。\n", "# 見出し\n本文!!! です。\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MarkdownExtensions(tt.in); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// FuzzMarkdownExtensions: never panics, and never loses a line of body
// text outside the front matter and admonition markers.
func FuzzMarkdownExtensions(f *testing.F) {
	f.Add("---\ntitle: a\n---\nbody\n")
	f.Add("!!! warning \"t\"\n    x\n\n    y\nz\n")
	f.Add("---\n---\n")
	f.Fuzz(func(t *testing.T, s string) {
		out := MarkdownExtensions(s)
		if !strings.HasPrefix(s, "---") && !strings.Contains(s, "!!!") && !strings.Contains(s, "???") && out != s {
			t.Fatalf("plain text changed: %q → %q", s, out)
		}
	})
}
