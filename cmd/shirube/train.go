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
	var data, out string
	var limit, epochs int
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Learn the reader (answer sentence and answerability models) from JaQuAD",
		Long: `train learns the extractive reader from a SQuAD-layout reading-comprehension
set — by default JaQuAD train (31,748 questions, CC BY-SA 3.0) beside the
checkout — and writes the model file that shirube ships
(internal/reader/model.json). The paragraphs are indexed in memory and every
question is searched the way ask searches; the sentence model learns which
candidate sentence answers, the answerability model whether the evidence
answers at all (near misses made from the data: the answer sentence
removed, the own paragraph or the own article left out). A tenth of the
articles is held out and the report measures the models on them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := reader.Train(cmd.Context(), reader.TrainOptions{
				Data: data, Limit: limit, Epochs: epochs,
				Log: func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), s) },
			})
			if err != nil {
				return err
			}
			if err := m.Save(out); err != nil {
				return fmt.Errorf("write the model: %w", err)
			}
			b, _ := json.MarshalIndent(m.Report, "", "  ")
			fmt.Fprintf(cmd.OutOrStdout(), "%s\nwrote %s\n", b, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&data, "training-data", defaultTrainingData, "training set in SQuAD layout (.json or .json.xz)")
	cmd.Flags().StringVar(&out, "out", "internal/reader/model.json", "model file to write")
	cmd.Flags().IntVar(&limit, "limit", 0, "use at most this many questions (0 = all)")
	cmd.Flags().IntVar(&epochs, "epochs", 0, "optimiser steps (0 = default)")
	_ = g
	return cmd
}
