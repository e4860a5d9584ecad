// Command shirube answers questions from an organisation's own documents with
// evidence, and measures its own quality.
//
// This package is wiring only: it parses flags, resolves the configuration
// and calls the domain packages under internal/.
package main

import (
	"context"
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
		ec := userError(err)
		if ec.msg != "" {
			fmt.Fprintln(os.Stderr, ec.msg)
		}
		os.Exit(ec.code)
	}
}

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
	settingFlag(root.PersistentFlags(), "store")
	settingFlag(root.PersistentFlags(), "audit", "audit log: jsonl (--logs folder), postgres (the store's audit_log table) or both")
	settingFlag(root.PersistentFlags(), "llm-timeout")
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
		newFeedbackCmd(g),
		newDiffEvalCmd(g),
		newOptimizeCmd(g),
		newQuestionsCmd(g),
		newBatchCmd(g),
		newTrainCmd(g),
		newVersionCmd(),
	)
	return root
}
