package main

// This file is the one place that turns the configuration into domain
// objects: one constructor per object (LLM client, embedder, index build
// and memory options, searcher, store, audit log, answer generator,
// assistant). Commands call these and never assemble domain options
// themselves.

import (
	"context"
	"errors"
	"fmt"
	"github.com/shirube/shirube/internal/reader"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/shirube/shirube/internal/agent"
	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/auditlog"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/embed"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/ocr"
	"github.com/shirube/shirube/internal/pgstore"
	"github.com/shirube/shirube/internal/retrieve"
	"github.com/shirube/shirube/internal/synonym"
)

// chatModel is what the commands need of an LLM client.
type chatModel interface {
	Complete(ctx context.Context, req llm.Request) (llm.Response, error)
	Stream(ctx context.Context, req llm.Request, onDelta func(string)) (llm.Response, error)
}

// newChatModel returns the configured LLM client, or an error naming the
// variables to set.
func newChatModel(cfg config.Config) (chatModel, string, error) {
	if err := cfg.CheckLLM(); errors.Is(err, config.ErrNoLLM) {
		return nil, "", fmt.Errorf("%w, or use --generator extractive", err)
	} else if err != nil {
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
	case config.ProviderAnthropic:
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

// extractiveGen adapts the extractive generator to the assistant's
// Generator (it answers each question alone, without the history).
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
	rd, err := newReader(cfg)
	if err != nil {
		return nil, nil, err
	}
	var eopt answer.ExtractiveOptions
	var judge *answer.Extractive // reads the evidence for the decision
	if rd != nil {
		judge = answer.NewExtractive(tok, answer.ExtractiveOptions{Reader: rd})
		if cfg.Reader == "learned" {
			eopt.Reader = rd
		}
	}
	ext := answer.NewExtractive(tok, eopt)
	extractive := extractiveGen{ext}
	switch cfg.EffectiveGenerator() {
	case "llm":
		m, name, err := newChatModel(cfg)
		if err != nil {
			return nil, nil, err
		}
		model = m
		gen = answer.Conversational{LLM: llmAnswerer(cfg, m, name, tok)}
		fallback = extractive // the model failed: answer from the same evidence, with a notice
	default:
		gen = extractive
		lookahead = 3
	}
	rr, err := reader.DefaultReranker()
	if err != nil {
		return nil, nil, err
	}
	opt := assistant.Options{
		Reader:             readerOf(judge),
		Reranker:           rr,
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
	if prof := cfg.AgentProfile(); prof != "" {
		// The facet planner uses the configured LLM (built like the
		// answer model, so --llm-timeout applies); offline, or when the
		// call fails, the offline planner splits the question.
		var planner agent.Completer
		if model != nil {
			planner = model
		}
		opt.Retrieve = agentRetriever(prof, tok, planner, rr, trace)
	}
	return assistant.New(s, gen, logger, opt), model, nil
}

// agentRetriever runs seed 003's agentic loop (facets, routes, corrective
// re-search within the profile's budget) in place of one search.
// planner (nil: offline only) decomposes the question into facets.
func agentRetriever(profile string, tok answer.Tokenizer, planner agent.Completer, rr retrieve.Reranker, trace io.Writer) assistant.Retriever {
	return func(ctx context.Context, s *retrieve.Searcher, query string, opt retrieve.Options) (assistant.Retrieval, error) {
		res, err := agent.Run(ctx, query, agent.Options{Profile: profile, Searcher: s, Tokenizer: tok, Search: opt, Planner: planner, Reranker: rr})
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
			Usage: res.PlannerUsage, CostUSD: res.PlannerCostUSD, Lead: &res.Lead}, nil
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
		return cachedEmbedder{}, errors.New("the openai embedder needs OPENAI_API_KEY (and OPENAI_API_BASE for a compatible server) — set them in the environment or .env, or use --embedder local")
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

// openSearcher loads the index named by the configuration.
func openSearcher(ctx context.Context, cfg config.Config) (*retrieve.Searcher, error) {
	if cfg.Store != "" {
		db, err := connectStore(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return storeSearcher(ctx, cfg, db, 0)
	}
	var opt index.OpenOptions
	if m, err := index.ReadMeta(cfg.IndexDir); err == nil && config.Embedder(m.Embedder.Kind) == config.EmbedderOpenAI {
		// Never a silent BM25-only search: the index's vectors need the
		// same embedder for the questions.
		cfg.EmbeddingModel = m.Embedder.Model
		remote, err := newRemoteEmbedder(cfg)
		if err != nil {
			return nil, fmt.Errorf("the index in %s was built with the openai embedder (%s), so questions must be embedded too: %w", cfg.IndexDir, m.Embedder.Model, err)
		}
		opt.Remote = remote
	}
	ix, err := index.Open(ctx, cfg.IndexDir, opt)
	if err != nil {
		return nil, err
	}
	return newSearcher(ix)
}

// newSearcher is the searcher over a loaded index: BM25 also searches the
// synonyms of the question's words (the shipped Sudachi synonym groups).
func newSearcher(ix retrieve.Store) (*retrieve.Searcher, error) {
	d, err := synonym.Default()
	if err != nil {
		return nil, err
	}
	return retrieve.New(ix).WithSynonyms(d), nil
}

// searchOptions are the configured search settings. Unless the user set a
// BM25 weight, each search chooses its own (retrieve.Options.AutoWeight).
func searchOptions(cfg config.Config) retrieve.Options {
	return retrieve.Options{K: cfg.K, BM25Weight: cfg.BM25Weight, Fusion: string(cfg.Fusion), AutoWeight: !cfg.BM25WeightSet, Scope: cfg.Scope}
}

// connectStore opens the configured PostgreSQL store and migrates its schema.
func connectStore(ctx context.Context, cfg config.Config) (*pgstore.DB, error) {
	return pgstore.Connect(ctx, cfg.Store, pgstore.Options{})
}

// storeSearcher opens the store's current generation (gen 0) or gen.
func storeSearcher(ctx context.Context, cfg config.Config, db *pgstore.DB, gen int64) (*retrieve.Searcher, error) {
	pix, err := db.Open(ctx, pgstore.OpenOptions{Generation: gen})
	if err != nil {
		return nil, err
	}
	if m := pix.Meta(); config.Embedder(m.Embedder.Kind) == config.EmbedderOpenAI && cfg.OpenAIKey != "" {
		cfg.EmbeddingModel = m.Embedder.Model
		remote, err := newRemoteEmbedder(cfg)
		if err != nil {
			return nil, err
		}
		if pix, err = db.Open(ctx, pgstore.OpenOptions{Generation: pix.Generation(), Remote: remote, Analyzer: pix.Analyzer()}); err != nil {
			return nil, err
		}
	}
	return newSearcher(pix)
}

// storeSettings are the build settings of `shirube index --store`.
func storeSettings(cfg config.Config) pgstore.Settings {
	return pgstore.Settings{
		DataDir: cfg.DataDir, DatabaseDir: cfg.DatabaseDir,
		ChunkSize: cfg.ChunkSize, ChunkOverlap: cfg.ChunkOverlap,
		Analyzer: analysis.DefaultOptions(), Embedder: string(cfg.Embedder), EmbeddingModel: cfg.EmbeddingModel,
		HTMLMode: "markdown",
	}
}

// auditSpoolFile is the file in the logs folder that keeps the audit
// entries the store's audit_log table could not take yet.
const auditSpoolFile = "audit_log.spool.jsonl"

// newAuditLogger returns the audit log the configuration asks for: JSONL
// files in the logs folder, the store's audit_log table, or both.
func newAuditLogger(cfg config.Config, warn func(string)) (assistant.Logger, error) {
	jsonl := auditlog.Open(cfg.LogsDir, auditlog.Options{Warn: warn})
	if cfg.Audit == "" || cfg.Audit == "jsonl" {
		return jsonl, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := connectStore(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	// Entries PostgreSQL cannot take (an outage, a restart) wait in the
	// spool in the logs folder and are written when it answers again.
	opt := pgstore.AuditOptions{Spool: filepath.Join(jsonl.Dir(), auditSpoolFile), Warn: warn}
	if cfg.Audit == "both" {
		opt.Also = jsonl
	}
	return pgstore.NewAuditLog(db, opt), nil
}

// memoryOptions are the in-memory index settings (`bench beir`): the
// default analyser, and the embedder the configuration names (the openai
// one with its content-hash cache under the index folder).
func memoryOptions(cfg config.Config) (index.MemoryOptions, error) {
	mo := index.MemoryOptions{Analyzer: analysis.DefaultOptions(), Embedder: string(cfg.Embedder), EmbeddingModel: cfg.EmbeddingModel}
	if cfg.Embedder == config.EmbedderOpenAI {
		remote, err := newRemoteEmbedder(cfg)
		if err != nil {
			return mo, err
		}
		mo.Remote = remote
	}
	return mo, nil
}

// buildOptions are the options of an index build from the configuration:
// folders, chunking, the default analyser, size limits and the embedder
// (the openai one with its content-hash cache in the index folder). The
// caller adds what is particular to its build (Rebuild, HTMLMode,
// Categorize, Progress).
func buildOptions(cfg config.Config, warn func(string)) (index.BuildOptions, error) {
	opt := index.BuildOptions{
		DataDir:        cfg.DataDir,
		DatabaseDir:    cfg.DatabaseDir,
		Dir:            cfg.IndexDir,
		Chunk:          chunk.Options{Size: cfg.ChunkSize, Overlap: cfg.ChunkOverlap},
		Analyzer:       analysis.DefaultOptions(),
		MaxFileSize:    cfg.MaxFileSize,
		MaxTextBytes:   cfg.MaxTextSize,
		FileTimeout:    cfg.FileTimeout,
		Embedder:       string(cfg.Embedder),
		EmbeddingModel: cfg.EmbeddingModel,
		Warn:           warn,
		OCR:            newOCR(cfg),
		OCRMode:        document.OCRMode(cfg.OCR),
		OCRTimeout:     cfg.OCRTimeout,
	}
	if cfg.Embedder == config.EmbedderOpenAI {
		remote, err := newRemoteEmbedder(cfg)
		if err != nil {
			return opt, err
		}
		opt.Remote = remote
	}
	return opt, nil
}

// newOCR is the Tesseract engine of index builds: the configured page
// timeout, results cached by page image in SHIRUBE_OCR_CACHE or else the
// index folder's ocr-cache/, so a rebuild or a re-rendered unchanged page
// is not read again.
func newOCR(cfg config.Config) *ocr.Engine {
	cache := cfg.OCRCache
	if cache == "" {
		cache = filepath.Join(cfg.IndexDir, "ocr-cache")
	}
	return ocr.New(ocr.Options{Timeout: cfg.OCRTimeout, CacheDir: cache})
}

// llmAnswerer is the LLM answer generator over model m (named name) with
// the configured claim verification.
func llmAnswerer(cfg config.Config, m chatModel, name string, tok answer.Tokenizer) *answer.LLM {
	return answer.NewLLM(m, m, answer.LLMOptions{Model: name, Tokenizer: tok, MinClaimCoverage: cfg.ClaimCoverage, KeepUnverified: cfg.KeepUnverified, LexicalOnly: cfg.Verify == config.VerifyLexical})
}

// errNoJudgeKey is newJudgeModel's error when no provider's key is set.
var errNoJudgeKey = errors.New(`the LLM judge needs an API key, and none is set.
Set ANTHROPIC_API_KEY (Claude Sonnet is the default judge) in the environment or in .env,
or OPENAI_API_KEY (with OPENAI_API_BASE for Ollama, vLLM or LM Studio) and --provider openai.
To score offline without an LLM, run: shirube judge --judge lexical`)

// newJudgeModel is the model of the binary answer judge: the provider rule
// of every LLM call (config.ProviderFor), preferring Anthropic when both
// keys are set, because the judge's prompt was written for Claude.
func newJudgeModel(cfg config.Config) (chatModel, string, error) {
	cfg.Provider = cfg.ProviderFor(config.ProviderAnthropic)
	if cfg.Provider == "" {
		return nil, "", errNoJudgeKey
	}
	return newChatModel(cfg)
}

// optionalChatModel returns the chat model for judging and proposing: the
// assistant's when it answers with an LLM, else one built from the keys
// that are set, else nil (offline).
func optionalChatModel(cfg config.Config, model chatModel, warn func(string)) (chatModel, string) {
	if model != nil {
		return model, cfg.LLMModel
	}
	if cfg.LLMProvider() == "" {
		return nil, ""
	}
	m, _, err := newChatModel(cfg)
	if err != nil {
		warn(fmt.Sprintf("LLM not usable, judging offline: %v", err))
		return nil, ""
	}
	return m, cfg.LLMModel
}

// newReader loads the learned reader the configuration asks for: the
// model file given, else the one shipped in the binary; nil with
// `--reader rules`.
func newReader(cfg config.Config) (*reader.Model, error) {
	if cfg.Reader == "rules" {
		return nil, nil
	}
	var m *reader.Model
	var err error
	if cfg.ReaderModel != "" {
		m, err = reader.Load(cfg.ReaderModel)
	} else {
		m, err = reader.Default()
	}
	if err != nil {
		return nil, err
	}
	if err := m.Check(answer.SentenceFeatureNames(), answer.AnswerFeatureNames()); err != nil {
		return nil, err
	}
	return m, nil
}

// readerOf is the assistant's reader (nil without a model).
func readerOf(judge *answer.Extractive) assistant.Reader {
	if judge == nil {
		return nil
	}
	return judge
}
