package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/bench"
	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/eval/beir"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/pgstore"
	"github.com/shirube/shirube/internal/retrieve"
)

// This file wires the PostgreSQL store (--store / SHIRUBE_STORE) into the
// commands; without it every command uses the embedded index directory.

// storeIndex ingests the data folder into the store with cfg.Workers
// workers, joining a build another process started, and reports it as an
// index summary.
func storeIndex(ctx context.Context, cfg config.Config, rebuild bool, errw io.Writer, progress func(string, int, int)) (index.Summary, error) {
	db, err := connectStore(ctx, cfg)
	if err != nil {
		return index.Summary{}, err
	}
	defer db.Close()
	opt := pgstore.IngestOptions{
		Settings:    storeSettings(cfg),
		Workers:     cfg.Workers,
		MaxFileSize: cfg.MaxFileSize,
		FileTimeout: cfg.FileTimeout,
		Rebuild:     rebuild,
		Warn:        func(s string) { fmt.Fprintln(errw, "warning:", s) },
		Progress:    progress,
	}
	if cfg.Embedder == config.EmbedderOpenAI {
		remote, err := newRemoteEmbedder(cfg)
		if err != nil {
			return index.Summary{}, err
		}
		opt.Finish.Remote = remote
	}
	sum, err := db.Ingest(ctx, opt)
	if err != nil {
		return index.Summary{}, err
	}
	out := index.Summary{
		Generation: int(sum.Generation),
		Extracted:  sum.Processed - sum.Reused - len(sum.Skipped),
		Reused:     sum.Reused,
		Skipped:    sum.Skipped,
		Seconds:    sum.Seconds,
	}
	if sum.Finished {
		out.Documents, out.Pages, out.Chunks = sum.Meta.Documents, sum.Meta.Pages, sum.Meta.Chunks
	} else {
		fmt.Fprintf(errw, "generation %d: this process ingested %d documents; another worker finishes the build\n", sum.Generation, sum.Processed)
	}
	fmt.Fprintf(errw, "store: documents stored in %.2fs with %d workers here; build finished in %.2fs\n", sum.IngestSeconds, cfg.Workers, sum.Seconds)
	if len(sum.Workers) > 1 {
		fmt.Fprintf(errw, "documents per worker: %v\n", sum.Workers)
	}
	return out, nil
}

// storeMeta reads the store's current generation metadata for `status`.
func storeMeta(ctx context.Context, cfg config.Config) (index.Meta, error) {
	db, err := connectStore(ctx, cfg)
	if err != nil {
		return index.Meta{}, err
	}
	defer db.Close()
	pix, err := db.Open(ctx, pgstore.OpenOptions{})
	if err != nil {
		return index.Meta{}, err
	}
	return pix.Meta(), nil
}

// watchStore keeps a serve replica on the store's current generation: a
// build finished by any process (`shirube index --store`, another replica's
// rebuild button) is swapped in within a notification, or a poll at worst.
func watchStore(ctx context.Context, cfg config.Config, asst *assistant.Assistant, warn func(string)) {
	db, err := connectStore(ctx, cfg)
	if err != nil {
		warn("store: generation changes will not be seen: " + err.Error())
		return
	}
	defer db.Close()
	var known int64
	if s := asst.Searcher(); s != nil {
		known = int64(s.Index().Meta().Generation)
	}
	db.Watch(ctx, known, 5*time.Second, func(ctx context.Context, gen int64) error {
		s, err := storeSearcher(ctx, cfg, db, gen)
		if err != nil {
			return err
		}
		asst.Swap(s)
		warn(fmt.Sprintf("store: now answering from generation %d", gen))
		return nil
	}, warn)
}

// loadBEIRIntoStore loads a BEIR corpus (one chunk per document) into the
// configured store as its current generation, for `bench beir --store`.
func loadBEIRIntoStore(ctx context.Context, cfg config.Config, ds *beir.Dataset, mo index.MemoryOptions, exact bool) (retrieve.Store, time.Duration, error) {
	db, err := connectStore(ctx, cfg)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	if _, err := db.LoadChunks(ctx, bench.DocChunks(ds), mo, pgstore.FinishOptions{Exact: exact}); err != nil {
		return nil, 0, err
	}
	took := time.Since(start)
	pix, err := db.Open(ctx, pgstore.OpenOptions{Exact: exact})
	return pix, took, err
}

// newStoreBenchCmd is `shirube bench store`: embedded vs PostgreSQL latency.
func newStoreBenchCmd(g *globals, jsonOut *bool) *cobra.Command {
	var dir string
	var n, maxQ int
	cmd := &cobra.Command{
		Use:   "store --dir DIR --chunks N --store DSN",
		Short: "Replicate a corpus to N chunks in memory and in PostgreSQL: BM25, vector and hybrid query p50/p95 on each (HNSW and exact)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if g.cfg.Store == "" {
				return errors.New("bench store needs a PostgreSQL store: --store postgres://… or SHIRUBE_STORE (an empty database: the benchmark makes its corpus current)")
			}
			db, err := connectStore(cmd.Context(), g.cfg)
			if err != nil {
				return err
			}
			defer db.Close()
			rep, err := bench.Store(cmd.Context(), dir, n, maxQ, db)
			if err != nil {
				return err
			}
			return printReport(cmd.OutOrStdout(), rep, *jsonOut)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "BEIR dataset folder")
	cmd.Flags().IntVar(&n, "chunks", 100000, "number of chunks to index")
	cmd.Flags().IntVar(&maxQ, "max-queries", 1000, "queries to time per store and leg")
	cmd.MarkFlagRequired("dir")
	return cmd
}
