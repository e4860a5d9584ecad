package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/config"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/logwriter"
	"github.com/shirube/shirube/internal/retrieve"
	"github.com/shirube/shirube/internal/web"
)

// newServeCmd is `shirube serve`: the chat page, the JSON API and the
// OpenAI-compatible endpoint.
func newServeCmd(g *globals) *cobra.Command {
	var addr, tlsCert, tlsKey string
	var allowData []string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the chat page, a JSON API and an OpenAI-compatible endpoint",
		Long: `serve starts a web server with the chat page (sidebar: data folder, k,
BM25/vector weights, index rebuild and status; answers streamed with citations
and guardrail banners), a JSON API under /api, Prometheus metrics on /metrics
and an OpenAI-compatible /v1/chat/completions (model "shirube").

It listens on 127.0.0.1:8080 by default. Listening on any other interface
requires SHIRUBE_TOKEN (at least 16 characters): API clients then send
"Authorization: Bearer <token>" and browsers enter the token once on /login
(wrong tokens are throttled per client). With SHIRUBE_ADMIN_TOKEN only its
holder sees and sends the retrieval settings and may rebuild. Conversations,
ratings (👍/👎) and PDF page images are kept under --logs. --tls-cert and --tls-key serve HTTPS
directly; behind a reverse proxy see docs/API.md. Every question is written
to the audit log with the browser session's id. If no index exists yet the
server starts anyway; press the rebuild button (or POST
/api/index/rebuild). A rebuild only ever reads --data or a folder of
--allow-data / SHIRUBE_DATA_ALLOW, never a folder a client names.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := g.cfg
			cfg.DataAllow = append(cfg.DataAllow, allowData...)
			var tlsConf *tls.Config
			if tlsCert != "" || tlsKey != "" {
				var err error
				if tlsConf, err = web.LoadTLS(tlsCert, tlsKey); errors.Is(err, web.ErrTLSPair) {
					return errors.New("HTTPS needs both --tls-cert and --tls-key (PEM files)")
				} else if err != nil {
					return err
				}
			}
			return runServe(cmd.Context(), cfg, addr, tlsConf, cmd.ErrOrStderr())
		},
	}
	addDirFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&addr, "addr", web.DefaultAddr, "listen address host:port (non-loopback needs SHIRUBE_TOKEN)")
	f.StringVar(&tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain); needs --tls-key")
	f.StringVar(&tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	f.StringArrayVar(&allowData, "allow-data", nil, "a further data folder the page may rebuild from (repeatable; also SHIRUBE_DATA_ALLOW)")
	settingFlag(f, "logs")
	settingFlag(f, "k", "default number of results (the page can change it)")
	settingFlag(f, "bm25-weight", "default weight of the BM25 leg (vector weight is 1 − this)")
	settingFlag(f, "file-timeout", "limit on reading one source file in a rebuild")
	settingFlag(f, "trust-proxy")
	settingFlag(f, "max-concurrent")
	return cmd
}

// runServe wires the assistant, rebuild and status into the web server and
// serves (over HTTPS when tlsConf is set) until ctx ends (Ctrl-C), then
// shuts down gracefully.
func runServe(ctx context.Context, cfg config.Config, addr string, tlsConf *tls.Config, errw io.Writer) error {
	if err := web.CheckAddr(addr, cfg.Token); err != nil {
		return err
	}
	if err := web.CheckToken(cfg.Token); err != nil {
		return err
	}
	// The log (a line per request) goes through a buffer: no request
	// waits for stderr (see logwriter).
	lw := logwriter.New(errw, 0)
	defer lw.Close()
	errw = lw
	logger := slog.New(slog.NewTextHandler(errw, nil))
	warn := func(s string) { logger.Warn(s) }

	asst, model, err := newAssistant(ctx, cfg, warn)
	if errors.Is(err, index.ErrNotFound) {
		logger.Warn(web.NoIndexMessage, "index", cfg.IndexDir)
		asst, model, err = newAssistantWithoutIndex(cfg, warn)
	}
	if err != nil {
		return err
	}
	var tok answer.Tokenizer
	if s := asst.Searcher(); s != nil {
		tok = s.Index().Analyzer()
	} else if tok, err = analysis.New(analysis.DefaultOptions()); err != nil {
		return err
	}
	// The status is the served generation's; a build finished anywhere
	// (`shirube index`, another replica, this server's rebuild) is
	// swapped in within a poll.
	status := func() (web.Status, error) { return serveStatus(cfg.IndexDir) }
	if cfg.Store != "" {
		status = nil
		go watchStore(ctx, cfg, asst, warn)
	} else {
		f := newFollower(cfg, asst, warn)
		asst.SetFreshen(f.freshen)
		go f.watch(ctx, index.DefaultWatchPoll)
	}
	opt := web.Options{
		Assistant:     asst,
		Rebuild:       serveRebuild(cfg, warn),
		Status:        status,
		Tokenizer:     tok,
		MaxHistory:    cfg.MaxHistory,
		Addr:          addr,
		Token:         cfg.Token,
		AdminToken:    cfg.AdminToken,
		StateDir:      cfg.LogsDir,
		TrustProxy:    cfg.TrustProxy,
		MaxConcurrent: cfg.MaxConcurrent,
		DataDir:       cfg.DataDir,
		DatabaseDir:   cfg.DatabaseDir,
		DataDirs:      cfg.DataAllow,
		Logger:        logger,
	}
	if model != nil {
		opt.Rewriter = model
	}
	srv, err := web.New(opt)
	if err != nil {
		return err
	}
	defer srv.Close()

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w — is another server using the port? choose one with --addr", addr, err)
	}
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	fmt.Fprintf(errw, "shirube: serving on %s://%s/ (Ctrl-C to stop)\n", scheme, ln.Addr())
	err = srv.Serve(ctx, ln, tlsConf, 10*time.Second)
	fmt.Fprintln(errw, "shirube: stopped")
	return err
}

// newAssistantWithoutIndex builds the answer pipeline before any index
// exists; the server swaps a searcher in after the first rebuild. The
// analyser is the default one, which index builds also use.
func newAssistantWithoutIndex(cfg config.Config, warn func(string)) (*assistant.Assistant, chatModel, error) {
	a, err := analysis.New(analysis.DefaultOptions())
	if err != nil {
		return nil, nil, err
	}
	return assemble(cfg, nil, a, warn)
}

// serveRebuild returns the rebuild the page's button runs: index.Build
// with the same options as `shirube index`, from the folder the page names,
// then a fresh searcher over the new generation.
func serveRebuild(cfg config.Config, warn func(string)) web.RebuildFunc {
	return func(ctx context.Context, dataDir string, progress func(phase string, done, total int)) (*retrieve.Searcher, error) {
		c := cfg
		c.DataDir = dataDir
		if c.Store != "" {
			if _, err := storeIndex(ctx, c, false, io.Discard, progress); err != nil {
				return nil, err
			}
			return openSearcher(ctx, c)
		}
		opt, err := buildOptions(c, warn)
		if err != nil {
			return nil, err
		}
		opt.Progress = progress
		if _, err := index.Build(ctx, opt); err != nil {
			return nil, err
		}
		return openSearcher(ctx, c)
	}
}

// follower keeps asst on the live generation of the index directory.
// Every question first checks CURRENT (freshen: one read of a dozen
// bytes), so a question asked after a build switched generations is
// answered from the new one even before the watcher's next poll; the
// watcher (watch) swaps it in when no question comes. Questions already
// running finish on the searcher they started with (the assistant answers
// again from the new one when they cite pages it removed); the old
// generation's mapped files stay readable until its last reader is done,
// even after the build removed them.
type follower struct {
	cfg  config.Config
	asst *assistant.Assistant
	warn func(string)
	mu   sync.Mutex // one generation opened at a time

	seen atomic.Pointer[os.FileInfo] // CURRENT when its generation was last served
}

func newFollower(cfg config.Config, asst *assistant.Assistant, warn func(string)) *follower {
	return &follower{cfg: cfg, asst: asst, warn: warn}
}

// serving is the generation answered from (0 before any).
func (f *follower) serving() int {
	if s := f.asst.Searcher(); s != nil {
		return s.Index().Meta().Generation
	}
	return 0
}

// freshen swaps in the generation CURRENT names when it is not the one
// served. A failure leaves the served one (the watcher reports it).
//
// A build replaces CURRENT (a new file renamed over it), so while its
// file is the one seen when its generation was served, one stat(2) is the
// whole check.
func (f *follower) freshen(ctx context.Context) {
	path := filepath.Join(f.cfg.IndexDir, index.CurrentFile)
	fi, err := os.Stat(path)
	if err != nil {
		return
	}
	if seen := f.seen.Load(); seen != nil && os.SameFile(*seen, fi) && (*seen).ModTime().Equal(fi.ModTime()) {
		return
	}
	gen, err := index.Current(f.cfg.IndexDir)
	if err != nil {
		return
	}
	if gen == f.serving() || f.switchTo(ctx, gen) == nil {
		f.seen.Store(&fi)
	}
}

// switchTo opens the live generation and swaps it in, unless a concurrent
// call already did.
func (f *follower) switchTo(ctx context.Context, gen int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if gen == f.serving() {
		return nil
	}
	s, err := openSearcher(ctx, f.cfg)
	if err != nil {
		return err
	}
	f.asst.Swap(s)
	f.warn(fmt.Sprintf("index: now answering from generation %d", s.Index().Meta().Generation))
	return nil
}

// watch swaps every new generation into the assistant within poll of its
// CURRENT being replaced, until ctx ends (index.Watch).
func (f *follower) watch(ctx context.Context, poll time.Duration) {
	index.Watch(ctx, f.cfg.IndexDir, poll, f.serving, f.switchTo, f.warn)
}

// serveStatus reads the live index's metadata for the sidebar.
func serveStatus(dir string) (web.Status, error) {
	m, err := index.ReadMeta(dir)
	if err != nil {
		return web.Status{}, err
	}
	return web.Status{
		Documents: m.Documents, Pages: m.Pages, Chunks: m.Chunks, BuiltAt: m.BuiltAt,
		Embedder: m.Embedder.Kind, DataDir: m.DataDir, Generation: m.Generation,
	}, nil
}
