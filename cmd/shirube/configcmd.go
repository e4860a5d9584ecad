package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

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
