// Package assistant answers one question end to end, as seed 002's
// handle_query does: resolve a follow-up against the conversation, check for
// an ambiguous question, retrieve, check the evidence, generate an answer
// with citations, flag dangerous operations, and write the audit log line.
//
// An Assistant is safe for concurrent use; the batch evaluator, the chat
// REPL and the web server share one. Its searcher can be replaced while it
// serves (after an index rebuild) without blocking queries.
package assistant

import (
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
)

// Reply is the full result of one question, as `shirube ask --json` prints
// it (seed 003 output contract plus seed 002 §6 fields).
type Reply struct {
	Query             string            `json:"query"`
	RewrittenQuery    string            `json:"rewritten_query,omitempty"` // stand-alone form of a follow-up
	Answer            string            `json:"answer"`                    // banner + answer text, or a guard template
	Evidence          []answer.Evidence `json:"evidence"`
	Unknowns          []string          `json:"unknowns"`
	Flags             answer.Flags      `json:"flags"`
	SearchResults     []retrieve.Result `json:"search_results"`
	TokenUsage        llm.Usage         `json:"token_usage"`
	CostUSD           float64           `json:"cost_usd"`
	ProcessingTimeSec float64           `json:"processing_time_sec"`
	Generator         string            `json:"generator"` // "extractive", "llm:<model>", or "guard" when a template answered
	RemovedCitations  []int             `json:"removed_citations,omitempty"`
	// Verification is the claim check of the generated answer (seed 003
	// verification step); nil for refusals.
	Verification *answer.Verification `json:"verification,omitempty"`
}

// Refused reports whether the reply is a refusal (insufficient evidence or a
// clarification request) rather than an answer.
func (r Reply) Refused() bool { return r.Flags.InsufficientEvidence || r.Flags.AmbiguousQuery }

// Cited returns the page identities the answer cites, in citation order,
// falling back to the retrieved pages when nothing is cited.
func (r Reply) Cited() []string {
	var out []string
	seen := map[string]bool{}
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, e := range r.Evidence {
		add(e.File)
	}
	if len(out) == 0 {
		for _, s := range r.SearchResults {
			add(s.File)
		}
	}
	return out
}

// Retrieved returns the page identities of the search results in rank order.
func (r Reply) Retrieved() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range r.SearchResults {
		if !seen[s.File] {
			seen[s.File] = true
			out = append(out, s.File)
		}
	}
	return out
}
