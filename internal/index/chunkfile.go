package index

// chunks.bin: the chunks of a generation in a form that is used in place.
//
// chunks.gob had to be decoded whole at every start: at 100k chunks about
// 0.3 s and 140 MB of heap, although a search shows a handful of chunks.
// chunks.bin is memory-mapped; a chunk is decoded only when it is asked for
// (Index.Chunk), and what every search needs of all chunks — how many, and
// which page each cites — is a fixed-size record per chunk and a table of
// the distinct pages.
//
// Layout (integers little-endian):
//
//	0    magic "SHRBCHNK"
//	8    version uint32 (1), reserved uint32
//	16   chunk count n, page count p (uint64 each)
//	32   n records of 24 bytes: page index, Page, Index (uint32 each; Page and
//	     Index as two's complement int32), length of the chunk's strings
//	     (uint32), offset of the chunk's strings in the string section (uint64)
//	     p+1 uint64 offsets of the page identities in the page section
//	     the page identities, in order of first appearance
//	     the string section: per chunk ID, Source, Heading, Text, UpdatedAt,
//	     each as a uint32 length and the UTF-8 bytes
//	end-4 CRC-32C of every byte before it
//
// Indexes built before chunks.bin have chunks.gob instead; Open still reads
// it (decoded whole, as before).

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"unsafe"

	"github.com/shirube/shirube/internal/chunk"
	"github.com/shirube/shirube/internal/mapped"
)

const (
	chunkMagic      = "SHRBCHNK"
	chunkVersion    = 1
	chunkHeaderSize = 32
	chunkRecordSize = 24
)

// chunkRecord is one chunk's fixed-size entry.
type chunkRecord struct {
	Page, PageNo, Index, Len uint32
	Off                      uint64
}

// writeChunkFile writes chunks in the chunks.bin format to w.
func writeChunkFile(w io.Writer, chunks []chunk.Chunk) error {
	h := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, h), 1<<16)
	pageIdx := map[string]uint32{}
	var pages []string
	var hdr [chunkHeaderSize]byte
	for _, c := range chunks {
		if _, ok := pageIdx[c.File]; !ok {
			pageIdx[c.File] = uint32(len(pages))
			pages = append(pages, c.File)
		}
	}
	copy(hdr[:], chunkMagic)
	binary.LittleEndian.PutUint32(hdr[8:], chunkVersion)
	binary.LittleEndian.PutUint64(hdr[16:], uint64(len(chunks)))
	binary.LittleEndian.PutUint64(hdr[24:], uint64(len(pages)))
	bw.Write(hdr[:])
	var rec [chunkRecordSize]byte
	off := uint64(0)
	for _, c := range chunks {
		n := chunkStringsLen(c)
		if n > math.MaxUint32 || c.Page < math.MinInt32 || c.Page > math.MaxInt32 || c.Index < math.MinInt32 || c.Index > math.MaxInt32 {
			return fmt.Errorf("chunk %s does not fit the chunk file format", c.ID)
		}
		binary.LittleEndian.PutUint32(rec[0:], pageIdx[c.File])
		binary.LittleEndian.PutUint32(rec[4:], uint32(int32(c.Page)))
		binary.LittleEndian.PutUint32(rec[8:], uint32(int32(c.Index)))
		binary.LittleEndian.PutUint32(rec[12:], uint32(n))
		binary.LittleEndian.PutUint64(rec[16:], off)
		bw.Write(rec[:])
		off += uint64(n)
	}
	var u64 [8]byte
	poff := uint64(0)
	for i := 0; i <= len(pages); i++ {
		binary.LittleEndian.PutUint64(u64[:], poff)
		bw.Write(u64[:])
		if i < len(pages) {
			poff += uint64(len(pages[i]))
		}
	}
	for _, p := range pages {
		bw.WriteString(p)
	}
	var u32 [4]byte
	for _, c := range chunks {
		for _, s := range [...]string{c.ID, c.Source, c.Heading, c.Text, c.UpdatedAt} {
			binary.LittleEndian.PutUint32(u32[:], uint32(len(s)))
			bw.Write(u32[:])
			bw.WriteString(s)
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(u32[:], h.Sum32())
	_, err := w.Write(u32[:])
	return err
}

func chunkStringsLen(c chunk.Chunk) int {
	return 5*4 + len(c.ID) + len(c.Source) + len(c.Heading) + len(c.Text) + len(c.UpdatedAt)
}

// chunkFile is a mapped chunks.bin. It is safe for concurrent use.
type chunkFile struct {
	f       *mapped.File
	recs    []byte // n records
	pageOff []byte // p+1 uint64
	pages   []byte
	strs    []byte
	n, p    int
}

// openChunkFile checks f (whose CRC the caller may already have checked,
// verified says so) and returns the chunk table over it. f stays in use.
func openChunkFile(f *mapped.File, verified bool) (*chunkFile, error) {
	b := f.Data
	if len(b) < chunkHeaderSize+8+4 || string(b[:8]) != chunkMagic {
		return nil, errors.New("not a chunk file (too short or wrong magic)")
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != chunkVersion {
		return nil, fmt.Errorf("chunk file version %d, this shirube reads %d", v, chunkVersion)
	}
	body := b[:len(b)-4]
	if !verified && f.Checksum(0, len(body)) != binary.LittleEndian.Uint32(b[len(body):]) {
		return nil, errors.New("chunk file is damaged (checksum mismatch)")
	}
	n, p := binary.LittleEndian.Uint64(b[16:]), binary.LittleEndian.Uint64(b[24:])
	rest := uint64(len(body) - chunkHeaderSize)
	if n > rest/chunkRecordSize || p >= (rest-n*chunkRecordSize)/8 {
		return nil, fmt.Errorf("chunk file header (%d chunks, %d pages) does not fit its %d bytes", n, p, len(b))
	}
	cf := &chunkFile{f: f, n: int(n), p: int(p)}
	at := uint64(chunkHeaderSize)
	cf.recs = body[at : at+n*chunkRecordSize]
	at += n * chunkRecordSize
	cf.pageOff = body[at : at+(p+1)*8]
	at += (p + 1) * 8
	last := uint64(0)
	for i := 0; i <= cf.p; i++ {
		o := binary.LittleEndian.Uint64(cf.pageOff[8*i:])
		if o < last || (i == 0 && o != 0) {
			return nil, errors.New("chunk file page offsets are not ascending")
		}
		last = o
	}
	if last > uint64(len(body))-at {
		return nil, errors.New("chunk file page table runs past the end")
	}
	cf.pages = body[at : at+last]
	cf.strs = body[at+last:]
	for i := range cf.n {
		r := cf.record(i)
		if r.Page >= uint32(cf.p) || r.Off > uint64(len(cf.strs)) || uint64(r.Len) > uint64(len(cf.strs))-r.Off {
			return nil, fmt.Errorf("chunk file record %d points outside the file", i)
		}
	}
	f.Release()
	return cf, nil
}

func (cf *chunkFile) record(i int) chunkRecord {
	r := cf.recs[i*chunkRecordSize:]
	return chunkRecord{
		Page:   binary.LittleEndian.Uint32(r[0:]),
		PageNo: binary.LittleEndian.Uint32(r[4:]),
		Index:  binary.LittleEndian.Uint32(r[8:]),
		Len:    binary.LittleEndian.Uint32(r[12:]),
		Off:    binary.LittleEndian.Uint64(r[16:]),
	}
}

// Len is the number of chunks.
func (cf *chunkFile) Len() int { return cf.n }

// page returns page identity i, sharing the mapped bytes (callers copy it
// when it leaves the index).
func (cf *chunkFile) page(i uint32) string {
	a := binary.LittleEndian.Uint64(cf.pageOff[8*i:])
	b := binary.LittleEndian.Uint64(cf.pageOff[8*i+8:])
	if a == b {
		return ""
	}
	return unsafe.String(&cf.pages[a], int(b-a))
}

// PageOf returns the index of the page chunk i cites.
func (cf *chunkFile) PageOf(i int) uint32 { return cf.record(i).Page }

// Pages returns the distinct page identities in order of first appearance.
func (cf *chunkFile) Pages() []string {
	out := make([]string, cf.p)
	for i := range out {
		out[i] = string([]byte(cf.page(uint32(i))))
	}
	return out
}

// Chunk decodes chunk i into freshly allocated strings: nothing it returns
// refers to the mapping. A string section that does not parse (only a file
// forged to pass the checksum) gives empty fields, never a panic.
func (cf *chunkFile) Chunk(i int) chunk.Chunk {
	return cf.chunk(i, false)
}

// chunkInPlace is Chunk with strings that share the mapped bytes: valid
// only while the chunkFile is mapped. A build reuses the previous
// generation's chunks this way, without copying 100+ MB of text, and keeps
// that generation alive until the new one is written.
func (cf *chunkFile) chunkInPlace(i int) chunk.Chunk {
	return cf.chunk(i, true)
}

func (cf *chunkFile) chunk(i int, inPlace bool) chunk.Chunk {
	str := func(b []byte) string {
		if len(b) == 0 {
			return ""
		}
		if inPlace {
			return unsafe.String(&b[0], len(b))
		}
		return string(b)
	}
	r := cf.record(i)
	s := cf.strs[r.Off : r.Off+uint64(r.Len)]
	var fields [5]string
	for k := range fields {
		if len(s) < 4 {
			break
		}
		n := binary.LittleEndian.Uint32(s)
		if uint64(n) > uint64(len(s)-4) {
			break
		}
		fields[k] = str(s[4 : 4+n])
		s = s[4+n:]
	}
	file := cf.page(r.Page)
	if !inPlace {
		file = string([]byte(file))
	}
	return chunk.Chunk{
		ID: fields[0], File: file, Source: fields[1], Page: int(int32(r.PageNo)),
		Heading: fields[2], Text: fields[3], UpdatedAt: fields[4], Index: int(int32(r.Index)),
	}
}
