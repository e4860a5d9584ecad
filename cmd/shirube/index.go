package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/index"
)

func newIndexCmd(g *globals) *cobra.Command {
	var rebuild, jsonOut, categorize bool
	var ctxCat *document.CategorizeOptions
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Ingest the data folder into the page database and the index",
		Long: `index walks --data for .pdf, .md/.markdown, .html/.htm and .txt files
and the images .png, .jpg/.jpeg and .tif/.tiff (read by OCR, one page per
image), writes every page to the per-page Markdown database
(database/<folder>/<document>/page_NNN.md), chunks it by headings, and builds
the hybrid BM25 + vector index. Unchanged files are reused; --rebuild forces
everything to be read again. Files that cannot be read are skipped with a
one-line reason. With --ocr auto (the default) PDF pages without a usable
text layer are read by Tesseract (apt-get install -y tesseract-ocr
tesseract-ocr-jpn tesseract-ocr-jpn-vert); --ocr always reads every page.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// A build's live heap is the corpus's chunks, postings and
			// vectors; the collector's default headroom (as much garbage
			// again) doubles the peak. Half of it: 723 → 556 MiB at 33k
			// chunks, same time (docs/BENCHMARKS.md). GOGC still wins.
			if os.Getenv("GOGC") == "" {
				debug.SetGCPercent(50)
			}
			cfg := g.cfg
			if categorize {
				cat := &document.CategorizeOptions{Warn: func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "warning:", s) }}
				if cfg.LLMProvider() != "" {
					m, name, err := newChatModel(cfg)
					if err != nil {
						return err
					}
					cat.LLM, cat.Model = m, name
				}
				ctxCat = cat
			}
			sum, err := runIndexWith(cmd.Context(), cfg, rebuild, ctxCat, cmd.ErrOrStderr())
			if err != nil {
				// The reasons files were skipped are what the user needs
				// to fix the build; the error alone would hide them.
				printSkips(cmd.ErrOrStderr(), sum.Skipped)
				return err
			}
			if jsonOut {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(sum)
			}
			printSummary(cmd.OutOrStdout(), sum)
			return nil
		},
	}
	addDirFlags(cmd)
	f := cmd.Flags()
	f.BoolVar(&rebuild, "rebuild", false, "re-extract and re-embed every file")
	settingFlag(f, "chunk-size")
	settingFlag(f, "chunk-overlap")
	settingFlag(f, "embedder")
	settingFlag(f, "file-timeout")
	f.BoolVar(&jsonOut, "json", false, "print the summary as JSON")
	settingFlag(f, "ocr")
	settingFlag(f, "ocr-timeout")
	settingFlag(f, "workers", "with --store: documents ingested at once by this process (other processes may join the build)")
	f.BoolVar(&categorize, "categorize", false, "group each PDF's pages into section folders (LLM when configured, else outline or headings)")
	return cmd
}

// runIndex builds the index with a progress bar on a terminal.
func runIndex(ctx context.Context, cfg config.Config, rebuild bool, errw io.Writer) (index.Summary, error) {
	return runIndexWith(ctx, cfg, rebuild, nil, errw)
}

// runIndexWith is runIndex with optional page categorisation.
func runIndexWith(ctx context.Context, cfg config.Config, rebuild bool, cat *document.CategorizeOptions, errw io.Writer) (index.Summary, error) {
	var bar *progressbar.ProgressBar
	isTTY := false
	if f, ok := errw.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		isTTY = true
	}
	phase := ""
	progress := func(p string, done, total int) {
		if !isTTY {
			return
		}
		if p != phase || bar == nil {
			if bar != nil {
				bar.Finish()
			}
			phase = p
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(errw),
				progressbar.OptionSetDescription(p), progressbar.OptionClearOnFinish(),
				progressbar.OptionThrottle(100*time.Millisecond))
		}
		bar.Set(done)
	}
	if cfg.Store != "" {
		sum, err := storeIndex(ctx, cfg, rebuild, errw, progress)
		if bar != nil {
			bar.Finish()
		}
		return sum, err
	}
	opt, err := buildOptions(cfg, func(s string) { fmt.Fprintln(errw, "warning:", s) })
	if err != nil {
		return index.Summary{}, err
	}
	opt.Rebuild, opt.Categorize, opt.Progress = rebuild, cat, progress
	sum, err := index.Build(ctx, opt)
	if bar != nil {
		bar.Finish()
	}
	return sum, err
}

func printSummary(w io.Writer, s index.Summary) {
	state := fmt.Sprintf("generation %d", s.Generation)
	if s.Unchanged {
		state += " (nothing changed)"
	}
	fmt.Fprintf(w, "indexed %d documents, %d pages, %d chunks in %.2fs — %s\n", s.Documents, s.Pages, s.Chunks, s.Seconds, state)
	fmt.Fprintf(w, "  read %d, reused %d unchanged, removed %d deleted\n", s.Extracted, s.Reused, s.Removed)
	for _, n := range s.Notes {
		fmt.Fprintln(w, "  note:", n)
	}
	printSkips(w, s.Skipped)
}

// printSkips lists the skipped files, one line each with its reason.
func printSkips(w io.Writer, skipped []document.Skip) {
	if len(skipped) > 0 {
		fmt.Fprintf(w, "skipped %d files:\n", len(skipped))
		for _, sk := range skipped {
			fmt.Fprintf(w, "  %s\n", sk) // one line each, even for a file name with a newline
		}
	}
}
