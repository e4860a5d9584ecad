// Package index owns shirube's persistent index: the chunks of every
// ingested page, a BM25 inverted index over their analysed terms, their
// embedding vectors, and the fitted local embedding model.
//
// # On disk
//
// An index directory (default ./.shirube) holds generations:
//
//	.shirube/
//	  CURRENT            name of the live generation, replaced atomically
//	  LOCK               held while a build runs
//	  embed-cache.bin    remote embeddings by content hash (openai embedder)
//	  gen-000003/
//	    meta.json        format version, settings, counts, file checksums
//	    chunks.bin       chunk metadata and text, mapped (chunkfile.go);
//	                     indexes built before it have chunks.gob
//	    bm25.bin         inverted index
//	    vectors.bin      embeddings (flat, exact search)
//	    embedder.bin     the fitted local model (local embedder only)
//	    docs.gob         per document its metadata, page identities and chunk count, and the fit state of the local embedder (read only by builds)
//
// A build writes a complete new generation into a temporary directory,
// renames it into place, and only then rewrites CURRENT (temp file + rename).
// A crash (even kill -9) at any moment therefore leaves the previous
// generation loadable. Old generations are removed after the switch.
package index

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/mapped"
)

// FormatVersion is the on-disk format this build reads and writes. An index
// of another version is refused with ErrFormat; `shirube index --rebuild`
// replaces it.
const FormatVersion = 1

// File names inside a generation.
const (
	currentFile   = "CURRENT"
	lockFile      = "LOCK"
	cacheFile     = "embed-cache.bin"
	metaFile      = "meta.json"
	chunksFile    = "chunks.gob" // before chunks.bin; still read
	chunksBinFile = "chunks.bin"
	bm25File      = "bm25.bin"
	vectorsFile   = "vectors.bin"
	embedderFile  = "embedder.bin"
	docsFile      = "docs.gob"
)

var (
	// ErrNotFound means the directory holds no index yet.
	ErrNotFound = errors.New("no index found")
	// ErrFormat means the index was written by an incompatible version.
	ErrFormat = errors.New("index format mismatch")
	// ErrDamaged wraps every error that a rebuild of the index repairs:
	// damaged, missing or inconsistent files and another format version.
	// Front ends say how to rebuild (the command line adds the command).
	ErrDamaged = errors.New("the index must be rebuilt")
	// ErrNothingIndexed means a build found no document it could index:
	// the data folder holds no supported file, or every file was skipped
	// (Summary.Skipped says why). The previous generation, if any, stays.
	ErrNothingIndexed = errors.New("nothing to index")
)

// EmbedderInfo describes the vector leg an index was built with.
type EmbedderInfo struct {
	Kind  string `json:"kind"`  // local or openai
	Model string `json:"model"` // model id for openai; "tfidf-svd" for local
	Dim   int    `json:"dim"`
}

// Meta is the generation's description, stored as meta.json.
type Meta struct {
	FormatVersion int                 `json:"format_version"`
	Generation    int                 `json:"generation"`
	BuiltAt       time.Time           `json:"built_at"`
	DataDir       string              `json:"data_dir"`
	DatabaseDir   string              `json:"database_dir"`
	Documents     int                 `json:"documents"`
	Pages         int                 `json:"pages"`
	Chunks        int                 `json:"chunks"`
	ChunkSize     int                 `json:"chunk_size"`
	ChunkOverlap  int                 `json:"chunk_overlap"`
	Analyzer      analysis.Options    `json:"analyzer"`
	Embedder      EmbedderInfo        `json:"embedder"`
	HTMLMode      string              `json:"html_mode"`
	Categorized   bool                `json:"categorized"`
	Files         map[string]checksum `json:"files"`
}

type checksum struct {
	Size  int64  `json:"size"`
	CRC32 uint32 `json:"crc32c"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func genName(n int) string { return fmt.Sprintf("gen-%06d", n) }

// readCurrent returns the live generation's directory and number.
func readCurrent(dir string) (string, int, error) {
	b, err := os.ReadFile(filepath.Join(dir, currentFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", 0, fmt.Errorf("%w in %s — run `shirube index` first", ErrNotFound, dir)
	}
	if err != nil {
		return "", 0, fmt.Errorf("read index pointer: %w", err)
	}
	name := strings.TrimSpace(string(b))
	var n int
	if _, err := fmt.Sscanf(name, "gen-%d", &n); err != nil || filepath.Base(name) != name {
		return "", 0, fmt.Errorf("index pointer %s is damaged (%q): %w", filepath.Join(dir, currentFile), name, ErrDamaged)
	}
	return filepath.Join(dir, name), n, nil
}

// writeFileAtomic writes data to path via a synced temporary file and a rename.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	// Some filesystems cannot sync directories; the rename is still ordered,
	// so a failed sync is not an error.
	_ = d.Sync()
	return nil
}

// genWriter writes the files of one generation and records their checksums.
type genWriter struct {
	dir  string
	sums map[string]checksum
}

func (w *genWriter) write(name string, fill func(io.Writer) error) error {
	f, err := os.Create(filepath.Join(w.dir, name))
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	h := crc32.New(castagnoli)
	cw := &countWriter{w: io.MultiWriter(f, h)}
	bw := newBufWriter(cw)
	if err := fill(bw); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", name, err)
	}
	w.sums[name] = checksum{Size: cw.n, CRC32: h.Sum32()}
	return nil
}

// sameFile is a file of the previous generation that a new one holds
// unchanged, with its checksum.
type sameFile struct {
	path string
	sum  checksum
}

// link makes name a hard link to f, a file of an earlier generation
// (durable since that generation was written; generation files are never
// changed in place, only removed). It reports false, leaving nothing
// behind, when the file system cannot link or f is not what its checksum
// entry says it is in size; the caller writes the file then.
func (w *genWriter) link(name string, f sameFile) bool {
	dst := filepath.Join(w.dir, name)
	if fi, err := os.Stat(f.path); err != nil || fi.Size() != f.sum.Size {
		return false
	}
	if err := os.Link(f.path, dst); err != nil {
		os.Remove(dst)
		return false
	}
	w.sums[name] = f.sum
	return true
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// openChecked maps a generation file and verifies its size and, unless
// selfChecked says the file's own decoder verifies a checksum over all of
// it (chunks.bin, bm25.bin, vectors.bin, embedder.bin), the checksum in
// meta.json; the checksum pass leaves no pages resident.
func openChecked(gen string, meta *Meta, name string, selfChecked bool) (*mapped.File, error) {
	sum, ok := meta.Files[name]
	if !ok {
		return nil, fmt.Errorf("%s is not listed in %s: %w", name, metaFile, ErrDamaged)
	}
	f, err := mapped.Open(filepath.Join(gen, name))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w: %w", name, err, ErrDamaged)
	}
	if int64(len(f.Data)) != sum.Size || (!selfChecked && f.Checksum(0, len(f.Data)) != sum.CRC32) {
		f.Close()
		return nil, fmt.Errorf("%s is damaged (size or checksum mismatch): %w", name, ErrDamaged)
	}
	return f, nil
}

// readChecked reads a generation file whole and verifies its checksum.
func readChecked(gen string, meta *Meta, name string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(gen, name))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w: %w", name, err, ErrDamaged)
	}
	sum, ok := meta.Files[name]
	if !ok {
		return nil, fmt.Errorf("%s is not listed in %s: %w", name, metaFile, ErrDamaged)
	}
	if int64(len(b)) != sum.Size || crc32.Checksum(b, castagnoli) != sum.CRC32 {
		return nil, fmt.Errorf("%s is damaged (size or checksum mismatch): %w", name, ErrDamaged)
	}
	return b, nil
}

func readMeta(gen string) (Meta, error) {
	var m Meta
	b, err := os.ReadFile(filepath.Join(gen, metaFile))
	if err != nil {
		return m, fmt.Errorf("read index metadata: %w: %w", err, ErrDamaged)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("index metadata %s is damaged: %v: %w", filepath.Join(gen, metaFile), err, ErrDamaged)
	}
	if m.FormatVersion != FormatVersion {
		return m, fmt.Errorf("%w: the index in %s has format %d, this shirube reads format %d: %w", ErrFormat, filepath.Dir(gen), m.FormatVersion, FormatVersion, ErrDamaged)
	}
	return m, nil
}

func decodeGob(b []byte, v any) error {
	return gob.NewDecoder(bytes.NewReader(b)).Decode(v)
}

// ReadMeta returns the live generation's metadata without loading the index.
func ReadMeta(dir string) (Meta, error) {
	gen, _, err := readCurrent(dir)
	if err != nil {
		return Meta{}, err
	}
	return readMeta(gen)
}

// removeOldGenerations deletes every generation and temporary directory but keep.
func removeOldGenerations(dir, keep string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if n == keep || !e.IsDir() {
			continue
		}
		if strings.HasPrefix(n, "gen-") || strings.HasPrefix(n, ".tmp-gen-") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		os.RemoveAll(filepath.Join(dir, n))
	}
}
