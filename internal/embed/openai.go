package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Defaults for OpenAIConfig.
const (
	DefaultOpenAIModel   = "text-embedding-3-small"
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	DefaultBatchSize     = 64
	DefaultMaxRetries    = 3
)

// OpenAIConfig configures an OpenAI-compatible embeddings client. The caller
// reads OPENAI_API_KEY and OPENAI_API_BASE; this package never reads the
// environment.
type OpenAIConfig struct {
	BaseURL    string // e.g. "https://api.openai.com/v1" (default) or a local server's /v1
	APIKey     string // sent as a bearer token when non-empty
	Model      string // default DefaultOpenAIModel
	Dimensions int    // requested output dimension (text-embedding-3 only); 0 = model default
	BatchSize  int    // inputs per request, default DefaultBatchSize
	// MaxRetries is how many times a request is retried on connection
	// errors, 408, 409, 429 and 5xx, waiting as Retry-After / Retry-After-Ms
	// ask or with exponential backoff (default DefaultMaxRetries; negative
	// means none).
	MaxRetries int
	// MaxRetryDelay caps one wait between retries (default: the SDK's, 2
	// minutes for Retry-After). A longer Retry-After stops retrying.
	MaxRetryDelay time.Duration
	HTTPClient    *http.Client // default http.DefaultClient
}

// OpenAI embeds texts through an OpenAI-compatible /v1/embeddings endpoint.
// It is safe for concurrent use.
type OpenAI struct {
	cfg   OpenAIConfig
	svc   openai.EmbeddingService
	cache Cache

	mu  sync.Mutex
	dim int
}

// NewOpenAI returns a client for cfg. cache may be nil (no caching).
func NewOpenAI(cfg OpenAIConfig, cache Cache) *OpenAI {
	if cfg.Model == "" {
		cfg.Model = DefaultOpenAIModel
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultOpenAIBaseURL
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithMaxRetries(max(cfg.MaxRetries, 0)),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	if cfg.MaxRetryDelay > 0 {
		opts = append(opts, option.WithMaxRetryDelay(cfg.MaxRetryDelay))
	}
	return &OpenAI{cfg: cfg, svc: openai.NewEmbeddingService(opts...), cache: cache}
}

// Name identifies the model, e.g. "openai:text-embedding-3-small".
func (o *OpenAI) Name() string {
	if o.cfg.Dimensions > 0 {
		return "openai:" + o.cfg.Model + ":" + strconv.Itoa(o.cfg.Dimensions)
	}
	return "openai:" + o.cfg.Model
}

// Dim returns the embedding dimension, or 0 before the first vector has been
// obtained (from the service or the cache).
func (o *OpenAI) Dim() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dim
}

// CacheKey is the cache key of text: the hex SHA-256 of the model name (with
// the requested dimension, if any), a NUL byte and the text.
func (o *OpenAI) CacheKey(text string) string {
	model := o.cfg.Model
	if o.cfg.Dimensions > 0 {
		model += ":" + strconv.Itoa(o.cfg.Dimensions)
	}
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil))
}

// EmbedTexts returns one L2-normalised embedding per text, in order. Texts
// found in the cache are not sent; the rest are deduplicated and sent in
// batches of BatchSize, and the results are cached. Empty texts are rejected
// (the API refuses them).
func (o *OpenAI) EmbedTexts(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	keys := make([]string, len(texts))
	pending := map[string][]int{} // key → positions still to fill
	var order []string            // pending keys in first-seen order
	var batchTexts []string
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, fmt.Errorf("embed: text %d is empty; only non-empty text can be embedded", i)
		}
		keys[i] = o.CacheKey(t)
		if o.cache != nil {
			if v, ok := o.cache.Get(keys[i]); ok && o.acceptDim(len(v)) == nil {
				out[i] = v
				continue
			}
		}
		if _, seen := pending[keys[i]]; !seen {
			order = append(order, keys[i])
			batchTexts = append(batchTexts, t)
		}
		pending[keys[i]] = append(pending[keys[i]], i)
	}
	for start := 0; start < len(order); start += o.cfg.BatchSize {
		end := min(start+o.cfg.BatchSize, len(order))
		vecs, err := o.request(ctx, batchTexts[start:end])
		if err != nil {
			return nil, fmt.Errorf("embed: %s: inputs %d–%d of %d uncached: %w", o.Name(), start, end-1, len(order), err)
		}
		for j, v := range vecs {
			key := order[start+j]
			if o.cache != nil {
				o.cache.Put(key, v)
			}
			for _, i := range pending[key] {
				out[i] = v
			}
		}
	}
	return out, nil
}

// request embeds one batch and validates the response.
func (o *OpenAI) request(ctx context.Context, batch []string) ([][]float32, error) {
	params := openai.EmbeddingNewParams{
		Model:          o.cfg.Model,
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: batch},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	if o.cfg.Dimensions > 0 {
		params.Dimensions = openai.Int(int64(o.cfg.Dimensions))
	}
	res, err := o.svc.New(ctx, params)
	if err != nil {
		return nil, describeAPIError(err, o.cfg.BaseURL)
	}
	if len(res.Data) != len(batch) {
		return nil, fmt.Errorf("server returned %d embeddings for %d inputs; the endpoint is not OpenAI-compatible or truncated the batch (try a smaller batch size)", len(res.Data), len(batch))
	}
	vecs := make([][]float32, len(batch))
	for pos, d := range res.Data {
		i := int(d.Index)
		if d.Index < 0 || i >= len(batch) || vecs[i] != nil {
			return nil, fmt.Errorf("server returned embedding index %d (position %d), out of range or repeated", d.Index, pos)
		}
		v, err := toUnit(d.Embedding)
		if err != nil {
			return nil, fmt.Errorf("embedding %d: %w", i, err)
		}
		if err := o.acceptDim(len(v)); err != nil {
			return nil, err
		}
		vecs[i] = v
	}
	return vecs, nil
}

// acceptDim records the dimension on first use and rejects any other.
func (o *OpenAI) acceptDim(n int) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dim == 0 {
		o.dim = n
	}
	if n != o.dim {
		return fmt.Errorf("server returned a %d-dimensional embedding, earlier ones had %d; the model changed — rebuild the index", n, o.dim)
	}
	return nil
}

// toUnit converts to float32 and L2-normalises, rejecting empty, non-finite
// and zero vectors.
func toUnit(e []float64) ([]float32, error) {
	if len(e) == 0 {
		return nil, errors.New("server returned an empty embedding")
	}
	var ss float64
	for _, x := range e {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, errors.New("server returned a non-finite value")
		}
		ss += x * x
	}
	if ss == 0 {
		return nil, errors.New("server returned a zero vector")
	}
	inv := 1 / math.Sqrt(ss)
	v := make([]float32, len(e))
	for i, x := range e {
		v[i] = float32(x * inv)
	}
	return v, nil
}

// describeAPIError turns SDK errors into messages that say what to fix.
func describeAPIError(err error, base string) error {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		var netErr net.Error
		if errors.As(err, &netErr) {
			return fmt.Errorf("cannot reach the embeddings endpoint at %s (check OPENAI_API_BASE and the network): %w", base, err)
		}
		return fmt.Errorf("the endpoint at %s did not return a valid OpenAI embeddings response (check OPENAI_API_BASE): %w", base, err)
	}
	hint := ""
	switch {
	case apiErr.StatusCode == http.StatusUnauthorized || apiErr.StatusCode == http.StatusForbidden:
		hint = "; check OPENAI_API_KEY"
	case apiErr.StatusCode == http.StatusNotFound:
		hint = "; check OPENAI_API_BASE (it should end in /v1) and the model name"
	case apiErr.StatusCode == http.StatusTooManyRequests:
		hint = "; rate limited even after retries — wait and run again, or lower the batch size"
	case apiErr.StatusCode >= 500:
		hint = "; the server kept failing after retries — try again later"
	}
	if apiErr.Message != "" {
		return fmt.Errorf("embeddings request failed with HTTP %d: %s%s", apiErr.StatusCode, apiErr.Message, hint)
	}
	return fmt.Errorf("embeddings request failed with HTTP %d%s: %w", apiErr.StatusCode, hint, err)
}
