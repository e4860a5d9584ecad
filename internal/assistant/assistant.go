package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/auditlog"
	"github.com/shirube/shirube/internal/guard"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
)

// Generator writes an answer from retrieved chunks.
type Generator interface {
	Generate(ctx context.Context, query string, results []retrieve.Result, history []llm.Message) (answer.Answer, error)
}

// StreamGenerator can also stream the answer text as it is written.
type StreamGenerator interface {
	GenerateStream(ctx context.Context, query string, results []retrieve.Result, history []llm.Message, onDelta func(string)) (answer.Answer, error)
}

// Conversation is the history of one chat session.
type Conversation interface {
	// Rewrite turns a follow-up into a stand-alone query; other queries
	// come back unchanged. The usage of a model call it made is counted
	// in the answer's.
	Rewrite(ctx context.Context, query string) (answer.Rewritten, error)
	// History returns the previous exchanges, oldest first.
	History() []llm.Message
	// Add records an exchange.
	Add(question, answer string)
}

// Logger writes audit log lines.
type Logger interface {
	Log(ctx context.Context, e auditlog.Entry) error
}

// Retriever replaces the single hybrid search with another retrieval
// strategy, such as the agentic loop of seed 003 (internal/agent).
type Retriever func(ctx context.Context, s *retrieve.Searcher, query string, opt retrieve.Options) (Retrieval, error)

// Retrieval is what a Retriever found.
type Retrieval struct {
	Results  []retrieve.Result // the evidence, best first
	Unknowns []string          // parts of the question without evidence
	// Parts are the parts of the question the strategy searched for
	// separately (the agent's facets). The evidence gate passes when one
	// chunk supports the whole question or every part has a chunk that
	// supports it.
	Parts []string
	// Trace is how the strategy searched, for `ask --json`, the API
	// answer and the audit log; nil when it keeps none.
	Trace *Trace
	// Usage and CostUSD are what model calls the strategy made cost (the
	// agent's LLM planner); they are added to the reply's.
	Usage   llm.Usage
	CostUSD float64
	// Lead, when set, is what the strategy's search of the whole question
	// reported (the fusion weight it chose), for the audit log.
	Lead *retrieve.Info
}

// Trace is seed 003's retrieval trace: the profile, the route, the facets
// the question was split into, the searches of every round, the budget
// used and why the loop stopped.
type Trace struct {
	Profile      string       `json:"profile"`
	Route        string       `json:"route"`
	Planner      string       `json:"planner"` // offline or llm
	PlannerError string       `json:"planner_error,omitempty"`
	Facets       []TraceFacet `json:"facets"`
	Rounds       []TraceRound `json:"rounds"`
	Searches     int          `json:"searches"`      // searches made
	SearchBudget int          `json:"search_budget"` // the profile's maximum
	StopReason   string       `json:"stop_reason"`
}

// TraceFacet is one part of the question and whether evidence covers it.
type TraceFacet struct {
	Text    string `json:"text"`
	Type    string `json:"type,omitempty"` // intent, target, artifact or time (LLM planner)
	Covered bool   `json:"covered"`
}

// TraceRound is one round of the loop: the queries it searched.
type TraceRound struct {
	Round    int      `json:"round"`
	Phase    string   `json:"phase"`
	Searches []string `json:"searches"`
}

// MaxQuestionRunes is the longest question accepted, in characters, on
// the command line and in the API alike.
const MaxQuestionRunes = 2000

// DefaultSlowAnswer is the answer time above which a warning is logged
// (seed 002 §9: タイムアウト（5秒超過） → 警告ログ、処理は継続).
const DefaultSlowAnswer = 5 * time.Second

// Reader reads the evidence of a question the way the extractive answer
// does and judges whether it answers (the learned reader of
// internal/reader behind answer.Extractive).
type Reader interface {
	Read(query string, results []retrieve.Result) *answer.Reading
}

// Options are an Assistant's settings.
type Options struct {
	// Reader, when set, also judges whether the evidence answers (its
	// answerability against its threshold, beside the evidence score and
	// the rule gates) and whether the evidence an answer cites answers
	// (Verification.Answers).
	Reader Reader
	// Reranker, when set, reorders the plain search's best results (the
	// learned passage re-ranker of internal/reader; Japanese questions
	// only, see retrieve.Rerank).
	Reranker          retrieve.Reranker
	Search            retrieve.Options // K, BM25 weight, fusion
	EvidenceThreshold float64          // absolute evidence below this → refusal (default guard.DefaultEvidenceThreshold)
	Warn              func(string)     // audit-log failures, slow answers and other warnings
	// Retrieve, when set, is used instead of one Searcher.Search call.
	Retrieve Retriever
	// ProcedureLookahead, when above 1, lets the generator choose the
	// section that answers a procedure question from this many times K
	// results (the extractive generator's procedure steps); the gate and
	// the reported results stay the top K plus what the answer cites.
	ProcedureLookahead int
	// Fallback answers when the generator fails (the model is down, out of
	// time or cut off before writing anything): the extractive generator,
	// from the same evidence. The reply then carries NoticeLLMUnavailable.
	// nil means a generator failure fails the question.
	Fallback Generator
	// NewConversation builds the conversation for a request that carries
	// History but no Conversation (an eval case's conversation_context),
	// so its follow-up is rewritten like one in a chat. nil means an
	// offline answer.Session over the searcher's analyser.
	NewConversation func(history []llm.Message) Conversation
	// SlowAnswer is the answer time above which Warn is told; 0 means
	// DefaultSlowAnswer.
	SlowAnswer time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Assistant answers questions. Create it with New.
type Assistant struct {
	searcher atomic.Pointer[retrieve.Searcher]
	freshen  atomic.Pointer[func(context.Context)] // SetFreshen
	gen      Generator
	log      Logger
	opt      Options
}

// New returns an Assistant answering from s with gen, logging to log (nil
// means no audit log).
func New(s *retrieve.Searcher, gen Generator, log Logger, opt Options) *Assistant {
	if opt.EvidenceThreshold == 0 {
		opt.EvidenceThreshold = guard.DefaultEvidenceThreshold
	}
	if opt.Warn == nil {
		opt.Warn = func(string) {}
	}
	if opt.SlowAnswer <= 0 {
		opt.SlowAnswer = DefaultSlowAnswer
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	a := &Assistant{gen: gen, log: log, opt: opt}
	a.searcher.Store(s)
	return a
}

// Swap replaces the searcher (after an index rebuild). Queries in flight
// finish on the searcher they started with.
func (a *Assistant) Swap(s *retrieve.Searcher) { a.searcher.Store(s) }

// Searcher returns the current searcher.
func (a *Assistant) Searcher() *retrieve.Searcher { return a.searcher.Load() }

// Options returns the assistant's settings.
func (a *Assistant) Options() Options { return a.opt }

// Request is one question.
type Request struct {
	Query     string
	SessionID string
	// Conversation, when set, resolves follow-ups, supplies history and
	// records the exchange.
	Conversation Conversation
	// History is used when Conversation is nil (e.g. an eval case's
	// conversation_context).
	History []llm.Message
	// Search overrides the assistant's search settings when K > 0.
	Search retrieve.Options
	// OnDelta receives the answer text as it is generated (streaming
	// generators only; others deliver it in one piece).
	OnDelta func(string)
	// OnDanger, when set, receives the danger decision made from the
	// question alone (guard.AssessQuestion), once, before retrieval and
	// before the first OnDelta, so that a page can show the banner above
	// the answer as it streams. The final decision, which the answer's
	// quoted operations may raise, is Reply.Flags.DangerousOperation.
	// It is not called for a question answered by the ambiguity template.
	OnDanger func(guard.Danger)
}

// CheckQuestion returns q trimmed, or an error in Japanese when it is
// empty — nothing but white space, control characters, NULs or invalid
// bytes (retrieve.Blank) — or longer than MaxQuestionRunes.
func CheckQuestion(q string) (string, error) {
	q = strings.TrimSpace(q)
	if retrieve.Blank(q) {
		return "", ErrEmptyQuestion
	}
	if n := utf8.RuneCountInString(q); n > MaxQuestionRunes {
		return "", fmt.Errorf("%w（%d 文字）— %d 文字以内にしてください", ErrQuestionTooLong, n, MaxQuestionRunes)
	}
	return q, nil
}

// Errors of CheckQuestion.
var (
	ErrEmptyQuestion   = errors.New("質問が空です — 質問を入力してください")
	ErrQuestionTooLong = errors.New("質問が長すぎます")
)

// Ask answers one question and writes its audit log line — whatever the
// outcome: an answer, a guardrail template, an extractive answer after a
// model failure, an answer cut off mid-stream, a timeout, a client that
// went away or an error (Reply.Outcome, auditlog.Outcome…). The returned
// error is the question's failure; a failure to write the audit line is
// reported in Reply.AuditError and through Options.Warn.
func (a *Assistant) Ask(ctx context.Context, req Request) (Reply, error) {
	start := a.opt.Now()
	query, err := CheckQuestion(req.Query)
	if err != nil {
		return Reply{}, err
	}
	rep := newReply(query)
	sopt := a.opt.Search
	if req.Search.K > 0 {
		sopt = req.Search
	}
	asked := sopt
	var streamed atomic.Bool
	if onDelta := req.OnDelta; onDelta != nil {
		req.OnDelta = func(s string) { streamed.Store(true); onDelta(s) }
	}
	used := a.Live(ctx)
	err = a.answer(ctx, used, req, &sopt, &rep)
	if err == nil {
		// The generation may have been switched while answering.
		err = a.recheck(ctx, used, req, asked, &sopt, &rep, streamed.Load())
	}
	rep.Search = &SearchUsed{K: sopt.K, BM25Weight: roundW(sopt.BM25Weight), VectorWeight: roundW(1 - sopt.BM25Weight), AutoWeight: sopt.AutoWeight}
	elapsed := a.opt.Now().Sub(start)
	rep.ProcessingTimeSec = roundSec(elapsed)
	if err != nil {
		rep.Outcome = outcomeOf(ctx, err)
		rep.Error = err.Error()
	}
	if elapsed > a.opt.SlowAnswer {
		a.opt.Warn(fmt.Sprintf("slow answer: %.1f s (over the %s target) for %q [%s]", elapsed.Seconds(), a.opt.SlowAnswer, auditlog.Excerpt(query, 60), rep.Outcome))
	}
	if c := req.Conversation; c != nil && err == nil {
		c.Add(query, rep.Answer)
	}
	if aerr := a.audit(context.WithoutCancel(ctx), req, rep, sopt); aerr != nil {
		rep.AuditError = aerr
	}
	return rep, err
}

// newReply is the empty reply to query (lists empty, not nil, for JSON).
func newReply(query string) Reply {
	return Reply{Query: query, Evidence: []answer.Evidence{}, Unknowns: []string{}, SearchResults: []retrieve.Result{}}
}

// outcomeOf names how a failed question ended.
func outcomeOf(ctx context.Context, err error) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || (ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded)):
		return auditlog.OutcomeTimeout
	case ctx.Err() != nil:
		return auditlog.OutcomeCancelled
	}
	return auditlog.OutcomeError
}

// assessQuestion is the question-side danger decision for a question as
// asked and, for a follow-up, as rewritten to stand alone (「それを全部
// 消したい」 names its object only in the rewrite).
func assessQuestion(query, effective string) guard.Danger {
	d := guard.AssessQuestion(query)
	if !d.Dangerous && effective != query {
		if e := guard.AssessQuestion(effective); e.Dangerous || d.Kind == "" {
			d = e
		}
	}
	return d
}

// generate writes the answer with the generator. When the model's stream
// is cut off mid-answer, the part that arrived is kept and marked
// incomplete; when the model fails otherwise (after its retries, or past
// its time limit) and the caller is still waiting, the Fallback generator
// answers from the same evidence with a notice.
func (a *Assistant) generate(ctx context.Context, query string, results []retrieve.Result, history []llm.Message, onDelta func(string), rep *Reply) (answer.Answer, error) {
	var ans answer.Answer
	var err error
	if sg, ok := a.gen.(StreamGenerator); ok && onDelta != nil {
		ans, err = sg.GenerateStream(ctx, query, results, history, onDelta)
	} else {
		ans, err = a.gen.Generate(ctx, query, results, history)
		if err == nil && onDelta != nil {
			onDelta(ans.Text)
		}
	}
	switch {
	case err == nil:
		return ans, nil
	case ctx.Err() != nil:
		// Cancelled or out of time: what was streamed so far goes to the
		// audit log with the outcome.
		if strings.TrimSpace(ans.Text) != "" {
			rep.Answer, rep.Incomplete, rep.Generator = ans.Text, true, ans.Generator
		}
		return ans, fmt.Errorf("generate answer: %w", err)
	case errors.Is(err, llm.ErrIncomplete) && strings.TrimSpace(ans.Text) != "":
		rep.Incomplete = true
		rep.Outcome = auditlog.OutcomeIncomplete
		rep.LLMError = llm.Reason(err)
		rep.Notice = NoticeIncomplete
		a.opt.Warn(fmt.Sprintf("the model's answer was cut off (%s); the partial answer is shown marked incomplete", rep.LLMError))
		return ans, nil
	case a.opt.Fallback == nil:
		return ans, fmt.Errorf("generate answer: %w", err)
	}
	fb, ferr := a.opt.Fallback.Generate(ctx, query, results, history)
	if ferr != nil {
		return fb, fmt.Errorf("generate answer: %w (extractive fallback: %v)", err, ferr)
	}
	rep.LLMUnavailable = true
	rep.Outcome = auditlog.OutcomeLLMUnavailable
	rep.LLMError = llm.Reason(err)
	rep.Notice = NoticeLLMUnavailable(err)
	a.opt.Warn(fmt.Sprintf("the model was unavailable (%s); answered extractively: %v", rep.LLMError, err))
	if onDelta != nil {
		onDelta(rep.Notice + "\n\n" + fb.Text)
	}
	return fb, nil
}

// conversationFrom is the conversation of a request that brings its own
// history.
func (a *Assistant) conversationFrom(history []llm.Message) Conversation {
	if a.opt.NewConversation != nil {
		return a.opt.NewConversation(history)
	}
	var tok answer.Tokenizer
	if s := a.searcher.Load(); s != nil {
		tok = s.Index().Analyzer()
	}
	c := answer.NewSession(answer.SessionOptions{Tokenizer: tok, MaxExchanges: max(answer.MaxConversationHistory, len(history))})
	c.AddHistory(history)
	return c
}

func addUsage(a, b llm.Usage) llm.Usage {
	return llm.Usage{
		PromptTokens:     a.PromptTokens + b.PromptTokens,
		CompletionTokens: a.CompletionTokens + b.CompletionTokens,
		TotalTokens:      a.TotalTokens + b.TotalTokens,
	}
}

func (a *Assistant) audit(ctx context.Context, req Request, rep Reply, sopt retrieve.Options) error {
	if a.log == nil {
		return nil
	}
	e := auditlog.Entry{
		SessionID:         req.SessionID,
		Query:             rep.Query,
		Answer:            rep.Answer,
		ProcessingTimeSec: rep.ProcessingTimeSec,
		TokenUsage: auditlog.TokenUsage{
			PromptTokens:     rep.TokenUsage.PromptTokens,
			CompletionTokens: rep.TokenUsage.CompletionTokens,
			TotalTokens:      rep.TokenUsage.TotalTokens,
		},
		CostUSD:        rep.CostUSD,
		SearchConfig:   auditlog.SearchConfig{K: sopt.K, BM25Weight: sopt.BM25Weight, VectorWeight: roundW(1 - sopt.BM25Weight)},
		Flags:          auditlog.Flags(rep.Flags),
		RewrittenQuery: rep.RewrittenQuery,
		Generator:      rep.Generator,
		Outcome:        rep.Outcome,
		Incomplete:     rep.Incomplete,
		LLMUnavailable: rep.LLMUnavailable,
		LLMError:       rep.LLMError,
		Error:          rep.Error,
	}
	if rep.Trace != nil {
		if b, err := json.Marshal(rep.Trace); err == nil {
			e.Trace = b
		}
	}
	for i, r := range rep.SearchResults {
		e.SearchResults = append(e.SearchResults, auditlog.SearchResult{
			ChunkID: r.ChunkID, Score: r.Score, BM25Score: r.BM25Score, VectorScore: r.VectorScore,
			File: r.File, Heading: r.Heading, Excerpt: auditlog.Excerpt(r.Text, 200),
			EvidenceScore: r.EvidenceScore,
		})
		if i < sopt.K {
			e.EvidenceScore = max(e.EvidenceScore, r.EvidenceScore)
		}
	}
	if len(rep.SearchResults) > 0 {
		e.EvidenceThreshold = a.opt.EvidenceThreshold
	}
	if err := a.log.Log(ctx, e); err != nil {
		a.opt.Warn(fmt.Sprintf("audit log not written: %v", err))
		return err
	}
	return nil
}

// gate is the evidence a Retriever's results give the question, on the
// plain path's scale: every strategy passes the same insufficient-evidence
// gate. The results are scored again against the whole question (not the
// facet query that found each), and the best counts; when the strategy
// searched several parts, the weakest part's best evidence counts too, if
// that is higher — a two-part question is answered when each part is
// supported somewhere, and refused when one part is not.
func gate(ctx context.Context, s *retrieve.Searcher, query string, got Retrieval, opt retrieve.Options) float64 {
	s.Rescore(ctx, query, got.Results, opt)
	best := 0.0
	for _, r := range got.Results {
		best = max(best, r.EvidenceScore)
	}
	if len(got.Parts) < 2 {
		return best
	}
	weakest := 1.0
	for _, p := range got.Parts {
		scored := slices.Clone(got.Results)
		s.Rescore(ctx, p, scored, opt)
		pb := 0.0
		for _, r := range scored {
			pb = max(pb, r.EvidenceScore)
		}
		weakest = min(weakest, pb)
	}
	return max(best, weakest)
}

// decide is the evidence gate: a question is refused when the search found
// nothing, when the best evidence score best is under threshold
// (guard.InsufficientEvidence), or when Refuses finds the asked kind of
// fact absent or a near miss; else it is answered.
func decide(ctx context.Context, s *retrieve.Searcher, query string, results []retrieve.Result, best, threshold float64) Decision {
	d := Decision{Action: ActionRefuse, Evidence: best}
	switch {
	case len(results) == 0:
		d.Reason = ReasonNoResults
	case guard.InsufficientEvidence(best, len(results), threshold):
		d.Reason = ReasonThreshold
	default:
		d.Reason = Refuses(ctx, s, query, results)
	}
	if d.Reason == "" {
		d.Action = ActionAnswer
	}
	return d
}

// followUps are the chunks the extractive generator needs beyond the
// search results, found by follow-up searches of every retrieval path: the
// definition of the term asked about. (Penalty provisions come from
// retrieve.CrossReferences, for every generator.) None with another
// generator (ProcedureLookahead ≤ 1).
func (a *Assistant) followUps(ctx context.Context, s *retrieve.Searcher, query string, results []retrieve.Result, opt retrieve.Options) []retrieve.Result {
	if a.opt.ProcedureLookahead <= 1 {
		return nil
	}
	return definitions(ctx, s, analysis.QuestionType(query), query, results, opt)
}

// definitions finds, for a question about what a term means whose
// results define it nowhere, the chunks that do (「六　行政指導　…をいう。」,
// 「「危険物」とは…」): one search for the term with the words definitions
// are written in, keeping the chunks with a sentence that defines it.
func definitions(ctx context.Context, s *retrieve.Searcher, qt analysis.AnswerType, query string, results []retrieve.Result, opt retrieve.Options) []retrieve.Result {
	term := analysis.DefinedTerm(query)
	if qt.Kind != analysis.KindDefinition || term == "" {
		return nil
	}
	defines := func(text string) bool {
		for _, sent := range analysis.SplitSentences(analysis.Normalize(text)) {
			if analysis.Defines(sent, term) {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	for _, r := range results {
		seen[r.ChunkID] = true
		if defines(r.Text) {
			return nil
		}
	}
	wide := opt
	wide.K = max(opt.K, 10)
	found, _, err := s.Search(ctx, term+" とは をいう 定義", wide)
	if err != nil {
		return nil
	}
	var out []retrieve.Result
	for _, r := range found {
		if !seen[r.ChunkID] && defines(r.Text) {
			out = append(out, r)
			if len(out) == 2 {
				break
			}
		}
	}
	return out
}

// appendNewResults appends to rs the results of more it does not hold.
func appendNewResults(rs, more []retrieve.Result) []retrieve.Result {
	have := make(map[string]bool, len(rs))
	for _, r := range rs {
		have[r.ChunkID] = true
	}
	for _, r := range more {
		if !have[r.ChunkID] {
			rs = append(rs, r)
		}
	}
	return rs
}

// withCited returns shown plus the results beyond it that the answer cites,
// so that every citation has its search result.
func withCited(shown, all []retrieve.Result, ev []answer.Evidence) []retrieve.Result {
	for _, r := range all[len(shown):] {
		for _, e := range ev {
			if e.File == r.File && e.Heading == r.Heading {
				shown = append(shown, r)
				break
			}
		}
	}
	return shown
}

func nonNil(e []answer.Evidence) []answer.Evidence {
	if e == nil {
		return []answer.Evidence{}
	}
	return e
}

func nonNilS(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func roundSec(d time.Duration) float64 { return float64(d.Microseconds()/1000) / 1000 }

func roundW(w float64) float64 { return float64(int64(w*1e4+0.5)) / 1e4 }

// lacksAskedKind reports whether a question that asks for a number with a
// counter, for a date or for a penalty (何日・何件・何歳・いつまで・どんな罰則)
// has evidence — every retrieved chunk, follow-ups included — without a
// single expression of that kind: the passages share its topic, but the
// asked detail is not in them (the near miss). A penalty of legal text is
// left to the evidence score: a law states it in a penalty article of its
// own, which refers back to the act and which retrieval and the penalty
// cross-references may still miss; a guideline, a policy or a manual that
// treats the act without a word of penalties has none to tell (one that
// says 「罰則はない」 answers).
func lacksAskedKind(qt analysis.AnswerType, results []retrieve.Result, norm []string) bool {
	if !qt.Strict() || len(results) == 0 {
		return false
	}
	for i, r := range results {
		if qt.Satisfied(norm[i]) {
			return false
		}
		if qt.Kind == analysis.KindPenalty && (len(analysis.Articles(r.Heading)) > 0 || analysis.MentionsPenalty(norm[i])) {
			return false // legal text, or a text that speaks of penalties (「罰則はない」)
		}
	}
	return true
}
