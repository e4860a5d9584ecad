package answer

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/llm"
)

// MaxConversationHistory is how many exchanges a Session keeps by default
// (seed 002 §8.6 MAX_CONVERSATION_HISTORY).
const MaxConversationHistory = 5

// SessionOptions configure a Session.
type SessionOptions struct {
	MaxExchanges int       // exchanges kept; default MaxConversationHistory
	Tokenizer    Tokenizer // finds the key terms of earlier questions (offline rewrite)
	Rewriter     Completer // when set, follow-ups are rewritten by this model
	Model        string    // model for the rewriter; "" means the client's default
}

// Session is one conversation: the last few question/answer exchanges, and
// the rewriting of follow-up questions into stand-alone queries for
// retrieval. It is safe for concurrent use.
type Session struct {
	opt SessionOptions

	mu        sync.Mutex
	exchanges []exchange // oldest first
}

type exchange struct{ q, a string }

// NewSession returns an empty session.
func NewSession(opt SessionOptions) *Session {
	if opt.MaxExchanges <= 0 {
		opt.MaxExchanges = MaxConversationHistory
	}
	return &Session{opt: opt}
}

// Add records one exchange, dropping the oldest beyond the limit. Record the
// stand-alone (rewritten) question, so that a chain of follow-ups keeps its
// subject.
func (s *Session) Add(question, answer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exchanges = append(s.exchanges, exchange{q: question, a: answer})
	if over := len(s.exchanges) - s.opt.MaxExchanges; over > 0 {
		s.exchanges = append([]exchange(nil), s.exchanges[over:]...)
	}
}

// History returns the kept exchanges as alternating user and assistant
// messages, oldest first, ready to precede a new question in an
// llm.Request.
func (s *Session) History() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	msgs := make([]llm.Message, 0, 2*len(s.exchanges))
	for _, e := range s.exchanges {
		msgs = append(msgs,
			llm.Message{Role: llm.RoleUser, Content: e.q},
			llm.Message{Role: llm.RoleAssistant, Content: e.a})
	}
	return msgs
}

// lastQuestion is the most recent recorded question, "" when there is none.
func (s *Session) lastQuestion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.exchanges) == 0 {
		return ""
	}
	return s.exchanges[len(s.exchanges)-1].q
}

// RewriteSystemPrompt instructs the rewriting model.
const RewriteSystemPrompt = `You rewrite the latest question of a conversation into a stand-alone search query.
Resolve references such as その, それ, この, 上記, 前述, it, that and "the second one" using the conversation, and add the subject they refer to.
Keep the question's language and wording as far as possible. Do not answer the question.
If the question is already stand-alone, return it unchanged.
Output only the query, on one line, without quotes or explanations.`

// Rewrite turns a follow-up question into a stand-alone query. Without
// earlier exchanges, query is returned unchanged.
//
// With a Rewriter configured, the model is asked, given the conversation.
// Otherwise, or when the model returns nothing usable, a query that refers
// back (その, それ, この, 上記, 前述, さっき, 同じ, it, that, this, those, …)
// or is very short is prefixed with the key terms of the previous question
// that it does not already contain; the original text is kept. Other queries
// are returned unchanged.
//
// When the model call fails, Rewrite returns the offline rewrite together
// with the error, so the caller may go on with it.
func (s *Session) Rewrite(ctx context.Context, query string) (string, error) {
	prev := s.lastQuestion()
	if prev == "" || strings.TrimSpace(query) == "" {
		return query, nil
	}
	offline := s.rewriteOffline(prev, query)
	if s.opt.Rewriter == nil {
		return offline, nil
	}
	resp, err := s.opt.Rewriter.Complete(ctx, s.rewriteRequest(query))
	if err != nil {
		return offline, fmt.Errorf("rewrite follow-up question: %w", err)
	}
	if out := cleanRewrite(resp.Text); out != "" && utf8.RuneCountInString(out) <= 4*utf8.RuneCountInString(query)+200 {
		return out, nil
	}
	return offline, nil
}

// rewriteRequest builds the request that asks the model for a stand-alone
// query. Earlier answers are cut short: the subject is what matters.
func (s *Session) rewriteRequest(query string) llm.Request {
	var b strings.Builder
	b.WriteString("Conversation:\n")
	for _, m := range s.History() {
		if m.Role == llm.RoleUser {
			b.WriteString("User: " + oneLine(m.Content) + "\n")
		} else {
			b.WriteString("Assistant: " + excerpt(m.Content, 300) + "\n")
		}
	}
	b.WriteString("\nLatest question: " + query + "\n\nStand-alone query:")
	zero := 0.0
	return llm.Request{
		Model:       s.opt.Model,
		System:      RewriteSystemPrompt,
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: b.String()}},
		MaxTokens:   200,
		Temperature: &zero,
	}
}

var rewriteLabel = regexp.MustCompile(`(?i)^(?:stand-alone query|query|rewritten query|書き換え後?|検索クエリ|質問)\s*[:：]\s*`)

// cleanRewrite keeps the first non-empty line of the model's output,
// without a label or surrounding quotes.
func cleanRewrite(text string) string {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(rewriteLabel.ReplaceAllString(strings.TrimSpace(line), ""))
		line = strings.Trim(line, "\"'`「」『』“”")
		if line != "" {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// rewriteOffline prefixes a follow-up with the key terms of prev.
func (s *Session) rewriteOffline(prev, query string) string {
	if s.opt.Tokenizer == nil || !IsFollowUp(query) {
		return query
	}
	current := termSet(s.opt.Tokenizer.Terms(query))
	keys := spans(prev, s.opt.Tokenizer.Terms(prev), func(t string) int {
		switch {
		case current[t]:
			return spanBlock
		case isContentTerm(t):
			return spanKeep
		}
		return spanIgnore
	})
	if len(keys) == 0 {
		return query
	}
	return strings.Join(keys, " ") + " " + strings.TrimSpace(query)
}

var (
	// jaDeixis are Japanese words that point back into the conversation.
	// "その他" (others) is not one and is removed before matching.
	jaDeixis = regexp.MustCompile(`その|それ|この|これ|あの|あれ|上記|前述|さっき|先ほど|先程|同じ|同様|そこ|そちら|こちら|[0-9０-９一二三四五六七八九十]+(?:番目|つ目)`)
	enDeixis = regexp.MustCompile(`(?i)\b(?:it|its|that|this|those|these|they|them|above|previous|same|former|latter|second one|first one)\b`)
)

// followUpRunes is the length under which a question is taken to lean on
// the conversation ("期限は？", "why?").
const followUpRunes = 6

// IsFollowUp reports whether query looks like it depends on earlier turns:
// it refers back (Japanese demonstratives, 上記, 前述, 同じ, "2番目", English
// it/that/this/those/…) or is very short.
func IsFollowUp(query string) bool {
	q := strings.TrimSpace(analysis.Normalize(query))
	q = strings.ReplaceAll(q, "その他", "")
	if jaDeixis.MatchString(q) || enDeixis.MatchString(q) {
		return true
	}
	n := 0
	for _, r := range q {
		if !strings.ContainsRune("?？!！。.、, ", r) {
			n++
		}
	}
	return n > 0 && n < followUpRunes
}
