package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// DefaultOpenAIBaseURL is the OpenAI endpoint used when BaseURL is empty.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1/"

// OpenAIConfig configures an OpenAI client. Only APIKey (or BaseURL, for a
// local server) is required.
type OpenAIConfig struct {
	// APIKey is OPENAI_API_KEY. It may be empty when BaseURL points at a
	// local server that needs none (Ollama, vLLM, LM Studio).
	APIKey string
	// BaseURL is OPENAI_API_BASE, e.g. "http://localhost:11434/v1" for
	// Ollama; "" means DefaultOpenAIBaseURL.
	BaseURL string
	// Model is the default model; "" means DefaultOpenAIModel.
	Model string
	// MaxTokens is the default answer limit; 0 means DefaultMaxTokens.
	MaxTokens int
	// Timeout bounds one attempt (for streams: the silence between
	// chunks); 0 means the CallTimeout.
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

// OpenAI is a client for OpenAI and OpenAI-compatible chat completion
// endpoints. It is safe for concurrent use.
type OpenAI struct {
	client    openai.Client
	model     string
	maxTokens int
	prices    Prices
	retry     retryPolicy
}

// NewOpenAI returns a client for cfg. Retries are done by shirube, not by
// the SDK, so that Retry-After is always honoured and tests can observe it.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	base := strings.TrimSpace(cfg.BaseURL)
	key := strings.TrimSpace(cfg.APIKey)
	if base == "" && key == "" {
		return nil, errors.New("llm: OPENAI_API_KEY is not set — set it, or set OPENAI_API_BASE to a local OpenAI-compatible server such as http://localhost:11434/v1")
	}
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: OPENAI_API_BASE %q is not an http(s) URL — use a form like http://localhost:11434/v1", cfg.BaseURL)
	}
	if key == "" {
		key = "not-needed" // local servers ignore the key but some SDK paths want one
	}
	opts := []option.RequestOption{
		option.WithAPIKey(key),
		option.WithBaseURL(base),
		option.WithMaxRetries(0), // see retry.go
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	c := &OpenAI{
		client:    openai.NewClient(opts...),
		model:     cmp.Or(cfg.Model, DefaultOpenAIModel),
		maxTokens: cfg.MaxTokens,
		prices:    cfg.Prices,
		retry:     newRetryPolicy(cfg.MaxRetries, cfg.BaseDelay, cfg.Timeout, cfg.CallTimeout, cfg.Sleep),
	}
	if c.maxTokens <= 0 {
		c.maxTokens = DefaultMaxTokens
	}
	if c.prices == nil {
		c.prices = DefaultPrices()
	}
	return c, nil
}

// Model returns the client's default model.
func (c *OpenAI) Model() string { return c.model }

// Complete sends req and returns the whole answer.
func (c *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	params, err := c.params(req)
	if err != nil {
		return Response{}, err
	}
	var resp Response
	err = c.retry.do(ctx, "openai", params.Model, func(ctx context.Context, _ func()) (bool, error) {
		cc, err := c.client.Chat.Completions.New(ctx, params)
		if err != nil {
			return false, err
		}
		resp = Response{Model: cmp.Or(cc.Model, params.Model), Usage: openAIUsage(cc.Usage)}
		if len(cc.Choices) > 0 {
			resp.Text = cc.Choices[0].Message.Content
		}
		return false, nil
	}, c.classify, c.hint)
	if err != nil {
		return Response{}, err
	}
	return c.finish(req, params.Model, resp)
}

// Stream sends req with streaming on, calls onDelta with each piece of text
// in order, and returns the whole answer with its usage (requested with
// stream_options.include_usage). A stream that fails after delivering text
// is not retried; the partial text is returned with the error.
func (c *OpenAI) Stream(ctx context.Context, req Request, onDelta func(string)) (Response, error) {
	params, err := c.params(req)
	if err != nil {
		return Response{}, err
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	var resp Response
	err = c.retry.do(ctx, "openai", params.Model, func(ctx context.Context, alive func()) (bool, error) {
		resp = Response{Model: params.Model}
		var text strings.Builder
		delivered, finished := false, false
		stream := c.client.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()
		for stream.Next() {
			alive()
			ch := stream.Current()
			if ch.Model != "" {
				resp.Model = ch.Model
			}
			if ch.JSON.Usage.Valid() {
				resp.Usage = openAIUsage(ch.Usage)
			}
			for _, choice := range ch.Choices {
				if choice.Index == 0 && choice.FinishReason != "" {
					finished = true
				}
				if d := choice.Delta.Content; d != "" && choice.Index == 0 {
					delivered = true
					text.WriteString(d)
					if onDelta != nil {
						onDelta(d)
					}
				}
			}
		}
		resp.Text = text.String()
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
	return c.finish(req, params.Model, resp)
}

// params translates req into the SDK's request.
func (c *OpenAI) params(req Request) (openai.ChatCompletionNewParams, error) {
	model := cmp.Or(strings.TrimSpace(req.Model), c.model)
	if len(req.Messages) == 0 {
		return openai.ChatCompletionNewParams{}, fmt.Errorf("openai: request for model %q has no messages — pass at least the user's question", model)
	}
	system := req.System
	if req.JSON && !strings.Contains(strings.ToLower(system+allContent(req.Messages)), "json") {
		system = withJSONInstruction(system)
	}
	msgs := make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if system != "" {
		msgs = append(msgs, openai.SystemMessage(system))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			msgs = append(msgs, openai.UserMessage(m.Content))
		case RoleAssistant:
			msgs = append(msgs, openai.AssistantMessage(m.Content))
		default:
			return openai.ChatCompletionNewParams{}, fmt.Errorf("openai: message %d has role %q — use %q or %q", i, m.Role, RoleUser, RoleAssistant)
		}
	}
	p := openai.ChatCompletionNewParams{
		Model:     shared.ChatModel(model),
		Messages:  msgs,
		MaxTokens: openai.Int(int64(positiveOr(req.MaxTokens, c.maxTokens))),
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.JSON {
		p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	}
	return p, nil
}

// finish checks the answer and prices it.
func (c *OpenAI) finish(req Request, model string, resp Response) (Response, error) {
	return finish("openai", c.prices, req, model, resp)
}

func (c *OpenAI) classify(err error) failure {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return statusFailure(apiErr.StatusCode, apiErr.Message, apiErr.Response, err, c.retry.now())
	}
	return classifyTransport(err)
}

func (c *OpenAI) hint(f failure) string {
	return hintFor(f, "OPENAI_API_KEY", "OPENAI_API_BASE")
}

func openAIUsage(u openai.CompletionUsage) Usage {
	usage := Usage{PromptTokens: int(u.PromptTokens), CompletionTokens: int(u.CompletionTokens), TotalTokens: int(u.TotalTokens)}
	if usage.TotalTokens == 0 {
		usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	}
	return usage
}

// cutOff is the end of a stream that failed: when text had arrived, the
// partial answer is returned priced and marked Incomplete, with err
// wrapped in ErrIncomplete.
func cutOff(prices Prices, model string, resp Response, err error) (Response, error) {
	if strings.TrimSpace(resp.Text) == "" {
		return resp, err
	}
	resp.Incomplete = true
	resp.CostUSD = prices.Cost(cmp.Or(resp.Model, model), resp.Usage)
	return resp, fmt.Errorf("%w: %w", ErrIncomplete, err)
}

// finish is the common end of a call: an empty answer is an error, a JSON
// request gets its object extracted, and the cost is filled in.
func finish(provider string, prices Prices, req Request, model string, resp Response) (Response, error) {
	resp.CostUSD = prices.Cost(resp.Model, resp.Usage)
	if _, ok := prices.Lookup(resp.Model); !ok {
		resp.CostUSD = prices.Cost(model, resp.Usage)
	}
	if strings.TrimSpace(resp.Text) == "" {
		return resp, fmt.Errorf("%s: model %q: %w — retry, or check that the model is loaded and max tokens is large enough", provider, model, ErrEmptyAnswer)
	}
	if req.JSON {
		obj, err := extractJSON(resp.Text)
		if err != nil {
			return resp, fmt.Errorf("%s: model %q: %w", provider, model, err)
		}
		resp.Text = obj
	}
	return resp, nil
}

func allContent(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Content)
	}
	return b.String()
}

// positiveOr returns n, or def when n is not positive.
func positiveOr(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}
