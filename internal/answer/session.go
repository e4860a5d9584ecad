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

// Rewritten is a follow-up question rewritten into a stand-alone query,
// with the tokens and cost of the model call that did it (zero offline).
type Rewritten struct {
	Query   string
	Usage   llm.Usage
	CostUSD float64
}

// AddHistory records the exchanges of msgs (alternating user and
// assistant messages, as History returns them, e.g. an eval case's
// conversation_context): each user message with the assistant message
// that follows it, if any.
func (s *Session) AddHistory(msgs []llm.Message) {
	for i, m := range msgs {
		if m.Role != llm.RoleUser {
			continue
		}
		a := ""
		if i+1 < len(msgs) && msgs[i+1].Role == llm.RoleAssistant {
			a = msgs[i+1].Content
		}
		s.Add(m.Content, a)
	}
}

// Rewrite turns a follow-up question into a stand-alone query. Without
// earlier exchanges, query is returned unchanged.
//
// With a Rewriter configured, the model is asked, given the conversation.
// Otherwise, or when the model returns nothing usable, a query that refers
// back (その, それ, この, 上記, 前述, さっき, 同じ, it, that, this, those, …)
// or is very short is rewritten offline (see rewriteOffline). Other
// queries are returned unchanged.
//
// When the model call fails, Rewrite returns the offline rewrite together
// with the error, so the caller may go on with it.
func (s *Session) Rewrite(ctx context.Context, query string) (Rewritten, error) {
	prev := s.lastQuestion()
	if prev == "" || strings.TrimSpace(query) == "" {
		return Rewritten{Query: query}, nil
	}
	offline := Rewritten{Query: s.rewriteOffline(prev, query)}
	if s.opt.Rewriter == nil {
		return offline, nil
	}
	resp, err := s.opt.Rewriter.Complete(ctx, s.rewriteRequest(query))
	offline.Usage, offline.CostUSD = resp.Usage, resp.CostUSD
	if err != nil {
		return offline, fmt.Errorf("rewrite follow-up question: %w", err)
	}
	if out := cleanRewrite(resp.Text); out != "" && utf8.RuneCountInString(out) <= 4*utf8.RuneCountInString(query)+200 {
		return Rewritten{Query: out, Usage: resp.Usage, CostUSD: resp.CostUSD}, nil
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

// rewriteOffline makes a follow-up stand-alone without a model. A
// Japanese follow-up has its references resolved against prev (see
// resolveJapanese): 「その手順の詳細を教えて」 after
// 「ログインできない場合の対処法は？」 becomes
// 「ログインできない場合の対処法の手順の詳細を教えて」. When that is not
// possible (an English question, or a previous turn that is a statement
// with nothing to point at), the key terms of prev that the query lacks
// are put in front of it.
func (s *Session) rewriteOffline(prev, query string) string {
	if !IsFollowUp(query) {
		return query
	}
	q := strings.TrimSpace(query)
	if analysis.HasJapanese(q) {
		if out, ok := resolveJapanese(prev, q); ok {
			return out
		}
	}
	if s.opt.Tokenizer == nil {
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
	return strings.Join(keys, " ") + " " + q
}

// jaReference finds what a Japanese follow-up points back with: a
// demonstrative before a noun (その手順, この設定, 上記の手順; group 1 and
// the noun in group 2) or a word standing for the earlier subject (それ,
// 上記, さっきの; group 3).
var jaReference = regexp.MustCompile(`(その|この|あの|上記の|前述の|先ほどの|先程の|さっきの)([\p{Han}\p{Katakana}ー]+)|(それ|これ|あれ|上記|前述|さっきの|先ほどの|先程の)`)

// questionEnding is how a question or request ends after its subject
// (「…は？」, 「…を教えてください」, 「…について知りたい」).
var questionEnding = regexp.MustCompile(`(?:について|に関して|に関する|の件)?(?:は|を|が|って|とは|の)?(?:教えて(?:ください|下さい)?|知りたい(?:です)?|どうすれば(?:いい|よい)(?:ですか|でしょうか)?|どうしたら(?:いい|よい)(?:ですか|でしょうか)?|何(?:ですか|でしょうか)?|ですか|でしょうか|ありますか)?$`)

// maxSubjectRunes bounds the subject carried into a follow-up.
const maxSubjectRunes = 40

// questionSubject is what the question prev asks about: prev without its
// question ending (「ログインできない場合の対処法は？」 →
// 「ログインできない場合の対処法」). It is "" when prev is not a question
// (a statement) or its subject is empty or too long to carry.
func questionSubject(prev string) string {
	p := strings.TrimSpace(prev)
	asked := strings.HasSuffix(p, "?") || strings.HasSuffix(p, "？")
	p = strings.TrimRight(p, "?？!！。. 　")
	loc := questionEnding.FindStringIndex(p)
	if loc != nil && loc[0] < loc[1] {
		asked = true
		p = p[:loc[0]]
	}
	p = strings.TrimSpace(p)
	if !asked || p == "" || utf8.RuneCountInString(p) > maxSubjectRunes {
		return ""
	}
	return p
}

// phraseEndingWith returns the phrase of prev that ends with noun: the
// text from the clause boundary before noun's first occurrence up to its
// end (「アカウントがロックアウトされた利用者からサービスデスクに…」 and
// 「利用者」 → 「アカウントがロックアウトされた利用者」), or "" when prev
// lacks noun.
func phraseEndingWith(prev, noun string) string {
	i := strings.Index(prev, noun)
	if i < 0 {
		return ""
	}
	start := strings.LastIndexAny(prev[:i], "。、，,．！？!?\n 「」『』（）()")
	if start >= 0 {
		_, size := utf8.DecodeRuneInString(prev[start:])
		start += size
	} else {
		start = 0
	}
	phrase := prev[start : i+len(noun)]
	if utf8.RuneCountInString(phrase) > maxSubjectRunes {
		return noun
	}
	return phrase
}

// resolveJapanese rewrites a Japanese follow-up q into a stand-alone
// question by replacing its references with what they point at in prev:
//
//   - 「その利用者」 where prev mentions 利用者: the phrase of prev ending
//     with it (「アカウントがロックアウトされた利用者」);
//   - 「その手順」 where prev does not: prev's subject and の
//     (「ログインできない場合の対処法の手順」);
//   - 「それ」, 「上記」: prev's subject;
//   - a very short question without a reference (「期限は？」): prev's
//     subject and の in front.
//
// It reports false when a reference cannot be resolved (prev is a
// statement and the noun is not in it).
func resolveJapanese(prev, q string) (string, bool) {
	prev = strings.TrimSpace(prev)
	subject := questionSubject(prev)
	var b strings.Builder
	last, found := 0, false
	for _, m := range jaReference.FindAllStringSubmatchIndex(q, -1) {
		var repl string
		switch {
		case m[4] >= 0: // demonstrative + noun
			noun := q[m[4]:m[5]]
			if strings.HasPrefix(noun, "他") {
				continue // その他: "others", not a reference
			}
			switch phrase := phraseEndingWith(prev, noun); {
			case phrase != "":
				repl = phrase
			case subject != "":
				repl = subject + "の" + noun
			default:
				return "", false
			}
		default: // a word standing for the subject
			if subject == "" {
				return "", false
			}
			repl = subject
			if strings.HasSuffix(q[m[6]:m[7]], "の") {
				repl += "の"
			}
		}
		b.WriteString(q[last:m[0]])
		b.WriteString(repl)
		last, found = m[1], true
	}
	if !found {
		if subject == "" || strings.Contains(q, subject) {
			return "", false
		}
		return subject + "の" + q, true
	}
	b.WriteString(q[last:])
	return b.String(), true
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
