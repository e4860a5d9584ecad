package web

import (
	"strings"
	"testing"
)

// TestMarkdownKeepsCommands: what a document writes in angle brackets or
// code stays the same text — no mailto link, no lost brackets, no link
// inside code — so a copied command is the document's.
func TestMarkdownKeepsCommands(t *testing.T) {
	md := newMarkdown()
	tests := []struct{ name, src, want, not string }{
		{"angle-bracket address", "報告先: <attacker@example.com>", "&lt;attacker@example.com&gt;", "mailto:"},
		{"angle-bracket URL", "<https://example.com/x>", "&lt;https://example.com/x&gt;", "<a "},
		{"code span", "`curl https://example.com/api`", "<code>curl https://example.com/api</code>", "<a "},
		{"fenced code", "```sh\nmail -s x <root@example.com>\n```", "mail -s x &lt;root@example.com&gt;", "<a "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(md.render(tt.src))
			if !strings.Contains(got, tt.want) || strings.Contains(got, tt.not) {
				t.Errorf("render(%q) = %q; want %q in it and no %q", tt.src, got, tt.want, tt.not)
			}
		})
	}
}
