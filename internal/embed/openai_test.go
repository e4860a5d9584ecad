package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeEmbeddings is an OpenAI-compatible /v1/embeddings server. Each input
// gets a deterministic 8-dimensional vector derived from its text, so tests
// can check that every output lines up with its input.
type fakeEmbeddings struct {
	mu       sync.Mutex
	requests []embeddingRequest // every well-formed request received
	times    []time.Time
	auth     []string
	// respond, when set, may write its own response for the n-th request
	// (0-based) and return true; otherwise the server answers normally.
	respond func(n int, w http.ResponseWriter, req embeddingRequest) bool
}

type embeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions"`
}

func fakeVector(text string) []float64 {
	v := make([]float64, 8)
	for i := range v {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d:%s", i, text)
		v[i] = float64(h.Sum64()%2000)/1000 - 1
	}
	return v
}

func (f *fakeEmbeddings) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req embeddingRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, req)
	f.times = append(f.times, time.Now())
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	respond := f.respond
	f.mu.Unlock()
	if respond != nil && respond(n, w, req) {
		return
	}
	writeEmbeddings(w, req.Model, req.Input)
}

func writeEmbeddings(w http.ResponseWriter, model string, inputs []string) {
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
	}{Object: "list", Model: model, Usage: map[string]int{"prompt_tokens": len(inputs), "total_tokens": len(inputs)}}
	// Return the items in reverse order: clients must use "index".
	for i := len(inputs) - 1; i >= 0; i-- {
		resp.Data = append(resp.Data, item{"embedding", i, fakeVector(inputs[i])})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func (f *fakeEmbeddings) batches() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([][]string, len(f.requests))
	for i, r := range f.requests {
		out[i] = r.Input
	}
	return out
}

func newFake(t *testing.T, f *fakeEmbeddings, cfg OpenAIConfig, cache Cache) *OpenAI {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.URL + "/v1"
	cfg.HTTPClient = srv.Client()
	return NewOpenAI(cfg, cache)
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("チャンク %d の本文", i)
	}
	return out
}

func wantUnit(t *testing.T, text string, got []float32) {
	t.Helper()
	raw := fakeVector(text)
	var ss float64
	for _, x := range raw {
		ss += x * x
	}
	for i := range raw {
		if math.Abs(float64(got[i])-raw[i]/math.Sqrt(ss)) > 1e-6 {
			t.Fatalf("embedding of %q = %v, want normalised %v", text, got, raw)
		}
	}
}

func TestOpenAIBatching(t *testing.T) {
	tests := []struct {
		name      string
		n, batch  int
		wantSizes []int
	}{
		{"default batch", 150, 0, []int{64, 64, 22}},
		{"exact multiple", 20, 10, []int{10, 10}},
		{"single", 1, 5, []int{1}},
		{"none", 0, 5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeEmbeddings{}
			o := newFake(t, f, OpenAIConfig{APIKey: "sk-test", BatchSize: tt.batch}, nil)
			in := texts(tt.n)
			got, err := o.EmbedTexts(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int
			var sent []string
			for _, b := range f.batches() {
				sizes = append(sizes, len(b))
				sent = append(sent, b...)
			}
			if !slices.Equal(sizes, tt.wantSizes) {
				t.Errorf("request sizes %v, want %v", sizes, tt.wantSizes)
			}
			if !slices.Equal(sent, in) {
				t.Errorf("inputs sent out of order or incomplete")
			}
			for i := range in {
				wantUnit(t, in[i], got[i])
			}
			for _, r := range f.requests {
				if r.Model != DefaultOpenAIModel || r.EncodingFormat != "float" {
					t.Errorf("request model %q format %q", r.Model, r.EncodingFormat)
				}
			}
			for _, a := range f.auth {
				if a != "Bearer sk-test" {
					t.Errorf("Authorization = %q", a)
				}
			}
			if tt.n > 0 && o.Dim() != 8 {
				t.Errorf("Dim = %d, want 8", o.Dim())
			}
		})
	}
}

func TestOpenAICache(t *testing.T) {
	f := &fakeEmbeddings{}
	cache := NewFileCache()
	o := newFake(t, f, OpenAIConfig{BatchSize: 4, Dimensions: 8}, cache)
	ctx := context.Background()
	in := texts(6)
	first, err := o.EmbedTexts(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.batches()) != 2 || cache.Len() != 6 {
		t.Fatalf("first call: %d requests, %d cached; want 2, 6", len(f.batches()), cache.Len())
	}
	if f.requests[0].Dimensions != 8 {
		t.Errorf("dimensions not sent: %+v", f.requests[0])
	}

	// All cached: no request at all.
	again, err := o.EmbedTexts(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.batches()) != 2 {
		t.Fatalf("cached texts caused %d more requests", len(f.batches())-2)
	}
	for i := range in {
		if !slices.Equal(first[i], again[i]) {
			t.Fatalf("cached embedding %d differs", i)
		}
	}

	// Mixed: only the new text is sent, duplicates within a call once.
	mixed := []string{in[0], "新しいチャンク", in[3], "新しいチャンク"}
	got, err := o.EmbedTexts(ctx, mixed)
	if err != nil {
		t.Fatal(err)
	}
	b := f.batches()
	if len(b) != 3 || !slices.Equal(b[2], []string{"新しいチャンク"}) {
		t.Fatalf("requests %v, want a third with only the new text", b)
	}
	for i, s := range mixed {
		wantUnit(t, s, got[i])
	}

	// A fresh client with a cache reloaded from disk makes no request.
	path := filepath.Join(t.TempDir(), "embed.cache")
	if err := cache.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadCache(path)
	if err != nil {
		t.Fatal(err)
	}
	f2 := &fakeEmbeddings{}
	o2 := newFake(t, f2, OpenAIConfig{BatchSize: 4, Dimensions: 8}, loaded)
	if _, err := o2.EmbedTexts(ctx, in); err != nil {
		t.Fatal(err)
	}
	if len(f2.batches()) != 0 {
		t.Fatalf("reloaded cache missed: %d requests", len(f2.batches()))
	}
	if o2.Dim() != 8 {
		t.Errorf("Dim after cache hits = %d, want 8", o2.Dim())
	}

	// A different model must not hit the same keys.
	if o.CacheKey("x") == NewOpenAI(OpenAIConfig{Model: "other"}, nil).CacheKey("x") {
		t.Error("cache key ignores the model")
	}
}

func TestOpenAIRetryAfter(t *testing.T) {
	f := &fakeEmbeddings{respond: func(n int, w http.ResponseWriter, _ embeddingRequest) bool {
		if n == 0 {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
			return true
		}
		return false
	}}
	o := newFake(t, f, OpenAIConfig{}, nil)
	got, err := o.EmbedTexts(context.Background(), []string{"東京"})
	if err != nil {
		t.Fatal(err)
	}
	wantUnit(t, "東京", got[0])
	if len(f.times) != 2 {
		t.Fatalf("%d requests, want 2 (one 429, one retry)", len(f.times))
	}
	// The SDK's own backoff for a first retry is at most 0.5 s; a gap of at
	// least ~1 s shows Retry-After was honoured. (A lower bound only: never
	// flaky on a slow machine.)
	if gap := f.times[1].Sub(f.times[0]); gap < 900*time.Millisecond {
		t.Errorf("retried after %v, before the 1 s Retry-After", gap)
	}
}

func TestOpenAIErrors(t *testing.T) {
	status := func(code int, body string) func(int, http.ResponseWriter, embeddingRequest) bool {
		return func(_ int, w http.ResponseWriter, _ embeddingRequest) bool {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After-Ms", "1") // keep retries fast
			w.WriteHeader(code)
			io.WriteString(w, body)
			return true
		}
	}
	tests := []struct {
		name         string
		respond      func(int, http.ResponseWriter, embeddingRequest) bool
		maxRetries   int
		wantRequests int
		wantErr      []string
	}{
		{
			name:    "500 every time",
			respond: status(500, `{"error":{"message":"upstream exploded"}}`), maxRetries: 3,
			wantRequests: 4, wantErr: []string{"HTTP 500", "upstream exploded", "after retries"},
		},
		{
			name:    "401 is not retried",
			respond: status(401, `{"error":{"message":"Incorrect API key provided"}}`), maxRetries: 3,
			wantRequests: 1, wantErr: []string{"HTTP 401", "OPENAI_API_KEY"},
		},
		{
			name:    "malformed JSON",
			respond: status(200, `{"object":"list","data":[{"embedding":[0.1,`), maxRetries: 1,
			wantRequests: 1, wantErr: []string{"not return a valid OpenAI embeddings response"},
		},
		{
			name: "fewer embeddings than inputs",
			respond: func(_ int, w http.ResponseWriter, req embeddingRequest) bool {
				writeEmbeddings(w, req.Model, req.Input[:len(req.Input)-1])
				return true
			},
			wantRequests: 1, wantErr: []string{"returned 2 embeddings for 3 inputs"},
		},
		{
			name: "repeated index",
			respond: func(_ int, w http.ResponseWriter, req embeddingRequest) bool {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"object":"list","model":"m","data":[`+
					`{"object":"embedding","index":0,"embedding":[1,0]},`+
					`{"object":"embedding","index":0,"embedding":[1,0]},`+
					`{"object":"embedding","index":1,"embedding":[1,0]}]}`)
				return true
			},
			wantRequests: 1, wantErr: []string{"out of range or repeated"},
		},
		{
			name: "inconsistent dimensions",
			respond: func(_ int, w http.ResponseWriter, req embeddingRequest) bool {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"object":"list","model":"m","data":[`+
					`{"object":"embedding","index":0,"embedding":[1,0]},`+
					`{"object":"embedding","index":1,"embedding":[1,0,0]},`+
					`{"object":"embedding","index":2,"embedding":[1,0]}]}`)
				return true
			},
			wantRequests: 1, wantErr: []string{"3-dimensional", "earlier ones had 2"},
		},
		{
			name: "NaN-free but zero vector",
			respond: func(_ int, w http.ResponseWriter, req embeddingRequest) bool {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"object":"list","model":"m","data":[`+
					`{"object":"embedding","index":0,"embedding":[0,0]},`+
					`{"object":"embedding","index":1,"embedding":[1,0]},`+
					`{"object":"embedding","index":2,"embedding":[1,0]}]}`)
				return true
			},
			wantRequests: 1, wantErr: []string{"zero vector"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeEmbeddings{respond: tt.respond}
			cache := NewFileCache()
			o := newFake(t, f, OpenAIConfig{MaxRetries: tt.maxRetries}, cache)
			_, err := o.EmbedTexts(context.Background(), []string{"a", "b", "c"})
			if err == nil {
				t.Fatal("EmbedTexts succeeded")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if got := len(f.batches()); got != tt.wantRequests {
				t.Errorf("%d requests, want %d", got, tt.wantRequests)
			}
			if cache.Len() != 0 {
				t.Errorf("failed batch was cached")
			}
		})
	}
}

func TestOpenAIRejectsEmptyTextAndHonoursContext(t *testing.T) {
	f := &fakeEmbeddings{}
	o := newFake(t, f, OpenAIConfig{}, nil)
	if _, err := o.EmbedTexts(context.Background(), []string{"ok", "  "}); err == nil || !strings.Contains(err.Error(), "text 1 is empty") {
		t.Errorf("err = %v, want empty-text error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.EmbedTexts(ctx, []string{"ok"}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if len(f.batches()) != 0 {
		t.Errorf("requests were sent")
	}
}

func TestOpenAIUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	o := NewOpenAI(OpenAIConfig{BaseURL: url + "/v1", MaxRetries: -1}, nil)
	_, err := o.EmbedTexts(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_BASE") {
		t.Errorf("err = %v, want a hint about OPENAI_API_BASE", err)
	}
}

func TestFileCacheRoundTripAndCorruption(t *testing.T) {
	c := NewFileCache()
	c.Put("b", []float32{1, 2, 3})
	c.Put("a", []float32{-0.5})
	c.Put("", nil)
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	d, err := ReadCache(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := d.Get("b"); !ok || !slices.Equal(v, []float32{1, 2, 3}) || d.Len() != 3 {
		t.Fatalf("round trip lost data: %v %v len %d", v, ok, d.Len())
	}
	var again bytes.Buffer
	d.WriteTo(&again)
	if !bytes.Equal(again.Bytes(), good) {
		t.Error("re-encoding differs: output is not canonical")
	}
	if n := d.Prune(func(k string) bool { return k == "a" }); n != 2 || d.Len() != 1 {
		t.Errorf("Prune removed %d, left %d", n, d.Len())
	}
	for i := range good {
		bad := slices.Clone(good)
		bad[i] ^= 0x40
		if _, err := ReadCache(bytes.NewReader(bad)); err == nil {
			t.Fatalf("flipping byte %d went unnoticed", i)
		}
	}
	for _, n := range []int{0, 5, len(good) - 1} {
		if _, err := ReadCache(bytes.NewReader(good[:n])); !errors.Is(err, ErrCorruptCache) {
			t.Errorf("truncated to %d: err = %v", n, err)
		}
	}
	missing, err := LoadCache(filepath.Join(t.TempDir(), "none"))
	if err != nil || missing.Len() != 0 {
		t.Errorf("missing file: %v, %d entries", err, missing.Len())
	}
	path := filepath.Join(t.TempDir(), "c")
	os.WriteFile(path, []byte("garbage"), 0o644)
	if _, err := LoadCache(path); !errors.Is(err, ErrCorruptCache) || !strings.Contains(err.Error(), path) {
		t.Errorf("garbage file: err = %v", err)
	}
}

func FuzzReadCache(f *testing.F) {
	c := NewFileCache()
	c.Put("k", []float32{1, 2})
	var buf bytes.Buffer
	c.WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(cacheMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, withCRC(data)} {
			c, err := ReadCache(bytes.NewReader(in))
			if err != nil {
				continue
			}
			var out bytes.Buffer
			if _, err := c.WriteTo(&out); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadCache(&out); err != nil {
				t.Fatalf("re-encoded cache does not load: %v", err)
			}
		}
	})
}
