package index

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// verifyGeneration checks that every file of the generation in gen exists
// and matches the size and CRC-32C recorded in meta, reading each once.
// `shirube index` calls it before it would keep a generation as "nothing
// changed", so that a damaged generation is rebuilt instead of kept.
func verifyGeneration(gen string, meta Meta) error {
	names := []string{chunksBinFile, bm25File, vectorsFile, docsFile}
	if _, ok := meta.Files[chunksBinFile]; !ok {
		names[0] = chunksFile // built before chunks.bin
	}
	if meta.Embedder.Kind == "local" {
		names = append(names, embedderFile)
	}
	for _, name := range names {
		want, ok := meta.Files[name]
		if !ok {
			return fmt.Errorf("%s is not listed in %s", name, metaFile)
		}
		f, err := os.Open(filepath.Join(gen, name))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		h := crc32.New(castagnoli)
		n, err := io.Copy(h, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		if n != want.Size || h.Sum32() != want.CRC32 {
			return fmt.Errorf("%s is damaged (size or checksum mismatch)", name)
		}
	}
	return nil
}

// missingPages returns the page identities cited by chunks whose page file
// is no longer in the page database dbDir (sorted), for example after a
// crash or a hand deletion. It returns nil when dbDir is unknown or does not
// exist at all (an index opened away from its database), since then
// nothing can be told about single pages.
func missingPages(dbDir string, files []string) []string {
	if dbDir == "" {
		return nil
	}
	root := filepath.Clean(dbDir)
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil
	}
	parent := filepath.Dir(root)
	var out []string
	for _, id := range files {
		if _, err := os.Stat(filepath.Join(parent, filepath.FromSlash(id))); errors.Is(err, os.ErrNotExist) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}
