package mapped

import (
	"bytes"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestMappedFile: a mapped file reads back exactly, its checksum is the
// CRC-32C of its bytes, and releasing pages (which Checksum and Reader do)
// never changes what is read afterwards.
func TestMappedFile(t *testing.T) {
	for _, size := range []int{0, 1, 4095, 4096, 3*window + 12345} {
		want := make([]byte, size)
		r := rand.New(rand.NewPCG(1, uint64(size)))
		for i := range want {
			want[i] = byte(r.IntN(256))
		}
		path := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, w := f.Checksum(0, size), crc32.Checksum(want, castagnoli); got != w {
			t.Fatalf("size %d: checksum %08x, want %08x", size, got, w)
		}
		if !bytes.Equal(f.Data, want) {
			t.Fatalf("size %d: data differs after Checksum", size)
		}
		if size > 10 {
			if got, w := f.Checksum(3, size-5), crc32.Checksum(want[3:size-5], castagnoli); got != w {
				t.Fatalf("size %d: partial checksum %08x, want %08x", size, got, w)
			}
		}
		rd := f.Reader()
		if l := rd.(interface{ Len() int }).Len(); l != size {
			t.Fatalf("Len %d, want %d", l, size)
		}
		got, err := io.ReadAll(rd)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("size %d: Reader gave %d bytes (%v)", size, len(got), err)
		}
		f.Release()
		if !bytes.Equal(f.Data, want) {
			t.Fatalf("size %d: data differs after Release", size)
		}
		if err := f.Close(); err != nil || f.Data != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestHeapFile: a File over ordinary memory (not mapped) is never released
// (that would zero heap memory) and Close does not unmap it.
func TestHeapFile(t *testing.T) {
	b := Aligned([]byte("some bytes that are not a mapping, longer than nothing"))
	f := &File{Data: b}
	f.Release()
	f.Checksum(0, len(b))
	if string(b) != "some bytes that are not a mapping, longer than nothing" {
		t.Fatalf("heap data changed: %q", b)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
