package main

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/shirube/shirube/internal/assistant"
	"github.com/spf13/cobra"
)

func newChatCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Interactive conversation in the terminal (keeps the last 5 exchanges)",
		Long: `chat reads questions line by line and answers each one like ask. Follow-up
questions such as 「その手順の詳細を教えて」 are rewritten into stand-alone
queries before retrieval (by the LLM when configured, otherwise by carrying
the previous question's key terms). Type /reset to forget the conversation,
/quit or Ctrl-D to leave.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			warn := func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "warning:", s) }
			a, model, err := newAssistant(ctx, g.cfg, warn)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			session := newSession(a, model, g.cfg.MaxHistory)
			id := newSessionID("chat")
			fmt.Fprintln(out, "⚠️ 機密情報の入力は禁止されています")
			fmt.Fprintln(out, "質問を入力してください (/reset, /quit)")
			in := bufio.NewScanner(cmd.InOrStdin())
			in.Buffer(make([]byte, 64*1024), 1<<20)
			for {
				fmt.Fprint(out, "> ")
				if !in.Scan() {
					fmt.Fprintln(out)
					return in.Err()
				}
				q := strings.TrimSpace(in.Text())
				switch q {
				case "":
					continue
				case "/quit", "/exit":
					return nil
				case "/reset":
					session = newSession(a, model, g.cfg.MaxHistory)
					fmt.Fprintln(out, "(会話履歴を消去しました)")
					continue
				}
				rep, err := a.Ask(ctx, assistant.Request{Query: q, SessionID: id, Conversation: session})
				if err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "error:", questionError(err))
					continue
				}
				if err := auditFailure(rep); err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "error:", err.(exitCode).msg)
				}
				if rep.RewrittenQuery != "" {
					fmt.Fprintf(out, "(検索クエリ: %s)\n", rep.RewrittenQuery)
				}
				renderReply(out, rep)
			}
		},
	}
	addAnswerFlags(cmd)
	settingFlag(cmd.Flags(), "history")
	return cmd
}
