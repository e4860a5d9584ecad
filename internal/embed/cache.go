package embed

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Cache stores embeddings by content key, so a chunk whose text has not
// changed is never sent to the embedding service again. Implementations must
// be safe for concurrent use and must not retain or modify the slices they
// are given or return copies the caller may modify.
type Cache interface {
	Get(key string) ([]float32, bool)
	Put(key string, v []float32)
}

// FileCache is an in-memory Cache that can be saved to and loaded from a
// single file (the index keeps it in its directory).
type FileCache struct {
	mu sync.RWMutex
	m  map[string][]float32
}

// NewFileCache returns an empty cache.
func NewFileCache() *FileCache { return &FileCache{m: make(map[string][]float32)} }

// Get returns a copy of the cached vector for key.
func (c *FileCache) Get(key string) ([]float32, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[key]
	return slices.Clone(v), ok
}

// Put stores a copy of v under key.
func (c *FileCache) Put(key string, v []float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = slices.Clone(v)
}

// Len returns the number of cached vectors.
func (c *FileCache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// Prune deletes every entry whose key keep rejects (for example keys of
// chunks no longer in the index) and returns how many were deleted.
func (c *FileCache) Prune(keep func(key string) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k := range c.m {
		if !keep(k) {
			delete(c.m, k)
			n++
		}
	}
	return n
}

// The cache file layout, integers little-endian:
//
//	magic    [8]byte "SHRBECH\x00"
//	version  uint32  cacheVersion
//	count    uint64
//	entries  count × (uvarint key length, key bytes, uint32 dim, dim × float32),
//	         sorted by key so equal caches give equal files
//	checksum uint32  CRC-32C of every byte above
const (
	cacheMagic   = "SHRBECH\x00"
	cacheVersion = 1
	maxKeyLen    = 1 << 10
	maxCacheDim  = 1 << 16
)

// ErrCorruptCache is wrapped by ReadCache errors caused by the content of
// the input.
var ErrCorruptCache = errors.New("embedding cache file is corrupt; delete it and it will be rebuilt")

// WriteTo writes the cache in the format ReadCache reads.
func (c *FileCache) WriteTo(w io.Writer) (int64, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	keys := make([]string, 0, len(c.m))
	for k := range c.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	cw := &countWriter{w: bufio.NewWriterSize(w, 1<<16), crc: crc32.New(castagnoli)}
	le := binary.LittleEndian
	b := append([]byte(cacheMagic), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	le.PutUint32(b[8:], cacheVersion)
	le.PutUint64(b[12:], uint64(len(keys)))
	cw.write(b)
	for _, k := range keys {
		v := c.m[k]
		b = binary.AppendUvarint(b[:0], uint64(len(k)))
		b = append(b, k...)
		b = le.AppendUint32(b, uint32(len(v)))
		cw.write(appendFloats(b, v))
	}
	cw.write(le.AppendUint32(nil, cw.crc.Sum32()))
	if cw.err == nil {
		cw.err = cw.w.Flush()
	}
	if cw.err != nil {
		return cw.n, fmt.Errorf("embed: write cache: %w", cw.err)
	}
	return cw.n, nil
}

// countWriter writes through a buffer, feeding a checksum and counting
// bytes, and remembers the first error.
type countWriter struct {
	w   *bufio.Writer
	crc hashWriter
	n   int64
	err error
}

type hashWriter interface {
	io.Writer
	Sum32() uint32
}

func (cw *countWriter) write(b []byte) {
	if cw.err != nil {
		return
	}
	n, err := cw.w.Write(b)
	cw.n += int64(n)
	cw.crc.Write(b[:n])
	cw.err = err
}

// ReadCache reads a cache written by WriteTo. Corrupt input gives an error
// wrapping ErrCorruptCache and never panics; allocation follows the bytes
// actually read.
func ReadCache(r io.Reader) (*FileCache, error) {
	crc := crc32.New(castagnoli)
	br := bufio.NewReader(io.TeeReader(r, crc))
	corrupt := func(what string) error { return fmt.Errorf("embed: cache %s: %w", what, ErrCorruptCache) }
	hdr := make([]byte, 20)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return nil, corrupt("header truncated")
	}
	if string(hdr[:8]) != cacheMagic {
		return nil, corrupt("has a bad magic number")
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != cacheVersion {
		return nil, fmt.Errorf("embed: cache format version %d is not supported (want %d): %w", v, cacheVersion, ErrCorruptCache)
	}
	count := binary.LittleEndian.Uint64(hdr[12:])
	c := NewFileCache()
	var buf []byte
	for i := uint64(0); i < count; i++ {
		klen, err := binary.ReadUvarint(br)
		if err != nil || klen > maxKeyLen {
			return nil, corrupt("key length is invalid")
		}
		buf = slices.Grow(buf[:0], int(klen)+4)[:klen+4]
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, corrupt("entry truncated")
		}
		key := string(buf[:klen])
		dim := binary.LittleEndian.Uint32(buf[klen:])
		if dim > maxCacheDim {
			return nil, corrupt("vector dimension is implausible")
		}
		raw := make([]byte, 4*dim)
		if _, err := io.ReadFull(br, raw); err != nil {
			return nil, corrupt("vector truncated")
		}
		v := make([]float32, dim)
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
		}
		if _, dup := c.m[key]; dup {
			return nil, corrupt("has a duplicate key")
		}
		c.m[key] = v
	}
	// The last four bytes are the checksum of everything before them. The
	// tee has hashed the whole input, checksum included, so compare with the
	// CRC residue instead of splitting the stream.
	rest, err := io.ReadAll(br)
	if err != nil {
		return nil, fmt.Errorf("embed: read cache: %w", err)
	}
	if len(rest) != 4 {
		return nil, corrupt("checksum missing or trailing bytes")
	}
	if crc.Sum32() != crcResidue {
		return nil, corrupt("checksum mismatch")
	}
	return c, nil
}

// crcResidue is CRC-32C(x ‖ le32(CRC-32C(x))) for every x: appending a
// message's own little-endian CRC gives this constant, which lets a
// streaming reader verify the checksum without knowing where the body ends.
var crcResidue = func() uint32 {
	b := binary.LittleEndian.AppendUint32(nil, crc32.Checksum(nil, castagnoli))
	return crc32.Checksum(b, castagnoli)
}()

// LoadCache reads the cache file at path. A missing file gives an empty
// cache, so the first index build needs no special case.
func LoadCache(path string) (*FileCache, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewFileCache(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("embed: open cache: %w", err)
	}
	defer f.Close()
	c, err := ReadCache(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Save writes the cache to path atomically (temporary file, then rename).
func (c *FileCache) Save(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("embed: save cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := c.WriteTo(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("embed: save cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("embed: save cache: %w", err)
	}
	return nil
}
