package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/shirube/shirube/internal/agent"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/embed"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
)

// chatModel is what the commands need of an LLM client.
type chatModel interface {
	Complete(ctx context.Context, req llm.Request) (llm.Response, error)
	Stream(ctx context.Context, req llm.Request, onDelta func(string)) (llm.Response, error)
}

// newChatModel returns the configured LLM client, or an error naming the
// variables to set.
func newChatModel(cfg config.Config) (chatModel, string, error) {
	if err := cfg.CheckLLM(); err != nil {
		return nil, "", err
	}
	var prices llm.Prices
	if cfg.Prices != "" {
		over, err := llm.ParsePrices(cfg.Prices)
		if err != nil {
			return nil, "", fmt.Errorf("SHIRUBE_PRICES: %w", err)
		}
		prices = llm.DefaultPrices().With(over)
	}
	switch cfg.LLMProvider() {
	case "anthropic":
		model := cfg.LLMModel
		c, err := llm.NewAnthropic(llm.AnthropicConfig{APIKey: cfg.AnthropicKey, BaseURL: cfg.AnthropicBase, Model: model, Prices: prices, CallTimeout: cfg.LLMTimeout})
		if err != nil {
			return nil, "", err
		}
		return c, c.Model(), nil
	default:
		c, err := llm.NewOpenAI(llm.OpenAIConfig{APIKey: cfg.OpenAIKey, BaseURL: cfg.OpenAIBase, Model: cfg.LLMModel, Prices: prices, CallTimeout: cfg.LLMTimeout})
		if err != nil {
			return nil, "", err
		}
		return c, c.Model(), nil
	}
}

// generator wraps an answer generator to the assistant's interface.
type extractiveGen struct{ e *answer.Extractive }

func (g extractiveGen) Generate(ctx context.Context, q string, rs []retrieve.Result, _ []llm.Message) (answer.Answer, error) {
	return g.e.Generate(ctx, q, rs)
}

// newAssistant opens the index and builds the answer pipeline the
// configuration asks for. It also returns the chat model (nil offline) for
// conversation rewriting.
func newAssistant(ctx context.Context, cfg config.Config, warn func(string)) (*assistant.Assistant, chatModel, error) {
	s, err := openSearcher(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return assemble(cfg, s, s.Index().Analyzer(), warn)
}

// assemble builds the assistant over searcher s (nil before any index
// exists): the generator the configuration asks for, the audit log and the
// search settings.
func assemble(cfg config.Config, s *retrieve.Searcher, tok answer.Tokenizer, warn func(string)) (*assistant.Assistant, chatModel, error) {
	logger, err := newAuditLogger(cfg, warn)
	if err != nil {
		return nil, nil, err
	}
	return assembleWith(cfg, s, tok, warn, logger, os.Stderr)
}

// assembleWith is assemble with an explicit audit logger (nil: none) and a
// writer for the agent's trace line.
func assembleWith(cfg config.Config, s *retrieve.Searcher, tok answer.Tokenizer, warn func(string), logger assistant.Logger, trace io.Writer) (*assistant.Assistant, chatModel, error) {
	var gen, fallback assistant.Generator
	var model chatModel
	lookahead := 0
	extractive := extractiveGen{answer.NewExtractive(tok, answer.ExtractiveOptions{})}
	switch cfg.EffectiveGenerator() {
	case "llm":
		m, name, err := newChatModel(cfg)
		if err != nil {
			return nil, nil, err
		}
		model = m
		gen = answer.Conversational{LLM: answer.NewLLM(m, m, answer.LLMOptions{Model: name, Tokenizer: tok, MinClaimCoverage: cfg.ClaimCoverage, KeepUnverified: cfg.KeepUnverified, LexicalOnly: cfg.Verify == "lexical"})}
		fallback = extractive // the model failed: answer from the same evidence, with a notice
	default:
		gen = extractive
		lookahead = 3
	}
	opt := assistant.Options{
		Search:             searchOptions(cfg),
		EvidenceThreshold:  cfg.EvidenceThreshold,
		Warn:               warn,
		ProcedureLookahead: lookahead,
		Fallback:           fallback,
		NewConversation: func(history []llm.Message) assistant.Conversation {
			s := sessionFor(tok, model, max(cfg.MaxHistory, len(history)))
			s.AddHistory(history)
			return s
		},
	}
	if cfg.Profile != "" {
		// The facet planner uses the configured LLM (built like the
		// answer model, so --llm-timeout applies); offline, or when the
		// call fails, the offline planner splits the question.
		var planner agent.Completer
		if model != nil {
			planner = model
		}
		opt.Retrieve = agentRetriever(cfg.Profile, tok, planner, trace)
	}
	return assistant.New(s, gen, logger, opt), model, nil
}

// agentRetriever runs seed 003's agentic loop (facets, routes, corrective
// re-search within the profile's budget) in place of one search.
// planner (nil: offline only) decomposes the question into facets.
func agentRetriever(profile string, tok answer.Tokenizer, planner agent.Completer, trace io.Writer) assistant.Retriever {
	return func(ctx context.Context, s *retrieve.Searcher, query string, opt retrieve.Options) (assistant.Retrieval, error) {
		res, err := agent.Run(ctx, query, agent.Options{Profile: profile, Searcher: s, Tokenizer: tok, Search: opt, Planner: planner})
		if err != nil {
			return assistant.Retrieval{}, err
		}
		if res.PlannerError != "" {
			fmt.Fprintf(trace, "(LLM planner unavailable, offline planner used: %s)\n", res.PlannerError)
		}
		fmt.Fprintf(trace, "(profile %s: route %s, planner %s, %d searches in %d rounds, top5 relevance %.2f, must-have %d/%d, stop: %s)\n",
			res.Profile, res.Route, res.Planner, res.Calls, res.Rounds, res.Top5Relevance, res.MustHaveHits, len(res.Facets), res.StopReason)
		var parts []string
		for _, f := range res.Facets {
			parts = append(parts, f.Text)
		}
		return assistant.Retrieval{Results: res.Evidence, Unknowns: res.Unknowns, Parts: parts, Trace: traceOf(res),
			Usage: res.PlannerUsage, CostUSD: res.PlannerCostUSD}, nil
	}
}

// traceOf is the assistant's trace of an agent run.
func traceOf(res agent.Result) *assistant.Trace {
	t := &assistant.Trace{
		Profile: res.Profile, Route: res.Route, Planner: res.Planner, PlannerError: res.PlannerError,
		Facets: []assistant.TraceFacet{}, Rounds: []assistant.TraceRound{},
		Searches: res.Calls, SearchBudget: res.Budget, StopReason: res.StopReason,
	}
	for i, f := range res.Facets {
		tf := assistant.TraceFacet{Text: f.Text, Type: f.Type}
		if i < len(res.Coverage) {
			tf.Covered = res.Coverage[i].Covered
		}
		t.Facets = append(t.Facets, tf)
	}
	for _, st := range res.Trace {
		if n := len(t.Rounds); n == 0 || t.Rounds[n-1].Round != st.Round {
			t.Rounds = append(t.Rounds, assistant.TraceRound{Round: st.Round, Phase: st.Phase, Searches: []string{}})
		}
		r := &t.Rounds[len(t.Rounds)-1]
		r.Searches = append(r.Searches, st.Query)
	}
	return t
}

// newSession starts a conversation that rewrites follow-ups with the LLM
// when one is configured, else offline.
func newSession(a *assistant.Assistant, model chatModel, maxHistory int) *answer.Session {
	return sessionFor(a.Searcher().Index().Analyzer(), model, maxHistory)
}

// sessionFor is a conversation over the tokenizer tok, rewriting with
// model when there is one.
func sessionFor(tok answer.Tokenizer, model chatModel, maxHistory int) *answer.Session {
	opt := answer.SessionOptions{MaxExchanges: maxHistory, Tokenizer: tok}
	if model != nil {
		opt.Rewriter = model
	}
	return answer.NewSession(opt)
}

// cachedEmbedder saves the embedding cache after every call, so a crash
// never loses paid-for embeddings.
type cachedEmbedder struct {
	e     *embed.OpenAI
	cache *embed.FileCache
	path  string
}

func (c cachedEmbedder) EmbedTexts(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := c.e.EmbedTexts(ctx, texts)
	if serr := c.cache.Save(c.path); serr != nil && err == nil {
		fmt.Fprintln(os.Stderr, "warning: embedding cache not saved:", serr)
	}
	return vs, err
}

// newRemoteEmbedder returns the OpenAI-compatible embedder with its cache
// in the index directory.
func newRemoteEmbedder(cfg config.Config) (cachedEmbedder, error) {
	if cfg.OpenAIKey == "" && cfg.OpenAIBase == "" {
		return cachedEmbedder{}, errors.New("Error: the openai embedder needs OPENAI_API_KEY (and OPENAI_API_BASE for a compatible server) — set them in the environment or .env, or use --embedder local")
	}
	if err := os.MkdirAll(cfg.IndexDir, 0o755); err != nil {
		return cachedEmbedder{}, err
	}
	path := filepath.Join(cfg.IndexDir, "embed-cache.bin")
	cache, err := embed.LoadCache(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "warning: embedding cache %s unreadable, starting empty: %v\n", path, err)
		cache = nil
	}
	if cache == nil {
		cache = embed.NewFileCache()
	}
	e := embed.NewOpenAI(embed.OpenAIConfig{BaseURL: cfg.OpenAIBase, APIKey: cfg.OpenAIKey, Model: cfg.EmbeddingModel}, cache)
	return cachedEmbedder{e: e, cache: cache, path: path}, nil
}
