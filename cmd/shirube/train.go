package main

import (
	"encoding/json"
	"fmt"

	"github.com/shirube/shirube/internal/reader"
	"github.com/spf13/cobra"
)

// defaultTrainingData is JaQuAD train beside a checkout (../shared).
const defaultTrainingData = "../shared/datasets/jaquad-train/train.json.xz"

func newTrainCmd(g *globals) *cobra.Command {
	var data, out, rerankOut, only string
	var limit, epochs int
	var shapes float64
	var laws string
	var lawCount int
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Learn the reader (answer sentence and answerability models) and the passage re-ranker from JaQuAD",
		Long: `train learns the extractive reader from a SQuAD-layout reading-comprehension
set — by default JaQuAD train (31,748 questions, CC BY-SA 3.0) beside the
checkout — and writes the model file that shirube ships
(internal/reader/model.json). The paragraphs are indexed in memory and every
question is searched the way ask searches; the sentence model learns which
candidate sentence answers, the answerability model whether the evidence
answers at all (near misses made from the data: the answer sentence
removed, the own paragraph or the own article left out). A tenth of the
articles is held out and the report measures the models on them.

The passage re-ranker (internal/reader/rerank.json) is learned from the same
searches taken deeper (the top 20): it learns to put the question's own
paragraph first. --only reader or --only rerank trains one of the two.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if only != "" && only != "reader" && only != "rerank" {
				return fmt.Errorf("--only %q: use reader or rerank (or leave it out for both)", only)
			}
			if shapes < 0 || shapes > 1 {
				return fmt.Errorf("--shapes %g: give the share of passages to shape, from 0 to 1", shapes)
			}
			opt := reader.TrainOptions{
				Data: data, Limit: limit, Epochs: epochs, Shapes: shapes,
				Log: func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), s) },
			}
			if laws != "" {
				// The development set's laws (qa-ja-docs) are never read.
				opt.Laws = &reader.LawOptions{Dir: laws, Laws: lawCount, Exclude: reader.ExcludeDevLaws}
			}
			if only != "reader" {
				r, err := reader.TrainRerank(cmd.Context(), opt)
				if err != nil {
					return err
				}
				if err := r.Save(rerankOut); err != nil {
					return fmt.Errorf("write the re-ranker: %w", err)
				}
				b, _ := json.MarshalIndent(r.Report, "", "  ")
				fmt.Fprintf(cmd.OutOrStdout(), "%s\nwrote %s\n", b, rerankOut)
				opt.Reranker = r
			}
			if only != "rerank" {
				if opt.Reranker == nil {
					// The reader learns from evidence ordered as ask orders
					// it: by the shipped re-ranker.
					r, err := reader.DefaultReranker()
					if err != nil {
						return err
					}
					opt.Reranker = r
				}
				m, err := reader.Train(cmd.Context(), opt)
				if err != nil {
					return err
				}
				if err := m.Save(out); err != nil {
					return fmt.Errorf("write the model: %w", err)
				}
				b, _ := json.MarshalIndent(m.Report, "", "  ")
				fmt.Fprintf(cmd.OutOrStdout(), "%s\nwrote %s\n", b, out)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&data, "training-data", defaultTrainingData, "training set in SQuAD layout (.json or .json.xz)")
	cmd.Flags().StringVar(&out, "out", "internal/reader/model.json", "model file to write")
	cmd.Flags().StringVar(&rerankOut, "rerank-out", "internal/reader/rerank.json", "re-ranker file to write")
	cmd.Flags().StringVar(&only, "only", "", "train only the reader or only the re-ranker (reader|rerank)")
	cmd.Flags().IntVar(&limit, "limit", 0, "use at most this many questions (0 = all)")
	cmd.Flags().IntVar(&epochs, "epochs", 0, "optimiser steps (0 = default)")
	cmd.Flags().StringVar(&laws, "laws", "", "also learn from questions on the definitions of the laws in this unpacked law-corpus-ja folder (index.tsv, text/); qa-ja-docs's laws are left out")
	cmd.Flags().IntVar(&lawCount, "law-count", 0, "laws with definitions to read from --laws (0 = 600)")
	cmd.Flags().Float64Var(&shapes, "shapes", 0, "share of the reader's training passages rendered as documents render them (lists, tables, label lines, FAQ pairs) instead of prose, 0–1")
	_ = g
	return cmd
}
