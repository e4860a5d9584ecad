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
	DefaultTimeout    = 60 * time.Second       // per attempt, unless the whole call's limit is set
	// DefaultCallTimeout bounds a whole call — every attempt, every wait
	// between attempts and, for a stream, the whole answer however slowly
	// it trickles in (--llm-timeout, SHIRUBE_LLM_TIMEOUT).
	DefaultCallTimeout = 60 * time.Second
)

// TimeoutHint names the setting that raises the whole-call limit.
const TimeoutHint = "raise the limit with --llm-timeout or SHIRUBE_LLM_TIMEOUT (default 60s), or check that the server is running and not overloaded"

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

// ErrIncomplete is returned (wrapped) by Stream when the answer stopped
// before its end: the connection dropped, the stream ended without its
// final chunk (finish_reason, message_stop) or the call ran out of time
// after text was delivered. The Response then holds the partial text with
// Incomplete set.
var ErrIncomplete = errors.New("the model's answer was cut off before its end")

// errAttemptTimeout is the cancellation cause of an attempt that ran past
// its per-attempt timeout.
var errAttemptTimeout = errors.New("attempt timed out")

// errCallTimeout is the cancellation cause of a call that ran past its
// whole-call timeout.
var errCallTimeout = errors.New("call timed out")

// errStreamCut is the error of an attempt whose stream ended cleanly but
// without its final chunk.
var errStreamCut = errors.New("the stream ended without its final chunk")

// Error is the error of a failed call. Use errors.As to inspect it; its
// message already tells the user what failed and what to do.
type Error struct {
	Provider   string // "openai" or "anthropic"
	Model      string // model id that was asked for
	StatusCode int    // HTTP status; 0 for timeouts and connection errors
	Attempts   int    // requests made, including retries
	Transient  bool   // 429, 5xx, timeout or connection error
	// Timeout is set when the whole call ran past its limit
	// (--llm-timeout).
	Timeout bool
	Err     error  // the last underlying error
	hint    string // what to do about it
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
	timeout    time.Duration // per attempt
	call       time.Duration // whole call
	sleep      SleepFunc
	now        func() time.Time
}

func newRetryPolicy(maxRetries int, baseDelay, timeout, call time.Duration, sleep SleepFunc) retryPolicy {
	p := retryPolicy{maxRetries: maxRetries, baseDelay: baseDelay, maxDelay: DefaultMaxDelay, timeout: timeout, call: call, sleep: sleep, now: time.Now}
	switch {
	case p.maxRetries == 0:
		p.maxRetries = DefaultMaxRetries
	case p.maxRetries < 0:
		p.maxRetries = 0
	}
	if p.baseDelay <= 0 {
		p.baseDelay = DefaultBaseDelay
	}
	if p.call <= 0 {
		p.call = DefaultCallTimeout
	}
	if p.timeout <= 0 {
		// One attempt may use the whole call's time: a slow local model
		// given --llm-timeout 5m is not cut off at a fixed 60 s.
		p.timeout = p.call
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

// do runs attempt with retries, all within the whole-call timeout.
// classify maps an SDK error to a failure; hint turns the final failure
// into advice for the user.
func (p retryPolicy) do(ctx context.Context, provider, model string, attempt attemptFunc, classify func(error) failure, hint func(failure) string) error {
	cctx, cancel := context.WithTimeoutCause(ctx, p.call, errCallTimeout)
	defer cancel()
	for n := 0; ; n++ {
		if err := cctx.Err(); err != nil {
			return p.stopped(ctx, cctx, provider, model, n, "")
		}
		delivered, timedOut, err := p.run(cctx, attempt)
		if err == nil {
			return nil
		}
		if cctx.Err() != nil {
			return p.stopped(ctx, cctx, provider, model, n+1, "")
		}
		var f failure
		switch {
		case timedOut:
			f = failure{transient: true, retryAfter: -1, err: fmt.Errorf("no answer within the per-attempt timeout of %s", p.timeout)}
		case errors.Is(err, errStreamCut):
			f = failure{transient: true, retryAfter: -1, err: err}
		default:
			f = classify(err)
		}
		if !f.transient || delivered || n >= p.maxRetries {
			return &Error{Provider: provider, Model: model, StatusCode: f.status, Attempts: n + 1, Transient: f.transient, Err: f.err, hint: hint(f)}
		}
		wait := f.retryAfter
		if wait < 0 {
			wait = p.backoff(n)
		}
		if err := p.sleep(cctx, wait); err != nil {
			return p.stopped(ctx, cctx, provider, model, n+1, " while waiting to retry")
		}
	}
}

// stopped is the error of a call whose context ended: the caller's
// cancellation or deadline, or the whole-call timeout (an *Error with
// Timeout set).
func (p retryPolicy) stopped(ctx, cctx context.Context, provider, model string, attempts int, when string) error {
	if ctx.Err() == nil && errors.Is(context.Cause(cctx), errCallTimeout) {
		return &Error{Provider: provider, Model: model, Attempts: max(attempts, 1), Transient: true, Timeout: true,
			Err: fmt.Errorf("no complete answer within the LLM timeout of %s", p.call), hint: TimeoutHint}
	}
	err := ctx.Err()
	if err == nil {
		err = cctx.Err()
	}
	return fmt.Errorf("%s: request for model %q cancelled%s: %w", provider, model, when, err)
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
