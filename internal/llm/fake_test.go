package llm

import (
	"context"
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

// fakeServer is an httptest server that records every request and answers
// with the next reply in its script (the last one repeats).
type fakeServer struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
	paths   []string
	replies []http.HandlerFunc
}

func newFakeServer(t *testing.T, replies ...http.HandlerFunc) *fakeServer {
	t.Helper()
	f := &fakeServer{replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	f.paths = append(f.paths, r.URL.Path)
	reply := f.replies[min(n, len(f.replies)-1)]
	f.mu.Unlock()
	reply(w, r)
}

// requests returns how many requests arrived.
func (f *fakeServer) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

// body returns the JSON body of request i.
func (f *fakeServer) body(i int) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[i]
}

// jsonReply answers with status and a JSON body, plus header pairs.
func jsonReply(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// sseReply streams events as Server-Sent Events, flushing after each.
// Each event is the text between blank lines ("event: x\ndata: {...}").
func sseReply(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		for _, ev := range events {
			io.WriteString(w, ev+"\n\n")
			fl.Flush()
		}
	}
}

// brokenSSE sends events, then drops the connection mid-body.
func brokenSSE(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sseReply(events...)(w, r)
		panic(http.ErrAbortHandler)
	}
}

// hang blocks until the client gives up (or the test ends), then answers
// nothing useful. It signals arrived when the request came in.
func hang(arrived chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if arrived != nil {
			select {
			case arrived <- struct{}{}:
			default:
			}
		}
		<-r.Context().Done()
	}
}

// sleeps records the waits the retry loop asked for instead of sleeping.
type sleeps struct {
	mu   sync.Mutex
	durs []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.durs = append(s.durs, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.durs...)
}

// OpenAI wire fixtures.

func openAICompletion(model, text string, prompt, completion int) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion","created":1735445655,"model":%q,
"choices":[{"index":0,"message":{"role":"assistant","content":%s,"refusal":null},"logprobs":null,"finish_reason":"stop"}],
"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d},"system_fingerprint":"fp_1"}`,
		model, mustJSON(text), prompt, completion, prompt+completion)
}

func openAIChunk(model, content string) string {
	return fmt.Sprintf(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1735445655,"model":%q,"choices":[{"index":0,"delta":{"content":%s},"logprobs":null,"finish_reason":null}],"usage":null}`,
		model, mustJSON(content))
}

func openAIStreamEvents(model string, deltas []string, prompt, completion int) []string {
	ev := []string{fmt.Sprintf(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1735445655,"model":%q,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}`, model)}
	for _, d := range deltas {
		ev = append(ev, openAIChunk(model, d))
	}
	ev = append(ev,
		fmt.Sprintf(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1735445655,"model":%q,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`, model),
		fmt.Sprintf(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1735445655,"model":%q,"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, model, prompt, completion, prompt+completion),
		"data: [DONE]")
	return ev
}

func openAIError(status int, typ, msg string) http.HandlerFunc {
	return jsonReply(status, fmt.Sprintf(`{"error":{"message":%q,"type":%q,"param":null,"code":null}}`, msg, typ))
}

// Anthropic wire fixtures.

func anthropicMessage(model, text string, in, out int) string {
	return fmt.Sprintf(`{"id":"msg_1","type":"message","role":"assistant","model":%q,
"content":[{"type":"text","text":%s}],"stop_reason":"end_turn","stop_sequence":null,
"usage":{"input_tokens":%d,"output_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}`,
		model, mustJSON(text), in, out)
}

func anthropicStreamEvents(model string, deltas []string, in, out int) []string {
	ev := []string{
		fmt.Sprintf("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":%q,\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":%d,\"output_tokens\":1}}}", model, in),
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
		"event: ping\ndata: {\"type\":\"ping\"}",
	}
	for _, d := range deltas {
		ev = append(ev, fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%s}}", mustJSON(d)))
	}
	return append(ev,
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}",
		fmt.Sprintf("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":%d}}", out),
		"event: message_stop\ndata: {\"type\":\"message_stop\"}")
}

func anthropicError(status int, typ, msg string, header ...string) http.HandlerFunc {
	return jsonReply(status, fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q}}`, typ, msg), header...)
}

func mustJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// get walks a decoded JSON body: get(b, "messages", 0, "role").
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func ptr[T any](v T) *T { return &v }

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
