package vector

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// Rows is the row data of a store file written by WriteTo, checked and
// used in place (a memory-mapped file): an incremental index build copies
// the rows of unchanged chunks into the next file without decoding them.
type Rows struct {
	Dim  int
	N    int
	data []byte // N×Dim little-endian float32
}

// OpenRows checks a whole store file (header, size and checksum) and
// returns its rows; b must stay valid while they are used.
func OpenRows(b []byte) (Rows, error) {
	if len(b) < headerSize+4 || string(b[:8]) != magic {
		return Rows{}, fmt.Errorf("vector: bad header: %w", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != formatVersion {
		return Rows{}, fmt.Errorf("vector: format version %d is not supported (want %d)", v, formatVersion)
	}
	dim := uint64(binary.LittleEndian.Uint32(b[12:]))
	count := binary.LittleEndian.Uint64(b[16:])
	if dim < 1 || dim > MaxDim || count > math.MaxInt32 || uint64(len(b)) != headerSize+count*dim*4+4 {
		return Rows{}, fmt.Errorf("vector: size does not match the header: %w", ErrCorrupt)
	}
	end := len(b) - 4
	if crc32.Checksum(b[:end], castagnoli) != binary.LittleEndian.Uint32(b[end:]) {
		return Rows{}, fmt.Errorf("vector: checksum mismatch: %w", ErrCorrupt)
	}
	return Rows{Dim: int(dim), N: int(count), data: b[headerSize:end]}, nil
}

// RowWriter writes a store file (the format of WriteTo) row by row,
// without holding the rows: raw runs from Rows, or new vectors.
type RowWriter struct {
	w        io.Writer
	crc      uint32
	dim      int
	n, wrote int
	buf      []byte
}

// NewRowWriter starts a file of n rows of dimension dim.
func NewRowWriter(w io.Writer, dim, n int) (*RowWriter, error) {
	if dim < 1 || dim > MaxDim {
		return nil, fmt.Errorf("vector: dimension %d out of range", dim)
	}
	var hdr [headerSize]byte
	copy(hdr[:8], magic)
	binary.LittleEndian.PutUint32(hdr[8:], formatVersion)
	binary.LittleEndian.PutUint32(hdr[12:], uint32(dim))
	binary.LittleEndian.PutUint64(hdr[16:], uint64(n))
	rw := &RowWriter{w: w, dim: dim, n: n}
	return rw, rw.write(hdr[:])
}

func (rw *RowWriter) write(b []byte) error {
	rw.crc = crc32.Update(rw.crc, castagnoli, b)
	if _, err := rw.w.Write(b); err != nil {
		return fmt.Errorf("vector: write: %w", err)
	}
	return nil
}

// Copy writes rows lo to hi-1 of r as they are stored.
func (rw *RowWriter) Copy(r Rows, lo, hi int) error {
	if r.Dim != rw.dim || lo < 0 || hi > r.N || lo > hi || rw.wrote+hi-lo > rw.n {
		return fmt.Errorf("vector: cannot copy rows %d–%d of %d (dimension %d) into dimension %d", lo, hi, r.N, r.Dim, rw.dim)
	}
	rw.wrote += hi - lo
	return rw.write(r.data[lo*r.Dim*4 : hi*r.Dim*4])
}

// Add writes vec, L2-normalised exactly as Flat.Add stores it.
func (rw *RowWriter) Add(vec []float32) error {
	if len(vec) != rw.dim || rw.wrote == rw.n {
		return fmt.Errorf("vector: cannot add a %d-dimensional vector (row %d of %d, dimension %d)", len(vec), rw.wrote, rw.n, rw.dim)
	}
	row, err := normalised(vec)
	if err != nil {
		return fmt.Errorf("vector: cannot add: %w", err)
	}
	rw.buf = rw.buf[:0]
	for _, x := range row {
		rw.buf = binary.LittleEndian.AppendUint32(rw.buf, math.Float32bits(x))
	}
	rw.wrote++
	return rw.write(rw.buf)
}

// Close writes the checksum; every row must have been written.
func (rw *RowWriter) Close() error {
	if rw.wrote != rw.n {
		return fmt.Errorf("vector: %d of %d rows written", rw.wrote, rw.n)
	}
	return rw.write(binary.LittleEndian.AppendUint32(nil, rw.crc))
}
