//go:build !unix

package index

// lockDir is a no-op where flock is unavailable.
func lockDir(dir string) (func(), error) { return func() {}, nil }
