package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// DefaultAnthropicBaseURL is the Anthropic endpoint used when BaseURL is
// empty.
const DefaultAnthropicBaseURL = "https://api.anthropic.com/"

// AnthropicConfig configures an Anthropic client. Only APIKey is required.
type AnthropicConfig struct {
	// APIKey is ANTHROPIC_API_KEY.
	APIKey string
	// BaseURL overrides the endpoint (tests, proxies); "" means
	// DefaultAnthropicBaseURL.
	BaseURL string
	// Model is the default model: an alias (haiku, sonnet, opus) or a full
	// id; "" means DefaultAnthropicModel.
	Model string
	// MaxTokens is the default answer limit (the API requires one); 0
	// means DefaultMaxTokens.
	MaxTokens int
	// Timeout bounds one attempt (for streams: the silence between
	// events); 0 means the CallTimeout.
	Timeout time.Duration
	// CallTimeout bounds the whole call: all attempts, the waits between
	// them and a streamed answer however slowly it arrives; 0 means
	// DefaultCallTimeout.
	CallTimeout time.Duration
	// MaxRetries is the number of retries after the first attempt; 0 means
	// DefaultMaxRetries, a negative value disables retries.
	MaxRetries int
	// Prices prices the usage; nil means DefaultPrices().
	Prices Prices
	// BaseDelay is the first retry backoff; 0 means DefaultBaseDelay.
	BaseDelay time.Duration
	// Sleep waits between attempts; nil means a real, cancellable sleep.
	Sleep SleepFunc
	// HTTPClient is used for requests; nil means the SDK's default.
	HTTPClient *http.Client
}

// Anthropic is a client for the Anthropic Messages API. It is safe for
// concurrent use.
//
// Request.JSON is served by instruction and parsing: the system prompt asks
// for a single JSON object and the answer's object is extracted (code
// fences and surrounding prose are dropped). Assistant prefill ("{") is not
// used because newer Claude models reject prefilled requests.
type Anthropic struct {
	client    anthropic.Client
	model     string
	maxTokens int
	prices    Prices
	retry     retryPolicy
}

// NewAnthropic returns a client for cfg.
func NewAnthropic(cfg AnthropicConfig) (*Anthropic, error) {
	key := strings.TrimSpace(cfg.APIKey)
	if key == "" {
		return nil, errors.New("llm: ANTHROPIC_API_KEY is not set — set it in the environment or .env")
	}
	base := cmp.Or(strings.TrimSpace(cfg.BaseURL), DefaultAnthropicBaseURL)
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: Anthropic base URL %q is not an http(s) URL — use a form like https://api.anthropic.com/", cfg.BaseURL)
	}
	opts := []option.RequestOption{
		option.WithAPIKey(key),
		option.WithBaseURL(base),
		option.WithMaxRetries(0), // see retry.go
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	c := &Anthropic{
		client:    anthropic.NewClient(opts...),
		model:     ResolveAnthropicModel(cfg.Model),
		maxTokens: positiveOr(cfg.MaxTokens, DefaultMaxTokens),
		prices:    cfg.Prices,
		retry:     newRetryPolicy(cfg.MaxRetries, cfg.BaseDelay, cfg.Timeout, cfg.CallTimeout, cfg.Sleep),
	}
	if c.prices == nil {
		c.prices = DefaultPrices()
	}
	return c, nil
}

// Model returns the client's default model id.
func (c *Anthropic) Model() string { return c.model }

// Complete sends req and returns the whole answer.
func (c *Anthropic) Complete(ctx context.Context, req Request) (Response, error) {
	params, err := c.params(req)
	if err != nil {
		return Response{}, err
	}
	var resp Response
	err = c.retry.do(ctx, "anthropic", params.Model, func(ctx context.Context, _ func()) (bool, error) {
		msg, err := c.client.Messages.New(ctx, params)
		if err != nil {
			return false, err
		}
		resp = anthropicResponse(msg, params.Model)
		return false, nil
	}, c.classify, c.hint)
	if err != nil {
		return Response{}, err
	}
	return finish("anthropic", c.prices, req, params.Model, resp)
}

// Stream sends req with streaming on, calls onDelta with each piece of text
// in order, and returns the whole answer with its usage (from message_start
// and message_delta). A stream that fails after delivering text is not
// retried; the partial text is returned with the error.
func (c *Anthropic) Stream(ctx context.Context, req Request, onDelta func(string)) (Response, error) {
	params, err := c.params(req)
	if err != nil {
		return Response{}, err
	}
	var resp Response
	err = c.retry.do(ctx, "anthropic", params.Model, func(ctx context.Context, alive func()) (bool, error) {
		var msg anthropic.Message
		delivered, finished := false, false
		stream := c.client.Messages.NewStreaming(ctx, params)
		defer stream.Close()
		for stream.Next() {
			alive()
			ev := stream.Current()
			if err := msg.Accumulate(ev); err != nil {
				resp = anthropicResponse(&msg, params.Model)
				return delivered, fmt.Errorf("reading the stream: %w", err)
			}
			if ev.Type == "message_stop" {
				finished = true
			}
			if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
				delivered = true
				if onDelta != nil {
					onDelta(ev.Delta.Text)
				}
			}
		}
		resp = anthropicResponse(&msg, params.Model)
		if err := stream.Err(); err != nil {
			return delivered, err
		}
		if !finished {
			return delivered, errStreamCut
		}
		return delivered, nil
	}, c.classify, c.hint)
	if err != nil {
		return cutOff(c.prices, params.Model, resp, err)
	}
	return finish("anthropic", c.prices, req, params.Model, resp)
}

// params translates req into the SDK's request.
func (c *Anthropic) params(req Request) (anthropic.MessageNewParams, error) {
	model := c.model
	if m := strings.TrimSpace(req.Model); m != "" {
		model = ResolveAnthropicModel(m)
	}
	if len(req.Messages) == 0 {
		return anthropic.MessageNewParams{}, fmt.Errorf("anthropic: request for model %q has no messages — pass at least the user's question", model)
	}
	msgs := make([]anthropic.MessageParam, 0, len(req.Messages))
	for i, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			msgs = append(msgs, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
		case RoleAssistant:
			msgs = append(msgs, anthropic.NewAssistantMessage(anthropic.NewTextBlock(m.Content)))
		default:
			return anthropic.MessageNewParams{}, fmt.Errorf("anthropic: message %d has role %q — use %q or %q", i, m.Role, RoleUser, RoleAssistant)
		}
	}
	system := req.System
	if req.JSON {
		system = withJSONInstruction(system)
	}
	p := anthropic.MessageNewParams{
		Model:     anthropic.Model(model),
		MaxTokens: int64(positiveOr(req.MaxTokens, c.maxTokens)),
		Messages:  msgs,
	}
	if system != "" {
		p.System = []anthropic.TextBlockParam{{Text: system}}
	}
	if req.Temperature != nil {
		p.Temperature = anthropic.Float(*req.Temperature)
	}
	return p, nil
}

// anthropicResponse reads text and usage from msg. Prompt tokens include
// cache writes and reads; they are priced as ordinary input.
func anthropicResponse(msg *anthropic.Message, model string) Response {
	var text strings.Builder
	for _, b := range msg.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	u := msg.Usage
	prompt := int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens)
	return Response{
		Text:  text.String(),
		Model: cmp.Or(string(msg.Model), model),
		Usage: Usage{PromptTokens: prompt, CompletionTokens: int(u.OutputTokens), TotalTokens: prompt + int(u.OutputTokens)},
	}
}

func (c *Anthropic) classify(err error) failure {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		var env struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(apiErr.RawJSON()), &env) // the message is optional
		return statusFailure(apiErr.StatusCode, env.Error.Message, apiErr.Response, err, c.retry.now())
	}
	return classifyTransport(err)
}

func (c *Anthropic) hint(f failure) string {
	return hintFor(f, "ANTHROPIC_API_KEY", "")
}
