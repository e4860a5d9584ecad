package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// apiError is the body of every error response of /api: a message for
// people (Japanese, saying what to do) and a stable code for programs.
type apiError struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// writeJSON writes v as the response body. HTML is not escaped: answers
// are Japanese text that clients display, and the content type is JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, apiError{Error: msg, Code: code})
}

// requestError is a client error with its status and code.
type requestError struct {
	status int
	code   string
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func badRequest(code, format string, args ...any) *requestError {
	return &requestError{status: http.StatusBadRequest, code: code, msg: fmt.Sprintf(format, args...)}
}

// writeRequestError answers with err's status when it is a requestError,
// else 500.
func writeRequestError(w http.ResponseWriter, err error) {
	var re *requestError
	if errors.As(err, &re) {
		writeError(w, re.status, re.code, re.msg)
		return
	}
	writeError(w, http.StatusInternalServerError, "internal", err.Error())
}

// decodeJSON reads a JSON body of at most limit bytes into v. A body that
// is too large is a 413, anything malformed a 400.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return &requestError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type",
				msg: "JSON で送ってください (Content-Type: application/json)"}
		}
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			return &requestError{status: http.StatusRequestEntityTooLarge, code: "body_too_large",
				msg: fmt.Sprintf("リクエストが大きすぎます — 本文は %d KiB 以内にしてください", limit>>10)}
		case errors.Is(err, io.EOF):
			return badRequest("empty_body", "リクエスト本文が空です — JSON を送ってください")
		default:
			return badRequest("invalid_json", "JSON を読み取れません: %v", err)
		}
	}
	// Drain the rest so an oversized trailer is still reported.
	if _, err := io.Copy(io.Discard, body); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &requestError{status: http.StatusRequestEntityTooLarge, code: "body_too_large",
				msg: fmt.Sprintf("リクエストが大きすぎます — 本文は %d KiB 以内にしてください", limit>>10)}
		}
	}
	return nil
}
