//go:build unix

package analysis

import (
	"errors"
	"os"
	"syscall"
)

// mapFile maps path read-only into memory. The mapping is private and
// never written; it stays valid after the file is replaced (writeFlat
// renames a new file over it) or deleted.
func mapFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size <= 0 || int64(int(size)) != size {
		return nil, errors.New("empty or oversized file")
	}
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
}

// unmapFile releases a mapping of mapFile that nothing refers to.
func unmapFile(b []byte) { syscall.Munmap(b) }
