//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

// setGroup starts cmd as the leader of a new process group and makes
// cancellation kill that group: the negative pid names every process in it.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if err == syscall.ESRCH {
			return nil // already gone
		}
		return err
	}
}
