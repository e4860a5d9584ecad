package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/shirube/shirube/internal/bench"
	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/eval/diffeval"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/retrieve"
	"github.com/spf13/cobra"
)

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
			var sizes *diffeval.Sizes
			if g.cfg.Store == "" {
				sz, err := diffeval.MeasureSizes(m.DataDir, m.DatabaseDir, g.cfg.IndexDir)
				if err != nil {
					return err
				}
				sizes = &sz
				st["sizes"] = sz
			}
			// Load the index as search does, so a damaged one is reported
			// here and not first discovered by a query.
			health := "ok"
			if err := checkHealth(cmd.Context(), g.cfg); err != nil {
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
			if sizes != nil {
				fmt.Fprintf(w, "sizes:      %s\n", sizes.Line())
			}
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
	settingFlag(cmd.Flags(), "index")
	settingFlag(cmd.Flags(), "logs", "audit log folder whose questions are checked against the index")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print as JSON")
	return cmd
}

// checkHealth loads the index as search does: the index directory, or
// with a store the store's current generation (the directory is not used
// then, so it must not be checked).
func checkHealth(ctx context.Context, cfg config.Config) error {
	if cfg.Store != "" {
		_, err := openSearcher(ctx, cfg)
		return err
	}
	_, err := index.Open(ctx, cfg.IndexDir, index.OpenOptions{})
	return err
}

// weightPolicy says which BM25 weight searches of an index with the given
// embedder use: the one the user set, the seed's fixed 0.6 for a neural
// embedder, else the per-query gate of the local embedder.
func weightPolicy(cfg config.Config, embedder string) string {
	w := strconv.FormatFloat(cfg.BM25Weight, 'g', -1, 64)
	switch {
	case cfg.BM25WeightSet:
		return w + " (set)"
	case config.Embedder(embedder) == config.EmbedderOpenAI:
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
