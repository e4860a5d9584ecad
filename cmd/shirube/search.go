package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/reader"
	"github.com/shirube/shirube/internal/retrieve"
)

// searchJSON is what `search --json` prints: the shape of GET /api/search,
// with the fusion weight the search used.
type searchJSON struct {
	Query      string            `json:"query"`
	K          int               `json:"k"`
	BM25Weight float64           `json:"bm25_weight"`
	AutoWeight bool              `json:"auto_weight"`
	Results    []retrieve.Result `json:"results"`
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
			if note := s.Index().Analyzer().DictionaryNote(); note != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", note)
			}
			opt := searchOptions(g.cfg)
			opt.Mode = mode
			query := strings.Join(args, " ")
			var rr retrieve.Reranker
			if mode == "" || mode == "hybrid" {
				// The default search re-ranks its best results.
				m, err := reader.DefaultReranker()
				if err != nil {
					return err
				}
				rr = m
			}
			res, info, _, err := s.SearchReranked(cmd.Context(), query, opt, rr)
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
				return enc.Encode(searchJSON{Query: query, K: opt.K, BM25Weight: info.BM25Weight, AutoWeight: info.AutoWeight, Results: res})
			}
			w := cmd.OutOrStdout()
			how := "set"
			if info.AutoWeight {
				how = "chosen for this query"
			}
			fmt.Fprintf(w, "(BM25 weight %.2g, %s)\n", info.BM25Weight, how)
			if len(res) == 0 {
				fmt.Fprintln(w, "no results")
				return nil
			}
			for i, r := range res {
				fmt.Fprintf(w, "%d. %s (p.%d) %s\n   score %.2f  bm25 %.2f  vector %.2f  evidence %.2f\n   %s\n",
					i+1, document.QuotePath(r.File), r.Page, oneLine(r.Heading, 200), r.Score, r.BM25Score, r.VectorScore, r.EvidenceScore, oneLine(r.Text, 160))
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
