// Command shirube answers questions from an organisation's own documents with
// evidence, and measures its own quality.
//
// This package is wiring only: it parses flags, resolves the configuration
// and calls the domain packages under internal/.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRoot().ExecuteContext(ctx)
	stop()
	if err != nil {
		var ec exitCode
		if errors.As(err, &ec) {
			if ec.msg != "" {
				fmt.Fprintln(os.Stderr, ec.msg)
			}
			os.Exit(ec.code)
		}
		fmt.Fprintln(os.Stderr, "shirube:", err)
		os.Exit(1)
	}
}

// exitCode ends the program with a given status without printing usage.
type exitCode struct {
	code int
	msg  string
}

func (e exitCode) Error() string { return fmt.Sprintf("exit %d: %s", e.code, e.msg) }

// globals are the flags every command shares.
type globals struct {
	envFile string
	cfg     config.Config
}

func newRoot() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "shirube",
		Short: "しるべ — answers from your own documents, with evidence",
		Long: `shirube indexes PDF, Markdown, HTML and text into a per-page Markdown
database and a Japanese-aware hybrid (BM25 + vector) index, answers questions
with citations and guardrails, and evaluates its own quality.

Everything works offline by default. Set OPENAI_API_KEY (and OPENAI_API_BASE
for Ollama, vLLM or LM Studio) or ANTHROPIC_API_KEY to answer with an LLM.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := config.Load(os.LookupEnv, g.envFile)
			if err != nil {
				return err
			}
			g.cfg = cfg
			return applyFlags(cmd, &g.cfg)
		},
	}
	root.PersistentFlags().StringVar(&g.envFile, "env-file", ".env", "dotenv file to read settings from (missing is fine)")
	root.PersistentFlags().String("store", "", "PostgreSQL store DSN postgres://user@host/db?sslmode=… instead of the index directory (SHIRUBE_STORE; prefer the variable: flags show in ps)")
	root.PersistentFlags().String("audit", "jsonl", "audit log: jsonl (--logs folder), postgres (the store's audit_log table) or both")
	root.PersistentFlags().Duration("llm-timeout", config.DefaultLLMTimeout, "limit on each whole LLM call, retries and streaming included (SHIRUBE_LLM_TIMEOUT)")
	root.AddCommand(
		newIndexCmd(g),
		newSearchCmd(g),
		newStatusCmd(g),
		newConfigCmd(g),
		newAskCmd(g),
		newChatCmd(g),
		newBenchCmd(g),
		newServeCmd(g),
		newConvertCmd(g),
		newJudgeCmd(g),
		newEvalCmd(g),
		newDiffEvalCmd(g),
		newOptimizeCmd(g),
		newQuestionsCmd(g),
		newBatchCmd(g),
	)
	return root
}

// applyFlags copies explicitly set flags over the configuration, so flags
// win over the environment and .env.
func applyFlags(cmd *cobra.Command, c *config.Config) error {
	f := cmd.Flags()
	set := func(name string, apply func() error) error {
		if fl := f.Lookup(name); fl != nil && fl.Changed {
			return apply()
		}
		return nil
	}
	var err error
	str := func(name string, dst *string) {
		if err == nil {
			err = set(name, func() error { v, e := f.GetString(name); *dst = v; return e })
		}
	}
	num := func(name string, dst *int) {
		if err == nil {
			err = set(name, func() error { v, e := f.GetInt(name); *dst = v; return e })
		}
	}
	flt := func(name string, dst *float64) {
		if err == nil {
			err = set(name, func() error { v, e := f.GetFloat64(name); *dst = v; return e })
		}
	}
	str("data", &c.DataDir)
	str("database", &c.DatabaseDir)
	str("index", &c.IndexDir)
	str("logs", &c.LogsDir)
	num("chunk-size", &c.ChunkSize)
	num("chunk-overlap", &c.ChunkOverlap)
	num("k", &c.K)
	flt("bm25-weight", &c.BM25Weight)
	if fl := f.Lookup("bm25-weight"); fl != nil && fl.Changed {
		c.BM25WeightSet = true
	}
	str("fusion", &c.Fusion)
	if err == nil {
		err = set("scope", func() error { v, e := f.GetStringSlice("scope"); c.Scope = v; return e })
	}
	flt("evidence-threshold", &c.EvidenceThreshold)
	flt("claim-coverage", &c.ClaimCoverage)
	str("verify", &c.Verify)
	if err == nil {
		err = set("keep-unverified", func() error { v, e := f.GetBool("keep-unverified"); c.KeepUnverified = v; return e })
	}
	str("embedder", &c.Embedder)
	str("generator", &c.Generator)
	str("provider", &c.Provider)
	str("model", &c.LLMModel)
	str("profile", &c.Profile)
	str("store", &c.Store)
	str("audit", &c.Audit)
	num("workers", &c.Workers)
	if err == nil {
		err = set("llm-timeout", func() error { v, e := f.GetDuration("llm-timeout"); c.LLMTimeout = v; return e })
	}
	if err != nil {
		return err
	}
	return c.Validate()
}
