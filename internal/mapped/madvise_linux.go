package mapped

import "syscall"

// dontNeed drops the pages of a private read-only file mapping from the
// resident set; the next read faults them back in from the page cache.
func dontNeed(b []byte) { _ = syscall.Madvise(b, syscall.MADV_DONTNEED) }
