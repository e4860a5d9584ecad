package llm

import (
	"fmt"
	"net/http"
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
		return "the service kept failing (rate limit, server error, timeout or network) — wait a minute and try again, lower the request rate, or raise the timeout"
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
