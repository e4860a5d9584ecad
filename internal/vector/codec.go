package vector

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"runtime"
	"sync"
)

// The on-disk layout of a Flat, all integers little-endian:
//
//	magic    [8]byte  "SHRBVEC\x00"
//	version  uint32   formatVersion
//	dim      uint32
//	count    uint64
//	data     count×dim float32 (the normalised vectors, row-major)
//	checksum uint32   CRC-32C of every byte above
const (
	magic         = "SHRBVEC\x00"
	formatVersion = 1
	headerSize    = 8 + 4 + 4 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteTo writes the store in the binary format read by ReadFlat. It
// implements io.WriterTo.
func (f *Flat) WriteTo(w io.Writer) (int64, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	bw := bufio.NewWriterSize(w, 1<<20)
	crc := crc32.New(castagnoli)
	out := io.MultiWriter(bw, crc)

	var hdr [headerSize]byte
	copy(hdr[:8], magic)
	binary.LittleEndian.PutUint32(hdr[8:], formatVersion)
	binary.LittleEndian.PutUint32(hdr[12:], uint32(f.dim))
	binary.LittleEndian.PutUint64(hdr[16:], uint64(f.n))
	written := int64(0)
	n, err := out.Write(hdr[:])
	written += int64(n)
	if err != nil {
		return written, fmt.Errorf("vector: write header: %w", err)
	}
	buf := make([]byte, 0, 1<<16)
	for i, x := range f.data {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		if len(buf) == cap(buf) || i == len(f.data)-1 {
			n, err := out.Write(buf)
			written += int64(n)
			if err != nil {
				return written, fmt.Errorf("vector: write vectors: %w", err)
			}
			buf = buf[:0]
		}
	}
	n, err = bw.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	written += int64(n)
	if err != nil {
		return written, fmt.Errorf("vector: write checksum: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return written, fmt.Errorf("vector: write: %w", err)
	}
	return written, nil
}

// ErrCorrupt is wrapped by every ReadFlat error caused by the content of the
// input (as opposed to an I/O failure).
var ErrCorrupt = errors.New("vector store file is corrupt or not a vector store; rebuild the index")

// ReadFlat reads a store written by WriteTo. Corrupt or truncated input gives
// an error wrapping ErrCorrupt; it never panics, and it allocates in step with
// the bytes actually read, so a lying header cannot exhaust memory.
func ReadFlat(r io.Reader) (*Flat, error) {
	crc := crc32.New(castagnoli)
	tr := io.TeeReader(r, crc)
	var hdr [headerSize]byte
	if _, err := io.ReadFull(tr, hdr[:]); err != nil {
		return nil, readErr("header", err)
	}
	if string(hdr[:8]) != magic {
		return nil, fmt.Errorf("vector: bad magic: %w", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != formatVersion {
		return nil, fmt.Errorf("vector: format version %d is not supported (want %d); rebuild the index with this version of shirube", v, formatVersion)
	}
	dim := binary.LittleEndian.Uint32(hdr[12:])
	count := binary.LittleEndian.Uint64(hdr[16:])
	if dim < 1 || dim > MaxDim {
		return nil, fmt.Errorf("vector: dimension %d out of range: %w", dim, ErrCorrupt)
	}
	if count > math.MaxInt32 || count*uint64(dim) > math.MaxInt/4 {
		return nil, fmt.Errorf("vector: implausible vector count %d: %w", count, ErrCorrupt)
	}
	total := int(count) * int(dim)

	// Read in blocks, growing as data arrives — unless the reader can tell
	// that the data is all there (bytes.Reader, a mapped file): then one
	// allocation of the final size, instead of 100 MB of copies at 100k.
	capacity := min(total, 1<<20)
	if l, ok := r.(interface{ Len() int }); ok && l.Len() >= total*4 {
		capacity = total
	}
	data := make([]float32, 0, capacity)
	buf := make([]byte, 1<<20)
	for len(data) < total {
		want := min(len(buf), (total-len(data))*4)
		if _, err := io.ReadFull(tr, buf[:want]); err != nil {
			return nil, readErr("vectors", err)
		}
		for i := 0; i < want; i += 4 {
			data = append(data, math.Float32frombits(binary.LittleEndian.Uint32(buf[i:])))
		}
	}
	sum := crc.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(r, tail[:]); err != nil {
		return nil, readErr("checksum", err)
	}
	if binary.LittleEndian.Uint32(tail[:]) != sum {
		return nil, fmt.Errorf("vector: checksum mismatch: %w", ErrCorrupt)
	}

	f := newFlat(int(dim))
	f.n, f.data = int(count), data
	f.codes, f.codesBuilt = nil, make(chan struct{}) // built on demand (buildCodes)
	if err := f.validate(); err != nil {
		return nil, err
	}
	return f, nil
}

func readErr(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("vector: truncated %s: %w", what, ErrCorrupt)
	}
	return fmt.Errorf("vector: read %s: %w", what, err)
}

// validate checks, in parallel, that every row is finite and of unit length
// (or zero), so a loaded store behaves exactly like one built with Add.
func (f *Flat) validate() error {
	count := f.n
	workers := min(runtime.GOMAXPROCS(0), max(1, count/4096))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := count*w/workers, count*(w+1)/workers
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				row := f.data[i*f.dim : (i+1)*f.dim]
				var ss float64
				for _, x := range row {
					ss += float64(x) * float64(x)
				}
				if math.IsNaN(ss) || math.IsInf(ss, 0) || (ss != 0 && math.Abs(ss-1) > 1e-3) {
					errs[w] = fmt.Errorf("vector: row %d is not a unit vector: %w", i, ErrCorrupt)
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
