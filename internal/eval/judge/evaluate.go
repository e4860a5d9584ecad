package judge

import (
	"context"
	"errors"
	"fmt"
	"unicode"

	"github.com/shirube/shirube/internal/llm"
)

// call makes one model request, waiting Options.Delay first unless it is
// the run's first call.
func (r *runner) call(ctx context.Context, req llm.Request) (llm.Response, error) {
	if r.calls > 0 && r.o.Delay > 0 {
		if err := r.o.Sleep(ctx, r.o.Delay); err != nil {
			return llm.Response{}, err
		}
	}
	r.calls++
	r.log.Debug("request", "call", r.calls, "model", req.Model, "max_tokens", req.MaxTokens, "temperature", temperature(req.Temperature), "system_chars", len(req.System), "user", lastUser(req))
	resp, err := r.o.Completer.Complete(ctx, req)
	r.cost += resp.CostUSD
	if resp.Model != "" {
		r.model = resp.Model
	}
	r.log.Debug("response", "call", r.calls, "model", resp.Model, "prompt_tokens", resp.Usage.PromptTokens, "completion_tokens", resp.Usage.CompletionTokens, "cost_usd", resp.CostUSD, "text", resp.Text, "err", err)
	return resp, err
}

func temperature(t *float64) any {
	if t == nil {
		return "default"
	}
	return *t
}

func lastUser(req llm.Request) string {
	if len(req.Messages) == 0 {
		return ""
	}
	return req.Messages[len(req.Messages)-1].Content
}

// fatal reports whether err from a Completer must stop the run: the
// context ended, or the request itself failed after the client's retries
// (*llm.Error: authentication, rate limits, network). Any other error — an
// empty reply, a reply that is not JSON — is a problem with this one
// answer and is handled like an unreadable reply.
func fatal(ctx context.Context, err error) bool {
	var le *llm.Error
	return ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &le)
}

// check is the initial connectivity call (CheckMaxTokens).
func (r *runner) check(ctx context.Context) error {
	_, err := r.call(ctx, llm.Request{
		Model:     r.o.Model,
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: checkMessage}},
		MaxTokens: CheckMaxTokens,
	})
	if err != nil && fatal(ctx, err) {
		return fmt.Errorf("the model did not answer a test request: %w. Check the API key and the model name, then run again", err)
	}
	return nil
}

// judgeOnce asks for one verdict, retrying once when the reply cannot be
// read. The error wraps ErrMalformed when both replies were unreadable;
// any other error is fatal.
func (r *runner) judgeOnce(ctx context.Context, q Question, temp float64) (Verdict, error) {
	system, user := r.prompt.Build(q)
	base := []llm.Message{{Role: llm.RoleUser, Content: user}}
	req := llm.Request{Model: r.o.Model, System: system, Messages: base, MaxTokens: EvalMaxTokens, Temperature: &temp, JSON: true}
	var last error
	for attempt := 1; attempt <= 2; attempt++ {
		resp, err := r.call(ctx, req)
		if err != nil && fatal(ctx, err) {
			return Verdict{}, err
		}
		v, perr := ParseVerdict(resp.Text)
		if perr == nil {
			if err != nil {
				r.log.Debug("reply repaired", "question", q.Number, "client_err", err)
			}
			return v, nil
		}
		last = perr
		if err != nil {
			last = fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		r.log.Warn("unreadable judge reply", "question", q.Number, "attempt", attempt, "err", last)
		req.Messages = append([]llm.Message{}, base...)
		if resp.Text != "" {
			req.Messages = append(req.Messages,
				llm.Message{Role: llm.RoleAssistant, Content: resp.Text},
				llm.Message{Role: llm.RoleUser, Content: retryMessage})
		}
	}
	return Verdict{}, fmt.Errorf("after one retry: %w", last)
}

// evaluate judges one question. A non-nil error is fatal for the run; an
// unreadable judge reply gives a row with Error set.
func (r *runner) evaluate(ctx context.Context, q Question) (Row, error) {
	row := Row{Key: q.Key, Number: q.Number, Question: q.Question, GroundTruth: q.GroundTruth, Answer: q.Answer}
	if r.o.Judge == JudgeLexical {
		row.Verdict = Lexical(q.GroundTruth, q.Answer)
		r.log.Debug("lexical verdict", "question", q.Number, "verdict", row.Verdict)
		return row, nil
	}
	v, err := r.judgeOnce(ctx, q, 0)
	if err != nil {
		if !errors.Is(err, ErrMalformed) {
			return row, err
		}
		row.Error = "judge reply unreadable " + err.Error()
		r.warn(fmt.Sprintf("question %s: %s; reported as an error row", q.Number, row.Error))
		return row, nil
	}
	row.Verdict = v
	row.Reasoning = Condense(v.Reasoning)
	phrase, hedged := Hedging(v.Reasoning)
	if !hedged {
		return row, nil
	}
	// Consensus: ConsensusRuns more verdicts at ConsensusTemperature, decided
	// by majority. The hedging verdict does not vote; it only breaks a tie,
	// which happens when an extra run was unreadable.
	r.log.Info("hedging detected; running consensus", "question", q.Number, "phrase", phrase)
	var votes []Verdict
	for i := 0; i < ConsensusRuns; i++ {
		cv, err := r.judgeOnce(ctx, q, ConsensusTemperature)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				return row, err
			}
			r.log.Warn("consensus run unreadable; it does not vote", "question", q.Number, "run", i+1, "err", err)
			continue
		}
		votes = append(votes, cv)
	}
	m := Majority(votes, v)
	row.Precision, row.Recall, row.Accuracy = m.Precision, m.Recall, m.Accuracy
	var p, rc, a int
	for _, cv := range votes {
		p, rc, a = p+cv.Precision, rc+cv.Recall, a+cv.Accuracy
	}
	n := len(votes)
	row.Consensus = fmt.Sprintf("3-vote (hedge: %s): P %d/%d, R %d/%d, A %d/%d", phrase, p, n, rc, n, a, n)
	r.log.Debug("consensus", "question", q.Number, "summary", row.Consensus, "original", v)
	return row, nil
}

// Token estimate for the cost shown before a run: a kanji or kana is about
// one token, other text about four characters per token; the judge's reply
// is about replyTokens.
const replyTokens = 150

// EstimateTokens is a rough token count of text.
func EstimateTokens(text string) int {
	cjk, other := 0, 0
	for _, r := range text {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			cjk++
		} else {
			other++
		}
	}
	return cjk + (other+3)/4
}

// estimate describes the expected cost of judging qs.
func (r *runner) estimate(qs []Question) string {
	if r.o.Judge == JudgeLexical {
		return "Estimated cost: $0.00 (offline lexical judge, no model calls)"
	}
	u := llm.Usage{PromptTokens: EstimateTokens(checkMessage) + 10, CompletionTokens: 5}
	for _, q := range qs {
		system, user := r.prompt.Build(q)
		u.PromptTokens += EstimateTokens(system) + EstimateTokens(user) + 10
		u.CompletionTokens += replyTokens
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	model := r.modelName()
	cost := r.o.Cost(model, u)
	if cost == 0 {
		if resolved := llm.ResolveAnthropicModel(model); resolved != model {
			if c := r.o.Cost(resolved, u); c > 0 {
				cost, model = c, resolved
			}
		}
	}
	tokens := fmt.Sprintf("~%d input + ~%d output tokens", u.PromptTokens, u.CompletionTokens)
	if cost == 0 {
		return fmt.Sprintf("Estimated cost: unknown — no price for model %q (%s)", model, tokens)
	}
	per := 0.0
	if len(qs) > 0 {
		per = cost / float64(len(qs))
	}
	noun := "questions"
	if len(qs) == 1 {
		noun = "question"
	}
	return fmt.Sprintf("Estimated cost: ~$%.2f for %d %s with %s (~$%.4f per question, %s; a question that needs the 3-vote consensus costs up to 4 times as much)", cost, len(qs), noun, model, per, tokens)
}
