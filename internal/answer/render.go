package answer

import (
	"fmt"
	"strings"

	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/guard"
)

// Messages of the guardrails (seed 002 §2.2 and §5); package guard owns
// the wording.
const (
	// DangerBanner opens the answer when the question or answer involves a
	// dangerous operation; the answer is still shown.
	DangerBanner = guard.Banner

	// InsufficientEvidenceMessage replaces the answer when the best
	// evidence score is under the evidence threshold.
	InsufficientEvidenceMessage = guard.InsufficientEvidenceResponse

	// AmbiguousQueryMessage follows the answer when the question looks
	// ambiguous, asking for the details that would sharpen it.
	AmbiguousQueryMessage = guard.AmbiguousQueryResponse
)

// RenderText prints an answer in the output contract of seed 003: the
// sections Answer, Evidence and Unknowns, in that order, each introduced by
// a "## " heading line.
//
// Answer holds the answer text, opened by DangerBanner when
// flags.DangerousOperation is set, replaced by InsufficientEvidenceMessage
// when flags.InsufficientEvidence is set, and followed by
// AmbiguousQueryMessage when flags.AmbiguousQuery is set. Evidence has one
// line per cited source:
//
//	[n] database/…/page_NNN.md (p.3) 見出し — score 0.85 — excerpt...
//
// Unknowns lists each unknown as "- …", or "- なし" when there is none.
func RenderText(a Answer, flags Flags) string {
	var b strings.Builder
	b.WriteString("## Answer\n")
	var body []string
	if flags.DangerousOperation {
		body = append(body, DangerBanner)
	}
	switch text := strings.TrimSpace(a.Text); {
	case flags.InsufficientEvidence:
		body = append(body, InsufficientEvidenceMessage)
	case text != "":
		body = append(body, text)
	case !flags.AmbiguousQuery:
		body = append(body, "(回答なし)")
	}
	if flags.AmbiguousQuery {
		body = append(body, AmbiguousQueryMessage)
	}
	b.WriteString(strings.Join(body, "\n\n"))

	b.WriteString("\n\n## Evidence\n")
	if len(a.Evidence) == 0 {
		b.WriteString("- なし\n")
	}
	for _, e := range a.Evidence {
		b.WriteString(evidenceLine(e))
		b.WriteString("\n")
	}

	b.WriteString("\n## Unknowns\n")
	if len(a.Unknowns) == 0 {
		b.WriteString("- なし\n")
	}
	for _, u := range a.Unknowns {
		b.WriteString("- " + oneLine(u) + "\n")
	}
	return b.String()
}

// evidenceLine formats one cited source.
func evidenceLine(e Evidence) string {
	var b strings.Builder
	// A file name may hold a newline or a control character: quoted, it
	// cannot forge a line of the answer.
	fmt.Fprintf(&b, "[%d] %s", e.N, document.QuotePath(e.File))
	if e.Page > 0 {
		fmt.Fprintf(&b, " (p.%d)", e.Page)
	}
	if h := oneLine(e.Heading); h != "" {
		b.WriteString(" " + h)
	}
	fmt.Fprintf(&b, " — score %.2f", e.Score)
	if x := oneLine(e.Excerpt); x != "" {
		b.WriteString(" — " + x)
	}
	return b.String()
}

// oneLine collapses all whitespace, newlines included, to single spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
