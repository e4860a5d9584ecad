package main

import (
	"errors"
	"fmt"

	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/index"
	"github.com/shirube/shirube/internal/pgstore"
)

// exitCode is the one user-facing error of the command line: main prints
// msg on stderr as it is (nothing when it is empty) and exits with code,
// without the usage text. Commands return one for an outcome with its own
// exit status or wording (a FAIL verdict, a judge that failed, an audit
// line not written, a message in Japanese); every other error that
// reaches main becomes one through userError.
type exitCode struct {
	code int
	msg  string
}

func (e exitCode) Error() string { return fmt.Sprintf("exit %d: %s", e.code, e.msg) }

// userError is err as the user sees it: an exitCode as it is, anything
// else "Error: <message>" with status 1. This is the only place that
// writes "Error: "; messages never start with it themselves. An index
// that must be rebuilt gets the command that rebuilds it: the domain error
// names no command or flag.
func userError(err error) exitCode {
	var ec exitCode
	if errors.As(err, &ec) {
		return ec
	}
	msg := "Error: " + err.Error()
	switch {
	case errors.Is(err, index.ErrDamaged):
		msg += " — run `shirube index --rebuild`"
	case errors.Is(err, pgstore.ErrNoGeneration):
		msg += " — run `shirube index --store …` first"
	case errors.Is(err, document.ErrNotAFolder):
		msg += " — pass a folder with --data"
	}
	return exitCode{code: 1, msg: msg}
}
