package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// statusError is an HTTP error answer from a provider, reduced to what the
// user needs: status, its text and the provider's own message.
type statusError struct {
	code int
	msg  string // provider message; may be empty
	err  error  // the SDK error
}

func (e *statusError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.code, http.StatusText(e.code))
	if e.msg != "" {
		s += ": " + e.msg
	}
	return s
}

func (e *statusError) Unwrap() error { return e.err }

// statusFailure builds the failure for an HTTP error status.
func statusFailure(code int, msg string, resp *http.Response, sdkErr error, now time.Time) failure {
	f := failure{
		status:     code,
		transient:  transientStatus(code),
		retryAfter: -1,
		err:        &statusError{code: code, msg: msg, err: sdkErr},
	}
	if f.transient && resp != nil {
		f.retryAfter = retryAfter(resp.Header, now)
	}
	return f
}

// hintFor returns advice for a final failure. keyVar and baseVar name the
// environment variables holding the key and endpoint.
func hintFor(f failure, keyVar, baseVar string) string {
	endpoint := ""
	if baseVar != "" {
		endpoint = " / " + baseVar
	}
	switch {
	case f.status == http.StatusUnauthorized:
		return keyVar + " was rejected — check the key" + endpoint
	case f.status == http.StatusForbidden:
		return "the key is not allowed to use this model — check " + keyVar + " and the model name"
	case f.status == http.StatusNotFound:
		return "the model or endpoint does not exist — check the model name" + endpoint
	case f.status == http.StatusBadRequest || f.status == http.StatusUnprocessableEntity:
		return "the request was rejected as invalid — check the model name, max tokens and the prompt size"
	case f.status == http.StatusRequestEntityTooLarge:
		return "the prompt is too large — ask with fewer or shorter search results"
	case f.transient:
		return "the service kept failing (rate limit, server error, timeout or network) — wait a minute and try again or lower the request rate; for a slow model, " + TimeoutHint
	default:
		return "the answer could not be read — check that" + endpointOr(baseVar) + " points at a compatible API"
	}
}

func endpointOr(baseVar string) string {
	if baseVar == "" {
		return " the base URL"
	}
	return " " + baseVar
}

// Kinds of failure, as Kind reports them.
const (
	KindTimeout        = "timeout"         // the whole call ran past --llm-timeout, or every attempt timed out
	KindRateLimit      = "rate_limit"      // HTTP 429
	KindServerError    = "server_error"    // HTTP 5xx
	KindAuth           = "auth"            // HTTP 401/403: the key
	KindInvalidRequest = "invalid_request" // HTTP 400/404/413/422: model name, prompt size
	KindConnection     = "connection"      // refused, reset, DNS, dropped
	KindBadResponse    = "bad_response"    // an answer that could not be read, or an empty one
	KindIncomplete     = "incomplete"      // a stream cut off mid-answer
	KindCancelled      = "cancelled"       // the caller's context ended
)

// Kind classifies the error of a failed call into one of the Kind…
// constants, for logs and user messages that must not show internals
// (endpoint URLs, Go errors). It returns "" for nil.
func Kind(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrIncomplete):
		return KindIncomplete
	case errors.As(err, &e):
		switch {
		case e.Timeout:
			return KindTimeout
		case e.StatusCode == http.StatusTooManyRequests:
			return KindRateLimit
		case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
			return KindAuth
		case e.StatusCode >= 500:
			return KindServerError
		case e.StatusCode >= 400:
			return KindInvalidRequest
		case e.Transient && strings.Contains(e.Err.Error(), "timeout"):
			return KindTimeout
		case e.Transient:
			return KindConnection
		}
		return KindBadResponse
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return KindCancelled
	}
	return KindBadResponse
}

// Reason is a one-line account of a failed call for the audit log: its
// kind, HTTP status and number of attempts, without the endpoint or the
// provider's raw message (e.g. "server_error: HTTP 503 after 4 attempts").
func Reason(err error) string {
	k := Kind(err)
	if k == "" {
		return ""
	}
	var e *Error
	if !errors.As(err, &e) {
		return k
	}
	r := k
	if k == KindIncomplete {
		// Why the stream stopped: "incomplete (timeout)".
		if inner := Kind(e); inner != KindIncomplete {
			r += " (" + inner + ")"
		}
	}
	if e.StatusCode != 0 {
		r += fmt.Sprintf(": HTTP %d", e.StatusCode)
	}
	if e.Attempts > 1 {
		r += fmt.Sprintf(" after %d attempts", e.Attempts)
	}
	return r
}
