//go:build !unix

package analysis

import "os"

// mapFile reads path into memory (no mmap on this platform): still far
// cheaper than decoding the zipped dictionary. The 8-byte aligned copy
// lets the tables be used in place.
func mapFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return alignedCopy(b), nil
}

func unmapFile([]byte) {}
