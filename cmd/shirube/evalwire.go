package main

// What the evaluation commands share: adapters of the assistant to the
// evaluators, the choice of judge and proposer, the page database's
// location and the index refresh after optimisation. Each command is in
// its own file: batch.go (batch, and ask input.csv), optimize.go,
// questions.go, convert.go, judge.go, eval.go and diffeval.go.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/eval/batch"
	"github.com/shirube/shirube/internal/eval/judge"
	"github.com/shirube/shirube/internal/eval/metrics"
	"github.com/shirube/shirube/internal/eval/optimize"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/llm"
)

// batchAsker answers batch and optimisation questions with the assistant.
type batchAsker struct{ a *assistant.Assistant }

func (b batchAsker) Ask(ctx context.Context, q string) (batch.AskResult, error) {
	rep, err := b.a.Ask(ctx, assistant.Request{Query: q, SessionID: newSessionID("batch")})
	if err != nil {
		return batch.AskResult{}, err
	}
	res := batch.AskResult{Answer: rep.Answer, Retrieved: rep.Retrieved(), Refused: rep.Refused(), Generator: rep.Generator}
	if rep.LLMUnavailable {
		res.ModelNotUsed = cmp.Or(rep.LLMError, "the model failed")
	}
	return res, nil
}

// historyAsker answers eval and diff-eval cases, with their conversation.
type historyAsker struct {
	a      *assistant.Assistant
	prefix string
}

func (h historyAsker) Ask(ctx context.Context, q string, history []llm.Message) (assistant.Reply, error) {
	return h.a.Ask(ctx, assistant.Request{Query: q, History: history, SessionID: newSessionID(h.prefix)})
}

// checklistJudge is the batch checklist matcher: the LLM when one is
// configured, else the offline judge.
func checklistJudge(m chatModel, model string) metrics.ItemJudge {
	if m == nil {
		return metrics.OfflineJudge{}
	}
	return judge.ChecklistLLM{LLM: m, Model: model}
}

// wordTokenizer gives the offline proposer dictionary words (no n-grams,
// no stemming), which make readable folder names.
type wordTokenizer struct{ a *analysis.Analyzer }

func (w wordTokenizer) Terms(text string) []string { return w.a.Terms(text) }

// folderProposer is the LLM proposer when a model is configured, else the
// offline one.
func folderProposer(m chatModel, model string, warn func(string)) optimize.Proposer {
	if m != nil {
		return optimize.LLMProposer{LLM: m, Model: model}
	}
	an, err := analysis.New(analysis.Options{NoStem: true})
	if err != nil {
		warn(fmt.Sprintf("morphological analyser unavailable, using script runs for folder names: %v", err))
		return optimize.OfflineProposer{Tokenizer: optimize.TermTokenizer{}}
	}
	return optimize.OfflineProposer{Tokenizer: wordTokenizer{an}}
}

// layout is where the page database lives: page identities such as
// database/<folder>/<stem>/page_NNN.md are relative to root, and scope is
// the database folder's base name. cfg carries the settings the index was
// built with, for re-indexing.
type layout struct {
	root, scope string
	cfg         config.Config
}

// pageLayout takes the database and data folders from the index metadata
// unless --database / --data were given.
func pageLayout(cmd *cobra.Command, cfg config.Config) layout {
	changed := func(name string) bool {
		fl := cmd.Flags().Lookup(name)
		return fl != nil && fl.Changed
	}
	if m, err := index.ReadMeta(cfg.IndexDir); err == nil {
		if m.DatabaseDir != "" && !changed("database") {
			cfg.DatabaseDir = m.DatabaseDir
		}
		if m.DataDir != "" && !changed("data") {
			cfg.DataDir = m.DataDir
		}
		if m.ChunkSize > 0 && !changed("chunk-size") {
			cfg.ChunkSize, cfg.ChunkOverlap = m.ChunkSize, m.ChunkOverlap
		}
		if m.Embedder.Kind != "" {
			cfg.Embedder = config.Embedder(m.Embedder.Kind)
		}
	}
	db := filepath.Clean(cfg.DatabaseDir)
	if abs, err := filepath.Abs(db); err == nil {
		db = abs
	}
	return layout{root: filepath.Dir(db), scope: filepath.Base(db), cfg: cfg}
}

// reindexer rebuilds the index after a copy or rollback of the RL loop and
// swaps the fresh searcher into the assistant.
type reindexer struct {
	cfg  config.Config
	a    *assistant.Assistant
	errw io.Writer
}

func (r *reindexer) Reindex(ctx context.Context) error {
	if _, err := runIndex(ctx, r.cfg, false, io.Discard); err != nil {
		return err
	}
	s, err := openSearcher(ctx, r.cfg)
	if err != nil {
		return err
	}
	r.a.Swap(s)
	return nil
}

// refreshIndex brings the index up to date after optimize created or
// --undo deleted page copies, so search and the Opt Ref metrics of the next
// batch see the database as it is. Without an index there is nothing to
// refresh.
func refreshIndex(ctx context.Context, cfg config.Config, w io.Writer) error {
	m, err := index.ReadMeta(cfg.IndexDir)
	if err != nil {
		return nil
	}
	var cat *document.CategorizeOptions
	if m.Categorized {
		cat = &document.CategorizeOptions{}
	}
	sum, err := runIndexWith(ctx, cfg, false, cat, io.Discard)
	if err != nil {
		return fmt.Errorf("the page database changed but the index could not be refreshed: %w; run: shirube index", err)
	}
	fmt.Fprintf(w, "index refreshed: %d documents, %d pages\n", sum.Documents, sum.Pages)
	return nil
}
