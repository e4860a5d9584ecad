//go:build !unix

package mapped

import "os"

// Open reads the file at path into 8-byte aligned memory (no mmap here).
func Open(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &File{Data: Aligned(b)}, nil
}

func unmap([]byte) error { return nil }

func dontNeed([]byte) {}
