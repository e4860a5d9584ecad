//go:build unix

package ocr

import (
	"os/exec"
	"syscall"
)

// ownGroup puts cmd in a process group of its own and makes cancellation
// kill the whole group, so that a helper Tesseract or pdftoppm starts
// (Tesseract's OpenMP threads live in its own process, but wrappers and
// shell scripts standing in for it do not) never outlives the context.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
