// Package llmtest runs fake LLM servers for tests: httptest servers that
// speak the OpenAI chat-completions and Anthropic messages wire formats —
// JSON replies with usage, Server-Sent Event streams, provider-shaped errors
// with Retry-After, slow and malformed replies — so that tests drive the
// real SDKs (openai-go, anthropic-sdk-go) over HTTP.
//
// A test decides every reply with a function of the request:
//
//	srv := llmtest.OpenAI(t, func(r llmtest.Request) llmtest.Reply {
//		if r.Calls == 1 {
//			return llmtest.Reply{Status: 429, RetryAfter: "0"}
//		}
//		return llmtest.Reply{Text: "回答 [1]"}
//	})
//	t.Setenv("OPENAI_API_BASE", srv.BaseURL())
//
// It is imported only by tests.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Provider wire formats.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// Request is one request the fake received, decoded.
type Request struct {
	Calls  int         // 1 for the first request to this server, 2 for the next, …
	Path   string      // URL path
	Header http.Header // request headers
	Body   map[string]any
	Model  string
	Stream bool
	// System is the system prompt: the system message(s) for OpenAI, the
	// system field for Anthropic (text blocks joined).
	System string
	// User is the text of the last user message (text parts joined).
	User string
	// Messages are the conversation's messages in order, as role and text.
	Messages []Message
}

// Message is one message of a request.
type Message struct {
	Role string
	Text string
}

// Reply is what the fake answers to one request.
type Reply struct {
	// Text is the assistant's message. With a streaming request it is sent
	// in Chunks pieces (default: about 3).
	Text   string
	Chunks int
	// Model names the model in the reply (default: the requested one).
	Model string
	// PromptTokens and CompletionTokens are the usage (default 100 and 20).
	PromptTokens, CompletionTokens int
	// Status, when not 200, sends an error in the provider's format with
	// ErrorMessage; RetryAfter sets the Retry-After header.
	Status       int
	ErrorMessage string
	RetryAfter   string
	// Raw, when set, is sent as the body as it is, with Status (default
	// 200) and content type application/json: malformed replies.
	Raw string
	// Delay holds the reply back (a slow model); the request's context
	// ending stops the wait, as a client timeout would. A Delay of an hour
	// is a server that never answers.
	Delay time.Duration
	// ChunkDelay trickles the reply: it is waited before each streamed
	// piece, and a non-streamed body is written in Chunks pieces with this
	// wait before each (a model producing a token every few seconds).
	ChunkDelay time.Duration
	// CutAfter, when positive, ends a stream after that many text pieces,
	// without the final chunk (no finish_reason, usage or [DONE] for
	// OpenAI; no message_delta or message_stop for Anthropic).
	CutAfter int
	// Drop, with CutAfter, drops the connection at the cut instead of
	// ending the stream cleanly.
	Drop bool
}

// Text returns a reply function that always answers text.
func Text(text string) func(Request) Reply {
	return func(Request) Reply { return Reply{Text: text} }
}

// Server is a fake LLM server. Its URL is the server root; BaseURL is the
// API base the SDKs expect.
type Server struct {
	*httptest.Server
	t        testing.TB
	provider string
	reply    func(Request) Reply

	mu       sync.Mutex
	requests []Request
}

// OpenAI starts a fake OpenAI-compatible server answering POST
// /v1/chat/completions. It is closed when the test ends.
func OpenAI(t testing.TB, reply func(Request) Reply) *Server {
	return start(t, ProviderOpenAI, reply)
}

// Anthropic starts a fake Anthropic server answering POST /v1/messages. It
// is closed when the test ends.
func Anthropic(t testing.TB, reply func(Request) Reply) *Server {
	return start(t, ProviderAnthropic, reply)
}

func start(t testing.TB, provider string, reply func(Request) Reply) *Server {
	t.Helper()
	s := &Server{t: t, provider: provider, reply: reply}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the API base URL: the server root with /v1 for OpenAI
// (OPENAI_API_BASE), the root for Anthropic (ANTHROPIC_BASE_URL).
func (s *Server) BaseURL() string {
	if s.provider == ProviderOpenAI {
		return s.URL + "/v1"
	}
	return s.URL
}

// Requests returns the requests received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Calls returns the number of requests received so far.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	want := "/v1/chat/completions"
	if s.provider == ProviderAnthropic {
		want = "/v1/messages"
	}
	if r.Method != http.MethodPost || r.URL.Path != want {
		s.t.Errorf("llmtest: request %s %s; want POST %s", r.Method, r.URL.Path, want)
		http.NotFound(w, r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	req := Request{Path: r.URL.Path, Header: r.Header.Clone()}
	if err := json.Unmarshal(raw, &req.Body); err != nil {
		s.t.Errorf("llmtest: request body is not JSON: %v: %.200s", err, raw)
	}
	req.decode(s.provider)
	s.mu.Lock()
	req.Calls = len(s.requests) + 1
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	rep := s.reply(req)
	if !wait(r, rep.Delay) {
		return
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	switch {
	case rep.Raw != "":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(orStatus(rep.Status))
		io.WriteString(w, rep.Raw)
	case rep.Status != 0 && rep.Status != http.StatusOK:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		io.WriteString(w, errorBody(s.provider, rep))
	default:
		if rep.Model == "" {
			rep.Model = req.Model
		}
		if rep.PromptTokens == 0 && rep.CompletionTokens == 0 {
			rep.PromptTokens, rep.CompletionTokens = 100, 20
		}
		if req.Stream {
			stream(w, r, s.provider, rep)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		body := message(s.provider, rep)
		if rep.ChunkDelay <= 0 {
			io.WriteString(w, body)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		fl, _ := w.(http.Flusher)
		n := max(rep.Chunks, 3)
		for i := range n {
			if !wait(r, rep.ChunkDelay) {
				return
			}
			io.WriteString(w, body[i*len(body)/n:(i+1)*len(body)/n])
			if fl != nil {
				fl.Flush()
			}
		}
	}
}

// wait waits d, or until the request's context ends (the client gave up):
// then it reports false.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func orStatus(s int) int {
	if s == 0 {
		return http.StatusOK
	}
	return s
}

// decode fills the convenience fields from the JSON body.
func (r *Request) decode(provider string) {
	r.Model, _ = r.Body["model"].(string)
	r.Stream, _ = r.Body["stream"].(bool)
	if provider == ProviderAnthropic {
		r.System = textOf(r.Body["system"])
	}
	msgs, _ := r.Body["messages"].([]any)
	var system []string
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		role, _ := mm["role"].(string)
		text := textOf(mm["content"])
		r.Messages = append(r.Messages, Message{Role: role, Text: text})
		switch role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			r.User = text
		}
	}
	if provider == ProviderOpenAI {
		r.System = strings.Join(system, "\n")
	}
}

// textOf joins the text of a content value: a string, or a list of parts
// with "text" fields.
func textOf(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, p := range c {
			if pm, ok := p.(map[string]any); ok {
				if t, ok := pm["text"].(string); ok {
					parts = append(parts, t)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// message is a complete, non-streamed reply.
func message(provider string, r Reply) string {
	if provider == ProviderAnthropic {
		return fmt.Sprintf(`{"id":"msg_llmtest","type":"message","role":"assistant","model":%s,`+
			`"content":[{"type":"text","text":%s}],"stop_reason":"end_turn","stop_sequence":null,`+
			`"usage":{"input_tokens":%d,"output_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}`,
			quote(r.Model), quote(r.Text), r.PromptTokens, r.CompletionTokens)
	}
	return fmt.Sprintf(`{"id":"chatcmpl-llmtest","object":"chat.completion","created":1735445655,"model":%s,`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":%s,"refusal":null},"logprobs":null,"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		quote(r.Model), quote(r.Text), r.PromptTokens, r.CompletionTokens, r.PromptTokens+r.CompletionTokens)
}

// errorBody is an error reply in the provider's format.
func errorBody(provider string, r Reply) string {
	msg := r.ErrorMessage
	if msg == "" {
		msg = http.StatusText(r.Status)
	}
	typ := "api_error"
	switch {
	case r.Status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case r.Status == http.StatusUnauthorized:
		typ = "authentication_error"
	case r.Status >= 400 && r.Status < 500:
		typ = "invalid_request_error"
	}
	if provider == ProviderAnthropic {
		return fmt.Sprintf(`{"type":"error","error":{"type":%s,"message":%s}}`, quote(typ), quote(msg))
	}
	return fmt.Sprintf(`{"error":{"message":%s,"type":%s,"param":null,"code":null}}`, quote(msg), quote(typ))
}

// pieces splits text into n pieces of whole runes (n ≥ 1).
func pieces(text string, n int) []string {
	rs := []rune(text)
	if n <= 0 {
		n = 3
	}
	n = max(1, min(n, len(rs)))
	var out []string
	for i := range n {
		out = append(out, string(rs[i*len(rs)/n:(i+1)*len(rs)/n]))
	}
	return out
}

// stream sends r as Server-Sent Events, flushing after each event; see
// Reply.ChunkDelay, CutAfter and Drop.
func stream(w http.ResponseWriter, req *http.Request, provider string, r Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	send := func(ev string) {
		io.WriteString(w, ev+"\n\n")
		if fl != nil {
			fl.Flush()
		}
	}
	parts := pieces(r.Text, r.Chunks)
	cut := r.CutAfter > 0
	if cut {
		parts = parts[:min(r.CutAfter, len(parts))]
	}
	// piece sends one text piece after the trickle wait; false when the
	// client has gone.
	piece := func(ev string) bool {
		if !wait(req, r.ChunkDelay) {
			return false
		}
		send(ev)
		return true
	}
	// end cuts the stream: a clean end, or a dropped connection.
	end := func() {
		if r.Drop {
			panic(http.ErrAbortHandler)
		}
	}
	if provider == ProviderAnthropic {
		send(fmt.Sprintf(`event: message_start`+"\n"+`data: {"type":"message_start","message":{"id":"msg_llmtest","type":"message","role":"assistant","model":%s,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":1}}}`, quote(r.Model), r.PromptTokens))
		send(`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		for _, p := range parts {
			if !piece(fmt.Sprintf(`event: content_block_delta`+"\n"+`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%s}}`, quote(p))) {
				return
			}
		}
		if cut {
			end()
			return
		}
		send(`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}`)
		send(fmt.Sprintf(`event: message_delta`+"\n"+`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, r.CompletionTokens))
		send(`event: message_stop` + "\n" + `data: {"type":"message_stop"}`)
		return
	}
	chunk := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = quote(finish)
		}
		return fmt.Sprintf(`data: {"id":"chatcmpl-llmtest","object":"chat.completion.chunk","created":1735445655,"model":%s,"choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":null}`, quote(r.Model), delta, f)
	}
	send(chunk(`{"role":"assistant","content":""}`, ""))
	for _, p := range parts {
		if !piece(chunk(`{"content":`+quote(p)+`}`, "")) {
			return
		}
	}
	if cut {
		end()
		return
	}
	send(chunk(`{}`, "stop"))
	send(fmt.Sprintf(`data: {"id":"chatcmpl-llmtest","object":"chat.completion.chunk","created":1735445655,"model":%s,"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		quote(r.Model), r.PromptTokens, r.CompletionTokens, r.PromptTokens+r.CompletionTokens))
	send("data: [DONE]")
}

// EmbeddingServer is a fake OpenAI-compatible embeddings server answering
// POST /v1/embeddings with vector(input) for every input, in the wire
// format of the embeddings API (items listed in reverse order, as a check
// that clients use "index").
type EmbeddingServer struct {
	*httptest.Server
	t      testing.TB
	vector func(input string) []float64

	mu     sync.Mutex
	inputs [][]string
}

// Embeddings starts a fake embeddings server. It is closed when the test
// ends.
func Embeddings(t testing.TB, vector func(input string) []float64) *EmbeddingServer {
	t.Helper()
	s := &EmbeddingServer{t: t, vector: vector}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the API base URL (OPENAI_API_BASE).
func (s *EmbeddingServer) BaseURL() string { return s.URL + "/v1" }

// Batches returns the inputs of every request so far.
func (s *EmbeddingServer) Batches() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.inputs...)
}

func (s *EmbeddingServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		s.t.Errorf("llmtest: request %s %s; want POST /v1/embeddings", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	raw, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(raw, &req); err != nil {
		s.t.Errorf("llmtest: embeddings body is not JSON: %v", err)
	}
	var inputs []string
	if err := json.Unmarshal(req.Input, &inputs); err != nil {
		var one string
		if json.Unmarshal(req.Input, &one) == nil {
			inputs = []string{one}
		}
	}
	s.mu.Lock()
	s.inputs = append(s.inputs, inputs)
	s.mu.Unlock()
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	resp := struct {
		Object string         `json:"object"`
		Data   []item         `json:"data"`
		Model  string         `json:"model"`
		Usage  map[string]int `json:"usage"`
	}{Object: "list", Model: req.Model, Usage: map[string]int{"prompt_tokens": len(inputs), "total_tokens": len(inputs)}}
	for i := len(inputs) - 1; i >= 0; i-- {
		resp.Data = append(resp.Data, item{"embedding", i, s.vector(inputs[i])})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}
