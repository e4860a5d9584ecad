package embed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// The binary layout of a Local model, integers little-endian:
//
//	magic      [8]byte "SHRBLSA\x00"
//	version    uint32  localVersion
//	dim        uint32
//	terms      uint32  vocabulary size
//	minDF, maxFeatures, maxSample, oversample, powerIters uint32
//	scaling    float64 the exponent p of σ^(−p)
//	seed       uint64
//	sigma      dim × float32
//	vocabulary terms × (uvarint length, bytes), distinct, most frequent first
//	idf        terms × float32
//	proj       terms×dim × float32
//	checksum   uint32 CRC-32C of every byte above
const (
	localMagic   = "SHRBLSA\x00"
	localVersion = 1
	maxLocalDim  = 1 << 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorruptModel is wrapped by UnmarshalBinary errors caused by the content
// of the data.
var ErrCorruptModel = errors.New("local embedding model is corrupt; rebuild the index")

// MarshalBinary encodes the model. Equal models encode to equal bytes.
func (m *Local) MarshalBinary() ([]byte, error) {
	size := 8 + 4*8 + 8 + 8 + 4*len(m.sigma) + 4*len(m.idf) + 4*len(m.proj) + 4
	for _, t := range m.terms {
		size += binary.MaxVarintLen32 + len(t)
	}
	b := make([]byte, 0, size)
	b = append(b, localMagic...)
	le := binary.LittleEndian
	for _, v := range []int{localVersion, m.dim, len(m.terms), m.opts.MinDF, m.opts.MaxFeatures, m.opts.MaxSample, m.opts.Oversample, m.opts.PowerIters} {
		b = le.AppendUint32(b, uint32(v))
	}
	b = le.AppendUint64(b, math.Float64bits(m.opts.Scaling.exponent()))
	b = le.AppendUint64(b, m.opts.Seed)
	b = appendFloats(b, m.sigma)
	for _, t := range m.terms {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
	}
	b = appendFloats(b, m.idf)
	b = appendFloats(b, m.proj)
	return le.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

func appendFloats(b []byte, fs []float32) []byte {
	for _, f := range fs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

// UnmarshalBinary decodes a model written by MarshalBinary, replacing m.
// Corrupt data gives an error wrapping ErrCorruptModel; it never panics.
func (m *Local) UnmarshalBinary(data []byte) error {
	corrupt := func(what string) error { return fmt.Errorf("embed: %s: %w", what, ErrCorruptModel) }
	if len(data) < 8+4*8+16+4 || string(data[:8]) != localMagic {
		return corrupt("not a local model")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return corrupt("checksum mismatch")
	}
	r := reader{b: body[8:]}
	hdr := make([]uint32, 8)
	for i := range hdr {
		hdr[i] = r.u32()
	}
	if hdr[0] != localVersion {
		return fmt.Errorf("embed: local model version %d is not supported (want %d); rebuild the index with this version of shirube", hdr[0], localVersion)
	}
	dim, nterms := int(hdr[1]), int(hdr[2])
	if dim < 1 || dim > maxLocalDim {
		return corrupt(fmt.Sprintf("dimension %d out of range", dim))
	}
	// Every term takes at least 1+4+4·dim bytes, which bounds nterms by the
	// data actually present before anything is allocated.
	if nterms < 1 || nterms > len(body)/(5+4*dim) {
		return corrupt(fmt.Sprintf("vocabulary size %d does not fit the data", nterms))
	}
	opts := LocalOptions{
		Dim: dim, MinDF: int(hdr[3]), MaxFeatures: int(hdr[4]), MaxSample: int(hdr[5]),
		Oversample: int(hdr[6]), PowerIters: int(hdr[7]),
	}
	switch math.Float64frombits(r.u64()) {
	case 0:
		opts.Scaling = ScaleNone
	case 1:
		opts.Scaling = ScaleWhiten
	default:
		opts.Scaling = ScaleSqrt
	}
	opts.Seed = r.u64()
	sigma := r.floats(dim)
	terms := make([]string, nterms)
	ids := make(map[string]int32, nterms)
	for i := range terms {
		terms[i] = r.str()
		if _, dup := ids[terms[i]]; dup && r.err == nil {
			return corrupt("vocabulary repeats a term")
		}
		ids[terms[i]] = int32(i)
	}
	idf := r.floats(nterms)
	proj := r.floats(nterms * dim)
	if r.err != nil {
		return corrupt(r.err.Error())
	}
	if len(r.b) != 0 {
		return corrupt("trailing bytes")
	}
	for _, fs := range [][]float32{sigma, idf, proj} {
		for _, f := range fs {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return corrupt("non-finite value")
			}
		}
	}
	*m = Local{dim: dim, terms: terms, ids: ids, idf: idf, proj: proj, sigma: sigma, opts: opts}
	return nil
}

// reader decodes little-endian values, remembering the first short read.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = errors.New("truncated")
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *reader) str() string {
	if r.err != nil {
		return ""
	}
	n, w := binary.Uvarint(r.b)
	if w <= 0 || n > uint64(len(r.b)) {
		r.err = errors.New("bad string length")
		return ""
	}
	r.b = r.b[w:]
	return string(r.take(int(n)))
}

func (r *reader) floats(n int) []float32 {
	b := r.take(4 * n)
	if b == nil {
		return nil
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}
