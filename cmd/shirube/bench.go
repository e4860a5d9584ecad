package main

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/bench"
	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/eval/beir"
	"github.com/shirube/shirube/internal/reader"
	"github.com/shirube/shirube/internal/retrieve"
	"github.com/shirube/shirube/internal/synonym"
)

// printReport prints a flat struct as "key: value" lines, or as JSON.
func printReport(w io.Writer, v any, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	}
	rv := reflect.Indirect(reflect.ValueOf(v))
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		name := strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		fmt.Fprintf(w, "%s: %v\n", name, rv.Field(i).Interface())
	}
	return nil
}

func newBenchCmd(g *globals) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure retrieval quality and speed on real datasets",
	}
	cmd.PersistentFlags().BoolVar(&jsonOut, "json", false, "print the report as JSON")

	var dir, mode, fusion, sweep string
	var weight float64
	var maxQ int
	var legs, exactVectors, rerank bool
	beirCmd := &cobra.Command{
		Use:   "beir --dir DIR",
		Short: "nDCG@10, recall, MRR, zero-hit rate, index and query speed on a BEIR-layout dataset",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			mo, err := memoryOptions(g.cfg)
			if err != nil {
				return err
			}
			ds, emb, took, err := bench.LoadIndexedWith(cmd.Context(), dir, mo)
			if err != nil {
				return err
			}
			var ix retrieve.Store = emb
			if g.cfg.Store != "" {
				if ix, took, err = loadBEIRIntoStore(cmd.Context(), g.cfg, ds, mo, exactVectors); err != nil {
					return err
				}
			}
			switch {
			case sweep != "":
				return runSweep(cmd, ds, ix, took, dir, sweep, maxQ, jsonOut)
			case legs:
				rep, err := bench.Legs(cmd.Context(), ds, ix, maxQ)
				if err != nil {
					return err
				}
				return printReport(cmd.OutOrStdout(), rep, jsonOut)
			}
			auto := !cmd.Flags().Changed("bm25-weight")
			opt := bench.BEIROptions{Dir: dir, Mode: mode, Fusion: fusion, BM25Weight: weight, AutoWeight: auto, MaxQueries: maxQ}
			if auto && mode == "hybrid" && rerank {
				// The default search: the per-query weight, the synonyms,
				// then the re-ranker.
				if opt.Rerank, err = reader.DefaultReranker(); err != nil {
					return err
				}
				if opt.Synonyms, err = synonym.Default(); err != nil {
					return err
				}
			}
			rep, err := bench.EvaluateIndex(cmd.Context(), ds, ix, took, opt)
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), rep, jsonOut)
		},
	}
	beirCmd.Flags().StringVar(&dir, "dir", "", "BEIR dataset folder (corpus.jsonl, queries.jsonl, qrels/test.tsv)")
	beirCmd.Flags().StringVar(&mode, "mode", "hybrid", "bm25, vector or hybrid")
	beirCmd.Flags().StringVar(&fusion, "fusion", "minmax", "minmax or rrf")
	beirCmd.Flags().Float64Var(&weight, "bm25-weight", config.DefaultBM25Weight, "fixed weight of the BM25 leg (unset: the default per-query weight, as `search` uses)")
	beirCmd.Flags().IntVar(&maxQ, "max-queries", 0, "evaluate only the first N queries (0 = all)")
	beirCmd.Flags().StringVar(&sweep, "sweep", "", "evaluate several settings on one index, e.g. \"auto,bm25,vector,minmax:0.5,minmax:0.7,rrf:0.5\" (auto: the default per-query weight; default: that weight and the re-ranker, as search does)")
	beirCmd.Flags().BoolVar(&rerank, "rerank", true, "with the default weight in hybrid mode: re-rank the best results with the learned re-ranker, as search does")
	settingFlag(beirCmd.Flags(), "embedder", "vector leg: local (fitted on the corpus) or openai (OPENAI_API_KEY / OPENAI_API_BASE, SHIRUBE_EMBEDDING_MODEL)")
	settingFlag(beirCmd.Flags(), "index", "folder of the embedding cache (openai embedder: each text is embedded once across runs)")
	beirCmd.Flags().BoolVar(&legs, "legs", false, "compare the BM25 and vector legs query by query: top-1 overlap and the nDCG@10 of a per-query oracle")
	beirCmd.Flags().BoolVar(&exactVectors, "exact-vectors", false, "with --store: search vectors by pgvector's exact scan instead of its HNSW index")
	beirCmd.MarkFlagRequired("dir")

	var qrels, run string
	trecCmd := &cobra.Command{
		Use:   "trec --qrels F --run F",
		Short: "nDCG@10 and MRR@10 of a TREC run (.gz accepted); ties by score desc, then doc id asc",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := bench.TREC(qrels, run)
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), rep, jsonOut)
		},
	}
	trecCmd.Flags().StringVar(&qrels, "qrels", "", "qrels file (TREC or BEIR tsv)")
	trecCmd.Flags().StringVar(&run, "run", "", "run file in TREC format, optionally gzip-compressed")
	trecCmd.MarkFlagRequired("qrels")
	trecCmd.MarkFlagRequired("run")

	cmd.AddCommand(beirCmd, trecCmd, newStoreBenchCmd(g, &jsonOut))
	addMoreBench(cmd, g, &jsonOut)
	return cmd
}

// runSweep evaluates several settings on one index of a BEIR dataset.
func runSweep(cmd *cobra.Command, ds *beir.Dataset, ix retrieve.Store, took time.Duration, dir, spec string, maxQ int, asJSON bool) error {
	ctx := cmd.Context()
	var reps []bench.BEIRReport
	for _, item := range strings.Split(spec, ",") {
		opt := bench.BEIROptions{Dir: dir, MaxQueries: maxQ, Mode: "hybrid", Fusion: "minmax", BM25Weight: 0.6}
		name, w, _ := strings.Cut(strings.TrimSpace(item), ":")
		switch name {
		case "bm25", "vector":
			opt.Mode = name
		case "auto":
			opt.AutoWeight = true
		case "default", "default-nosyn":
			// The default search: the per-query weight, the synonyms of
			// the question's words, then the re-ranker (default-nosyn:
			// without the synonyms, for comparison).
			opt.AutoWeight = true
			var err error
			if opt.Rerank, err = reader.DefaultReranker(); err != nil {
				return err
			}
			if name == "default" {
				if opt.Synonyms, err = synonym.Default(); err != nil {
					return err
				}
			}
		case "minmax", "rrf":
			opt.Fusion = name
			if w != "" {
				if _, err := fmt.Sscanf(w, "%g", &opt.BM25Weight); err != nil {
					return fmt.Errorf("sweep item %q: %w", item, err)
				}
			}
		default:
			return fmt.Errorf("sweep item %q: use default, default-nosyn, auto, bm25, vector, minmax:W or rrf:W", item)
		}
		rep, err := bench.EvaluateIndex(ctx, ds, ix, took, opt)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
		if !asJSON {
			fmt.Fprintf(cmd.OutOrStdout(), "%-14s ndcg@10 %.4f  recall@10 %.4f  recall@100 %.4f  mrr@10 %.4f  zero-hit %.4f  p95 %.2f ms\n",
				item, rep.NDCG10, rep.Recall10, rep.Recall100, rep.MRR10, rep.ZeroHitRate, rep.QueryP95Ms)
		}
	}
	if asJSON {
		return printReport(cmd.OutOrStdout(), reps, true)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "indexed %d docs in %.2fs (%.0f docs/s)\n", ix.Len(), took.Seconds(), float64(ix.Len())/took.Seconds())
	return nil
}
