package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3"
// (`make build` does so from `git describe`). Empty means it was not.
var version string

// buildVersion is the version to report: the one injected at build time,
// else the module version `go install …@version` records, else "(devel)".
func buildVersion(injected string, info *debug.BuildInfo, ok bool) string {
	if injected != "" {
		return injected
	}
	if ok && info != nil && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of this shirube binary",
		Args:  cobra.NoArgs,
		// version needs no configuration: a broken .env must not hide it.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, args []string) error {
			info, ok := debug.ReadBuildInfo()
			v := buildVersion(version, info, ok)
			goVersion := ""
			if ok {
				goVersion = " " + info.GoVersion
			}
			fmt.Fprintf(cmd.OutOrStdout(), "shirube %s%s\n", v, goVersion)
			return nil
		},
	}
}
