package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/assistant"
	"github.com/shirube/shirube/internal/guard"
	"github.com/shirube/shirube/internal/llm"
)

// ModelID is the one model the OpenAI-compatible endpoint offers.
const ModelID = "shirube"

// writeOpenAIError answers in the error shape OpenAI clients parse.
func writeOpenAIError(w http.ResponseWriter, status int, code, msg string) {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status >= 500:
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code, "param": nil}})
}

func writeOpenAIRequestError(w http.ResponseWriter, err error) {
	var re *requestError
	if errors.As(err, &re) {
		writeOpenAIError(w, re.status, re.code, re.msg)
		return
	}
	writeOpenAIError(w, http.StatusInternalServerError, "internal", err.Error())
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id": ModelID, "object": "model", "created": int64(1735689600), "owned_by": "shirube",
		}},
	})
}

// chatRequest is the subset of the OpenAI chat completion request that
// shirube uses, plus two extensions (k, bm25_weight).
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	User       string   `json:"user"`
	K          int      `json:"k"`
	BM25Weight *float64 `json:"bm25_weight"`
}

// chatMessage accepts content as a string or as an array of text parts.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func (m chatMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

// chatResponse is a chat.completion or a chat.completion.chunk.
type chatResponse struct {
	ID        string        `json:"id"`
	Object    string        `json:"object"`
	Created   int64         `json:"created"`
	Model     string        `json:"model"`
	Choices   []chatChoice  `json:"choices"`
	Usage     *chatUsage    `json:"usage,omitempty"`
	Citations []Citation    `json:"shirube_citations,omitempty"`
	Flags     *answer.Flags `json:"shirube_flags,omitempty"`
}

type chatChoice struct {
	Index        int        `json:"index"`
	Message      *chatDelta `json:"message,omitempty"`
	Delta        *chatDelta `json:"delta,omitempty"`
	FinishReason *string    `json:"finish_reason"`
}

type chatDelta struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content"`
}

type chatUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// handleChatCompletions answers POST /v1/chat/completions. The last
// message must be the user's question; earlier user and assistant messages
// are the conversation history (system messages are ignored: shirube's own
// instructions apply). Citations are appended to the answer text and also
// returned as shirube_citations.
func (s *Server) handleChatCompletions(w http.ResponseWriter, r *http.Request) {
	var in chatRequest
	if err := decodeJSON(w, r, s.opt.MaxBodyBytes, &in); err != nil {
		writeOpenAIRequestError(w, err)
		return
	}
	if len(in.Messages) == 0 || in.Messages[len(in.Messages)-1].Role != "user" {
		writeOpenAIError(w, http.StatusBadRequest, "invalid_messages", "messages must end with a user message (the question)")
		return
	}
	q, err := s.checkQuestion(in.Messages[len(in.Messages)-1].text())
	if err != nil {
		writeOpenAIRequestError(w, err)
		return
	}
	var history []llm.Message
	for _, m := range in.Messages[:len(in.Messages)-1] {
		switch m.Role {
		case llm.RoleUser, llm.RoleAssistant:
			history = append(history, llm.Message{Role: m.Role, Content: m.text()})
		}
	}
	sopt, err := s.searchOptions(in.K, in.BM25Weight)
	if err != nil {
		writeOpenAIRequestError(w, err)
		return
	}
	sessionID := "openai-" + newSessionID()[:16]
	if u := strings.TrimSpace(in.User); u != "" && validSessionID.MatchString(u) {
		sessionID = u
	}
	req := assistant.Request{Query: q, SessionID: sessionID, History: history, Search: sopt}
	id := "chatcmpl-" + newSessionID()
	created := time.Now().Unix()

	if !in.Stream {
		rep, err := s.ask(r.Context(), req)
		if err != nil {
			writeOpenAIRequestError(w, err)
			return
		}
		cs := s.citations(r.Context(), rep)
		stop := finishReason(rep)
		u := usageOf(rep)
		writeJSON(w, http.StatusOK, chatResponse{
			ID: id, Object: "chat.completion", Created: created, Model: ModelID,
			Choices:   []chatChoice{{Message: &chatDelta{Role: "assistant", Content: rep.Answer + citationsText(cs)}, FinishReason: &stop}},
			Usage:     &u,
			Citations: cs, Flags: &rep.Flags,
		})
		return
	}

	if s.asst.Searcher() == nil {
		writeOpenAIRequestError(w, errNoIndex)
		return
	}
	sse := newSSE(w, s.opt.AskTimeout)
	chunk := func(d chatDelta, finish *string) chatResponse {
		return chatResponse{ID: id, Object: "chat.completion.chunk", Created: created, Model: ModelID,
			Choices: []chatChoice{{Delta: &d, FinishReason: finish}}}
	}
	send := func(v chatResponse) {
		b, err := json.Marshal(v)
		if err == nil {
			sse.data(b)
		}
	}
	send(chunk(chatDelta{Role: "assistant"}, nil))

	// The banner goes first when the question alone asks for a dangerous
	// operation (the assistant decides that before retrieval), as it does
	// in the finished answer.
	var mu sync.Mutex
	var streamed strings.Builder
	bannerSent := false
	req.OnDanger = func(d guard.Danger) {
		if d.Dangerous {
			mu.Lock()
			bannerSent = true
			mu.Unlock()
			send(chunk(chatDelta{Content: guard.Banner + "\n\n"}, nil))
		}
	}
	req.OnDelta = func(t string) {
		mu.Lock()
		streamed.WriteString(t)
		mu.Unlock()
		send(chunk(chatDelta{Content: t}, nil))
	}
	rep, err := s.ask(r.Context(), req)
	if err != nil {
		if r.Context().Err() == nil {
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": err.Error(), "type": "server_error"}})
			sse.data(b)
		}
		return
	}
	mu.Lock()
	got := streamed.String()
	sent := bannerSent
	mu.Unlock()
	body, _ := splitBanner(rep.Answer)
	var tail string
	switch {
	case got == "":
		// Guard templates are not streamed; send the whole answer.
		tail = body
		if rep.Flags.DangerousOperation && !sent {
			tail = guard.Banner + "\n\n" + body
		}
	case rep.Flags.DangerousOperation && !sent:
		// Only the answer was dangerous: the banner can only follow it.
		tail = "\n\n" + guard.Banner
	}
	if got != "" {
		// Claims verification took out after they were streamed.
		for _, u := range rep.Unknowns {
			if answer.IsUnverifiedLine(u) {
				tail += "\n\n⚠️ " + u
			}
		}
	}
	if rep.Incomplete && got != "" {
		// The model's stream was cut off: what the client has is only
		// part of an answer. Say so in the text (a chat client shows
		// it) and in finish_reason, as /api/ask marks it incomplete.
		tail += "\n\n" + assistant.NoticeIncomplete
	}
	cs := s.citations(r.Context(), rep)
	if t := tail + citationsText(cs); t != "" {
		send(chunk(chatDelta{Content: t}, nil))
	}
	stop := finishReason(rep)
	last := chunk(chatDelta{}, &stop)
	last.Citations, last.Flags = cs, &rep.Flags
	send(last)
	if in.StreamOptions != nil && in.StreamOptions.IncludeUsage {
		u := usageOf(rep)
		send(chatResponse{ID: id, Object: "chat.completion.chunk", Created: created, Model: ModelID, Choices: []chatChoice{}, Usage: &u})
	}
	sse.data([]byte("[DONE]"))
}

// finishReason is the OpenAI finish_reason of a reply: "length" for an
// answer whose model stream was cut off (Reply.Incomplete), else "stop".
func finishReason(rep assistant.Reply) string {
	if rep.Incomplete {
		return "length"
	}
	return "stop"
}

func usageOf(rep assistant.Reply) chatUsage {
	u := rep.TokenUsage
	return chatUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
}
