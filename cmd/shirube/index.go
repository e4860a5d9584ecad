package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/bench"
	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/retrieve"
)

func addDirFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("data", config.DefaultDataDir, "folder of source documents (.pdf .md .html .txt)")
	f.String("database", config.DefaultDatabaseDir, "per-page Markdown database to write")
	f.String("index", config.DefaultIndexDir, "index directory")
}

func addSearchFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("index", config.DefaultIndexDir, "index directory")
	f.Int("k", config.DefaultK, "number of results")
	f.Float64("bm25-weight", config.DefaultBM25Weight, "weight of the BM25 leg (vector weight is 1 − this)")
	f.String("fusion", config.DefaultFusion, "score fusion: minmax or rrf")
	f.StringSlice("scope", nil, "search only these folders or documents (relative to the data folder or the page database; repeat or comma-separate)")
}

func newIndexCmd(g *globals) *cobra.Command {
	var rebuild, jsonOut, categorize bool
	var ctxCat *document.CategorizeOptions
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Ingest the data folder into the page database and the index",
		Long: `index walks --data for .pdf, .md/.markdown, .html/.htm and .txt files,
writes every page to the per-page Markdown database
(database/<folder>/<document>/page_NNN.md), chunks it by headings, and builds
the hybrid BM25 + vector index. Unchanged files are reused; --rebuild forces
everything to be read again. Files that cannot be read are skipped with a
one-line reason.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// A build's live heap is the corpus's chunks, postings and
			// vectors; the collector's default headroom (as much garbage
			// again) doubles the peak. Half of it: 723 → 556 MiB at 33k
			// chunks, same time (docs/BENCHMARKS.md). GOGC still wins.
			if os.Getenv("GOGC") == "" {
				debug.SetGCPercent(50)
			}
			cfg := g.cfg
			if categorize {
				cat := &document.CategorizeOptions{Warn: func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "warning:", s) }}
				if cfg.LLMProvider() != "" {
					m, name, err := newChatModel(cfg)
					if err != nil {
						return err
					}
					cat.LLM, cat.Model = m, name
				}
				ctxCat = cat
			}
			sum, err := runIndexWith(cmd.Context(), cfg, rebuild, ctxCat, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if jsonOut {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(sum)
			}
			printSummary(cmd.OutOrStdout(), sum)
			return nil
		},
	}
	addDirFlags(cmd)
	f := cmd.Flags()
	f.BoolVar(&rebuild, "rebuild", false, "re-extract and re-embed every file")
	f.Int("chunk-size", config.DefaultChunkSize, "chunk size in characters")
	f.Int("chunk-overlap", config.DefaultChunkOverlap, "chunk overlap in characters")
	f.String("embedder", config.DefaultEmbedder, "vector leg: local (offline, corpus-fitted) or openai")
	f.BoolVar(&jsonOut, "json", false, "print the summary as JSON")
	f.Int("workers", 1, "with --store: documents ingested at once by this process (other processes may join the build)")
	f.BoolVar(&categorize, "categorize", false, "group each PDF's pages into section folders (LLM when configured, else outline or headings)")
	return cmd
}

// runIndex builds the index with a progress bar on a terminal.
func runIndex(ctx context.Context, cfg config.Config, rebuild bool, errw io.Writer) (index.Summary, error) {
	return runIndexWith(ctx, cfg, rebuild, nil, errw)
}

// runIndexWith is runIndex with optional page categorisation.
func runIndexWith(ctx context.Context, cfg config.Config, rebuild bool, cat *document.CategorizeOptions, errw io.Writer) (index.Summary, error) {
	var bar *progressbar.ProgressBar
	isTTY := false
	if f, ok := errw.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		isTTY = true
	}
	phase := ""
	opt := index.BuildOptions{
		DataDir:        cfg.DataDir,
		DatabaseDir:    cfg.DatabaseDir,
		Dir:            cfg.IndexDir,
		Rebuild:        rebuild,
		Chunk:          chunk.Options{Size: cfg.ChunkSize, Overlap: cfg.ChunkOverlap},
		Analyzer:       analysis.DefaultOptions(),
		MaxFileSize:    cfg.MaxFileSize,
		MaxTextBytes:   cfg.MaxTextSize,
		Embedder:       cfg.Embedder,
		EmbeddingModel: cfg.EmbeddingModel,
		Categorize:     cat,
		Warn:           func(s string) { fmt.Fprintln(errw, "warning:", s) },
		Progress: func(p string, done, total int) {
			if !isTTY {
				return
			}
			if p != phase || bar == nil {
				if bar != nil {
					bar.Finish()
				}
				phase = p
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(errw),
					progressbar.OptionSetDescription(p), progressbar.OptionClearOnFinish(),
					progressbar.OptionThrottle(100*time.Millisecond))
			}
			bar.Set(done)
		},
	}
	if cfg.Store != "" {
		sum, err := storeIndex(ctx, cfg, rebuild, errw, opt.Progress)
		if bar != nil {
			bar.Finish()
		}
		return sum, err
	}
	if cfg.Embedder == "openai" {
		remote, err := newRemoteEmbedder(cfg)
		if err != nil {
			return index.Summary{}, err
		}
		opt.Remote = remote
	}
	sum, err := index.Build(ctx, opt)
	if bar != nil {
		bar.Finish()
	}
	return sum, err
}

func printSummary(w io.Writer, s index.Summary) {
	state := fmt.Sprintf("generation %d", s.Generation)
	if s.Unchanged {
		state += " (nothing changed)"
	}
	fmt.Fprintf(w, "indexed %d documents, %d pages, %d chunks in %.2fs — %s\n", s.Documents, s.Pages, s.Chunks, s.Seconds, state)
	fmt.Fprintf(w, "  read %d, reused %d unchanged, removed %d deleted\n", s.Extracted, s.Reused, s.Removed)
	for _, n := range s.Notes {
		fmt.Fprintln(w, "  note:", n)
	}
	if len(s.Skipped) > 0 {
		fmt.Fprintf(w, "skipped %d files:\n", len(s.Skipped))
		for _, sk := range s.Skipped {
			fmt.Fprintf(w, "  %s\n", sk) // one line each, even for a file name with a newline
		}
	}
}

func newStatusCmd(g *globals) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the index: documents, chunks, embedder, last built",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := index.ReadMeta(g.cfg.IndexDir)
			where := g.cfg.IndexDir
			if g.cfg.Store != "" {
				m, err = storeMeta(cmd.Context(), g.cfg)
				where = config.MaskDSN(g.cfg.Store)
			}
			if err != nil {
				return err
			}
			st := map[string]any{
				"index":        where,
				"documents":    m.Documents,
				"pages":        m.Pages,
				"chunks":       m.Chunks,
				"embedder":     m.Embedder,
				"last_built":   m.BuiltAt.Format(time.RFC3339),
				"generation":   m.Generation,
				"data_dir":     m.DataDir,
				"database_dir": m.DatabaseDir,
				"bm25_weight":  weightPolicy(g.cfg, m.Embedder.Kind),
			}
			// Load the index as search does, so a damaged one is reported
			// here and not first discovered by a query.
			health := "ok"
			if _, err := index.Open(cmd.Context(), g.cfg.IndexDir, index.OpenOptions{}); err != nil {
				health = "damaged: " + err.Error()
			}
			st["health"] = health
			if health != "ok" {
				st["rebuild"] = rebuildHint(g.cfg, m)
			}
			var zh *bench.ZeroHitReport
			if health == "ok" {
				if zh, err = zeroHits(cmd.Context(), g.cfg); err != nil {
					return err
				}
			}
			if zh != nil {
				st["logged_queries"] = zh
			}
			damaged := func() error {
				if health == "ok" {
					return nil
				}
				return exitCode{code: 1, msg: "shirube: the index is damaged — rebuild it with: " + rebuildHint(g.cfg, m)}
			}
			if jsonOut {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if err := enc.Encode(st); err != nil {
					return err
				}
				return damaged()
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "index:      %s (generation %d)\ndocuments:  %d\npages:      %d\nchunks:     %d\nembedder:   %s %s (%d dims)\nlast built: %s\ndata:       %s\ndatabase:   %s\nbm25 weight: %s\n",
				where, m.Generation, m.Documents, m.Pages, m.Chunks, m.Embedder.Kind, m.Embedder.Model, m.Embedder.Dim,
				m.BuiltAt.Format("2006-01-02 15:04:05"), m.DataDir, m.DatabaseDir, weightPolicy(g.cfg, m.Embedder.Kind))
			fmt.Fprintf(w, "health:     %s\n", health)
			if health != "ok" {
				fmt.Fprintf(w, "rebuild:    %s\n", rebuildHint(g.cfg, m))
			}
			if zh != nil {
				fmt.Fprintf(w, "queries:    %d distinct in %s; BM25 matches nothing for %d (%.1f %%)\n", zh.Queries, zh.LogsDir, zh.ZeroHit, 100*zh.ZeroHitRate)
				for _, q := range zh.Examples {
					fmt.Fprintf(w, "            no match: %s\n", q)
				}
			}
			return damaged()
		},
	}
	cmd.Flags().String("index", config.DefaultIndexDir, "index directory")
	cmd.Flags().String("logs", config.DefaultLogsDir, "audit log folder whose questions are checked against the index")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print as JSON")
	return cmd
}

// weightPolicy says which BM25 weight searches of an index with the given
// embedder use: the one the user set, the seed's fixed 0.6 for a neural
// embedder, else the per-query gate of the local embedder.
func weightPolicy(cfg config.Config, embedder string) string {
	w := strconv.FormatFloat(cfg.BM25Weight, 'g', -1, 64)
	switch {
	case cfg.BM25WeightSet:
		return w + " (set)"
	case embedder == "openai":
		return w + " (fixed for a neural embedder)"
	}
	return fmt.Sprintf("auto per query: 1.0 when BM25's best passage holds ≥ %.2g of the query's words, else %.2g", retrieve.GateCoverage, retrieve.GateHybridWeight)
}

// rebuildHint is the command that rebuilds the index from the folders it
// was built from.
func rebuildHint(cfg config.Config, m index.Meta) string {
	return fmt.Sprintf("shirube index --rebuild --data %s --database %s --index %s", cmp.Or(m.DataDir, cfg.DataDir), cmp.Or(m.DatabaseDir, cfg.DatabaseDir), cfg.IndexDir)
}

// zeroHits checks the audit log's questions against the configured index;
// nil when the log has none (the index is not opened then).
func zeroHits(ctx context.Context, cfg config.Config) (*bench.ZeroHitReport, error) {
	queries, skipped, err := bench.LoggedQueries(ctx, cfg.LogsDir)
	if err != nil || len(queries) == 0 {
		return nil, err
	}
	s, err := openSearcher(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rep, err := bench.ZeroHits(ctx, s.Index(), queries)
	if err != nil {
		return nil, err
	}
	rep.LogsDir, rep.Skipped = cfg.LogsDir, skipped
	return &rep, nil
}

func newConfigCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration (secrets masked)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, l := range g.cfg.Lines() {
				fmt.Fprintln(cmd.OutOrStdout(), l)
			}
			return nil
		},
	}
}
