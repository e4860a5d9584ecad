// Package llm talks to chat-completion services: any OpenAI-compatible
// endpoint (OpenAI, Ollama, vLLM, LM Studio) through the official openai-go
// SDK, and Anthropic through the official anthropic-sdk-go SDK.
//
// Both clients offer the same two calls, Complete and Stream, with the same
// Request and Response types, retry on 429/5xx/timeouts (honouring
// Retry-After), and report token usage and cost. Packages that need a model
// declare the small interface they use (for example
// `interface{ Complete(context.Context, llm.Request) (llm.Response, error) }`)
// and accept either client.
package llm

// Roles of a Message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string // RoleUser or RoleAssistant
	Content string
}

// Request is one chat completion request.
type Request struct {
	Model       string    // provider model id or alias; "" means the client's default
	System      string    // system prompt
	Messages    []Message // conversation, last one is the user's
	MaxTokens   int       // 0 means the client's default
	Temperature *float64  // nil means the provider default
	JSON        bool      // ask for a single JSON object as output
}

// Usage counts tokens of one call.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Response is the result of one call.
type Response struct {
	Text    string  // the model's text
	Model   string  // model id that answered
	Usage   Usage   // tokens used
	CostUSD float64 // from the price table; 0 when the model is unknown
	// Incomplete marks a streamed answer cut off before its end (see
	// ErrIncomplete); Text is what arrived.
	Incomplete bool
}
