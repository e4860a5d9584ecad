package bm25

import (
	"encoding/binary"
	"math"
)

// A posting is two uvarints: the gap to the previous document and the term
// frequency. Nearly all of them are two single bytes (small gaps, tf < 128),
// which every reader decodes in line — the inner loop of every search —,
// calling postingSlow for the rest:
//
//	var delta, tf uint64
//	if i+1 < len(p) && p[i]|p[i+1] < 0x80 {
//		delta, tf, i = uint64(p[i]), uint64(p[i+1]), i+2
//	} else if delta, tf, i = postingSlow(p, i); i > len(p) {
//		break // the bytes end or are malformed
//	}
//	if !validPosting(delta, tf, n) {
//		break
//	}
//
// Every reader stops at the first invalid posting, so even an index crafted
// to pass the checksum cannot cause a panic.

// postingSlow decodes the posting at p[i:] with multi-byte varints; next is
// the offset past it, or len(p)+1 when the bytes end or are malformed (so a
// reader that stops there finds its list exhausted).
func postingSlow(p []byte, i int) (delta, tf uint64, next int) {
	bad := len(p) + 1
	if i >= len(p) {
		return 0, 0, bad
	}
	delta, k := binary.Uvarint(p[i:])
	if k <= 0 || i+k >= len(p) {
		return 0, 0, bad
	}
	i += k
	tf, k = binary.Uvarint(p[i:])
	if k <= 0 {
		return 0, 0, bad
	}
	return delta, tf, i + k
}

// validPosting reports whether a decoded posting of an index of n documents
// is well formed: a gap in [1, n] and a tf in [1, 65535].
func validPosting(delta, tf, n uint64) bool {
	return delta != 0 && delta <= n && tf != 0 && tf <= math.MaxUint16
}
