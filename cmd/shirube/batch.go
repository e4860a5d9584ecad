package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// addBatchFlags adds the flags of `shirube ask input.csv`.
func addBatchFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Int("workers", 5, "parallel workers for a CSV batch")
	f.Bool("enable-rl", false, "batch: folder optimisation loop with up to 5 attempts per question and rollback")
	f.Bool("resume", false, "batch: continue an interrupted run from its checkpoint")
}

// runBatchAsk answers (and evaluates) every row of a CSV.
func runBatchAsk(cmd *cobra.Command, g *globals, path string) error {
	return errors.New("batch mode is not wired yet")
}
