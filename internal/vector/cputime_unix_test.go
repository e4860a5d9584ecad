//go:build unix

package vector

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) this process has used so far.
// Measurements report it next to wall time because the development machine
// is shared: CPU time is what the work costs, wall time what it waited.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
