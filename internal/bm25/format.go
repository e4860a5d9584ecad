package bm25

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"unicode/utf8"
)

// On-disk format, version 2. All integers are unsigned LEB128 varints
// (minimal encodings only) unless stated otherwise; fixed-width numbers are
// little-endian.
//
//	magic      4 bytes  "SBM5"
//	version    1 byte   2
//	flags      1 byte   bit 0: Params.QueryTF
//	k1, b      2 × 8 bytes IEEE 754 float64
//	N          documents
//	V          vocabulary terms
//	P          bytes of postings in total
//	docLen     N varints
//	terms      V × (byte length, UTF-8 bytes), in term-id order
//	directory  V × (document frequency, bytes of postings)
//	postings   P bytes: per term, per document (doc-id delta, tf) where the
//	           delta is from the previous doc id of the term, the first from
//	           -1 (so every delta ≥ 1)
//	termMax    V × float32: per term the largest tf/(tf + norm) of its
//	           postings, rounded up (see bounds.go)
//	blocks     per term with df > 64, ⌈df/64⌉ entries of 12 bytes in term
//	           order: the block's last doc id (uint32), the end of its bytes
//	           in the term's postings (uint32) and its largest
//	           tf/(tf + norm) (float32, rounded up)
//	crc32      4 bytes  CRC-32C (Castagnoli) of everything before it
//
// Version 2 added termMax and blocks, which Search prunes with; a version 1
// index is refused with an ErrFormat that names it as older (index.Open
// reports it as an index to rebuild, and `shirube index` rebuilds it).
//
// The postings are kept encoded in memory (Search decodes them on the fly;
// one-byte varints dominate), so loading is: read the bytes, verify the
// checksum, build the vocabulary map, and check the directory. It does not
// touch the postings, which is what makes a 100k-chunk index load in tens of
// milliseconds instead of hundreds. The checksum catches accidental
// corruption; postings forged to pass it cannot cause a panic because the
// decoder bounds-checks every posting (see postings), and [Index.Verify]
// checks them all when wanted.
const (
	magic         = "SBM5"
	formatVersion = 2
	headerFixed   = len(magic) + 1 + 1 + 16
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrFormat is wrapped by the errors ReadIndex returns for malformed input.
var ErrFormat = errors.New("bm25: malformed index")

// ErrOldFormat is wrapped by the error ReadIndex returns for an index an
// older shirube wrote in an earlier format version: nothing is damaged,
// the index only has to be built again.
var ErrOldFormat = errors.New("bm25: index written in an older format")

// WriteTo writes the index in the binary format described in format.go.
func (ix *Index) WriteTo(w io.Writer) (int64, error) {
	cw := &crcWriter{w: bufio.NewWriterSize(w, 1<<16), crc: 0}
	var hdr [headerFixed]byte
	copy(hdr[:], magic)
	hdr[4] = formatVersion
	if ix.p.QueryTF {
		hdr[5] = 1
	}
	binary.LittleEndian.PutUint64(hdr[6:], math.Float64bits(ix.p.K1))
	binary.LittleEndian.PutUint64(hdr[14:], math.Float64bits(ix.p.B))
	cw.write(hdr[:])
	cw.uvarint(uint64(len(ix.docLen)))
	cw.uvarint(uint64(len(ix.terms)))
	cw.uvarint(uint64(len(ix.post)))
	for _, l := range ix.docLen {
		cw.uvarint(uint64(l))
	}
	for _, t := range ix.terms {
		cw.uvarint(uint64(len(t)))
		cw.write([]byte(t))
	}
	for i := range ix.terms {
		cw.uvarint(uint64(ix.df[i]))
		cw.uvarint(uint64(ix.poffs[i+1] - ix.poffs[i]))
	}
	cw.write(ix.post)
	cw.write(ix.tmax)
	cw.write(ix.blocks)
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], cw.crc)
	cw.crcOff = true
	cw.write(sum[:])
	if cw.err == nil {
		cw.err = cw.w.Flush()
	}
	if cw.err != nil {
		return cw.n, fmt.Errorf("bm25: write index: %w", cw.err)
	}
	return cw.n, nil
}

// crcWriter counts bytes, checksums them and remembers the first error.
type crcWriter struct {
	w      *bufio.Writer
	crc    uint32
	crcOff bool
	n      int64
	err    error
	buf    [binary.MaxVarintLen64]byte
}

func (c *crcWriter) write(p []byte) {
	if c.err != nil {
		return
	}
	if !c.crcOff {
		c.crc = crc32.Update(c.crc, crcTable, p)
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
}

func (c *crcWriter) uvarint(v uint64) {
	n := binary.PutUvarint(c.buf[:], v)
	c.write(c.buf[:n])
}

// ReadIndex reads an index written by [Index.WriteTo]. It reads r to EOF.
// The returned Index keeps the postings part of the bytes read.
func ReadIndex(r io.Reader) (*Index, error) {
	data, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("bm25: read index: %w", err)
	}
	return decode(data)
}

// Decode reads an index from data without copying it: the returned Index
// keeps the postings part of data, which must stay unchanged (and, for a
// memory-mapped file, mapped) for as long as the Index is used. The Index
// never writes to data, so a read-only mapping is fine.
func Decode(data []byte) (*Index, error) { return decode(data) }

// readAll is io.ReadAll with the buffer sized up front when r can tell its
// size (bytes.Reader, strings.Reader, os.File), avoiding repeated growth.
func readAll(r io.Reader) ([]byte, error) {
	size := -1
	switch v := r.(type) {
	case interface{ Len() int }:
		size = v.Len()
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			size = int(fi.Size())
		}
	}
	if size < 0 {
		return io.ReadAll(r)
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

// decoder walks a byte slice; the first failure sticks.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s at byte %d", ErrFormat, what, d.off)
	}
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	// Reject overlong encodings too, so that every index has exactly one
	// encoding.
	if n <= 0 || (n > 1 && d.b[d.off+n-1] == 0) {
		d.fail("bad varint in " + what)
		return 0
	}
	d.off += n
	return v
}

// count reads a varint that announces how many items follow, each taking at
// least minBytes, and rejects counts the remaining input cannot hold.
func (d *decoder) count(what string, minBytes int) int {
	v := d.uvarint(what)
	if d.err == nil && v > uint64(len(d.b)-d.off)/uint64(minBytes) {
		d.fail(what + " larger than the input")
		return 0
	}
	return int(v)
}

func decode(data []byte) (*Index, error) {
	if len(data) < headerFixed+4 {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrFormat, len(data))
	}
	if string(data[:4]) != magic {
		return nil, fmt.Errorf("%w: bad magic %q", ErrFormat, data[:4])
	}
	if data[4] < formatVersion {
		return nil, fmt.Errorf("%w: format version %d was written by an older shirube (this one reads %d)", ErrOldFormat, data[4], formatVersion)
	}
	if data[4] != formatVersion {
		return nil, fmt.Errorf("%w: unsupported version %d (this shirube reads %d)", ErrFormat, data[4], formatVersion)
	}
	body := data[:len(data)-4]
	if got, want := crc32Sum(body), binary.LittleEndian.Uint32(data[len(data)-4:]); got != want {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrFormat)
	}
	p := Params{
		QueryTF: data[5]&1 != 0,
		K1:      math.Float64frombits(binary.LittleEndian.Uint64(data[6:])),
		B:       math.Float64frombits(binary.LittleEndian.Uint64(data[14:])),
	}
	if data[5]&^1 != 0 {
		return nil, fmt.Errorf("%w: unknown flags %#x", ErrFormat, data[5])
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	d := &decoder{b: body, off: headerFixed}
	nDocs := d.count("document count", 1)
	nTerms := d.count("term count", 4) // term ≥ 2 bytes, directory ≥ 2
	nPost := d.count("postings size", 1)
	if d.err == nil && nDocs > math.MaxUint32 {
		d.fail("too many documents")
	}
	if d.err != nil {
		return nil, d.err
	}
	ix := &Index{
		p:      p,
		docLen: make([]uint32, nDocs),
		terms:  make([]string, nTerms),
		vocab:  make(map[string]int32, nTerms),
		df:     make([]uint32, nTerms),
		poffs:  make([]int, nTerms+1),
	}
	for i := range ix.docLen {
		v := d.uvarint("document length")
		if v > math.MaxUint32 {
			d.fail("document length overflows")
		}
		ix.docLen[i] = uint32(v)
	}
	// Terms: find the extent first, then convert the section to one string
	// and slice it, so loading costs one allocation instead of V.
	start := d.off
	for range nTerms {
		l := d.count("term length", 1)
		d.off += l
	}
	if d.err != nil {
		return nil, d.err
	}
	section := string(body[start:d.off])
	d.off = start
	for i := range ix.terms {
		l := int(d.uvarint("term length"))
		s := d.off - start
		t := section[s : s+l]
		d.off += l
		if t == "" || !utf8.ValidString(t) {
			d.fail("empty or invalid term")
			return nil, d.err
		}
		if _, dup := ix.vocab[t]; dup {
			d.fail("duplicate term")
			return nil, d.err
		}
		ix.terms[i] = t
		ix.vocab[t] = int32(i)
	}
	total := 0
	nBlocks := 0
	boffs := make([]uint32, nTerms+1)
	for i := range nTerms {
		df := d.uvarint("document frequency")
		size := d.uvarint("postings size")
		// Each posting takes 2 to 8 bytes (delta ≤ 5, tf ≤ 3).
		if df == 0 || df > uint64(nDocs) || size < 2*df || size > 8*df {
			d.fail("directory entry out of range")
		}
		if d.err != nil {
			return nil, d.err
		}
		total += int(size)
		if total > nPost {
			d.fail("postings sizes exceed the postings section")
			return nil, d.err
		}
		ix.df[i] = uint32(df)
		ix.poffs[i+1] = total
		nBlocks += blocksOf(uint32(df))
		boffs[i+1] = uint32(nBlocks)
	}
	tail := 4*nTerms + blockEntry*nBlocks
	if total != nPost || len(body)-d.off != nPost+tail {
		return nil, fmt.Errorf("%w: postings and bounds are %d bytes, directory says %d + %d, header says %d",
			ErrFormat, len(body)-d.off, total, tail, nPost)
	}
	end := d.off + nPost
	ix.post = body[d.off:end:end]
	ix.tmax = body[end : end+4*nTerms : end+4*nTerms]
	ix.blocks = body[end+4*nTerms : len(body) : len(body)]
	ix.boffs = boffs
	ix.finish()
	return ix, nil
}

// Verify decodes every posting list and reports the first inconsistency: a
// malformed varint, a doc id out of range or not ascending, a zero or
// oversized tf, or a count that differs from the document frequency.
// [ReadIndex] skips this for speed (the checksum already guards against
// corruption); call it for untrusted input.
//
// It also checks the score bounds against the postings.
func (ix *Index) Verify() error {
	n := uint32(len(ix.docLen))
	for i, t := range ix.terms {
		p := ix.post[ix.poffs[i]:ix.poffs[i+1]]
		count, used := 0, 0
		postings(p, n, func(doc, tf uint32) { count++ })
		// Re-walk to find how many bytes the valid prefix used.
		for k := 0; k < 2*count; k++ {
			_, m := binary.Uvarint(p[used:])
			used += m
		}
		if count != int(ix.df[i]) || used != len(p) {
			return fmt.Errorf("%w: postings of term %q: %d decoded of %d, %d of %d bytes",
				ErrFormat, t, count, ix.df[i], used, len(p))
		}
	}
	return ix.verifyBounds()
}

// crc32Sum is the checksum the format uses.
func crc32Sum(b []byte) uint32 { return crc32.Checksum(b, crcTable) }
