// Package answer turns retrieved chunks into an answer that follows the
// output contract of seed 003: an Answer, the Evidence it rests on, and the
// Unknowns the evidence does not settle. Unverified claims go to Unknowns;
// they are never filled in by guessing.
//
// Two generators share that contract. Extractive (the offline default) copies
// the best-supported sentences out of the retrieved chunks and cites them;
// it never writes a word that is not in the evidence. LLM asks a chat model to
// answer only from numbered, fenced evidence and then checks the citations it
// produced. RenderText prints either result as plain text, and Session keeps
// a short conversation and rewrites follow-up questions into stand-alone
// queries.
package answer

import (
	"strings"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/llm"
)

// Answer is a generated answer with its supporting evidence.
//
// Text cites evidence with markers [n], where n is Evidence[i].N. Evidence
// lists only the chunks the text actually cites, numbered 1, 2, … in order of
// first citation.
type Answer struct {
	Text      string     `json:"text"`
	Evidence  []Evidence `json:"evidence"`
	Unknowns  []string   `json:"unknowns"`
	Generator string     `json:"generator"` // "extractive" or "llm:<model>"
	Usage     llm.Usage  `json:"usage"`
	CostUSD   float64    `json:"cost_usd"`

	// RemovedCitations lists citation numbers the model wrote that pointed at
	// no evidence and were removed from Text (LLM generator only).
	RemovedCitations []int `json:"removed_citations,omitempty"`

	// Verification is the claim check of Text against the chunks it cites
	// (nil when the generator had no tokenizer to check with). For the LLM
	// generator it describes the model's text before unsupported claims
	// were moved to Unknowns.
	Verification *Verification `json:"verification,omitempty"`
}

// Evidence is one cited chunk.
type Evidence struct {
	N       int     `json:"n"`       // citation number used in Answer.Text
	File    string  `json:"file"`    // page identity: database/.../page_NNN.md
	Page    int     `json:"page"`    // 1-based page in the source
	Heading string  `json:"heading"` // heading path of the chunk
	Score   float64 `json:"score"`   // fused retrieval score
	Excerpt string  `json:"excerpt"` // ≤ MaxExcerptRunes runes, "..." when cut
}

// Flags are the guardrail verdicts that change how an answer is shown
// (seed 002 §5).
type Flags struct {
	InsufficientEvidence bool `json:"insufficient_evidence"`
	DangerousOperation   bool `json:"dangerous_operation"`
	AmbiguousQuery       bool `json:"ambiguous_query"`
}

// Tokenizer splits text into index terms. The project's analyser implements
// it (NFKC, lower case, word terms and optionally character bigrams); the
// generators only compare the terms of a query with the terms of sentences,
// so any consistent tokenizer works.
type Tokenizer interface {
	Terms(text string) []string
}

// MaxExcerptRunes is the longest Evidence.Excerpt, "..." included
// (seed 002 §4.5: up to 200 characters, elided with "...").
const MaxExcerptRunes = 200

// Excerpt is s as an Evidence.Excerpt: white space collapsed, at most
// MaxExcerptRunes runes.
func Excerpt(s string) string { return excerpt(s, MaxExcerptRunes) }

// excerpt collapses whitespace in s and cuts it to at most max runes,
// ending with "..." when something was cut. It never splits a rune.
func excerpt(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	const ellipsis = "..."
	keep := max - len(ellipsis)
	if keep < 0 {
		keep = 0
	}
	n := 0
	for i := range s {
		if n == keep {
			return strings.TrimRight(s[:i], " ") + ellipsis
		}
		n++
	}
	return s
}
