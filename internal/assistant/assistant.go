package assistant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

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
	// come back unchanged.
	Rewrite(ctx context.Context, query string) (string, error)
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
}

// Options are an Assistant's settings.
type Options struct {
	Search            retrieve.Options // K, BM25 weight, fusion
	EvidenceThreshold float64          // absolute evidence below this → refusal (default 0.5)
	Warn              func(string)     // audit-log failures and other warnings
	// Retrieve, when set, is used instead of one Searcher.Search call.
	Retrieve Retriever
	// ProcedureLookahead, when above 1, lets the generator choose the
	// section that answers a procedure question from this many times K
	// results (the extractive generator's procedure steps); the gate and
	// the reported results stay the top K plus what the answer cites.
	ProcedureLookahead int
}

// Assistant answers questions. Create it with New.
type Assistant struct {
	searcher atomic.Pointer[retrieve.Searcher]
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
}

// Ask answers one question and writes its audit log line.
func (a *Assistant) Ask(ctx context.Context, req Request) (Reply, error) {
	start := time.Now()
	query := strings.TrimSpace(req.Query)
	if query == "" {
		return Reply{}, errors.New("the question is empty — type a question")
	}
	rep := Reply{Query: query, Evidence: []answer.Evidence{}, Unknowns: []string{}, SearchResults: []retrieve.Result{}}
	history := req.History
	effective := query
	if c := req.Conversation; c != nil {
		history = c.History()
		rw, err := c.Rewrite(ctx, query)
		if err != nil {
			a.opt.Warn(fmt.Sprintf("follow-up not rewritten: %v", err))
		} else if rw = strings.TrimSpace(rw); rw != "" && rw != query {
			effective = rw
			rep.RewrittenQuery = rw
		}
	}
	sopt := a.opt.Search
	if req.Search.K > 0 {
		sopt = req.Search
	}

	switch {
	case guard.DetectAmbiguous(effective):
		rep.Flags.AmbiguousQuery = true
		rep.Answer = guard.AmbiguousQueryResponse
		rep.Generator = "guard"
	default:
		var results []retrieve.Result
		var extraUnknowns []string
		var err error
		s := a.searcher.Load()
		best := 0.0
		if a.opt.Retrieve != nil {
			var got Retrieval
			got, err = a.opt.Retrieve(ctx, s, effective, sopt)
			results, extraUnknowns = got.Results, got.Unknowns
			best = gate(ctx, s, effective, got, sopt)
		} else {
			var info retrieve.Info
			wide := sopt
			if a.opt.ProcedureLookahead > 1 && analysis.IsProcedure(effective) {
				// A procedure's steps often sit in a long section that
				// ranks below shorter ones mentioning the same words: the
				// generator looks further down for the section whose
				// heading names the procedure. The gate and the reported
				// results stay the top K.
				wide.K = a.opt.ProcedureLookahead * sopt.K
			}
			results, info, err = s.Search(ctx, effective, wide)
			// The audit log records the weight this search used (chosen
			// per query unless the user set one).
			sopt.BM25Weight = info.BM25Weight
			for i, r := range results {
				if i < sopt.K {
					best = max(best, r.EvidenceScore)
				}
			}
		}
		if err != nil {
			return rep, fmt.Errorf("search: %w", err)
		}
		rep.SearchResults = results
		if len(results) > sopt.K {
			rep.SearchResults = results[:sopt.K]
		}
		if guard.InsufficientEvidence(best, len(results), a.opt.EvidenceThreshold) {
			rep.Flags.InsufficientEvidence = true
			rep.Answer = guard.InsufficientEvidenceResponse
			rep.Generator = "guard"
			break
		}
		var ans answer.Answer
		if sg, ok := a.gen.(StreamGenerator); ok && req.OnDelta != nil {
			ans, err = sg.GenerateStream(ctx, effective, results, history, req.OnDelta)
		} else {
			ans, err = a.gen.Generate(ctx, effective, results, history)
			if err == nil && req.OnDelta != nil {
				req.OnDelta(ans.Text)
			}
		}
		if err != nil {
			return rep, fmt.Errorf("generate answer: %w", err)
		}
		rep.Answer = ans.Text
		rep.Evidence = nonNil(ans.Evidence)
		rep.SearchResults = withCited(rep.SearchResults, results, rep.Evidence)
		rep.Unknowns = nonNilS(append(ans.Unknowns, extraUnknowns...))
		rep.TokenUsage = ans.Usage
		rep.CostUSD = ans.CostUSD
		rep.Generator = ans.Generator
		rep.RemovedCitations = ans.RemovedCitations
		rep.Verification = ans.Verification
	}
	if !rep.Flags.AmbiguousQuery && guard.DetectDangerous(query+"\n"+effective, rep.Answer) {
		rep.Flags.DangerousOperation = true
		rep.Answer = guard.Banner + "\n\n" + rep.Answer
	}
	rep.ProcessingTimeSec = roundSec(time.Since(start))
	if c := req.Conversation; c != nil {
		c.Add(query, rep.Answer)
	}
	a.audit(ctx, req, rep, sopt)
	return rep, nil
}

func (a *Assistant) audit(ctx context.Context, req Request, rep Reply, sopt retrieve.Options) {
	if a.log == nil {
		return
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
	}
	for _, r := range rep.SearchResults {
		e.SearchResults = append(e.SearchResults, auditlog.SearchResult{
			ChunkID: r.ChunkID, Score: r.Score, BM25Score: r.BM25Score, VectorScore: r.VectorScore,
			File: r.File, Heading: r.Heading, Excerpt: auditlog.Excerpt(r.Text, 200),
		})
	}
	if err := a.log.Log(ctx, e); err != nil {
		a.opt.Warn(fmt.Sprintf("audit log not written: %v", err))
	}
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
