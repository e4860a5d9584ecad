//go:build !unix

package auditlog

// lockFile is a no-op where flock is not available.
func lockFile(File) func() { return func() {} }
