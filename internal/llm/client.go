package llm

import "context"

// Client is what both OpenAI and Anthropic offer. Prefer declaring the
// smaller interface you need at the point of use; Client is here for
// wiring code that picks a provider at run time.
type Client interface {
	// Complete sends req and returns the whole answer.
	Complete(ctx context.Context, req Request) (Response, error)
	// Stream sends req, calls onDelta with each piece of text in order,
	// and returns the whole answer with its usage at the end.
	Stream(ctx context.Context, req Request, onDelta func(string)) (Response, error)
	// Model returns the client's default model id.
	Model() string
}

var (
	_ Client = (*OpenAI)(nil)
	_ Client = (*Anthropic)(nil)
)
