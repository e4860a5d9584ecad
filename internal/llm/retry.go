package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Retry defaults. Seed 002 §9: "API呼び出しは3回までリトライ（指数バックオフ）".
const (
	DefaultMaxRetries = 3                      // retries after the first attempt
	DefaultBaseDelay  = 500 * time.Millisecond // first backoff; doubles each retry
	DefaultMaxDelay   = 30 * time.Second       // cap on one backoff
	MaxRetryAfter     = 60 * time.Second       // cap on a server's Retry-After
	DefaultTimeout    = 60 * time.Second       // per attempt
)

// SleepFunc waits for d or until ctx is done, whichever is first. Tests
// inject one that records d and returns at once.
type SleepFunc func(ctx context.Context, d time.Duration) error

// Sleep waits d or until ctx ends, whichever comes first: the real
// SleepFunc (a d of zero or less only checks ctx).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ErrEmptyAnswer is returned (wrapped) when the model answered with no text.
var ErrEmptyAnswer = errors.New("the model returned an empty answer")

// errAttemptTimeout is the cancellation cause of an attempt that ran past
// its per-attempt timeout.
var errAttemptTimeout = errors.New("attempt timed out")

// Error is the error of a failed call. Use errors.As to inspect it; its
// message already tells the user what failed and what to do.
type Error struct {
	Provider   string // "openai" or "anthropic"
	Model      string // model id that was asked for
	StatusCode int    // HTTP status; 0 for timeouts and connection errors
	Attempts   int    // requests made, including retries
	Transient  bool   // 429, 5xx, timeout or connection error
	Err        error  // the last underlying error
	hint       string // what to do about it
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: request for model %q failed", e.Provider, e.Model)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.hint != "" {
		b.WriteString(" — ")
		b.WriteString(e.hint)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// retryPolicy is the retry behaviour shared by both clients.
type retryPolicy struct {
	maxRetries int
	baseDelay  time.Duration
	maxDelay   time.Duration
	timeout    time.Duration
	sleep      SleepFunc
	now        func() time.Time
}

func newRetryPolicy(maxRetries int, baseDelay, timeout time.Duration, sleep SleepFunc) retryPolicy {
	p := retryPolicy{maxRetries: maxRetries, baseDelay: baseDelay, maxDelay: DefaultMaxDelay, timeout: timeout, sleep: sleep, now: time.Now}
	switch {
	case p.maxRetries == 0:
		p.maxRetries = DefaultMaxRetries
	case p.maxRetries < 0:
		p.maxRetries = 0
	}
	if p.baseDelay <= 0 {
		p.baseDelay = DefaultBaseDelay
	}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	if p.sleep == nil {
		p.sleep = Sleep
	}
	return p
}

// backoff is the wait before retry number n (0-based): base·2ⁿ capped at
// maxDelay, with "equal jitter" so it lies in [d/2, d].
func (p retryPolicy) backoff(n int) time.Duration {
	d := p.baseDelay << n
	if d <= 0 || d > p.maxDelay {
		d = p.maxDelay
	}
	half := d / 2
	return half + rand.N(half+1)
}

// failure is how one attempt went wrong, classified for the retry loop.
type failure struct {
	status     int
	transient  bool
	retryAfter time.Duration // from the response headers; -1 when absent
	err        error
}

// attemptFunc runs one attempt. alive must be called whenever data
// arrives (each stream chunk); it restarts the per-attempt timeout, so for
// a stream the timeout bounds the silence between chunks rather than the
// whole answer. delivered reports whether output already reached the
// caller: a stream that delivered deltas is never retried, as the caller
// would see them twice.
type attemptFunc func(ctx context.Context, alive func()) (delivered bool, err error)

// do runs attempt with retries. classify maps an SDK error to a failure;
// hint turns the final failure into advice for the user.
func (p retryPolicy) do(ctx context.Context, provider, model string, attempt attemptFunc, classify func(error) failure, hint func(failure) string) error {
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: request for model %q cancelled: %w", provider, model, err)
		}
		delivered, timedOut, err := p.run(ctx, attempt)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: request for model %q cancelled: %w", provider, model, ctx.Err())
		}
		var f failure
		if timedOut {
			f = failure{transient: true, retryAfter: -1, err: fmt.Errorf("no answer within the per-attempt timeout of %s", p.timeout)}
		} else {
			f = classify(err)
		}
		if !f.transient || delivered || n >= p.maxRetries {
			return &Error{Provider: provider, Model: model, StatusCode: f.status, Attempts: n + 1, Transient: f.transient, Err: f.err, hint: hint(f)}
		}
		wait := f.retryAfter
		if wait < 0 {
			wait = p.backoff(n)
		}
		if err := p.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%s: request for model %q cancelled while waiting to retry: %w", provider, model, err)
		}
	}
}

// run makes one attempt under the per-attempt timeout and reports whether
// a failure was that timeout.
func (p retryPolicy) run(ctx context.Context, attempt attemptFunc) (delivered, timedOut bool, err error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(p.timeout, func() { cancel(errAttemptTimeout) })
	defer timer.Stop()
	delivered, err = attempt(actx, func() { timer.Reset(p.timeout) })
	timedOut = err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errAttemptTimeout)
	return delivered, timedOut, err
}

// classifyTransport classifies errors that are not HTTP status errors:
// connection failures and truncated bodies are transient, anything else
// (for example a malformed JSON body) is not.
func classifyTransport(err error) failure {
	f := failure{retryAfter: -1, err: err}
	var ne net.Error
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		f.transient = true
	case errors.As(err, &ne):
		f.transient = true
	}
	return f
}

// transientStatus reports whether an HTTP status is worth retrying:
// 408 request timeout, 409 conflict (lock), 429 rate limit, 5xx (including
// Anthropic's 529 overloaded).
func transientStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusConflict ||
		code == http.StatusTooManyRequests || code >= 500
}

// retryAfter reads the server's wait request from h: retry-after-ms
// (milliseconds), else Retry-After as seconds or an HTTP date. It returns
// -1 when there is none or it cannot be read, and caps the wait at
// MaxRetryAfter.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return -1
	}
	d := time.Duration(-1)
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); d < 0 && v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
			d = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = max(t.Sub(now), 0)
		}
	}
	if d > MaxRetryAfter {
		d = MaxRetryAfter
	}
	return d
}
