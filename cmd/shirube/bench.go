package main

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/bench"
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

	var dir, mode, fusion string
	var weight float64
	var maxQ int
	beirCmd := &cobra.Command{
		Use:   "beir --dir DIR",
		Short: "nDCG@10, recall, MRR, zero-hit rate, index and query speed on a BEIR-layout dataset",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := bench.BEIR(cmd.Context(), bench.BEIROptions{Dir: dir, Mode: mode, Fusion: fusion, BM25Weight: weight, MaxQueries: maxQ})
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), rep, jsonOut)
		},
	}
	beirCmd.Flags().StringVar(&dir, "dir", "", "BEIR dataset folder (corpus.jsonl, queries.jsonl, qrels/test.tsv)")
	beirCmd.Flags().StringVar(&mode, "mode", "hybrid", "bm25, vector or hybrid")
	beirCmd.Flags().StringVar(&fusion, "fusion", "minmax", "minmax or rrf")
	beirCmd.Flags().Float64Var(&weight, "bm25-weight", 0.6, "weight of the BM25 leg")
	beirCmd.Flags().IntVar(&maxQ, "max-queries", 0, "evaluate only the first N queries (0 = all)")
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

	cmd.AddCommand(beirCmd, trecCmd)
	addMoreBench(cmd, &jsonOut)
	return cmd
}
