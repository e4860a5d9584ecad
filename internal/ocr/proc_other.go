//go:build !unix

package ocr

import "os/exec"

// ownGroup is a no-op where process groups do not exist: cancellation
// kills the process itself (exec.CommandContext's default).
func ownGroup(cmd *exec.Cmd) {}
