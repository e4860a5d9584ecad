package optimize

import (
	"fmt"
	"io"
	"strings"
)

// Report prints what an optimisation run did: how many missed questions
// got copies, each row's status and new aliases, and the files written
// (the updated CSV, its backup, and the manifest with the command that
// undoes the run).
func Report(w io.Writer, res Result) {
	optimized := 0
	for _, r := range res.Rows {
		if r.Status == "optimized" {
			optimized++
		}
	}
	fmt.Fprintf(w, "folder optimisation: %d of %d missed question(s) optimised\n", optimized, len(res.Rows))
	for _, r := range res.Rows {
		line := fmt.Sprintf("  row %d: %s", r.Row, r.Status)
		if r.Aliases != "" && r.Status == "optimized" {
			line += " → " + strings.ReplaceAll(r.Aliases, "\n", "; ")
		}
		fmt.Fprintln(w, line)
	}
	if res.Output != "" {
		fmt.Fprintf(w, "optimized CSV: %s\n", res.Output)
	}
	if res.Backup != "" {
		fmt.Fprintf(w, "backup: %s\n", res.Backup)
	}
	if res.Manifest != "" {
		fmt.Fprintf(w, "manifest: %s (undo with: shirube optimize --undo %s)\n", res.Manifest, res.Manifest)
	}
}
