package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/retrieve"
)

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
	if m, err := index.ReadMeta(cfg.IndexDir); err == nil && m.Embedder.Kind == "openai" && cfg.OpenAIKey != "" {
		cfg.EmbeddingModel = m.Embedder.Model
		remote, err := newRemoteEmbedder(cfg)
		if err != nil {
			return nil, err
		}
		opt.Remote = remote
	}
	ix, err := index.Open(ctx, cfg.IndexDir, opt)
	if err != nil {
		return nil, err
	}
	return retrieve.New(ix), nil
}

func searchOptions(cfg config.Config) retrieve.Options {
	return retrieve.Options{K: cfg.K, BM25Weight: cfg.BM25Weight, Fusion: cfg.Fusion}
}

func newSearchCmd(g *globals) *cobra.Command {
	var jsonOut bool
	var mode string
	cmd := &cobra.Command{
		Use:   `search "query"`,
		Short: "Hybrid BM25 + vector search over the index",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openSearcher(cmd.Context(), g.cfg)
			if err != nil {
				return err
			}
			opt := searchOptions(g.cfg)
			opt.Mode = mode
			res, info, err := s.Search(cmd.Context(), strings.Join(args, " "), opt)
			if err != nil {
				return err
			}
			if info.VectorError != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning: vector leg skipped:", info.VectorError)
			}
			if jsonOut {
				if res == nil {
					res = []retrieve.Result{}
				}
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(res)
			}
			w := cmd.OutOrStdout()
			if len(res) == 0 {
				fmt.Fprintln(w, "no results")
				return nil
			}
			for i, r := range res {
				fmt.Fprintf(w, "%d. %s (p.%d) %s\n   score %.2f  bm25 %.2f  vector %.2f  evidence %.2f\n   %s\n",
					i+1, r.File, r.Page, r.Heading, r.Score, r.BM25Score, r.VectorScore, r.EvidenceScore, oneLine(r.Text, 160))
			}
			return nil
		},
	}
	addSearchFlags(cmd)
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print results as a JSON array")
	cmd.Flags().StringVar(&mode, "mode", "hybrid", "hybrid, bm25 or vector")
	return cmd
}

// oneLine flattens whitespace and cuts to n runes with "...".
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}
