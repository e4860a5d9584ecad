// Package mapped maps files read-only into memory, so that a large file is
// used in place instead of being read into (and counted by) the Go heap.
//
// A mapping is private and never written. Its pages are loaded from the
// page cache when first read and count towards the process's resident set
// only while they stay mapped in: [File.Release] drops them again (they are
// re-read from the file on the next access), which keeps a one-off pass
// over a whole file — a checksum — from raising the peak RSS.
//
// Where mmap is not available the file is read into memory instead; every
// method works the same, Release does nothing.
package mapped

import (
	"hash/crc32"
	"io"
	"unsafe"
)

// File is a read-only mapping of a whole file. Data must not be written
// and must not be used after Close.
type File struct {
	Data   []byte
	mapped bool
}

// window is how much of a mapping Checksum reads before releasing it.
const window = 1 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC-32C of f.Data[from:to], releasing each window of
// the mapping once read, so the pass adds at most a window to the resident
// set.
func (f *File) Checksum(from, to int) uint32 {
	var sum uint32
	for off := from; off < to; {
		end := min(to, (off/window+1)*window)
		sum = crc32.Update(sum, castagnoli, f.Data[off:end])
		f.release(off, end)
		off = end
	}
	return sum
}

// Release drops the resident pages of the whole mapping; the data stays
// valid and is read back from the file when used.
func (f *File) Release() { f.release(0, len(f.Data)) }

// release drops the whole pages inside Data[from:to].
func (f *File) release(from, to int) {
	if !f.mapped || len(f.Data) == 0 {
		return
	}
	const page = 4096
	from = (from + page - 1) &^ (page - 1)
	if to != len(f.Data) {
		to &^= page - 1
	}
	if from < to {
		dontNeed(f.Data[from:to])
	}
}

// Reader returns a reader of Data from the start that releases what it has
// read, window by window: decoding a mapped file into the heap then does not
// hold the file's pages as well.
func (f *File) Reader() io.Reader { return &reader{f: f} }

type reader struct {
	f             *File
	off, released int
}

// Len is the number of bytes not yet read.
func (r *reader) Len() int { return len(r.f.Data) - r.off }

func (r *reader) Read(p []byte) (int, error) {
	if r.off >= len(r.f.Data) {
		return 0, io.EOF
	}
	n := copy(p, r.f.Data[r.off:])
	r.off += n
	if to := r.off &^ (window - 1); to > r.released {
		r.f.release(r.released, to)
		r.released = to
	}
	return n, nil
}

// Close unmaps the file. Nothing may refer to Data afterwards.
func (f *File) Close() error {
	if !f.mapped || len(f.Data) == 0 {
		f.Data = nil
		return nil
	}
	err := unmap(f.Data)
	f.Data, f.mapped = nil, false
	return err
}

// Aligned returns b copied into 8-byte aligned memory (for tables read in
// place from a file that was read rather than mapped).
func Aligned(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	w := make([]uint64, (len(b)+7)/8)
	out := unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), len(b))
	copy(out, b)
	return out
}
