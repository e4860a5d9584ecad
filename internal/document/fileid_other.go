//go:build !unix

package document

import "io/fs"

// fileID identifies a folder. Without inode numbers the best available key is
// name, size and modification time; cycles through symlinks are still cut
// because a revisited folder has the same key.
type fileID struct {
	name string
	size int64
	mod  int64
}

func idOf(info fs.FileInfo) fileID {
	return fileID{name: info.Name(), size: info.Size(), mod: info.ModTime().UnixNano()}
}
