package llm

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestCost(t *testing.T) {
	u := Usage{PromptTokens: 1_000_000, CompletionTokens: 1_000_000, TotalTokens: 2_000_000}
	tests := []struct {
		model string
		want  float64
	}{
		{"gpt-4o-mini", 0.15 + 0.60},
		{"gpt-4o-mini-2024-07-18", 0.15 + 0.60}, // dated snapshot
		{"gpt-4o", 2.50 + 10.00},
		{"gpt-4o-2024-08-06", 2.50 + 10.00},
		{"gpt-4.1-nano", 0.10 + 0.40},
		{"text-embedding-3-small", 0.02},
		{"text-embedding-3-large", 0.13},
		{"claude-haiku-4-5-20251001", 1 + 5},
		{"claude-sonnet-5-5", 3 + 15},
		{"claude-opus-5-5", 5 + 25},
		{"gpt-4o-audio-preview", 0}, // not a dated gpt-4o: unknown
		{"llama3.1:8b", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := Cost(tt.model, u); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Cost(%q) = %v, want %v", tt.model, got, tt.want)
		}
	}
	// Seed 002 §6.1 example: 1250 + 320 tokens of gpt-4o-mini.
	if got := Cost("gpt-4o-mini", Usage{1250, 320, 1570}); math.Abs(got-0.0003795) > 1e-12 {
		t.Errorf("seed example cost = %v", got)
	}
}

func TestParsePrices(t *testing.T) {
	p, err := ParsePrices(`{"gpt-4o-mini": {"prompt": 1, "completion": 2}, "my-local": {"prompt": 0.5, "completion": 0.5}}`)
	if err != nil {
		t.Fatal(err)
	}
	if p["gpt-4o-mini"] != (Price{1, 2}) || p["my-local"] != (Price{0.5, 0.5}) || p["gpt-4o"] != (Price{2.5, 10}) {
		t.Errorf("ParsePrices merged wrongly: %v", p)
	}
	if DefaultPrices()["gpt-4o-mini"] != (Price{0.15, 0.60}) {
		t.Error("ParsePrices changed the defaults")
	}
	for _, bad := range []string{``, `[]`, `{"x": 1}`, `{"x": {"prompt": -1}}`, `{"x": {"input": 1}}`, `{"": {}}`} {
		if _, err := ParsePrices(bad); err == nil || !strings.Contains(err.Error(), "price") {
			t.Errorf("ParsePrices(%q) err = %v, want an explanation", bad, err)
		}
	}
	if got := DefaultPrices().With(Prices{"x": {1, 1}}); got["x"] != (Price{1, 1}) || got["gpt-4o"] == (Price{}) {
		t.Errorf("With = %v", got)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2024, 12, 29, 13, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header []string
		want   time.Duration
	}{
		{"none", nil, -1},
		{"seconds", []string{"Retry-After", "3"}, 3 * time.Second},
		{"zero", []string{"Retry-After", "0"}, 0},
		{"fractional seconds", []string{"Retry-After", "1.5"}, 1500 * time.Millisecond},
		{"http date", []string{"Retry-After", "Sun, 29 Dec 2024 13:00:07 GMT"}, 7 * time.Second},
		{"http date in the past", []string{"Retry-After", "Sun, 29 Dec 2024 12:00:00 GMT"}, 0},
		{"milliseconds win", []string{"retry-after-ms", "120", "Retry-After", "5"}, 120 * time.Millisecond},
		{"bad ms falls back", []string{"retry-after-ms", "soon", "Retry-After", "2"}, 2 * time.Second},
		{"garbage", []string{"Retry-After", "later"}, -1},
		{"negative", []string{"Retry-After", "-4"}, -1},
		{"capped", []string{"Retry-After", "3600"}, MaxRetryAfter},
	}
	for _, tt := range tests {
		h := http.Header{}
		for i := 0; i+1 < len(tt.header); i += 2 {
			h.Set(tt.header[i], tt.header[i+1])
		}
		if got := retryAfter(h, now); got != tt.want {
			t.Errorf("%s: retryAfter = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	p := newRetryPolicy(0, 0, 0, 0, nil)
	if p.maxRetries != DefaultMaxRetries || newRetryPolicy(-1, 0, 0, 0, nil).maxRetries != 0 {
		t.Fatalf("maxRetries defaults wrong")
	}
	for n := range 10 {
		hi := min(DefaultBaseDelay<<n, DefaultMaxDelay)
		for range 50 {
			if d := p.backoff(n); d < hi/2 || d > hi {
				t.Fatalf("backoff(%d) = %v, want in [%v, %v]", n, d, hi/2, hi)
			}
		}
	}
}

func TestResolveAnthropicModel(t *testing.T) {
	tests := map[string]string{
		"":                          "claude-sonnet-5-5",
		"haiku":                     "claude-haiku-5-5",
		"Sonnet":                    "claude-sonnet-5-5",
		" OPUS ":                    "claude-opus-5-5",
		"claude-haiku-4-5-20251001": "claude-haiku-4-5-20251001",
	}
	for in, want := range tests {
		if got := ResolveAnthropicModel(in); got != want {
			t.Errorf("ResolveAnthropicModel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExtractJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{"  {\"a\": {\"b\": [1, 2]}}\n", `{"a": {"b": [1, 2]}}`},
		{"```json\n{\"a\":1}\n```", `{"a":1}`},
		{"結果です：{\"score\": 85, \"reasoning\": \"良い\"} 以上", `{"score": 85, "reasoning": "良い"}`},
		{"no json here", ""},
		{"{broken", ""},
		{"} backwards {", ""},
		{"[1, 2]", ""},
	}
	for _, tt := range tests {
		got, err := extractJSON(tt.in)
		if got != tt.want || (err != nil) != (tt.want == "") {
			t.Errorf("extractJSON(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestAvailable(t *testing.T) {
	tests := []struct{ key, base, ant, want string }{
		{"sk", "", "", "openai"},
		{"", "http://localhost:11434/v1", "", "openai"},
		{"sk", "", "ant", "openai"},
		{"", "", "ant", "anthropic"},
		{" ", "", "", ""},
	}
	for _, tt := range tests {
		if got := Available(tt.key, tt.base, tt.ant); got != tt.want {
			t.Errorf("Available(%q, %q, %q) = %q, want %q", tt.key, tt.base, tt.ant, got, tt.want)
		}
	}
}
