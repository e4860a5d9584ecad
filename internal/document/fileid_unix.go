//go:build unix

package document

import (
	"io/fs"
	"syscall"
)

// fileID identifies a folder independently of the path that reached it, so
// that symlink cycles can be detected.
type fileID struct{ dev, ino uint64 }

func idOf(info fs.FileInfo) fileID {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileID{}
}
