package main

import (
	"errors"
	"fmt"

	"github.com/shirube/shirube/internal/document"
	"github.com/shirube/shirube/internal/eval/judge"
	"github.com/shirube/shirube/internal/eval/optimize"
	"github.com/shirube/shirube/internal/eval/pipeline"
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
// writes "Error: "; messages never start with it themselves. A domain
// error that a flag or command fixes gets that flag's name (flagHints).
func userError(err error) exitCode {
	var ec exitCode
	if errors.As(err, &ec) {
		return ec
	}
	msg := "Error: " + err.Error()
	for _, h := range flagHints() {
		if errors.Is(err, h.err) {
			msg += h.hint
			break
		}
	}
	return exitCode{code: 1, msg: msg}
}

// flagHints name the command or flag that fixes a domain error: the
// packages under internal say what to do in their own words and name no
// flag; the command line adds its spelling here.
func flagHints() []flagHint {
	return []flagHint{
		{index.ErrDamaged, " — run `shirube index --rebuild`"},
		{pgstore.ErrNoGeneration, " — run `shirube index --store …` first"},
		{document.ErrNotAFolder, " — pass a folder with --data"},
		{document.ErrDataDirMissing, " (--data)"},
		{pipeline.ErrSkipOptimize, " (--no-optimize)"},
		{judge.ErrInputEnded, " (--yes)"},
		{optimize.ErrRowMismatch, " (--separate)"},
		{optimize.ErrUndoDatabase, " (--undo --database DIR)"},
	}
}

// flagHint is the text the command line adds to an error that wraps err.
type flagHint struct {
	err  error
	hint string
}
