package main

import (
	"bufio"
	"fmt"
	"io"
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
			in := bufio.NewReaderSize(cmd.InOrStdin(), 64*1024)
			for {
				fmt.Fprint(out, "> ")
				line, tooLong, err := readLine(in, maxChatLine)
				if err != nil {
					fmt.Fprintln(out)
					if err == io.EOF {
						return nil
					}
					return err
				}
				if tooLong {
					// A paste far over any question: refused, and the
					// conversation goes on.
					fmt.Fprintln(cmd.ErrOrStderr(), "error:", questionError(assistant.ErrQuestionTooLong))
					continue
				}
				q := strings.TrimSpace(line)
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

// maxChatLine is the longest line chat reads as a question, in bytes: far
// over the question limit (assistant.MaxQuestionRunes), so that a longer
// question gets that limit's message; a longer line is skipped whole.
const maxChatLine = 1 << 20

// readLine reads one line (without its line end) of at most max bytes; a
// longer line is read to its end, dropped, and reported by tooLong, so a
// huge paste never ends the session. err is io.EOF at the end of input
// (a last line without a line end is returned first).
func readLine(r *bufio.Reader, max int) (line string, tooLong bool, err error) {
	var b []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(b)+len(frag) > max {
			tooLong = true
		} else {
			b = append(b, frag...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && (len(b) > 0 || tooLong):
			return strings.TrimRight(string(b), "\r\n"), tooLong, nil
		case err != nil:
			return "", false, err
		}
		if tooLong {
			return "", true, nil
		}
		return strings.TrimRight(string(b), "\r\n"), false, nil
	}
}
