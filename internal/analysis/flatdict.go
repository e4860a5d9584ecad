package analysis

// The flat dictionary: kagome's IPA dictionary in a form that loads without
// being rebuilt.
//
// ipa.Dict() unzips an 11 MB archive and decodes it field by field (gob and
// encoding/binary, 392,127 morphs, a 1.36 M-entry double array, the 392,127
// feature rows as [][]string): about 0.55 s of CPU and 150 MB of heap in
// every process. The flat file holds the same tables as fixed-size little-
// endian records, each section 8-byte aligned, so that after mmap they are
// used in place through unsafe.Slice: the tokenizer's lattice reads the
// morphs, the connection matrix and the double array straight from the
// page cache, and only touches the pages a text needs.
//
// Of the nine feature columns the analyser reads three — the first two parts
// of speech (keepToken) and the base form — so the file keeps only those, as
// ids into one deduplicated string table. The kagome dict.Dict built from a
// flat file therefore has no POSTable and no Contents: Token.Features,
// FeatureAt and BaseForm must not be called on its KNOWN tokens; the
// analyser reads those through flatFeatures instead (Analyzer.features).
//
// Layout (all integers little-endian):
//
//	offset 0   magic "SHRBIPA\x00"
//	       8   format version (uint32)
//	      12   number of sections (uint32) = numSections
//	      16   source: the kagome-dict/ipa module version, zero-padded (48 bytes)
//	      64   numSections × {offset, length uint64}
//	     ...   the sections, each starting at a multiple of 8
//	  size-4   CRC-32C of every byte before it
//
// A file that is truncated, damaged (CRC mismatch), from another format
// version or another dictionary version is refused with an error saying so;
// the analyser then loads ipa.Dict() and writes the file anew.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"unsafe"

	"github.com/ikawaha/kagome-dict/dict"
	"github.com/ikawaha/kagome-dict/dict/trie"
	"github.com/ikawaha/kagome-dict/ipa"

	"github.com/shirube/shirube/internal/mapped"
)

const (
	flatMagic   = "SHRBIPA\x00"
	flatVersion = 1
	flatHeader  = 64
	sourceLen   = 48
	noString    = math.MaxUint32
	ipaModule   = "github.com/ikawaha/kagome-dict/ipa"
)

// The sections of a flat dictionary file, in file order.
const (
	secMorphs   = iota // dict.Morph records: LeftID, RightID, Weight int16
	secConnDims        // Row, Col int64
	secConn            // the connection matrix, Row×Col int16
	secDA              // double array: Base, Check int32 pairs
	secDup             // index duplicates: key, count int32 pairs
	secCharCat         // character category of each rune < len, one byte
	secFeat            // flatFeat records, one per morph
	secStrOff          // string table: n+1 uint32 offsets into secStrBlob
	secStrBlob         // string table bytes
	secSmall           // the small parts (char classes, unknown-word dictionary)
	numSections
)

// crcOf is the CRC-32C (hardware-accelerated on amd64 and arm64) of b.
func crcOf(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// flatFeat is what the analyser reads of one known morph: ids into the
// string table of its first two part-of-speech levels and of its base form
// (noString when the morph has none).
type flatFeat struct {
	POS0, POS1, Base uint32
}

// flatFeatures answers the analyser's feature questions for known morphs.
type flatFeatures struct {
	feat []flatFeat
	off  []uint32
	blob []byte
}

// str returns string id as a string sharing the mapped bytes.
func (f *flatFeatures) str(id uint32) (string, bool) {
	if id == noString {
		return "", false
	}
	a, b := f.off[id], f.off[id+1]
	if a == b {
		return "", true
	}
	return unsafe.String(&f.blob[a], int(b-a)), true
}

// at returns the first two parts of speech and the base form of morph id.
func (f *flatFeatures) at(id int) (pos0, pos1, base string, hasBase bool) {
	r := f.feat[id]
	pos0, _ = f.str(r.POS0)
	pos1, _ = f.str(r.POS1)
	base, hasBase = f.str(r.Base)
	return
}

// dictSource names the embedded dictionary: the kagome-dict/ipa module
// version this binary was built with. A flat file from another version is
// not used.
func dictSource() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == ipaModule {
				if m.Replace != nil {
					m = m.Replace
				}
				return "ipa " + m.Version
			}
		}
	}
	return "ipa (unknown version)"
}

// FlatDictPath is where the analyser keeps the flat dictionary: in the
// user's cache directory ($XDG_CACHE_HOME or ~/.cache on Linux), named by
// the dictionary and format version. Deleting it is always safe.
func FlatDictPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	src := dictSource()
	name := fmt.Sprintf("kagome-%s-flat%d.dict", sanitize(src), flatVersion)
	return filepath.Join(dir, "shirube", name), nil
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// encodeFlat writes d in the flat format.
func encodeFlat(d *dict.Dict, source string) ([]byte, error) {
	if len(d.POSTable.POSs) != len(d.Morphs) || (d.Contents != nil && len(d.Contents) != len(d.Morphs)) {
		return nil, errors.New("flat dictionary: morphs, parts of speech and contents differ in length")
	}
	baseCol := -1
	if v, ok := d.ContentsMeta[dict.BaseFormIndex]; ok {
		baseCol = int(v)
	}
	// One deduplicated string table for part-of-speech names and base forms.
	ids := map[string]uint32{}
	var strOff []uint32
	var blob []byte
	intern := func(s string) uint32 {
		if id, ok := ids[s]; ok {
			return id
		}
		id := uint32(len(strOff))
		ids[s] = id
		strOff = append(strOff, uint32(len(blob)))
		blob = append(blob, s...)
		return id
	}
	pos := func(p dict.POS, i int) uint32 {
		if i >= len(p) || int(p[i]) > len(d.POSTable.NameList) {
			return noString
		}
		// kagome's FeatureAt bounds check is "id > len", so id == len
		// would panic there; the IPA table never has it.
		if int(p[i]) == len(d.POSTable.NameList) {
			return noString
		}
		return intern(d.POSTable.NameList[p[i]])
	}
	feat := make([]flatFeat, len(d.Morphs))
	for i := range feat {
		p := d.POSTable.POSs[i]
		f := flatFeat{POS0: pos(p, 0), POS1: pos(p, 1), Base: noString}
		// The base form is feature baseCol: a POS level when below the POS
		// depth, else a contents column (Token.FeatureAt).
		if baseCol >= 0 {
			if j := baseCol; j < len(p) {
				f.Base = pos(p, j)
			} else if d.Contents != nil {
				if c := d.Contents[i]; j-len(p) < len(c) {
					f.Base = intern(c[j-len(p)])
				}
			}
		}
		feat[i] = f
	}
	strOff = append(strOff, uint32(len(blob)))
	if uint64(len(blob)) > math.MaxUint32 {
		return nil, errors.New("flat dictionary: string table too large")
	}

	var sec [numSections][]byte
	sec[secMorphs] = le(d.Morphs)
	sec[secConnDims] = le([]int64{d.Connection.Row, d.Connection.Col})
	sec[secConn] = le(d.Connection.Vec)
	sec[secDA] = le([]struct{ Base, Check int32 }(d.Index.Da))
	dup := make([]int32, 0, 2*len(d.Index.Dup))
	for _, k := range slices.Sorted(maps.Keys(d.Index.Dup)) {
		dup = append(dup, k, d.Index.Dup[k])
	}
	sec[secDup] = le(dup)
	sec[secCharCat] = []byte(d.CharCategory)
	sec[secFeat] = le(feat)
	sec[secStrOff] = le(strOff)
	sec[secStrBlob] = blob
	sec[secSmall] = encodeSmall(d)

	var out bytes.Buffer
	out.WriteString(flatMagic)
	out.Write(binary.LittleEndian.AppendUint32(nil, flatVersion))
	out.Write(binary.LittleEndian.AppendUint32(nil, numSections))
	var src [sourceLen]byte
	copy(src[:], source)
	out.Write(src[:])
	off := uint64(flatHeader + numSections*16)
	table := make([]byte, 0, numSections*16)
	for _, s := range sec {
		off = align8(off)
		table = binary.LittleEndian.AppendUint64(table, off)
		table = binary.LittleEndian.AppendUint64(table, uint64(len(s)))
		off += uint64(len(s))
	}
	out.Write(table)
	for _, s := range sec {
		for out.Len()%8 != 0 {
			out.WriteByte(0)
		}
		out.Write(s)
	}
	sum := crcOf(out.Bytes())
	out.Write(binary.LittleEndian.AppendUint32(nil, sum))
	return out.Bytes(), nil
}

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// le returns the bytes of a slice of fixed-size little-endian values.
func le[T any](s []T) []byte {
	var b bytes.Buffer
	if err := binary.Write(&b, binary.LittleEndian, s); err != nil {
		panic(err) // fixed-size element types only
	}
	return b.Bytes()
}

// decodeFlat builds the dictionary and the feature table over f, which
// must stay open for as long as they are used (the tables point into it).
// f.Data must be 8-byte aligned. The pages read to check the file are
// released again: a process keeps resident only what its texts look up.
func decodeFlat(f *mapped.File, source string) (*dict.Dict, *flatFeatures, error) {
	b := f.Data
	if !littleEndian() {
		return nil, nil, errors.New("flat dictionary: needs a little-endian machine")
	}
	if len(b) < flatHeader+numSections*16+4 || string(b[:8]) != flatMagic {
		return nil, nil, errors.New("not a flat dictionary file (too short or wrong magic)")
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != flatVersion {
		return nil, nil, fmt.Errorf("flat dictionary format %d, this binary reads %d", v, flatVersion)
	}
	if n := binary.LittleEndian.Uint32(b[12:]); n != numSections {
		return nil, nil, fmt.Errorf("flat dictionary has %d sections, want %d", n, numSections)
	}
	if got := string(bytes.TrimRight(b[16:16+sourceLen], "\x00")); got != source {
		return nil, nil, fmt.Errorf("flat dictionary is for %q, this binary embeds %q", got, source)
	}
	body := b[:len(b)-4]
	if want, got := binary.LittleEndian.Uint32(b[len(b)-4:]), f.Checksum(0, len(body)); want != got {
		return nil, nil, fmt.Errorf("flat dictionary is damaged or truncated (checksum %08x, want %08x)", got, want)
	}
	var sec [numSections][]byte
	for i := range sec {
		o := flatHeader + 16*i
		off, n := binary.LittleEndian.Uint64(b[o:]), binary.LittleEndian.Uint64(b[o+8:])
		if off%8 != 0 || off > uint64(len(body)) || n > uint64(len(body))-off {
			return nil, nil, fmt.Errorf("flat dictionary section %d out of bounds", i)
		}
		sec[i] = body[off : off+n]
	}
	morphs, err := view[dict.Morph](sec[secMorphs])
	if err != nil {
		return nil, nil, fmt.Errorf("morphs: %w", err)
	}
	dims, err := view[int64](sec[secConnDims])
	if err != nil || len(dims) != 2 {
		return nil, nil, errors.New("flat dictionary: bad connection matrix size")
	}
	conn, err := view[int16](sec[secConn])
	if err != nil {
		return nil, nil, fmt.Errorf("connection matrix: %w", err)
	}
	row, col := dims[0], dims[1]
	if row < 0 || col < 0 || row > math.MaxInt16+1 || col > math.MaxInt16+1 || row*col != int64(len(conn)) {
		return nil, nil, fmt.Errorf("flat dictionary: connection matrix %d×%d does not hold %d entries", row, col, len(conn))
	}
	da, err := view[struct{ Base, Check int32 }](sec[secDA])
	if err != nil {
		return nil, nil, fmt.Errorf("double array: %w", err)
	}
	dupPairs, err := view[int32](sec[secDup])
	if err != nil || len(dupPairs)%2 != 0 {
		return nil, nil, errors.New("flat dictionary: bad index duplicates")
	}
	dup := make(map[int32]int32, len(dupPairs)/2)
	for i := 0; i < len(dupPairs); i += 2 {
		k, v := dupPairs[i], dupPairs[i+1]
		if k < 0 || v < 0 || int64(k)+int64(v) >= int64(len(morphs)) {
			return nil, nil, fmt.Errorf("flat dictionary: index duplicate %d+%d beyond %d morphs", k, v, len(morphs))
		}
		dup[k] = v
	}
	feat, err := view[flatFeat](sec[secFeat])
	if err != nil || len(feat) != len(morphs) {
		return nil, nil, fmt.Errorf("flat dictionary: %d feature rows for %d morphs", len(feat), len(morphs))
	}
	off, err := view[uint32](sec[secStrOff])
	if err != nil || len(off) == 0 {
		return nil, nil, errors.New("flat dictionary: bad string table")
	}
	blob := sec[secStrBlob]
	for i := 1; i < len(off); i++ {
		if off[i] < off[i-1] {
			return nil, nil, errors.New("flat dictionary: string offsets not ascending")
		}
	}
	if off[0] != 0 || int64(off[len(off)-1]) != int64(len(blob)) {
		return nil, nil, errors.New("flat dictionary: string offsets do not cover the string table")
	}
	nstr := uint32(len(off) - 1)
	for _, f := range feat {
		if (f.POS0 >= nstr && f.POS0 != noString) || (f.POS1 >= nstr && f.POS1 != noString) || (f.Base >= nstr && f.Base != noString) {
			return nil, nil, errors.New("flat dictionary: feature refers beyond the string table")
		}
	}
	for _, m := range morphs {
		if m.LeftID < 0 || m.RightID < 0 || int64(m.LeftID) >= col || int64(m.RightID) >= row {
			return nil, nil, errors.New("flat dictionary: morph connection id beyond the matrix")
		}
	}
	d := &dict.Dict{
		Morphs:       morphs,
		Connection:   dict.ConnectionTable{Row: row, Col: col, Vec: conn},
		Index:        dict.IndexTable{Da: trie.DoubleArray(da), Dup: dup},
		CharCategory: dict.CharCategory(sec[secCharCat]),
	}
	if err := decodeSmall(sec[secSmall], d); err != nil {
		return nil, nil, err
	}
	if len(d.CharCategory) == 0 {
		return nil, nil, errors.New("flat dictionary: empty character categories")
	}
	for _, c := range d.CharCategory {
		if int(c) >= len(d.InvokeList) || int(c) >= len(d.GroupList) {
			return nil, nil, errors.New("flat dictionary: character category beyond the class lists")
		}
	}
	for _, m := range d.UnkDict.Morphs {
		if m.LeftID < 0 || m.RightID < 0 || int64(m.LeftID) >= col || int64(m.RightID) >= row {
			return nil, nil, errors.New("flat dictionary: unknown-word morph connection id beyond the matrix")
		}
	}
	f.Release()
	return d, &flatFeatures{feat: feat, off: off, blob: blob}, nil
}

// view returns b as a slice of T without copying.
func view[T any](b []byte) ([]T, error) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if len(b)%size != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of %d-byte records", len(b), size)
	}
	if len(b) == 0 {
		return []T{}, nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%unsafe.Alignof(zero) != 0 {
		return nil, errors.New("misaligned section")
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/size), nil
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// encodeSmall writes the small parts of d: character classes, invoke and
// group lists, and the unknown-word dictionary.
func encodeSmall(d *dict.Dict) []byte {
	var w smallWriter
	w.strings(d.CharClass)
	w.bools(d.InvokeList)
	w.bools(d.GroupList)
	u := d.UnkDict
	w.u32(uint32(len(u.Morphs)))
	for _, m := range u.Morphs {
		w.u32(uint32(uint16(m.LeftID)))
		w.u32(uint32(uint16(m.RightID)))
		w.u32(uint32(uint16(m.Weight)))
	}
	w.int32Map(u.Index)
	w.int32Map(u.IndexDup)
	w.u32(uint32(len(u.ContentsMeta)))
	for _, k := range slices.Sorted(maps.Keys(u.ContentsMeta)) {
		w.str(k)
		w.u32(uint32(uint8(u.ContentsMeta[k])))
	}
	w.u32(uint32(len(u.Contents)))
	for _, row := range u.Contents {
		w.strings(row)
	}
	return w.b
}

// decodeSmall reads what encodeSmall wrote into d.
func decodeSmall(b []byte, d *dict.Dict) error {
	r := smallReader{b: b}
	d.CharClass = r.strings()
	d.InvokeList = r.bools()
	d.GroupList = r.bools()
	u := &d.UnkDict
	if n := r.count(12); n > 0 {
		u.Morphs = make(dict.Morphs, n)
		for i := range u.Morphs {
			u.Morphs[i] = dict.Morph{LeftID: int16(r.u32()), RightID: int16(r.u32()), Weight: int16(r.u32())}
		}
	}
	u.Index = r.int32Map()
	u.IndexDup = r.int32Map()
	n := r.count(5)
	u.ContentsMeta = make(dict.ContentsMeta, n)
	for range n {
		k := r.str()
		u.ContentsMeta[k] = int8(r.u32())
	}
	n = r.count(4)
	u.Contents = make(dict.Contents, n)
	for i := range u.Contents {
		u.Contents[i] = r.strings()
	}
	if r.err != nil {
		return fmt.Errorf("flat dictionary: small parts: %w", r.err)
	}
	if len(r.b) != 0 {
		return errors.New("flat dictionary: trailing bytes after the small parts")
	}
	if len(u.Morphs) == 0 {
		return errors.New("flat dictionary: no unknown-word morphs")
	}
	for class, id := range u.Index {
		if int(class) >= len(d.InvokeList) || id < 0 || int64(id)+int64(u.IndexDup[class]) >= int64(len(u.Morphs)) || u.IndexDup[class] < 0 || int64(id)+int64(u.IndexDup[class]) >= int64(len(u.Contents)) {
			return errors.New("flat dictionary: unknown-word index beyond its morphs")
		}
	}
	if len(d.InvokeList) != len(d.GroupList) {
		return errors.New("flat dictionary: invoke and group lists differ in length")
	}
	return nil
}

type smallWriter struct{ b []byte }

func (w *smallWriter) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *smallWriter) str(s string) { w.u32(uint32(len(s))); w.b = append(w.b, s...) }
func (w *smallWriter) strings(ss []string) {
	w.u32(uint32(len(ss)))
	for _, s := range ss {
		w.str(s)
	}
}
func (w *smallWriter) bools(bs []bool) {
	w.u32(uint32(len(bs)))
	for _, v := range bs {
		if v {
			w.b = append(w.b, 1)
		} else {
			w.b = append(w.b, 0)
		}
	}
}
func (w *smallWriter) int32Map(m map[int32]int32) {
	w.u32(uint32(len(m)))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		w.u32(uint32(k))
		w.u32(uint32(m[k]))
	}
}

// smallReader reads smallWriter's output; the first error sticks and
// every later read returns zero values.
type smallReader struct {
	b   []byte
	err error
}

func (r *smallReader) fail(msg string) {
	if r.err == nil {
		r.err = errors.New(msg)
	}
	r.b = nil
}

func (r *smallReader) u32() uint32 {
	if len(r.b) < 4 {
		r.fail("truncated")
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

// count reads a length whose items take at least min bytes each, refusing
// lengths the remaining bytes cannot hold (no huge allocation from a bad
// file).
func (r *smallReader) count(min int) int {
	n := r.u32()
	if uint64(n)*uint64(min) > uint64(len(r.b)) {
		r.fail("length beyond the data")
		return 0
	}
	return int(n)
}

func (r *smallReader) str() string {
	n := r.count(1)
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *smallReader) strings() []string {
	n := r.count(4)
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.str()
	}
	return ss
}

func (r *smallReader) bools() []bool {
	n := r.count(1)
	bs := make([]bool, n)
	for i := range bs {
		bs[i] = r.b[i] != 0
	}
	r.b = r.b[n:]
	return bs
}

func (r *smallReader) int32Map() map[int32]int32 {
	n := r.count(8)
	m := make(map[int32]int32, n)
	for range n {
		k := int32(r.u32())
		m[k] = int32(r.u32())
	}
	return m
}

// loadDictionary returns the IPA dictionary, from the flat file at path when
// it is there and sound, else from ipa.Dict() — in which case it writes the
// flat file for the next process (path "" means no file). feat is nil when
// the dictionary is ipa.Dict(). note says why the flat file was not used
// when that is worth telling (damaged, wrong version, cannot be written);
// a missing file is not.
func loadDictionary(path string) (d *dict.Dict, feat *flatFeatures, note error) {
	source := dictSource()
	var why error // why the file at path was not used
	if path != "" {
		f, err := mapped.Open(path)
		if err == nil {
			if d, feat, err = decodeFlat(f, source); err == nil {
				return d, feat, nil // f stays mapped for the life of the process
			}
			f.Close()
		}
		if !errors.Is(err, os.ErrNotExist) {
			why = err
		}
	}
	d = ipa.Dict()
	if path == "" {
		return d, nil, nil
	}
	werr := writeFlat(path, d, source)
	switch {
	case why != nil && werr == nil:
		note = fmt.Errorf("dictionary cache %s not used: %w; loaded the embedded dictionary and rewrote the cache", path, why)
	case why != nil:
		note = fmt.Errorf("dictionary cache %s not used: %w; loaded the embedded dictionary; the cache was not rewritten (each run loads the embedded dictionary, ~0.5 s): %w", path, why, werr)
	case werr != nil:
		note = fmt.Errorf("dictionary cache %s not written (each run loads the embedded dictionary, ~0.5 s): %w", path, werr)
	}
	return d, nil, note
}

// writeFlat writes the flat form of d to path atomically: a reader sees
// either the old file or the whole new one.
func writeFlat(path string, d *dict.Dict, source string) error {
	b, err := encodeFlat(d, source)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
