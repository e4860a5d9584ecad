package main

import (
	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/bench"
	"github.com/shirube/shirube/internal/config"
)

// addMoreBench adds the scale, answers and refusal benchmarks.
func addMoreBench(cmd *cobra.Command, jsonOut *bool) {
	var dir, keep string
	var n, maxQ, k int
	var threshold float64
	scale := &cobra.Command{
		Use:   "scale --dir DIR --chunks N",
		Short: "Replicate a corpus to N chunks: build, save, load time, memory, hybrid query p50/p95",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := bench.Scale(cmd.Context(), dir, n, maxQ, keep)
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), rep, *jsonOut)
		},
	}
	scale.Flags().StringVar(&dir, "dir", "", "BEIR dataset folder")
	scale.Flags().IntVar(&n, "chunks", 100000, "number of chunks to index")
	scale.Flags().IntVar(&maxQ, "max-queries", 1000, "queries to time")
	scale.Flags().StringVar(&keep, "out", "", "keep the index in this folder (default: a temporary one)")
	scale.MarkFlagRequired("dir")

	answers := &cobra.Command{
		Use:   "answers --dir DIR",
		Short: "Share of questions whose extractive answer contains a gold answer (JSQuAD)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := bench.Answers(cmd.Context(), dir, k, maxQ)
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), rep, *jsonOut)
		},
	}
	answers.Flags().StringVar(&dir, "dir", "", "BEIR dataset folder whose queries have answers")
	answers.Flags().IntVar(&k, "k", config.DefaultK, "results given to the answer generator")
	answers.Flags().IntVar(&maxQ, "max-queries", 0, "evaluate only the first N questions (0 = all)")
	answers.MarkFlagRequired("dir")

	refusal := &cobra.Command{
		Use:   "refusal --dir DIR",
		Short: "Refusal rate without the question's paragraph, answer rate with it, threshold sweep",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := bench.Refusal(cmd.Context(), dir, k, threshold, maxQ)
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), rep, *jsonOut)
		},
	}
	refusal.Flags().StringVar(&dir, "dir", "", "BEIR dataset folder")
	refusal.Flags().IntVar(&k, "k", config.DefaultK, "results considered")
	refusal.Flags().Float64Var(&threshold, "threshold", config.DefaultEvidenceThreshold, "evidence threshold to report")
	refusal.Flags().IntVar(&maxQ, "max-queries", 0, "evaluate only the first N questions (0 = all)")
	refusal.MarkFlagRequired("dir")

	cmd.AddCommand(scale, answers, refusal)
}
