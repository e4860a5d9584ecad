//go:build unix

package auditlog

import "syscall"

// LockFile takes an exclusive advisory lock on f (when it is an open file)
// for the time of one change, so that a process repairing a torn tail
// never cuts into a line another process is writing (and the PostgreSQL
// audit spool is never emptied under an append). The lock is released by
// the returned function, or when the file is closed.
func LockFile(f File) func() {
	fd, ok := f.(interface{ Fd() uintptr })
	if !ok {
		return func() {}
	}
	if syscall.Flock(int(fd.Fd()), syscall.LOCK_EX) != nil {
		return func() {}
	}
	return func() { syscall.Flock(int(fd.Fd()), syscall.LOCK_UN) }
}
