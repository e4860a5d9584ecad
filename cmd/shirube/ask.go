package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/llm"
)

func newSessionID(prefix string) string {
	b := make([]byte, 6)
	rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

// verifiedNote summarises a claim check for the status line: ", 3/3
// claims supported by their citations".
func verifiedNote(v *answer.Verification) string {
	if v == nil || len(v.Claims) == 0 {
		return ""
	}
	note := fmt.Sprintf(", %d/%d claims supported by the evidence", len(v.Claims)-len(v.Unsupported()), len(v.Claims))
	if v.Answers != nil && !*v.Answers {
		note += ", but the reader does not find the question answered by them"
	}
	return note
}

// renderReply prints a reply in the seed 003 contract (Answer, Evidence,
// Unknowns).
func renderReply(w io.Writer, rep assistant.Reply) {
	fmt.Fprint(w, answer.RenderText(answer.Answer{Text: rep.Answer, Evidence: rep.Evidence, Unknowns: rep.Unknowns}, answer.Flags{}))
}

// questionError is what to print for a question that failed: a model failure
// in Japanese without internals (endpoint, Go error), anything else as it
// is (its message says what to do).
func questionError(err error) error {
	var le *llm.Error
	if errors.As(err, &le) || errors.Is(err, llm.ErrIncomplete) || errors.Is(err, assistant.ErrQuestionTooLong) || errors.Is(err, assistant.ErrEmptyQuestion) {
		return exitCode{code: 1, msg: assistant.UserMessage(err)}
	}
	return err
}

// exitAuditFailed is the exit status of `ask` when the answer was given
// but its audit log line could not be written.
const exitAuditFailed = 3

// auditFailure turns a reply whose audit line was not written into an
// exit status the operator sees.
func auditFailure(rep assistant.Reply) error {
	if rep.AuditError == nil {
		return nil
	}
	return exitCode{code: exitAuditFailed, msg: "監査ログに書き込めませんでした（回答は上に表示済み）: " + rep.AuditError.Error()}
}

func newAskCmd(g *globals) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   `ask "question" | ask input.csv`,
		Short: "Answer one question with citations (Answer / Evidence / Unknowns)",
		Long: `ask answers a question from the index: it retrieves evidence, applies the
guardrails (ambiguous question, insufficient evidence, dangerous operation),
writes an answer with [n] citations and appends one line to the audit log.

Without an API key the answer is extractive: sentences quoted from the
evidence, never a word that is not in it. With OPENAI_API_KEY or
ANTHROPIC_API_KEY an LLM writes the answer from the same evidence.

ask input.csv is the batch evaluation (shirube batch input.csv): after an
evaluation it may add page copies to the page database unless --no-optimize.
See shirube batch --help.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			warn := func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "warning:", s) }
			if len(args) == 1 && strings.HasSuffix(strings.ToLower(args[0]), ".csv") {
				return runBatchAsk(cmd, g, args[0])
			}
			a, _, err := newAssistant(ctx, g.cfg, warn)
			if err != nil {
				return err
			}
			rep, err := a.Ask(ctx, assistant.Request{Query: strings.Join(args, " "), SessionID: newSessionID("cli")})
			if err != nil {
				return questionError(err)
			}
			if jsonOut {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				renderReply(cmd.OutOrStdout(), rep)
				fmt.Fprintf(cmd.ErrOrStderr(), "(answered by %s in %.2fs%s)\n", rep.Generator, rep.ProcessingTimeSec, verifiedNote(rep.Verification))
			}
			return auditFailure(rep)
		},
	}
	addAnswerFlags(cmd)
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the reply as JSON")
	addBatchFlags(cmd)
	return cmd
}
