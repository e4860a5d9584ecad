//go:build unix

package mapped

import (
	"fmt"
	"os"
	"syscall"
)

// Open maps the file at path. An empty file gives empty Data.
func Open(path string) (*File, error) {
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
	if size == 0 {
		return &File{}, nil
	}
	if int64(int(size)) != size || size < 0 {
		return nil, fmt.Errorf("%s: %d bytes cannot be mapped", path, size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	return &File{Data: b, mapped: true}, nil
}

func unmap(b []byte) error { return syscall.Munmap(b) }
