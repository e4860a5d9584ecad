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
	"context"
	"errors"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/guard"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
)

// Reply is the full result of one question, as `shirube ask --json` prints
// it (seed 003 output contract plus seed 002 §6 fields).
type Reply struct {
	Query          string            `json:"query"`
	RewrittenQuery string            `json:"rewritten_query,omitempty"` // stand-alone form of a follow-up
	Answer         string            `json:"answer"`                    // banner + answer text, or a guard template
	Evidence       []answer.Evidence `json:"evidence"`
	Unknowns       []string          `json:"unknowns"`
	Flags          answer.Flags      `json:"flags"`
	// Danger says why Flags.DangerousOperation is set: the operation asked
	// for or quoted, its kind and scope (nil when it is not set).
	Danger        *guard.Danger     `json:"danger,omitempty"`
	SearchResults []retrieve.Result `json:"search_results"`
	// Reranked: the learned re-ranker ordered SearchResults (the re-rank
	// stage ran).
	Reranked          bool      `json:"reranked,omitempty"`
	TokenUsage        llm.Usage `json:"token_usage"`
	CostUSD           float64   `json:"cost_usd"`
	ProcessingTimeSec float64   `json:"processing_time_sec"`
	Generator         string    `json:"generator"` // "extractive", "llm:<model>", or "guard" when a template answered
	RemovedCitations  []int     `json:"removed_citations,omitempty"`
	// Verification is the claim check of the generated answer (seed 003
	// verification step); nil for refusals.
	Verification *answer.Verification `json:"verification,omitempty"`
	// Outcome is how the question ended: answered, incomplete or
	// llm_unavailable here; timeout, cancelled or error in the audit log of
	// a question that failed (auditlog.Outcome…).
	Outcome string `json:"outcome"`
	// Incomplete marks an answer whose model stream was cut off: Answer
	// holds the part that arrived, after Notice.
	Incomplete bool `json:"incomplete,omitempty"`
	// LLMUnavailable marks an extractive answer made because the model
	// failed; LLMError says why (kind, HTTP status, attempts — no
	// endpoint, no raw error).
	LLMUnavailable bool   `json:"llm_unavailable,omitempty"`
	LLMError       string `json:"llm_error,omitempty"`
	// Notice is the Japanese notice shown above the answer when it is
	// incomplete or extractive for want of the model ("" otherwise). It is
	// also the first paragraph of Answer.
	Notice string `json:"notice,omitempty"`
	// Trace is how the agentic retrieval searched (seed 003: profile,
	// route, facets, searches per round, budget used, stop reason); nil on
	// the plain search path.
	Trace *Trace `json:"trace,omitempty"`
	// Decision is what the evidence gate decided, with the score it
	// compared and, for a refusal, the check that refused.
	Decision Decision `json:"decision"`
	// Search is the search the answer was made with: k and the fusion
	// weights applied, AutoWeight when the weight was chosen for this
	// question (nil when the question failed before it).
	Search *SearchUsed `json:"search,omitempty"`
	// Error is what failed, for the audit log of a failed question.
	Error string `json:"-"`
	// AuditError is set when the audit log line could not be written; the
	// answer itself is fine, but the operator must be told.
	AuditError error `json:"-"`
}

// SearchUsed is what a reply's search applied, so that a page can show
// the weights the server used rather than the ones it offered.
type SearchUsed struct {
	K            int     `json:"k"`
	BM25Weight   float64 `json:"bm25_weight"`
	VectorWeight float64 `json:"vector_weight"`
	AutoWeight   bool    `json:"auto_weight"`
}

// Decision is the evidence gate's verdict on one question: answer it,
// refuse it for want of evidence, or ask the user to clarify it. Benchmarks
// and the audit trail read it to see which gate turned a question away.
type Decision struct {
	// Action is ActionAnswer, ActionRefuse or ActionClarify.
	Action string `json:"action"`
	// Evidence is the best evidence score the gate compared with its
	// threshold (0 when no search ran).
	Evidence float64 `json:"evidence_score"`
	// Reason names the check that refused: ReasonNoResults,
	// ReasonThreshold, one of the near-miss reasons Refuses gives, or
	// ReasonAmbiguous for a clarification; "" for an answer.
	Reason string `json:"reason,omitempty"`
	// Answerability is the learned reader's probability that the
	// evidence answers (0 without a reader).
	Answerability float64 `json:"answerability,omitempty"`
	// Supported and Missing are, for a partial answer, the parts of the
	// question the evidence answers and the parts it does not.
	Supported []string `json:"supported,omitempty"`
	Missing   []string `json:"missing,omitempty"`
}

// Actions a Decision takes.
const (
	ActionAnswer  = "answer"
	ActionRefuse  = "refuse"
	ActionClarify = "clarify"
	// ActionPartial answers the parts of a question the evidence
	// supports and names the others in Unknowns.
	ActionPartial = "partial"
)

// Reasons of a Decision that are not near misses (see Refuses for those).
const (
	ReasonNoResults = "no results"      // the search found nothing
	ReasonThreshold = "below threshold" // the best evidence score is under the threshold
	ReasonAmbiguous = "ambiguous"       // the question is too vague to search (guard.DetectAmbiguous)
	// ReasonVague: the question names one thing only (guard.Named) and
	// the reader finds it not answered by the evidence its answer quotes.
	ReasonVague = "names one thing, not answered"
	// ReasonNotAnswerable: the learned reader judges that the evidence
	// does not answer (its answerability is under its threshold).
	ReasonNotAnswerable = "not answerable"
)

// NoticeIncomplete heads an answer whose model stream was cut off.
const NoticeIncomplete = "⚠️ 回答の生成が途中で途切れました。以下は不完全な回答です。もう一度お試しください。"

// NoticeLLMUnavailable heads an extractive answer given because the model
// failed with err: what happened, in Japanese, without internals.
func NoticeLLMUnavailable(err error) string {
	return "⚠️ AIモデルを利用できなかったため（" + llmReasonJA(err) + "）、根拠文書からの抜粋で回答しています。"
}

// llmReasonJA says in Japanese why the model failed.
func llmReasonJA(err error) string {
	switch llm.Kind(err) {
	case llm.KindTimeout:
		return "制限時間内に応答がありませんでした"
	case llm.KindRateLimit:
		return "利用上限に達しています"
	case llm.KindServerError:
		return "モデルのサーバーでエラーが発生しました"
	case llm.KindAuth:
		return "APIキーが受け付けられませんでした"
	case llm.KindInvalidRequest:
		return "リクエストが受け付けられませんでした"
	case llm.KindConnection:
		return "モデルのサーバーに接続できませんでした"
	case llm.KindIncomplete:
		return "応答が途中で途切れました"
	}
	return "モデルの応答を読み取れませんでした"
}

// UserMessage is what to tell a user, in Japanese and without internals
// (no endpoint URL, no Go error), about a question that failed with err.
func UserMessage(err error) string {
	switch {
	case errors.Is(err, ErrEmptyQuestion), errors.Is(err, ErrQuestionTooLong):
		return err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "回答が時間内に終わりませんでした — 質問を短くするか、もう一度お試しください"
	case errors.Is(err, context.Canceled):
		return "回答を中断しました"
	case llm.Kind(err) != "" && llm.Kind(err) != llm.KindBadResponse:
		return "回答を作成できませんでした（" + llmReasonJA(err) + "）— しばらくしてからもう一度お試しください"
	}
	return "回答を作成できませんでした — しばらくしてからもう一度お試しください。続く場合は管理者に連絡してください"
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
