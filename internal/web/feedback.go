package web

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/shirube/shirube/internal/feedback"
	"github.com/shirube/shirube/internal/llm"
)

// answered is an answer given recently, kept so that a rating can be
// stored with its audit data.
type answered struct {
	turn turn
	v    Version
	at   time.Time
}

// recentAnswers remembers the last answers by request id (bounded, for
// ratings of answers outside a conversation).
type recentAnswers struct {
	max int
	ttl time.Duration

	mu    sync.Mutex
	m     map[string]answered
	order []string
}

func newRecentAnswers(max int, ttl time.Duration) *recentAnswers {
	return &recentAnswers{max: max, ttl: ttl, m: map[string]answered{}}
}

func (ra *recentAnswers) put(a answered) {
	if a.at.IsZero() {
		a.at = time.Now()
	}
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if _, ok := ra.m[a.turn.requestID]; !ok {
		ra.order = append(ra.order, a.turn.requestID)
	}
	ra.m[a.turn.requestID] = a
	for len(ra.order) > ra.max {
		delete(ra.m, ra.order[0])
		ra.order = ra.order[1:]
	}
}

func (ra *recentAnswers) get(id string, now time.Time) (answered, bool) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	a, ok := ra.m[id]
	if !ok || now.Sub(a.at) > ra.ttl {
		return answered{}, false
	}
	return a, true
}

// FeedbackRequest is the body of POST /api/feedback.
type FeedbackRequest struct {
	ConversationID string `json:"conversation_id,omitempty"`
	ExchangeID     string `json:"exchange_id,omitempty"`
	RequestID      string `json:"request_id,omitempty"`
	Rating         string `json:"rating"`
	Comment        string `json:"comment,omitempty"`
}

var errAnswerNotFound = &requestError{status: http.StatusNotFound, code: "answer_not_found",
	msg: "評価する回答が見つかりません — 回答から時間が経ったか、会話が削除されました。もう一度質問してから評価してください"}

// handleFeedback answers POST /api/feedback: the rating goes to the
// feedback log with the answer's audit data, and onto the exchange.
func (s *Server) handleFeedback(w http.ResponseWriter, r *http.Request) {
	var in FeedbackRequest
	if err := decodeJSON(w, r, s.opt.MaxBodyBytes, &in); err != nil {
		writeRequestError(w, err)
		return
	}
	if in.Rating != feedback.Up && in.Rating != feedback.Down {
		writeError(w, http.StatusBadRequest, "invalid_rating", `rating は "up"（👍）か "down"（👎）で指定してください`)
		return
	}
	in.Comment = strings.TrimSpace(in.Comment)
	if n := utf8.RuneCountInString(in.Comment); n > feedback.MaxCommentRunes || !utf8.ValidString(in.Comment) {
		writeError(w, http.StatusBadRequest, "comment_too_long", "コメントは "+strconv.Itoa(feedback.MaxCommentRunes)+" 文字以内にしてください")
		return
	}
	user := browserSession(w, r)
	now := s.now()
	rec := feedback.Record{Timestamp: now, Rating: in.Rating, Comment: in.Comment}
	switch {
	case in.ExchangeID != "":
		if err := s.rateExchange(user, in, &rec); err != nil {
			writeRequestError(w, err)
			return
		}
	case in.RequestID != "":
		a, ok := s.answers.get(in.RequestID, now)
		if !ok || (a.turn.user != user && a.turn.sessionID != user) {
			writeRequestError(w, errAnswerNotFound)
			return
		}
		fillRecord(&rec, a.turn, a.v)
	default:
		writeError(w, http.StatusBadRequest, "missing_answer", "exchange_id か request_id で評価する回答を指定してください")
		return
	}
	if err := s.feedback.Append(rec); err != nil {
		writeError(w, http.StatusInternalServerError, "feedback_not_saved", "評価を保存できませんでした — サーバーの管理者に連絡してください")
		return
	}
	s.metrics.feedback.WithLabelValues(in.Rating).Inc()
	w.WriteHeader(http.StatusNoContent)
}

// rateExchange stores the rating on the exchange (its current version)
// and fills rec from it. Without conversation_id the user's
// conversations are searched.
func (s *Server) rateExchange(user string, in FeedbackRequest, rec *feedback.Record) error {
	convID := in.ConversationID
	if convID == "" {
		all, err := s.convs.list(user, "")
		if err != nil {
			return err
		}
		for _, sum := range all {
			c, err := s.convs.get(user, sum.ID)
			if err != nil {
				continue
			}
			if e, _ := c.exchange(in.ExchangeID); e != nil {
				convID = c.ID
				break
			}
		}
		if convID == "" {
			return errAnswerNotFound
		}
	}
	_, err := s.convs.update(user, convID, func(c *Conversation) error {
		e, i := c.exchange(in.ExchangeID)
		if e == nil {
			return errAnswerNotFound
		}
		v := e.Versions[e.Current]
		e.Feedback = &Feedback{Rating: in.Rating, Comment: in.Comment, At: rec.Timestamp, Version: e.Current}
		t := turn{requestID: v.RequestID, sessionID: user, user: user, convID: c.ID, exchangeID: e.ID, version: e.Current,
			history: c.history(i, s.opt.MaxHistory)}
		fillRecord(rec, t, v)
		return nil
	})
	return err
}

// fillRecord copies an answer's audit data into a feedback record.
func fillRecord(rec *feedback.Record, t turn, v Version) {
	rec.RequestID, rec.SessionID = t.requestID, t.sessionID
	rec.ConversationID, rec.ExchangeID, rec.Version = t.convID, t.exchangeID, t.version
	rec.AnsweredAt, rec.Query, rec.RewrittenQuery, rec.Answer, rec.Status = v.CreatedAt, v.Question, v.RewrittenQuery, v.Answer, v.Status
	rec.Flags = map[string]bool{
		"insufficient_evidence": v.Flags.InsufficientEvidence,
		"dangerous_operation":   v.Flags.DangerousOperation,
		"ambiguous_query":       v.Flags.AmbiguousQuery,
	}
	rec.Evidence = make([]feedback.Evidence, 0, len(v.Citations))
	for _, c := range v.Citations {
		rec.Evidence = append(rec.Evidence, feedback.Evidence{N: c.N, ChunkID: c.ChunkID, Title: c.Title, File: c.File, Page: c.Page, Heading: c.Heading, Excerpt: c.Excerpt})
	}
	for _, m := range t.history {
		role := "user"
		if m.Role == llm.RoleAssistant {
			role = "assistant"
		}
		rec.History = append(rec.History, feedback.Turn{Role: role, Content: m.Content})
	}
}
