//go:build !unix

package proc

import "os/exec"

// setGroup keeps exec.CommandContext's behaviour (kill the process) where
// there are no process groups.
func setGroup(*exec.Cmd) {}
