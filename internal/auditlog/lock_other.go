//go:build !unix

package auditlog

// LockFile is a no-op where flock is not available.
func LockFile(File) func() { return func() {} }
