// Package proc runs outside programs (pdftotext, pdftoppm, pdftohtml, an
// OCR engine) so that a deadline or a cancellation really ends them.
//
// exec.CommandContext kills only the process it started; a tool that
// forks helpers (a shell wrapper, an OCR engine running one child per
// page) would leave those running, still burning CPU and holding the
// output pipes open so that Wait never returns. Command starts the program
// in a process group of its own and, when ctx ends, kills the whole group;
// WaitDelay then bounds how long Wait waits for the pipes after that.
//
// Every outside program shirube runs is started through Command:
//
//	ctx, cancel := context.WithTimeout(ctx, fileTimeout)
//	defer cancel()
//	cmd := proc.Command(ctx, "pdftotext", "-raw", path, "-")
//	err := cmd.Run() // ends, group and all, when ctx does
package proc

import (
	"context"
	"os/exec"
	"time"
)

// WaitDelay is how long Wait waits for the output pipes to close after the
// process group was killed (a grandchild outside the group could hold
// them); then it closes them itself and returns.
const WaitDelay = 2 * time.Second

// Command is exec.CommandContext for a program whose whole process group
// is killed when ctx ends (on systems without process groups, the process
// itself is). Set Stdout, Stderr and the rest as for any exec.Cmd.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	setGroup(cmd)
	cmd.WaitDelay = WaitDelay
	return cmd
}
